/** A row of govtrail.alert as the outbox and the OCSF export read it, and the alert message it is. */
import type { AlertContext, AlertMessage, Severity } from '../core/alert.js';

/** The columns of govtrail.alert an alert message is made of. */
export interface AlertRow {
  alert_id: number | string;
  tenant_id: string;
  entry_id: string | null;
  rule_id: string;
  rule_version: number;
  severity: string;
  title: string;
  summary: string;
  context: AlertContext;
  dedupe_key: string;
  created_at: Date;
}

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
