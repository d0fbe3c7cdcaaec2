/**
 * The alerts section of `govtrail report` and of the evidence pack's report: the newest alerts of a
 * period from the alert_log view.
 */
import { sql } from 'kysely';
import type { Session } from '../database.js';

/** How many alerts the report lists; the rest are counted by severity. */
export const REPORT_ALERT_ROWS = 200;

/**
 * The newest alerts of [since, until), by the time of the change they are about (the time they
 * were raised for run-level ones), as `countAlertsBySeverity` counts them.
 */
export async function findReportAlerts(
  db: Session,
  filter: { tenantId: string; since: Date; until: Date },
  limit: number = REPORT_ALERT_ROWS,
): Promise<ReportAlert[]> {
  const { rows } = await sql<{
    alert_id: number;
    created_at: Date;
    changed_at: Date | null;
    entry_id: string | null;
    rule_id: string;
    severity: string;
    title: string;
    delivery_status: string;
  }>`
    select l.alert_id, l.created_at, l.changed_at, l.entry_id, l.rule_id, l.severity, l.title, l.delivery_status
    from govtrail.alert_log l
    where l.tenant_id = ${filter.tenantId}
      and coalesce(l.changed_at, l.created_at) >= ${filter.since}
      and coalesce(l.changed_at, l.created_at) < ${filter.until}
    order by coalesce(l.changed_at, l.created_at) desc, l.alert_id desc
    limit ${limit}`.execute(db);
  return rows.map((r) => ({
    alertId: r.alert_id,
    createdAt: r.created_at,
    changedAt: r.changed_at,
    entryId: r.entry_id,
    ruleId: r.rule_id,
    severity: r.severity,
    title: r.title,
    deliveryStatus: r.delivery_status,
  }));
}

/** One alert of the period as the report lists it. */
export interface ReportAlert {
  readonly alertId: number;
  readonly createdAt: Date;
  /** When the change it is about was made; null for run-level alerts (digest, failing sync). */
  readonly changedAt: Date | null;
  readonly entryId: string | null;
  readonly ruleId: string;
  readonly severity: string;
  readonly title: string;
  /** none, pending, failed or delivered (alert_log.delivery_status). */
  readonly deliveryStatus: string;
}
