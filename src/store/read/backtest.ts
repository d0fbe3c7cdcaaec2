/**
 * The reads behind `govtrail rules backtest`: what was raised for the entries of a period — the
 * per-entry alerts stored, and the repeats folded into them (alert_event `repeated`) — by rule.
 */
import { sql } from 'kysely';
import type { Session } from '../database.js';

/** Dedupe keys of what was raised per rule for the tenant's entries created in [from, to). */
export async function raisedForEntries(
  db: Session,
  tenantId: string,
  from: Date,
  to: Date,
): Promise<Map<string, Set<string>>> {
  const { rows } = await sql<{ rule_id: string; dedupe_key: string }>`
    select a.rule_id, a.dedupe_key from govtrail.alert a
    join govtrail.history_entry e on e.tenant_id = a.tenant_id and e.entry_id = a.entry_id
    where a.tenant_id = ${tenantId} and e.created_at >= ${from}::timestamptz and e.created_at < ${to}::timestamptz
      and a.dedupe_key = a.rule_id || ':' || a.tenant_id || ':' || a.entry_id
    union all
    select a.rule_id, ev.details->>'dedupe_key' from govtrail.alert_event ev
    join govtrail.alert a on a.alert_id = ev.alert_id
    join govtrail.history_entry e on e.tenant_id = a.tenant_id and e.entry_id = ev.details->>'entry_id'
    where ev.kind = 'repeated' and a.tenant_id = ${tenantId}
      and e.created_at >= ${from}::timestamptz and e.created_at < ${to}::timestamptz`.execute(db);
  const out = new Map<string, Set<string>>();
  for (const r of rows) {
    const set = out.get(r.rule_id) ?? new Set<string>();
    set.add(r.dedupe_key);
    out.set(r.rule_id, set);
  }
  return out;
}

/** Runs `fn` in a transaction the database itself keeps from writing (`set transaction read only`). */
export async function inReadOnlyTransaction<T>(db: Session, fn: (tx: Session) => Promise<T>): Promise<T> {
  return db.transaction().execute(async (tx) => {
    await sql`set transaction read only`.execute(tx);
    return fn(tx);
  });
}
