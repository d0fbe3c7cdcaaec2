/**
 * report.html of the pack: `govtrail report` (src/outputs/report/) of the period, its posture
 * timeline drawn from the sampler that setting-periods.csv fed (timeline-sampler.ts), so memory
 * stays bounded.
 */

import type { RulePack } from '../../../core/rules/rules.js';
import type { Session } from '../../../store/database.js';
import { findLatestDiscrepancies, findSourceIntegrity } from '../../../store/read/integrity.js';
import {
  countAlertsBySeverity,
  countChanges,
  countChangesPerWeek,
  findExporterHealth,
  findLatestChanges,
} from '../../../store/read/views.js';
import { loadReportAlerts } from '../../report/alert-section.js';
import type { ReportData } from '../../report/data.js';
import { REPORT_CHANGE_ROWS, REPORT_DISCREPANCY_ROWS } from '../../report/data.js';
import { renderReport } from '../../report/html.js';
import type { TimelineSampler } from '../timeline-sampler.js';
import { writeWholeFile } from '../writer.js';
import type { PackDataFile } from './pack-file.js';

export const REPORT: PackDataFile = {
  name: 'report.html',
  write: async ({ db, dir, o, period, sampler, progress, found }) => {
    progress('report.html', 0);
    const reportData = await loadPackReportData(db, { ...period, now: o.now, sampler, pack: o.rulePack });
    found.backfill = reportData.backfill;
    return writeWholeFile(dir, 'report.html', renderReport(reportData), null);
  },
};

/**
 * The report's data for [from, to): what `loadReportData` gathers, with the timeline from the
 * sampler instead of a full load.
 */
export async function loadPackReportData(
  db: Session,
  o: {
    tenantId: string;
    from: Date;
    to: Date;
    now: Date;
    sampler: TimelineSampler;
    pack?: RulePack | undefined;
  },
): Promise<ReportData> {
  const filter = { tenantId: o.tenantId, since: o.from, until: o.to };
  const { timeline, directions } = o.sampler.result();
  const discrepancies = await findLatestDiscrepancies(db, o.tenantId, REPORT_DISCREPANCY_ROWS);
  return {
    tenantId: o.tenantId,
    from: o.from,
    to: o.to,
    generatedAt: o.now,
    timeline,
    directions,
    weekly: await countChangesPerWeek(db, filter),
    alerts: await countAlertsBySeverity(db, filter),
    changes: await findLatestChanges(db, filter, REPORT_CHANGE_ROWS),
    changeCount: await countChanges(db, filter),
    health: await findExporterHealth(db, o.tenantId),
    integrity: await findSourceIntegrity(db, o.tenantId),
    discrepancies: discrepancies.rows,
    discrepancyCount: discrepancies.total,
    ...(await loadReportAlerts(db, filter, o.pack)),
  };
}
