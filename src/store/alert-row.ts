/** A row of govtrail.alert as the outbox and the OCSF export read it, and the alert message it is. */
import type { Selectable } from 'kysely';
import type { AlertContext, AlertMessage, Severity } from '../core/alert.js';
import type { AlertTable } from './schema.js';

/** The columns of govtrail.alert an alert message is made of. */
export type AlertRow = Pick<
  Selectable<AlertTable>,
  | 'tenant_id'
  | 'entry_id'
  | 'rule_id'
  | 'rule_version'
  | 'severity'
  | 'title'
  | 'summary'
  | 'dedupe_key'
  | 'created_at'
> & {
  /** A number, or text where the query selects `alert_id::text`. */
  alert_id: number | string;
  context: AlertContext;
};

export function alertMessageOf(r: AlertRow): AlertMessage {
  return {
    alertId: String(r.alert_id),
    tenantId: r.tenant_id,
    entryId: r.entry_id,
    ruleId: r.rule_id,
    ruleVersion: r.rule_version,
    severity: r.severity as Severity,
    title: r.title,
    summary: r.summary,
    context: r.context,
    dedupeKey: r.dedupe_key,
    createdAt: r.created_at.toISOString(),
  };
}
