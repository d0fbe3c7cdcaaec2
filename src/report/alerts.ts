/**
 * The alerts the report lists (the README promises a list, not only counts), and the findings a
 * backfill did not alert on (issue 20, items 16 and 17).
 */
import { sql } from 'kysely';
import { loadRulePack, type RulePack } from '../alerts/rules.js';
import type { Session } from '../store/database.js';
import { type BackfillFindings, findBackfillFindings } from '../sync/backfill-findings.js';

/** How many alerts the report lists (the newest); alerts.csv of the evidence pack has them all. */
export const REPORT_ALERT_ROWS = 200;

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

/** The alert list and the backfill findings of a period, for the report. */
export async function loadReportAlerts(
  db: Session,
  filter: { tenantId: string; since: Date; until: Date },
  pack: RulePack = loadRulePack(),
): Promise<{ alertList: ReportAlert[]; backfill: BackfillFindings }> {
  return {
    alertList: await findReportAlerts(db, filter),
    backfill: await findBackfillFindings(db, pack, {
      tenantId: filter.tenantId,
      from: filter.since,
      to: filter.until,
    }),
  };
}
