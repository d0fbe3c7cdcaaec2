/**
 * Repository of the alert lifecycle (sql/0025_alert_lifecycle.sql): recording events after
 * checking them against the replayed state (src/core/alert-lifecycle.ts), resolving alerts
 * automatically, listing alerts by state, and the outbox of the follow-ups the sinks receive.
 */
import { type Selectable, sql } from 'kysely';
import type { DeliveryStore, DueDelivery } from '../../core/alert.js';
import { type AlertEventKind, type LifecycleEvent, refusal, replay } from '../../core/alert-lifecycle.js';
import { GovtrailError } from '../../core/errors.js';
import { type AlertRow, alertMessageOf } from '../alert-row.js';
import type { Session } from '../database.js';
import type { AlertEventTable } from '../schema.js';
import { deliveryMarks } from './delivery-marks.js';

/** One stored event, as the commands, the evidence pack and the sinks see it. */
export interface StoredAlertEvent extends LifecycleEvent {
  readonly eventId: string;
  readonly alertId: string;
  readonly automatic: boolean;
  readonly repeatCount: number | null;
  readonly details: Readonly<Record<string, unknown>> | null;
}

/** What to record: one kind of event, by one actor, on one or more alerts. */
export interface EventRequest {
  readonly kind: Exclude<AlertEventKind, 'repeated'>;
  readonly actor: string;
  readonly note?: string | undefined;
  readonly assignee?: string | undefined;
  readonly until?: Date | undefined;
  /** `snoozed` for this long from the database's now, instead of `until`. */
  readonly forSeconds?: number | undefined;
}

/**
 * An alert_event row (store/schema.ts), with kind and details as their stored shapes; the ids are
 * selected as text (`::text`).
 */
type EventRow = Omit<Selectable<AlertEventTable>, 'event_id' | 'alert_id' | 'kind' | 'details'> & {
  event_id: string;
  alert_id: string;
  kind: AlertEventKind;
  details: Record<string, unknown> | null;
};

function toEvent(r: EventRow): StoredAlertEvent {
  return {
    eventId: String(r.event_id),
    alertId: String(r.alert_id),
    kind: r.kind,
    actor: r.actor,
    at: r.at,
    note: r.note,
    assignee: r.assignee,
    until: r.until,
    automatic: r.automatic,
    repeatCount: r.repeat_count,
    details: r.details,
  };
}

/** The events of the alerts asked for, in order (event_id), grouped by alert id. */
export async function readAlertEvents(
  db: Session,
  alertIds: readonly number[],
): Promise<Map<string, StoredAlertEvent[]>> {
  const byAlert = new Map<string, StoredAlertEvent[]>();
  if (alertIds.length === 0) return byAlert;
  const { rows } = await sql<EventRow>`
    select event_id::text, alert_id::text, kind, actor, at, note, assignee, until, automatic, repeat_count, details
    from govtrail.alert_event where alert_id = any(${alertIds}::bigint[]) order by alert_event.event_id`.execute(
    db,
  );
  for (const r of rows) {
    const list = byAlert.get(String(r.alert_id));
    if (list === undefined) byAlert.set(String(r.alert_id), [toEvent(r)]);
    else list.push(toEvent(r));
  }
  return byAlert;
}

/** Runs `fn` in a transaction unless `db` already is one. */
async function inTransaction<T>(db: Session, fn: (tx: Session) => Promise<T>): Promise<T> {
  return db.isTransaction ? fn(db) : db.transaction().execute(fn);
}

/**
 * Serialises lifecycle writes per alert (two operators acknowledging at once: one is refused).
 * An advisory lock rather than SELECT … FOR UPDATE: the writer role may not update `alert`.
 */
export async function lockAlerts(tx: Session, alertIds: readonly number[]): Promise<void> {
  await sql`select pg_advisory_xact_lock(hashtext('govtrail.alert_event'), (id % 2147483647)::int)
            from unnest(${[...alertIds].sort((a, b) => a - b)}::bigint[]) as id`.execute(tx);
}

/**
 * Records `request` on every alert of `alertIds`, all or none: each alert must exist and the
 * transition must make sense for its replayed state at the database's now, else a USAGE error
 * names the first that does not (exit 2). Each event gets a delivery row for every sink its alert
 * was routed to. Returns the stored events.
 */
export async function recordAlertEvents(
  db: Session,
  alertIds: readonly number[],
  request: EventRequest,
): Promise<StoredAlertEvent[]> {
  return inTransaction(db, async (tx) => {
    await lockAlerts(tx, alertIds);
    const { rows: known } = await sql<{ alert_id: string; now: Date }>`
      select a.alert_id::text, now() as now from govtrail.alert a
      where a.alert_id = any(${alertIds}::bigint[])`.execute(tx);
    const knownIds = new Set(known.map((r) => r.alert_id));
    const unknown = alertIds.find((id) => !knownIds.has(String(id)));
    if (unknown !== undefined) throw new GovtrailError('USAGE', `alert ${unknown}: no such alert`);
    const now = known[0]?.now ?? new Date();
    const events = await readAlertEvents(tx, alertIds);
    const { forSeconds, ...rest } = request;
    const asked =
      forSeconds === undefined ? rest : { ...rest, until: new Date(now.getTime() + forSeconds * 1000) };
    const proposed: LifecycleEvent = { ...asked, at: now };
    for (const id of alertIds) {
      const why = refusal(replay(events.get(String(id)) ?? []), proposed, now);
      if (why !== undefined) throw new GovtrailError('USAGE', `alert ${id}: ${request.kind}: it ${why}`);
    }
    return insertEvents(
      tx,
      alertIds.map((id) => ({ alertId: id, ...asked, automatic: false })),
    );
  });
}

interface NewEvent {
  readonly alertId: number;
  readonly kind: AlertEventKind;
  readonly actor: string;
  readonly note?: string | undefined;
  readonly assignee?: string | undefined;
  readonly until?: Date | undefined;
  readonly automatic: boolean;
  readonly repeatCount?: number | undefined;
  readonly details?: Record<string, unknown> | undefined;
}

/** Inserts events in order and a pending delivery of each to every sink its alert was routed to. */
export async function insertEvents(db: Session, events: readonly NewEvent[]): Promise<StoredAlertEvent[]> {
  if (events.length === 0) return [];
  const { rows } = await sql<EventRow>`
    insert into govtrail.alert_event (alert_id, kind, actor, note, assignee, until, automatic, repeat_count, details)
    select e.alert_id, e.kind, e.actor, e.note, e.assignee, e.until, e.automatic, e.repeat_count, e.details::jsonb
    from unnest(${events.map((e) => e.alertId)}::bigint[], ${events.map((e) => e.kind)}::text[],
                ${events.map((e) => e.actor)}::text[], ${events.map((e) => e.note ?? null)}::text[],
                ${events.map((e) => e.assignee ?? null)}::text[],
                ${events.map((e) => e.until?.toISOString() ?? null)}::timestamptz[],
                ${events.map((e) => e.automatic)}::boolean[], ${events.map((e) => e.repeatCount ?? null)}::int[],
                ${events.map((e) => (e.details === undefined ? null : JSON.stringify(e.details)))}::text[])
         with ordinality as e(alert_id, kind, actor, note, assignee, until, automatic, repeat_count, details, n)
    order by e.n
    returning event_id::text, alert_id::text, kind, actor, at, note, assignee, until, automatic, repeat_count, details`.execute(
    db,
  );
  await sql`
    insert into govtrail.alert_event_delivery (event_id, sink)
    select e.event_id, d.sink
    from govtrail.alert_event e join govtrail.alert_delivery d on d.alert_id = e.alert_id
    where e.event_id = any(${rows.map((r) => r.event_id)}::bigint[])
    on conflict do nothing`.execute(db);
  return rows.map(toEvent);
}

/** Which alerts to resolve automatically: by id, or every unresolved one of a rule and tenant. */
export type AutoResolveTarget =
  | { readonly alertIds: readonly number[] }
  | { readonly tenantId: string; readonly ruleId: string };

/**
 * Resolves alerts because their condition ended (a control passing again, a tenant's sync
 * recovering): a `resolved` event by `govtrail`, automatic, with `reason` as its note, on every
 * target alert that is not resolved already (the others are left as they are). Callable inside a
 * run's transaction. Returns the ids resolved.
 */
export async function resolveAlertsAutomatically(
  db: Session,
  target: AutoResolveTarget,
  reason: string,
): Promise<string[]> {
  return inTransaction(db, async (tx) => {
    const { rows } =
      'alertIds' in target
        ? await sql<{ alert_id: string }>`select alert_id::text from govtrail.alert
            where alert_id = any(${target.alertIds}::bigint[]) order by alert_id`.execute(tx)
        : await sql<{ alert_id: string }>`select alert_id::text from govtrail.alert
            where tenant_id = ${target.tenantId} and rule_id = ${target.ruleId} order by alert_id`.execute(
            tx,
          );
    if (rows.length === 0) return [];
    const ids = rows.map((r) => Number(r.alert_id));
    await lockAlerts(tx, ids);
    const events = await readAlertEvents(tx, ids);
    const open = ids.filter((id) => !replay(events.get(String(id)) ?? []).resolved);
    await insertEvents(
      tx,
      open.map((alertId) => ({
        alertId,
        kind: 'resolved',
        actor: 'govtrail',
        note: reason,
        automatic: true,
      })),
    );
    return open.map(String);
  });
}

/**
 * The DeliveryStore of lifecycle follow-ups, over alert_event_delivery. Its rows carry the event;
 * the id the mark* methods receive is the event id. An event becomes due for a sink only once the
 * alert itself is no longer pending for that sink, and only after that sink's earlier events of
 * the same alert that wait for a retry: PagerDuty must see the trigger before the acknowledge.
 * Due events of one alert come in event order, and a sink's lane sends them in that order.
 */
export function eventDeliveryStore(db: Session): DeliveryStore {
  return {
    async dueDeliveries(now, limit): Promise<DueDelivery[]> {
      const { rows } = await sql<
        EventRow &
          Omit<AlertRow, 'alert_id'> & {
            sink: string;
            attempts: number;
            first_attempt_at: Date | null;
          }
      >`
        select e.event_id::text, e.alert_id::text, e.kind, e.actor, e.at, e.note, e.assignee, e.until, e.automatic,
               e.repeat_count, e.details,
               a.tenant_id, a.entry_id, a.rule_id, a.rule_version, a.severity, a.title, a.summary, a.context,
               a.dedupe_key, a.created_at, d.sink, d.attempts, d.first_attempt_at
        from govtrail.alert_event_delivery d
        join govtrail.alert_event e using (event_id)
        join govtrail.alert a on a.alert_id = e.alert_id
        where d.status = 'pending' and d.next_attempt_at <= ${now}::timestamptz
          and not exists (select 1 from govtrail.alert_delivery ad
                          where ad.alert_id = e.alert_id and ad.sink = d.sink and ad.status = 'pending')
          and not exists (select 1 from govtrail.alert_event_delivery p join govtrail.alert_event pe using (event_id)
                          where pe.alert_id = e.alert_id and p.sink = d.sink and p.status = 'pending'
                            and p.event_id < d.event_id and p.next_attempt_at > ${now}::timestamptz)
        order by d.event_id, d.sink
        limit ${limit}`.execute(db);
      return rows.map((r) => ({
        alert: alertMessageOf(r),
        sink: r.sink,
        attempts: r.attempts,
        firstAttemptAt: r.first_attempt_at,
        event: toEvent(r),
      }));
    },
    ...deliveryMarks(db, 'alert_event_delivery', 'event_id'),
  };
}
