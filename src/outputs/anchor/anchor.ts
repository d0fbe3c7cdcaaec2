/**
 * Chain anchors (docs/design/integrity.md, "Proof against govtrail's own database"): a small signed statement
 * of one tenant's hash chain at one moment — entries stored, the head row and its row_hash, the
 * time, and the sha256 of the tenant's previous anchor, so that anchors form a chain of their own
 * as CloudTrail digest files do. Signed with Ed25519 as a detached JWS over the statement file's
 * exact bytes, and kept outside the database: whoever can write the database cannot rewrite them.
 *
 * Layout: `DIR/<tenant>/seq<number>-<time>-e<entries>.anchor.json` (the statement) next to
 * `….anchor.json.jws` (`header..signature`); anchors of format /1 were named `<time>-e<entries>…`.
 * Files are created exclusively (written as `.partial`, then hard-linked to their name, which fails
 * when the name exists): an anchor is never overwritten.
 *
 * Order comes from the database, not from clocks: each anchor (format /2) carries its number in
 * the tenant's chain of anchors, assigned under a per-tenant lock taken in the database together
 * with the name of the anchor before it (govtrail.anchor_log, sql/0017), so that replicas never
 * fork the chain, whatever their clocks say. The time in a statement is the database's.
 */
import { createHash, type KeyObject, randomUUID } from 'node:crypto';
import { link, mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { GovtrailError } from '../../core/errors.js';
import type { Session } from '../../store/database.js';
import { type ChainHead, readChainHead } from '../../store/read/chain-head.js';
import {
  databaseClock,
  lastLoggedAnchor,
  logAnchor,
  withAnchorChainLock,
} from '../../store/write/anchor-log.js';
import { keyThumbprint, signDetached } from '../pack/signing.js';

/** Version tag of the statement format: /2 adds `sequence`. */
export const ANCHOR_TYPE = 'govtrail-chain-anchor/2';
/** The first format, without a sequence number: still read, ordered by name (its time). */
export const ANCHOR_TYPE_V1 = 'govtrail-chain-anchor/1';
/** Suffix of a statement file; its signature is the same name plus `.jws`. */
export const ANCHOR_SUFFIX = '.anchor.json';

/** What an anchor states about one tenant's chain. */
export interface AnchorStatement extends ChainHead {
  readonly type: typeof ANCHOR_TYPE | typeof ANCHOR_TYPE_V1;
  readonly tenant: string;
  /** Number of the anchor in the tenant's chain of anchors, from 1 (format /2; absent in /1). */
  readonly sequence?: number;
  /** When the anchor was made (ISO 8601, UTC), by the database's clock. */
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

/**
 * Statement file names of a tenant, oldest first by name: format /1 names start with the time,
 * format /2 names with `seq` and the anchor's number, after them.
 */
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

/** Number of an anchor from its file name (format /2), undefined for a /1 name. */
export function sequenceOfName(name: string): number | undefined {
  const m = /^seq(\d{10})-/.exec(path.basename(name));
  return m === null ? undefined : Number(m[1]);
}

/** Where the tenant's chain of anchors stands: the next number and the digest it must name. */
async function chainEnd(
  db: Session,
  dir: string,
  directoryId: string,
  tenantId: string,
): Promise<{ next: number; previous: string | null }> {
  const logged = await lastLoggedAnchor(db, directoryId, tenantId);
  // The directory counts too: anchors of format /1 (numbered by their place), or an anchor whose
  // writer died before its log row committed.
  const files = await listAnchorFiles(dir, tenantId);
  let onDisk = 0;
  for (const [i, f] of files.entries()) onDisk = Math.max(onDisk, sequenceOfName(f) ?? i + 1);
  const newest = files.at(-1);
  if (newest !== undefined && onDisk >= (logged?.sequence ?? 0))
    return { next: onDisk + 1, previous: anchorDigest(await readFile(newest)) };
  if (logged !== undefined) return { next: logged.sequence + 1, previous: logged.sha256 };
  return { next: 1, previous: null };
}

/** The file under DIR that names it, the same on every replica that mounts it. */
export const DIRECTORY_ID_FILE = '.govtrail-anchors';

/**
 * The id of an anchor directory: read from its DIRECTORY_ID_FILE, created (exclusively, so two
 * replicas agree) when missing. Each directory holds its own chain of anchors per tenant.
 */
async function directoryId(dir: string): Promise<string> {
  const file = path.join(dir, DIRECTORY_ID_FILE);
  const read = async () => (await readFile(file, 'utf8')).trim();
  try {
    return await read();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  try {
    await createExclusive(file, `${randomUUID()}\n`);
  } catch (err) {
    if (!(err instanceof GovtrailError)) throw err;
  }
  return read();
}

/**
 * Makes, signs and writes the anchor of one tenant's chain into DIR, naming the tenant's previous
 * anchor. Numbered and chained under a per-tenant lock in the database (held to the end of the
 * transaction), so that two processes anchoring the same tenant take turns, whatever their clocks.
 */
export async function writeAnchor(
  db: Session,
  options: { dir: string; tenantId: string; key: KeyObject; now?: Date },
): Promise<WrittenAnchor> {
  const { dir, tenantId, key } = options;
  const tdir = tenantAnchorDir(dir, tenantId);
  await mkdir(tdir, { recursive: true });
  const dirId = await directoryId(dir);
  return withAnchorChainLock(db, dirId, tenantId, async (trx) => {
    const { next, previous } = await chainEnd(trx, dir, dirId, tenantId);
    const chain = await readChainHead(trx, tenantId);
    const at = options.now ?? (await databaseClock(trx));
    const statement: AnchorStatement = {
      type: ANCHOR_TYPE,
      tenant: tenantId,
      sequence: next,
      entries: chain.entries,
      head: chain.head,
      anchored_at: at.toISOString(),
      previous_sha256: previous,
      key_id: await keyThumbprint(key),
    };
    const bytes = statementBytes(statement);
    const jws = await signDetached(bytes, key);
    const stamp = at.toISOString().replace(/[-:]/g, '');
    const name = `seq${String(next).padStart(10, '0')}-${stamp}-e${String(chain.entries).padStart(12, '0')}${ANCHOR_SUFFIX}`;
    const file = path.join(tdir, name);
    // The number is claimed in the log first (its key refuses a second claim), then the files are
    // written; if writing fails, the claim rolls back with the transaction.
    await logAnchor(trx, {
      directoryId: dirId,
      tenantId,
      sequence: next,
      fileName: name,
      sha256: anchorDigest(bytes),
      entries: chain.entries,
      anchoredAt: at,
    });
    // The signature first: a statement is never seen without it.
    await createExclusive(`${file}.jws`, `${jws}\n`);
    await createExclusive(file, bytes);
    return { file, statement };
  });
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
