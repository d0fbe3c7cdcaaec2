/**
 * Chain anchors (docs/design/integrity.md, "Proof against govtrail's own database"): a small signed statement
 * of one tenant's hash chain at one moment — entries stored, the head row and its row_hash, the
 * time, and the sha256 of the tenant's previous anchor, so that anchors form a chain of their own
 * as CloudTrail digest files do. Signed with Ed25519 as a detached JWS over the statement file's
 * exact bytes, and kept outside the database: whoever can write the database cannot rewrite them.
 *
 * Layout: `DIR/<tenant>/<time>-e<entries>.anchor.json` (the statement) next to
 * `….anchor.json.jws` (`header..signature`). Files are created exclusively (written as `.partial`,
 * then hard-linked to their name, which fails when the name exists): an anchor is never
 * overwritten.
 */
import { createHash, type KeyObject } from 'node:crypto';
import { link, mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { GovtrailError } from '../../core/errors.js';
import type { Session } from '../../store/database.js';
import { type ChainHead, readChainHead } from '../../store/read/chain-head.js';
import { keyThumbprint, signDetached } from '../pack/signing.js';

/** Version tag of the statement format. */
export const ANCHOR_TYPE = 'govtrail-chain-anchor/1';
/** Suffix of a statement file; its signature is the same name plus `.jws`. */
export const ANCHOR_SUFFIX = '.anchor.json';

/** What an anchor states about one tenant's chain. */
export interface AnchorStatement extends ChainHead {
  readonly type: typeof ANCHOR_TYPE;
  readonly tenant: string;
  /** When the anchor was made (ISO 8601, UTC). */
  readonly anchored_at: string;
  /** sha256 (hex) of the tenant's previous anchor statement file; null for the first. */
  readonly previous_sha256: string | null;
  /** RFC 7638 thumbprint of the signing key. */
  readonly key_id: string;
}

/** The directory of one tenant's anchors under DIR. */
export function tenantAnchorDir(dir: string, tenantId: string): string {
  return path.join(dir, encodeURIComponent(tenantId));
}

/** Statement file names of a tenant, oldest first (names start with the time). */
export async function listAnchorFiles(dir: string, tenantId: string): Promise<string[]> {
  const tdir = tenantAnchorDir(dir, tenantId);
  let names: string[];
  try {
    names = await readdir(tdir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
  return names
    .filter((n) => n.endsWith(ANCHOR_SUFFIX))
    .sort()
    .map((n) => path.join(tdir, n));
}

/** sha256 (hex) of an anchor statement file's bytes: what the next anchor names. */
export function anchorDigest(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/** The statement's file bytes: pretty JSON, one trailing newline. These exact bytes are signed. */
export function statementBytes(statement: AnchorStatement): Buffer {
  return Buffer.from(`${JSON.stringify(statement, null, 2)}\n`, 'utf8');
}

/** Writes `bytes` to `file` only if no such file exists (partial file, then an exclusive link). */
async function createExclusive(file: string, bytes: Uint8Array | string): Promise<void> {
  const partial = `${file}.${process.pid}.partial`;
  await writeFile(partial, bytes, { flag: 'wx' });
  try {
    await link(partial, file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST')
      throw new GovtrailError('USAGE', `${file} already exists: anchors are never overwritten`, {
        cause: err,
      });
    throw err;
  } finally {
    await rm(partial, { force: true });
  }
}

export interface WrittenAnchor {
  readonly file: string;
  readonly statement: AnchorStatement;
}

/**
 * Makes, signs and writes the anchor of one tenant's chain into DIR, naming the tenant's newest
 * anchor already there as its previous one.
 */
export async function writeAnchor(
  db: Session,
  options: { dir: string; tenantId: string; key: KeyObject; now?: Date },
): Promise<WrittenAnchor> {
  const { dir, tenantId, key } = options;
  const tdir = tenantAnchorDir(dir, tenantId);
  await mkdir(tdir, { recursive: true });
  const previousFile = (await listAnchorFiles(dir, tenantId)).at(-1);
  const previous = previousFile === undefined ? null : anchorDigest(await readFile(previousFile));
  const chain = await readChainHead(db, tenantId);
  const at = options.now ?? new Date();
  const statement: AnchorStatement = {
    type: ANCHOR_TYPE,
    tenant: tenantId,
    entries: chain.entries,
    head: chain.head,
    anchored_at: at.toISOString(),
    previous_sha256: previous,
    key_id: await keyThumbprint(key),
  };
  const bytes = statementBytes(statement);
  const jws = await signDetached(bytes, key);
  const stamp = at.toISOString().replace(/[-:]/g, '');
  const file = path.join(tdir, `${stamp}-e${String(chain.entries).padStart(12, '0')}${ANCHOR_SUFFIX}`);
  // The signature first: a statement is never seen without it.
  await createExclusive(`${file}.jws`, `${jws}\n`);
  await createExclusive(file, bytes);
  return { file, statement };
}

/** The tenant's newest anchor in DIR (statement bytes and signature), or undefined when none. */
export async function readNewestAnchor(
  dir: string,
  tenantId: string,
): Promise<{ file: string; statement: Buffer; jws: string } | undefined> {
  const file = (await listAnchorFiles(dir, tenantId)).at(-1);
  if (file === undefined) return undefined;
  const jws = await readFile(`${file}.jws`, 'utf8').catch(() => undefined);
  if (jws === undefined) return undefined;
  return { file, statement: await readFile(file), jws };
}
