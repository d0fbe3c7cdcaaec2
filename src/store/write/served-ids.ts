/**
 * The set-based part of a reconcile (docs/design/integrity.md): the ids the source served go to a temporary
 * table as they are paged, and the stored entries missing from it are found with one anti-join
 * and read back in batches. Both tables live in the run's transaction (`on commit drop`), so a
 * failed or killed reconcile leaves nothing behind.
 */
import { sql } from 'kysely';
import type { Session } from '../database.js';

/** Creates the (empty) table of served ids for this transaction. */
export async function createServedTable(db: Session): Promise<void> {
  await sql`create temporary table govtrail_served (entry_id text collate "C" not null) on commit drop`.execute(
    db,
  );
}

/**
 * Adds served ids: one statement, the ids as one JSON text (as the stored-version lookup takes
 * them), which costs a reconcile less than encoding a COPY row per id.
 */
export async function recordServed(db: Session, ids: readonly string[]): Promise<void> {
  if (ids.length === 0) return;
  await sql`insert into pg_temp.govtrail_served (entry_id)
            select json_array_elements_text(${JSON.stringify(ids)}::json)`.execute(db);
}

/** A stored entry the source did not serve. */
export interface GoneRow {
  readonly entryId: string;
  /** created_at as PostgreSQL's text (microseconds), for keyset paging. */
  readonly posAt: string;
  /** Older than the oldest entry served: the source's retention ran out. */
  readonly expired: boolean;
}

/**
 * Collects the tenant's stored entries that were not served into a temporary table, each marked
 * expired when older than `oldestServedKey` (none served: none expired).
 */
export async function findGone(
  db: Session,
  tenantId: string,
  oldestServedKey: string | undefined,
): Promise<void> {
  await sql`analyze pg_temp.govtrail_served`.execute(db);
  await sql`
    create temporary table govtrail_gone (
      entry_id text collate "C" not null,
      created_at timestamptz not null,
      expired boolean not null
    ) on commit drop`.execute(db);
  await sql`
    insert into pg_temp.govtrail_gone (entry_id, created_at, expired)
    select e.entry_id, e.created_at, coalesce(e.created_at < ${oldestServedKey ?? null}::timestamptz, false)
    from govtrail.history_entry e
    where e.tenant_id = ${tenantId}
      and not exists (select 1 from pg_temp.govtrail_served s where s.entry_id = e.entry_id)`.execute(db);
  await sql`create index on pg_temp.govtrail_gone (created_at, entry_id)`.execute(db);
}

export async function countGone(db: Session): Promise<{ missing: number; expired: number }> {
  const { rows } = await sql<{ missing: string; expired: string }>`
    select count(*) filter (where not expired) as missing, count(*) filter (where expired) as expired
    from pg_temp.govtrail_gone`.execute(db);
  return { missing: Number(rows[0]?.missing ?? 0), expired: Number(rows[0]?.expired ?? 0) };
}

/** The next batch of gone entries after `after`, oldest first. */
export async function loadGone(db: Session, after: GoneRow | undefined, limit: number): Promise<GoneRow[]> {
  const { rows } = await sql<{ entry_id: string; pos_at: string; expired: boolean }>`
    select entry_id, created_at::text as pos_at, expired from pg_temp.govtrail_gone
    where ${after === undefined ? sql`true` : sql`(created_at, entry_id) > (${after.posAt}::timestamptz, ${after.entryId}::text collate "C")`}
    order by created_at, entry_id limit ${limit}`.execute(db);
  return rows.map((r) => ({ entryId: r.entry_id, posAt: r.pos_at, expired: r.expired }));
}
