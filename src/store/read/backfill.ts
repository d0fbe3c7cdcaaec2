/**
 * The reads behind the backfill findings (what a first run's entries would have alerted on): the
 * runs that raised a backfill digest, and the first stored entry from a time on.
 */
import { sql } from 'kysely';
import type { Session } from '../database.js';
import type { Position } from './chrono-entries.js';

/** The runs of a tenant that raised an alert of one of the backfill digest rules: their entries had no per-entry alerts. */
export async function findBackfillRuns(
  db: Session,
  tenantId: string,
  digestRules: readonly string[],
): Promise<number[]> {
  if (digestRules.length === 0) return [];
  const { rows } = await sql<{ run_id: number }>`
    select distinct a.run_id from govtrail.alert a
    where a.tenant_id = ${tenantId} and a.rule_id = any(${digestRules}::text[]) and a.run_id is not null
    order by a.run_id`.execute(db);
  return rows.map((r) => r.run_id);
}

export async function firstEntryFrom(
  db: Session,
  tenantId: string,
  from: Date,
): Promise<(Position & { createdAt: Date }) | undefined> {
  const { rows } = await sql<{ pos_at: string; entry_id: string; created_at: Date }>`
    select e.created_at::text as pos_at, e.entry_id, e.created_at from govtrail.history_entry e
    where e.tenant_id = ${tenantId} and e.created_at >= ${from}::timestamptz
    order by e.created_at, e.entry_id limit 1`.execute(db);
  const r = rows[0];
  return r === undefined ? undefined : { posAt: r.pos_at, entryId: r.entry_id, createdAt: r.created_at };
}
