/**
 * The alerts the report lists (the README promises a list, not only counts), and the findings a
 * backfill did not alert on (issue 20, items 16 and 17).
 */
import { loadRulePack } from '../../config/rule-pack.js';
import type { RulePack } from '../../core/rules/rules.js';
import type { Session } from '../../store/database.js';
import { findReportAlerts, type ReportAlert } from '../../store/read/report-alerts.js';
import { type BackfillFindings, findBackfillFindings } from '../../sync/backfill-findings.js';

/** How many alerts the report lists (the newest); alerts.csv of the evidence pack has them all. */

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
