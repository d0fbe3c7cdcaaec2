/**
 * The three outcomes a delivery attempt records, for both outboxes: an alert's deliveries
 * (`alert_delivery`, keyed by alert_id) and its lifecycle events' (`alert_event_delivery`, keyed by
 * event_id). One place, so that the two keep the same bookkeeping (first_attempt_at set once,
 * last_error cleared on success).
 */
import { sql } from 'kysely';
import type { DeliveryStore } from '../../core/alert.js';
import type { Session } from '../database.js';

type Marks = Pick<DeliveryStore, 'markDelivered' | 'markRetry' | 'markFailed'>;

export function deliveryMarks(
  db: Session,
  table: 'alert_delivery' | 'alert_event_delivery',
  key: 'alert_id' | 'event_id',
): Marks {
  const t = sql.table(`govtrail.${table}`);
  const k = sql.ref(key);
  return {
    async markDelivered(id, sink, attempts, at) {
      await sql`update ${t}
                set status = 'delivered', attempts = ${attempts}, delivered_at = ${at}::timestamptz,
                    first_attempt_at = coalesce(first_attempt_at, ${at}::timestamptz), last_error = null
                where ${k} = ${Number(id)} and sink = ${sink}`.execute(db);
    },
    async markRetry(id, sink, attempts, nextAttemptAt, error) {
      await sql`update ${t}
                set attempts = ${attempts}, next_attempt_at = ${nextAttemptAt}::timestamptz, last_error = ${error},
                    first_attempt_at = coalesce(first_attempt_at, now())
                where ${k} = ${Number(id)} and sink = ${sink}`.execute(db);
    },
    async markFailed(id, sink, attempts, error) {
      await sql`update ${t}
                set status = 'failed', attempts = ${attempts}, last_error = ${error},
                    first_attempt_at = coalesce(first_attempt_at, now())
                where ${k} = ${Number(id)} and sink = ${sink}`.execute(db);
    },
  };
}
