/**
 * The report's compliance figures (compliance-section.ts renders them): the baseline that judged the
 * tenant, the share of the period in each status, and every control's status now with the change
 * that set it, from the stored control periods.
 */
import { tenantReport } from '../../core/conformance/report.js';
import { DEFAULT_RANKS, type Ranks } from '../../core/diff.js';
import { formatValue } from '../../core/format.js';
import { dateKey } from '../../core/normalise/time.js';
import type { Session } from '../../store/database.js';
import { loadTenantConformance } from '../conformance/load.js';
import type { ReportCompliance, ReportStatus } from './compliance-section.js';

/** The compliance of [from, to), statuses as of `now`; undefined when no baseline judged the tenant. */
export async function loadReportCompliance(
  db: Session,
  options: { tenantId: string; from: Date; to: Date; now: Date; ranks?: Ranks | undefined },
): Promise<ReportCompliance | undefined> {
  const c = await loadTenantConformance(db, options.tenantId, options.ranks ?? DEFAULT_RANKS);
  if (c === undefined) return undefined;
  const report = tenantReport(
    options.tenantId,
    c.baseline,
    c.periods,
    dateKey(options.from),
    dateKey(options.to),
  );
  const nowKey = dateKey(options.now);
  return {
    baseline: { id: c.baseline.id, title: c.baseline.title, sha256: c.baseline.sha256 },
    share: report.share,
    controls: report.controls.map((r) => {
      let status: ReportStatus = 'unknown';
      let period: (typeof c.periods)[number] | undefined;
      for (const p of c.periods) {
        if (p.controlId !== r.id || p.fromKey > nowKey) continue;
        status = p.status;
        period = p;
      }
      return {
        id: r.id,
        title: r.title,
        severity: r.severity,
        share: r.share,
        status,
        since: period?.fromKey ?? null,
        // As the report's change table shows values: short enum names, durations in words.
        value:
          period === undefined || period.status === 'deleted' ? null : formatValue(r.field, period.value),
        entryId: period?.entryId ?? null,
        actorKind: period?.actorKind ?? null,
        actorUserId: period?.actorUserId ?? null,
        ticket: period?.ticket ?? null,
      };
    }),
  };
}
