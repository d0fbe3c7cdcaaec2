/**
 * Repository of the alert outbox: alert and alert_delivery.
 */
import { sql } from 'kysely';
import type { AlertContext, AlertDraft, DeliveryStore, DueDelivery, Severity } from '../../core/alert.js';
import { replay, stateAt } from '../../core/alert-lifecycle.js';
import { toJsonbText } from '../../core/normalise/canonical.js';
import { type RoutedSink, sinksFor } from '../../core/routing.js';
import {
  type AlertPolicy,
  foldTarget,
  moreSevere,
  type OpenAlertFacts,
} from '../../core/rules/suppression.js';
import { type AlertRow, alertMessageOf } from '../alert-row.js';
import type { Session } from '../database.js';
import { insertEvents, lockAlerts, readAlertEvents } from './alert-events.js';
import { deliveryMarks } from './delivery-marks.js';

/**
 * Stores alerts and one pending delivery per sink whose route lets the alert through (routing is
 * decided here, once: a later change of the routes does not re-route stored alerts). An alert
 * whose dedupe key exists is skipped, with its deliveries. Returns how many alerts were new.
 *
 * With the pack's `policy` (docs/design/alerts.md, "Suppression"): a draft of a rule with a
 * suppression window that repeats an open alert of its scope folds into it as a `repeated` event
 * (no alert, no delivery: the follow-up outbox gets the event, which only the ticket sink acts
 * on); and a new alert lifts, with an automatic `reopened` event, the snooze of every alert of its
 * rule and scope that is less severe.
 */
export async function insertAlerts(
  db: Session,
  tenantId: string,
  runId: number | null,
  drafts: readonly AlertDraft[],
  sinks: readonly RoutedSink[],
  policy?: AlertPolicy,
): Promise<number> {
  if (drafts.length === 0) return 0;
  if (policy === undefined) return (await insertNew(db, tenantId, runId, drafts, sinks)).length;
  let inserted = 0;
  let batch: AlertDraft[] = [];
  const flush = async () => {
    const rows = await insertNew(db, tenantId, runId, batch, sinks);
    batch = [];
    inserted += rows.length;
    await liftSnoozes(db, tenantId, rows, policy);
  };
  for (const draft of drafts) {
    if (policy.windowOf(draft.ruleId) === undefined) {
      batch.push(draft);
      continue;
    }
    // Earlier drafts of this call must be stored before a later one can fold into them.
    await flush();
    if (!(await foldRepeat(db, tenantId, draft, policy))) batch.push(draft);
  }
  await flush();
  return inserted;
}

/** Stored alerts of a tenant and rule as suppression sees them, newest first, with the database's now. */
async function alertsOfRule(
  db: Session,
  tenantId: string,
  ruleId: string,
): Promise<{ now: Date; alerts: OpenAlertFacts[] }> {
  const { rows } = await sql<{
    alert_id: string;
    severity: Severity;
    context: AlertContext;
    created_at: Date;
    now: Date;
  }>`
    select alert_id::text, severity, context, created_at, now() as now from govtrail.alert
    where tenant_id = ${tenantId} and rule_id = ${ruleId}
    order by alert_id desc limit 200`.execute(db);
  const events = await readAlertEvents(
    db,
    rows.map((r) => Number(r.alert_id)),
  );
  return {
    now: rows[0]?.now ?? new Date(),
    alerts: rows.map((r) => ({
      alertId: r.alert_id,
      severity: r.severity,
      context: r.context,
      createdAt: r.created_at,
      resolved: replay(events.get(r.alert_id) ?? []).resolved,
    })),
  };
}

/** Folds `draft` into the open alert it repeats, if any; true when it did (or had already). */
async function foldRepeat(
  db: Session,
  tenantId: string,
  draft: AlertDraft,
  policy: AlertPolicy,
): Promise<boolean> {
  const { now, alerts } = await alertsOfRule(db, tenantId, draft.ruleId);
  const target = foldTarget(policy, draft, now, alerts);
  if (target === undefined) return false;
  const id = Number(target.alertId);
  await lockAlerts(db, [id]);
  const events = (await readAlertEvents(db, [id])).get(target.alertId) ?? [];
  // The same entry seen again (a retried run) is not a second repeat.
  if (events.some((e) => e.kind === 'repeated' && e.details?.['dedupe_key'] === draft.dedupeKey)) return true;
  await insertEvents(db, [
    {
      alertId: id,
      kind: 'repeated',
      actor: 'govtrail',
      automatic: true,
      repeatCount: replay(events).repeats + 1,
      details: {
        entry_id: draft.entryId,
        dedupe_key: draft.dedupeKey,
        severity: draft.severity,
        title: draft.title,
        changed_at: draft.context.changedAt,
      },
    },
  ]);
  return true;
}

/** Lifts the snooze of the less severe alerts of each new alert's rule and scope. */
async function liftSnoozes(
  db: Session,
  tenantId: string,
  inserted: readonly { alertId: number; draft: AlertDraft }[],
  policy: AlertPolicy,
): Promise<void> {
  if (inserted.length === 0) return;
  // Only alerts that were ever snoozed can be lifted: one cheap query tells whether any exist.
  const { rows } = await sql<{ alert_id: string }>`
    select distinct e.alert_id::text from govtrail.alert_event e join govtrail.alert a using (alert_id)
    where e.kind = 'snoozed' and a.tenant_id = ${tenantId}
      and a.rule_id = any(${[...new Set(inserted.map((i) => i.draft.ruleId))]}::text[])`.execute(db);
  if (rows.length === 0) return;
  for (const { alertId, draft } of inserted) {
    const { now, alerts } = await alertsOfRule(db, tenantId, draft.ruleId);
    const scope = policy.scopeOf(draft.ruleId, draft.context);
    const lower = alerts.filter(
      (a) =>
        Number(a.alertId) !== alertId &&
        moreSevere(draft.severity, a.severity) &&
        policy.scopeOf(draft.ruleId, a.context) === scope,
    );
    if (lower.length === 0) continue;
    const ids = lower.map((a) => Number(a.alertId));
    await lockAlerts(db, ids);
    const events = await readAlertEvents(db, ids);
    const snoozed = ids.filter((id) => stateAt(replay(events.get(String(id)) ?? []), now) === 'snoozed');
    await insertEvents(
      db,
      snoozed.map((id) => ({
        alertId: id,
        kind: 'reopened' as const,
        actor: 'govtrail',
        automatic: true,
        note: `snooze lifted: alert ${alertId} of the same rule and scope is ${draft.severity}`,
        details: { lifted_by: String(alertId), severity: draft.severity },
      })),
    );
  }
}

/** Inserts new alerts and their deliveries; returns each inserted alert's id and draft. */
async function insertNew(
  db: Session,
  tenantId: string,
  runId: number | null,
  drafts: readonly AlertDraft[],
  sinks: readonly RoutedSink[],
): Promise<{ alertId: number; draft: AlertDraft }[]> {
  if (drafts.length === 0) return [];
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
  return rows.map((r) => ({ alertId: Number(r.alert_id), draft: byKey.get(r.dedupe_key) as AlertDraft }));
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
    ...deliveryMarks(db, 'alert_delivery', 'alert_id'),
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
