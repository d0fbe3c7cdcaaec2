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

/** A stored entry's content hash, its served digest (when it has one) and the run that stored it. */
export interface StoredVersion {
  readonly contentHash: Buffer;
  /** sha256 of its bytes as served, in hex (integrity.md, "The served digest"); undefined when not stored. */
  readonly servedDigest?: string | undefined;
  readonly runId: number;
}

/** As {@link findStoredContent}, with the run that stored each entry. */
export async function findStoredVersions(
  db: Session,
  tenantId: string,
  ids: readonly string[],
): Promise<Map<string, StoredVersion>> {
  if (ids.length === 0) return new Map();
  const { rows } = await sql<{
    entry_id: string;
    content_sha256: Buffer | null;
    served_hex: string | null;
    raw: unknown;
    run_id: number | string;
  }>`
    select i.id as entry_id, stored.content_sha256, encode(stored.served_sha256, 'hex') as served_hex, stored.run_id,
           case when stored.content_sha256 is null then stored.raw end as raw
    from unnest(${ids as string[]}::text[]) as i(id)
    cross join lateral (
      select e.content_sha256, e.served_sha256, e.raw, e.run_id from govtrail.history_entry e
      where e.tenant_id = ${tenantId} and e.entry_id = i.id collate "C" limit 1) as stored`.execute(db);
  const out = new Map<string, StoredVersion>();
  for (const r of rows)
    out.set(r.entry_id, {
      contentHash: r.content_sha256 === null ? contentHash(r.raw) : Buffer.from(r.content_sha256),
      servedDigest: r.served_hex ?? undefined,
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
