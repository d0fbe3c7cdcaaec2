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

/** A stored entry's content hash, whether it was served with the same bytes, and the run that stored it. */
export interface StoredVersion {
  readonly contentHash: Buffer;
  /** sha256 of its bytes as served, in hex (integrity.md, "The served digest"); undefined when not known. */
  readonly servedDigest?: string | undefined;
  /**
   * Whether its stored served digest equals the one the lookup was given for its id: the database
   * compared them (findStoredVersions with `digests`). Undefined when none was given.
   */
  readonly sameBytes?: boolean | undefined;
  readonly runId: number;
}

/**
 * As {@link findStoredContent}, with the run that stored each entry. With `digests` (the served
 * digest of each id, in hex, or undefined), the database compares each with the stored one and
 * answers `sameBytes`; the digests themselves are not read back. Ids and digests go as one JSON
 * text each and rows come back by position, not id: a reconcile asks this of every entry served,
 * and a text array parameter, an id and a digest per row cost it more than the comparison.
 */
export async function findStoredVersions(
  db: Session,
  tenantId: string,
  ids: readonly string[],
  digests?: readonly (string | undefined)[],
): Promise<Map<string, StoredVersion>> {
  if (ids.length === 0) return new Map();
  // ROWS FROM zips the two lists (the shorter padded with nulls): no digest, no comparison.
  const { rows } = await sql<{
    n: number;
    content_sha256: Buffer | null;
    same_bytes: boolean | null;
    raw: unknown;
    run_id: number | string;
  }>`
    select i.n::int as n, stored.content_sha256, stored.served_sha256 = decode(i.digest, 'hex') as same_bytes,
           stored.run_id, case when stored.content_sha256 is null then stored.raw end as raw
    from rows from (json_array_elements_text(${JSON.stringify(ids)}::json),
                    json_array_elements_text(${JSON.stringify(digests ?? [])}::json)) with ordinality as i(id, digest, n)
    cross join lateral (
      select e.content_sha256, e.served_sha256, e.raw, e.run_id from govtrail.history_entry e
      where e.tenant_id = ${tenantId} and e.entry_id = i.id collate "C" limit 1) as stored`.execute(db);
  const out = new Map<string, StoredVersion>();
  for (const r of rows)
    out.set(ids[r.n - 1] as string, {
      contentHash: r.content_sha256 === null ? contentHash(r.raw) : r.content_sha256,
      sameBytes: digests === undefined ? undefined : r.same_bytes === true,
      runId: Number(r.run_id),
    });
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
