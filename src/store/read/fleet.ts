/**
 * What the job engine and the fleet metrics read from govtrail's own tables: the run ledger (missed
 * reconcile slots, freshness) and the alert outbox (when the next retry is due).
 */
import { sql } from 'kysely';
import type { Session } from '../database.js';

/**
 * The tenants among `tenants` whose reconcile of the slot at `slot` never started: no reconcile run
 * (of any trigger) began at or after the slot, though the tenant had a run before it. A tenant new
 * since the slot is not behind on anything.
 */
export async function readMissedReconciles(
  db: Session,
  slot: Date,
  tenants: readonly string[],
): Promise<string[]> {
  if (tenants.length === 0) return [];
  const { rows } = await sql<{ tenant_id: string }>`
    select t.tenant_id
      from unnest(${[...tenants]}::text[]) as t(tenant_id)
     where exists (select 1 from govtrail.sync_run r
                    where r.tenant_id = t.tenant_id and r.started_at < ${slot.toISOString()}::timestamptz)
       and not exists (select 1 from govtrail.sync_run r
                        where r.tenant_id = t.tenant_id and r.kind = 'reconcile' and r.status <> 'skipped'
                          and r.started_at >= ${slot.toISOString()}::timestamptz)`.execute(db);
  return rows.map((r) => r.tenant_id);
}

/** When the earliest pending alert delivery, or follow-up of one (alert_event_delivery), is due; undefined when none is pending. */
export async function readNextDeliveryDue(db: Session): Promise<Date | undefined> {
  const { rows } = await sql<{ due: Date | null }>`
    select least((select min(next_attempt_at) from govtrail.alert_delivery where status = 'pending'),
                 (select min(next_attempt_at) from govtrail.alert_event_delivery where status = 'pending')) as due`.execute(
    db,
  );
  const due = rows[0]?.due;
  return due == null ? undefined : new Date(due);
}

/** The finish time of each tenant's last successful sync (tenants never synced are absent). */
export async function readLastSuccesses(db: Session, tenants: readonly string[]): Promise<Map<string, Date>> {
  const out = new Map<string, Date>();
  if (tenants.length === 0) return out;
  const rows = await db
    .selectFrom('govtrail.sync_run')
    .select(['tenant_id', sql<Date>`max(finished_at)`.as('at')])
    .where('tenant_id', 'in', [...tenants])
    .where('kind', '=', 'sync')
    .where('status', '=', 'succeeded')
    .groupBy('tenant_id')
    .execute();
  for (const r of rows) if (r.at !== null) out.set(r.tenant_id, new Date(r.at));
  return out;
}
