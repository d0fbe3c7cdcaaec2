/**
 * Repository of the alert outbox: alert and alert_delivery.
 */
import { sql } from 'kysely';
import type { AlertDraft, DeliveryStore, DueDelivery } from '../../core/alert.js';
import { toJsonbText } from '../../core/normalise/canonical.js';
import { type RoutedSink, sinksFor } from '../../core/routing.js';
import { type AlertRow, alertMessageOf } from '../alert-row.js';
import type { Session } from '../database.js';

/**
 * Stores alerts and one pending delivery per sink whose route lets the alert through (routing is
 * decided here, once: a later change of the routes does not re-route stored alerts). An alert
 * whose dedupe key exists is skipped, with its deliveries. Returns how many alerts were new.
 */
export async function insertAlerts(
  db: Session,
  tenantId: string,
  runId: number | null,
  drafts: readonly AlertDraft[],
  sinks: readonly RoutedSink[],
): Promise<number> {
  if (drafts.length === 0) return 0;
  const { rows } = await sql<{ alert_id: number; dedupe_key: string }>`
    insert into govtrail.alert
      (tenant_id, entry_id, rule_id, rule_version, severity, title, summary, context, dedupe_key, run_id)
    select ${tenantId}, a.entry_id, a.rule_id, a.rule_version, a.severity, a.title, a.summary, a.context::jsonb,
           a.dedupe_key, ${runId}
    from unnest(${drafts.map((d) => d.entryId)}::text[], ${drafts.map((d) => d.ruleId)}::text[],
                ${drafts.map((d) => d.ruleVersion)}::int[], ${drafts.map((d) => d.severity)}::text[],
                ${drafts.map((d) => d.title)}::text[], ${drafts.map((d) => d.summary)}::text[],
                ${drafts.map((d) => toJsonbText(d.context))}::text[], ${drafts.map((d) => d.dedupeKey)}::text[])
         with ordinality as a(entry_id, rule_id, rule_version, severity, title, summary, context, dedupe_key, n)
    order by a.n
    on conflict (dedupe_key) do nothing
    returning alert_id, dedupe_key`.execute(db);
  const byKey = new Map(drafts.map((d) => [d.dedupeKey, d]));
  const ids: number[] = [];
  const sinkNames: string[] = [];
  for (const r of rows) {
    const draft = byKey.get(r.dedupe_key) as AlertDraft;
    for (const s of sinksFor(sinks, { severity: draft.severity, ruleId: draft.ruleId, tenantId })) {
      ids.push(r.alert_id);
      sinkNames.push(s);
    }
  }
  if (ids.length > 0) {
    await sql`
      insert into govtrail.alert_delivery (alert_id, sink)
      select * from unnest(${ids}::bigint[], ${sinkNames}::text[])
      on conflict do nothing`.execute(db);
  }
  return rows.length;
}

/** The DeliveryStore of the delivery loop, over alert_delivery. */
export function deliveryStore(db: Session): DeliveryStore {
  return {
    async dueDeliveries(now, limit): Promise<DueDelivery[]> {
      const { rows } = await sql<
        AlertRow & { sink: string; attempts: number; first_attempt_at: Date | null }
      >`
        select a.alert_id, a.tenant_id, a.entry_id, a.rule_id, a.rule_version, a.severity, a.title, a.summary,
               a.context, a.dedupe_key, a.created_at, d.sink, d.attempts, d.first_attempt_at
        from govtrail.alert_delivery d join govtrail.alert a using (alert_id)
        where d.status = 'pending' and d.next_attempt_at <= ${now}::timestamptz
        order by d.next_attempt_at, d.alert_id
        limit ${limit}`.execute(db);
      return rows.map((r) => ({
        alert: alertMessageOf(r),
        sink: r.sink,
        attempts: r.attempts,
        firstAttemptAt: r.first_attempt_at,
      }));
    },
    async markDelivered(alertId, sink, attempts, at) {
      await sql`update govtrail.alert_delivery
                set status = 'delivered', attempts = ${attempts}, delivered_at = ${at}::timestamptz,
                    first_attempt_at = coalesce(first_attempt_at, ${at}::timestamptz), last_error = null
                where alert_id = ${Number(alertId)} and sink = ${sink}`.execute(db);
    },
    async markRetry(alertId, sink, attempts, nextAttemptAt, error) {
      await sql`update govtrail.alert_delivery
                set attempts = ${attempts}, next_attempt_at = ${nextAttemptAt}::timestamptz, last_error = ${error},
                    first_attempt_at = coalesce(first_attempt_at, now())
                where alert_id = ${Number(alertId)} and sink = ${sink}`.execute(db);
    },
    async markFailed(alertId, sink, attempts, error) {
      await sql`update govtrail.alert_delivery
                set status = 'failed', attempts = ${attempts}, last_error = ${error},
                    first_attempt_at = coalesce(first_attempt_at, now())
                where alert_id = ${Number(alertId)} and sink = ${sink}`.execute(db);
    },
  };
}

/** Makes every pending delivery due now: an operator's `alerts deliver` retries without waiting out the backoff. */
export async function makePendingDeliveriesDue(db: Session): Promise<number> {
  const result = await sql`update govtrail.alert_delivery set next_attempt_at = now()
                           where status = 'pending' and next_attempt_at > now()`.execute(db);
  return Number(result.numAffectedRows ?? 0n);
}

/** Sends a PostgreSQL NOTIFY on `channel` (the notify sink): delivered when the caller's transaction commits. */
export async function notifyChannel(db: Session, channel: string, payload: string): Promise<void> {
  await sql`select pg_notify(${channel}, ${payload})`.execute(db);
}
