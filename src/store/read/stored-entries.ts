import { sql } from 'kysely';
import { contentHash } from '../../core/normalise/canonical.js';
import type { Session } from '../database.js';

/**
 * Of the given ids, those already stored for the tenant, each with its content hash: one
 * primary-key probe per id. (The plainer `entry_id = any($ids)` is planned, while a backfill's rows
 * are uncommitted and the table has no statistics, as a scan of every row of the tenant — each batch
 * then cost more than the last: 0.5 s per batch at 300 000 rows.) A row stored before migration
 * 0004 has no content_sha256: its hash is computed from raw here, the one place that knows.
 */
export async function findStoredContent(
  db: Session,
  tenantId: string,
  ids: readonly string[],
): Promise<Map<string, Buffer>> {
  const versions = await findStoredVersions(db, tenantId, ids);
  return new Map([...versions].map(([id, v]) => [id, v.contentHash]));
}

/** A stored entry's content hash, its served digest (when known) and the run that stored it. */
export interface StoredVersion {
  readonly contentHash: Buffer;
  /** sha256 of its bytes as served, in hex (integrity.md, "The served digest"); undefined when not known. */
  readonly servedDigest?: string | undefined;
  readonly runId: number;
}

/**
 * A stored entry served again with the bytes it was stored from: the database found its stored
 * served digest equal to the one given (integrity.md, "The served digest"). Nothing more is read.
 */
export interface SameBytes {
  readonly sameBytes: true;
}

const SAME_BYTES: SameBytes = Object.freeze({ sameBytes: true });

/** What findHeldVersions tells of an id stored: the same bytes, or its stored version. */
export type HeldVersion = StoredVersion | SameBytes;

export function isSameBytes(v: HeldVersion): v is SameBytes {
  return (v as Partial<SameBytes>).sameBytes === true;
}

/** The rows of a lookup: what is stored of the ids at the given (1-based) positions. */
function heldQuery(tenantId: string, ids: readonly string[], digests: readonly (string | undefined)[]) {
  // ROWS FROM zips the two lists (the shorter padded with nulls): no digest, no comparison. Ids and
  // digests go as one JSON text each, and rows come back by position, not id: a text array
  // parameter and an id per row cost a reconcile, which asks this of every entry, more than the
  // comparison.
  return sql`
    select i.n::int as n, stored.content_sha256, stored.served_sha256 = decode(i.digest, 'hex') as same,
           stored.run_id, case when stored.content_sha256 is null then stored.raw end as raw
    from rows from (json_array_elements_text(${JSON.stringify(ids)}::json),
                    json_array_elements_text(${JSON.stringify(digests)}::json)) with ordinality as i(id, digest, n)
    cross join lateral (
      select e.content_sha256, e.served_sha256, e.raw, e.run_id from govtrail.history_entry e
      where e.tenant_id = ${tenantId} and e.entry_id = i.id collate "C" limit 1) as stored`;
}

interface VersionRow {
  n: number;
  /** A Buffer from pg, a Uint8Array from PGlite. */
  content_sha256: Uint8Array | null;
  raw: unknown;
  run_id: number | string;
}

/** The bytes as a Buffer: pg's own as they are (a fresh Buffer per value), PGlite's copied. */
function asBuffer(b: Uint8Array): Buffer {
  return Buffer.isBuffer(b) ? b : Buffer.from(b);
}

function versionOf(r: VersionRow): StoredVersion {
  return {
    contentHash: r.content_sha256 === null ? contentHash(r.raw) : asBuffer(r.content_sha256),
    runId: Number(r.run_id),
  };
}

/** As {@link findStoredContent}, with the run that stored each entry. */
export async function findStoredVersions(
  db: Session,
  tenantId: string,
  ids: readonly string[],
): Promise<Map<string, StoredVersion>> {
  if (ids.length === 0) return new Map();
  const { rows } = await heldQuery(tenantId, ids, []).$castTo<VersionRow>().execute(db);
  const out = new Map<string, StoredVersion>();
  for (const r of rows) out.set(ids[r.n - 1] as string, versionOf(r));
  return out;
}

/**
 * Of the given ids, those stored for the tenant: {@link SameBytes} for each whose stored served
 * digest equals its entry in `digests` (the served digest of the copy at hand, in hex, or
 * undefined), else its stored version. An entry served unchanged — nearly every one a reconcile
 * or a look-back window is served — costs its position in one comma-separated list, not a row.
 */
export async function findHeldVersions(
  db: Session,
  tenantId: string,
  ids: readonly string[],
  digests: readonly (string | undefined)[],
): Promise<Map<string, HeldVersion>> {
  if (ids.length === 0) return new Map();
  const { rows } = await sql<VersionRow & { same: string | null }>`
    with held as (${heldQuery(tenantId, ids, digests)})
    select null::int as n, string_agg(n::text, ',') as same, null::bytea as content_sha256,
           null::bigint as run_id, null::jsonb as raw
    from held where same
    union all
    select n, null, content_sha256, run_id, raw from held where same is not true`.execute(db);
  const out = new Map<string, HeldVersion>();
  for (const r of rows) {
    if (r.n !== null) out.set(ids[r.n - 1] as string, versionOf(r));
    else if (r.same !== null)
      for (const n of r.same.split(',')) out.set(ids[Number(n) - 1] as string, SAME_BYTES);
  }
  return out;
}

/** Of the given ids, those already stored for the tenant. */
export async function findStoredEntryIds(
  db: Session,
  tenantId: string,
  ids: readonly string[],
): Promise<Set<string>> {
  return new Set((await findStoredContent(db, tenantId, ids)).keys());
}

/** row_hash of the tenant's last stored row (storage order), or null for a tenant with none. */
export async function findLastRowHash(db: Session, tenantId: string): Promise<Buffer | null> {
  const row = await db
    .selectFrom('govtrail.history_entry')
    .select('row_hash')
    .where('tenant_id', '=', tenantId)
    .orderBy('seq', 'desc')
    .limit(1)
    .executeTakeFirst();
  return row === undefined ? null : Buffer.from(row.row_hash);
}

export interface StoredEntryKey {
  readonly entryId: string;
  readonly createdAt: Date;
  readonly createdAtText: string | null;
}

/** The tenant's newest stored entry by (created_at, entry_id). */
export async function findNewestEntry(db: Session, tenantId: string): Promise<StoredEntryKey | undefined> {
  const row = await db
    .selectFrom('govtrail.history_entry')
    .select(['entry_id', 'created_at', 'created_at_text'])
    .where('tenant_id', '=', tenantId)
    .orderBy('created_at', 'desc')
    .orderBy('entry_id', 'desc')
    .limit(1)
    .executeTakeFirst();
  return row === undefined
    ? undefined
    : { entryId: row.entry_id, createdAt: row.created_at, createdAtText: row.created_at_text };
}

export async function countEntries(db: Session, tenantId: string): Promise<number> {
  const row = await db
    .selectFrom('govtrail.history_entry')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('tenant_id', '=', tenantId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}
