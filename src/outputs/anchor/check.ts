/**
 * Reading anchors back for `govtrail verify --anchors DIR --public-key FILE`: every statement must
 * carry a valid signature by the one key given (nothing else is trusted: not a key named in the
 * files, not the configured signing key), be a well-formed statement of the tenant whose directory
 * holds it, and name the anchor before it by number and digest (the first names none and is
 * number 1: deleting the oldest anchors is seen). What passes is handed to the store check as the chain
 * heads the store must still reproduce.
 */
import type { KeyObject } from 'node:crypto';
import type { Dirent } from 'node:fs';
import { readdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { GovtrailError } from '../../core/errors.js';
import type { AnchorHead } from '../../store/verify/findings.js';
import { claimedKeyId, keyThumbprint, verifyDetached } from '../pack/signing.js';

export type { AnchorHead } from '../../store/verify/findings.js';

import {
  ANCHOR_TYPE,
  ANCHOR_TYPE_V1,
  type AnchorStatement,
  anchorDigest,
  DIRECTORY_ID_FILE,
  listAnchorFiles,
  sequenceOfName,
} from './anchor.js';

/** An anchor file that cannot be trusted. */
export interface AnchorProblem {
  readonly tenantId: string;
  readonly file: string;
  readonly detail: string;
}

export interface TrustedAnchors {
  /** Per tenant, trusted anchors oldest first. */
  readonly heads: ReadonlyMap<string, readonly AnchorHead[]>;
  readonly problems: readonly AnchorProblem[];
  /** Anchor files read. */
  readonly files: number;
  /** What was followed or ignored under DIR (symbolic links, files that are not directories). */
  readonly notes: readonly string[];
}

function isStatement(v: unknown): v is AnchorStatement {
  if (typeof v !== 'object' || v === null) return false;
  const s = v as Record<string, unknown>;
  const head = s['head'] as Record<string, unknown> | null | undefined;
  const sequence = s['sequence'];
  return (
    (s['type'] === ANCHOR_TYPE_V1 ||
      (s['type'] === ANCHOR_TYPE && Number.isSafeInteger(sequence) && (sequence as number) >= 1)) &&
    typeof s['tenant'] === 'string' &&
    Number.isSafeInteger(s['entries']) &&
    typeof s['anchored_at'] === 'string' &&
    (s['previous_sha256'] === null || typeof s['previous_sha256'] === 'string') &&
    (head === null ||
      (typeof head === 'object' &&
        typeof head?.['entry_id'] === 'string' &&
        typeof head?.['row_hash'] === 'string'))
  );
}

/** One statement file read: its digest, and its statement when the signature and form hold. */
interface ReadAnchor {
  readonly file: string;
  readonly digest: string;
  readonly statement?: AnchorStatement;
  readonly problem?: string;
  /** Signed by a key other than the one given (a key mix-up when every anchor is). */
  readonly otherKey?: boolean;
}

/** Reads one statement file: signed by the key, a statement, of this tenant. */
async function readAnchorFile(
  file: string,
  tenantId: string,
  key: KeyObject,
  keyId: string,
): Promise<ReadAnchor> {
  const bytes = await readFile(file);
  const digest = anchorDigest(bytes);
  let jws: string;
  try {
    jws = (await readFile(`${file}.jws`, 'utf8')).trim();
  } catch {
    return { file, problem: 'has no signature file (.jws)', digest };
  }
  const verdict = await verifyDetached(jws, bytes, key);
  if (!verdict.ok) {
    const kid = claimedKeyId(jws);
    const otherKey = kid !== undefined && kid !== keyId;
    return {
      file,
      problem: otherKey
        ? `is signed by another key (kid ${kid}), not the public key given (kid ${keyId})`
        : `signature does not verify with the public key given: the file was altered (${verdict.reason})`,
      otherKey,
      digest,
    };
  }
  let statement: unknown;
  try {
    statement = JSON.parse(bytes.toString('utf8'));
  } catch {
    return { file, problem: 'is not JSON', digest };
  }
  if (!isStatement(statement)) return { file, problem: `is not a ${ANCHOR_TYPE} statement`, digest };
  if (statement.tenant !== tenantId)
    return {
      file,
      problem: `states tenant ${JSON.stringify(statement.tenant)}, but lies in the directory of ${JSON.stringify(tenantId)}`,
      digest,
    };
  return { file, digest, statement };
}

/**
 * The anchors in the order of their chain: format /1 by name (their time), then format /2 by the
 * number each states (signed), never by a clock. Unreadable ones keep their name's place.
 */
function chainOrder(read: readonly ReadAnchor[]): ReadAnchor[] {
  const rank = (r: ReadAnchor, i: number): [number, number] => {
    const seq = r.statement?.sequence ?? sequenceOfName(r.file);
    return seq === undefined ? [0, i] : [1, seq];
  };
  return read
    .map((r, i) => ({ r, k: rank(r, i), i }))
    .sort((a, b) => a.k[0] - b.k[0] || a.k[1] - b.k[1] || a.i - b.i)
    .map((x) => x.r);
}

/**
 * Why the anchor at `index` of the chain order does not link to the one before it (or, for the
 * first, to nothing), or undefined when it does: its number follows, and it names the one before.
 */
function linkProblem(order: readonly ReadAnchor[], index: number): string | undefined {
  const s = order[index]?.statement;
  if (s === undefined) return undefined;
  const before = order[index - 1];
  const number = s.sequence;
  if (before === undefined) {
    if (number !== undefined && number > 1)
      return `is anchor number ${number}, but no anchor before it is here: the oldest ${number - 1} anchor(s) were deleted`;
    if (s.previous_sha256 !== null)
      return `names previous anchor ${s.previous_sha256}, but no anchor before it is here: the oldest anchor(s) were deleted`;
    return undefined;
  }
  const prior =
    before.statement?.sequence ?? (before.statement === undefined ? sequenceOfName(before.file) : index);
  if (number !== undefined && prior !== undefined && number === prior)
    return `is anchor number ${number}, as is ${path.basename(before.file)}: the chain of anchors forked`;
  if (number !== undefined && prior !== undefined && number > prior + 1)
    return `is anchor number ${number}, the one before it here is number ${prior}: anchor(s) ${prior + 1}-${number - 1} were deleted`;
  if (s.previous_sha256 !== before.digest)
    return `names previous anchor ${s.previous_sha256 ?? 'none'}, but the anchor before it has sha256 ${before.digest}: an anchor was removed, replaced or inserted`;
  return undefined;
}

/** A tenant's directory of anchors, and whether it was reached through a symbolic link. */
interface TenantDir {
  readonly name: string;
  readonly symlink: boolean;
}

/**
 * The tenant directories under DIR. A symbolic link to a directory is followed (and said so): its
 * anchors count as any other; anything else that is not a directory is reported as ignored.
 */
async function tenantDirs(dir: string): Promise<{ dirs: TenantDir[]; notes: string[] }> {
  let entries: Dirent[];
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch (err) {
    throw new GovtrailError('USAGE', `--anchors: cannot read ${dir}: ${(err as Error).message}`, {
      cause: err,
    });
  }
  const dirs: TenantDir[] = [];
  const notes: string[] = [];
  for (const d of entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
    if (d.name === DIRECTORY_ID_FILE) continue;
    if (d.isDirectory()) dirs.push({ name: d.name, symlink: false });
    else if (d.isSymbolicLink()) {
      const target = await stat(path.join(dir, d.name)).catch(() => undefined);
      if (target?.isDirectory() === true) {
        dirs.push({ name: d.name, symlink: true });
        notes.push(`${d.name} is a symbolic link to a directory: followed, its anchors checked`);
      } else notes.push(`${d.name} is a symbolic link to no directory: ignored`);
    } else notes.push(`${d.name} is not a directory: ignored`);
  }
  return { dirs, notes };
}

/**
 * Reads every tenant's anchors under DIR (one directory per tenant) and keeps those that verify
 * with `key`; the chain of anchors is checked by the numbers and digests they state. A DIR without
 * any anchor is a usage error: it would prove nothing.
 */
export async function readTrustedAnchors(
  dir: string,
  key: KeyObject,
  onlyTenant?: string,
): Promise<TrustedAnchors> {
  const { dirs, notes } = await tenantDirs(dir);
  const keyId = await keyThumbprint(key);
  const heads = new Map<string, AnchorHead[]>();
  const problems: AnchorProblem[] = [];
  const otherKids: string[] = [];
  let files = 0;
  for (const { name } of dirs) {
    const tenantId = decodeURIComponent(name);
    if (onlyTenant !== undefined && tenantId !== onlyTenant) continue;
    const read: ReadAnchor[] = [];
    for (const file of await listAnchorFiles(dir, tenantId))
      read.push(await readAnchorFile(file, tenantId, key, keyId));
    files += read.length;
    const order = chainOrder(read);
    const list: AnchorHead[] = [];
    for (const [i, r] of order.entries()) {
      const rel = path.relative(dir, r.file);
      if (r.otherKey === true) otherKids.push(r.problem?.match(/kid (\S+)\)/)?.[1] ?? '?');
      const problem = r.problem ?? linkProblem(order, i);
      if (problem !== undefined) problems.push({ tenantId, file: rel, detail: problem });
      // A broken link says anchors are missing; the anchor's own statement, signed, still holds.
      if (r.statement !== undefined) list.push(headOf(r.statement, rel));
    }
    if (list.length > 0) heads.set(tenantId, list);
  }
  if (files === 0)
    throw new GovtrailError(
      'USAGE',
      `--anchors: no anchor files (*.anchor.json) under ${dir}${onlyTenant === undefined ? '' : ` for tenant ${onlyTenant}`}`,
    );
  // Every anchor signed by one other key, none by the key given: a key mix-up (the wrong
  // --public-key), not tampering. An anchor by another key among anchors by the right one stays a
  // finding: that is what a forged anchor looks like.
  const kids = new Set(otherKids);
  if (heads.size === 0 && otherKids.length === files && kids.size === 1) {
    throw new GovtrailError(
      'USAGE',
      `--public-key: every anchor under ${dir} is signed by another key (kid ${[...kids][0]}), not the one given (kid ${keyId}): the key given is not the anchors' key (pass the public half of GOVTRAIL_ANCHOR_SIGNING_KEY), or someone else signed these anchors; no anchor was trusted, so nothing was checked against them`,
    );
  }
  return { heads, problems, files, notes };
}

function headOf(statement: AnchorStatement, file: string): AnchorHead {
  return {
    file,
    entries: statement.entries,
    anchoredAt: statement.anchored_at,
    head:
      statement.head === null ? null : { entryId: statement.head.entry_id, rowHash: statement.head.row_hash },
  };
}
