/**
 * Reading anchors back for `govtrail verify --anchors DIR --public-key FILE`: every statement must
 * carry a valid signature by the one key given (nothing else is trusted: not a key named in the
 * files, not the configured signing key), be a well-formed statement of the tenant whose directory
 * holds it, and name the anchor before it. What passes is handed to the store check as the chain
 * heads the store must still reproduce.
 */
import type { KeyObject } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { GovtrailError } from '../../core/errors.js';
import type { AnchorHead } from '../../store/verify/verify.js';
import { claimedKeyId, keyThumbprint, verifyDetached } from '../pack/signing.js';

export type { AnchorHead } from '../../store/verify/verify.js';

import { ANCHOR_TYPE, type AnchorStatement, anchorDigest, listAnchorFiles } from './anchor.js';

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
}

function isStatement(v: unknown): v is AnchorStatement {
  if (typeof v !== 'object' || v === null) return false;
  const s = v as Record<string, unknown>;
  const head = s['head'] as Record<string, unknown> | null | undefined;
  return (
    s['type'] === ANCHOR_TYPE &&
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

/** Checks one statement file; returns its head or why it cannot be trusted. */
async function checkAnchorFile(
  file: string,
  tenantId: string,
  key: KeyObject,
  keyId: string,
  previousDigest: string | undefined,
): Promise<{ head?: AnchorHead; problem?: string; otherKey?: boolean; digest: string }> {
  const bytes = await readFile(file);
  const digest = anchorDigest(bytes);
  let jws: string;
  try {
    jws = (await readFile(`${file}.jws`, 'utf8')).trim();
  } catch {
    return { problem: 'has no signature file (.jws)', digest };
  }
  const verdict = await verifyDetached(jws, bytes, key);
  if (!verdict.ok) {
    const kid = claimedKeyId(jws);
    const otherKey = kid !== undefined && kid !== keyId;
    return {
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
    return { problem: 'is not JSON', digest };
  }
  if (!isStatement(statement)) return { problem: `is not a ${ANCHOR_TYPE} statement`, digest };
  if (statement.tenant !== tenantId)
    return {
      problem: `states tenant ${JSON.stringify(statement.tenant)}, but lies in the directory of ${JSON.stringify(tenantId)}`,
      digest,
    };
  if (previousDigest !== undefined && statement.previous_sha256 !== previousDigest)
    return {
      problem: `names previous anchor ${statement.previous_sha256 ?? 'none'}, but the anchor before it has sha256 ${previousDigest}: an anchor was removed, replaced or inserted`,
      digest,
    };
  return {
    head: {
      file,
      entries: statement.entries,
      anchoredAt: statement.anchored_at,
      head:
        statement.head === null
          ? null
          : { entryId: statement.head.entry_id, rowHash: statement.head.row_hash },
    },
    digest,
  };
}

/**
 * Reads every tenant's anchors under DIR (one directory per tenant) and keeps those that verify
 * with `key`. A DIR without any anchor is a usage error: it would prove nothing.
 */
export async function readTrustedAnchors(
  dir: string,
  key: KeyObject,
  onlyTenant?: string,
): Promise<TrustedAnchors> {
  let entries: string[];
  try {
    entries = (await readdir(dir, { withFileTypes: true })).filter((d) => d.isDirectory()).map((d) => d.name);
  } catch (err) {
    throw new GovtrailError('USAGE', `--anchors: cannot read ${dir}: ${(err as Error).message}`, {
      cause: err,
    });
  }
  const keyId = await keyThumbprint(key);
  const heads = new Map<string, AnchorHead[]>();
  const problems: AnchorProblem[] = [];
  const otherKids: string[] = [];
  let files = 0;
  for (const name of entries.sort()) {
    const tenantId = decodeURIComponent(name);
    if (onlyTenant !== undefined && tenantId !== onlyTenant) continue;
    const list: AnchorHead[] = [];
    let previousDigest: string | undefined;
    for (const file of await listAnchorFiles(dir, tenantId)) {
      files++;
      const r = await checkAnchorFile(file, tenantId, key, keyId, previousDigest);
      previousDigest = r.digest;
      if (r.otherKey === true) otherKids.push(r.problem?.match(/kid (\S+)\)/)?.[1] ?? '?');
      if (r.problem !== undefined)
        problems.push({ tenantId, file: path.relative(dir, file), detail: r.problem });
      else if (r.head !== undefined) list.push({ ...r.head, file: path.relative(dir, file) });
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
  return { heads, problems, files };
}
