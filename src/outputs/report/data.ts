/**
 * Gathers what the HTML report shows, from the analyst views. The rendering (html.ts) is pure and
 * takes this object, so it can be tested without a database.
 */
import type { RulePack } from '../../core/rules/rules.js';
import type { Session } from '../../store/database.js';
import type { DiscrepancyRow } from '../../store/read/discrepancies.js';
import {
  findLatestDiscrepancies,
  findSourceIntegrity,
  type SourceIntegrity,
} from '../../store/read/integrity.js';
import type { ReportAlert } from '../../store/read/report-alerts.js';
import {
  type ChangeLogRow,
  countAlertsBySeverity,
  countChanges,
  countChangesPerWeek,
  type ExporterHealth,
  findChangeDirections,
  findEntryRange,
  findExporterHealth,
  findLatestChanges,
  findTimeline,
  type TimelineRow,
} from '../../store/read/views.js';
import type { BackfillFindings } from '../../sync/backfill-findings.js';
import { loadReportAlerts } from './alert-section.js';
import { loadReportCompliance } from './compliance-data.js';
import type { ReportCompliance } from './compliance-section.js';

/** How many changes the report's table lists (the newest); the export has them all. */
export const REPORT_CHANGE_ROWS = 150;

/** How many recorded discrepancies the integrity panel lists (the newest). */
export const REPORT_DISCREPANCY_ROWS = 50;

export interface ReportData {
  readonly tenantId: string;
  readonly from: Date;
  readonly to: Date;
  readonly generatedAt: Date;
  readonly timeline: readonly TimelineRow[];
  /** Direction of each field change of the timeline's entries, keyed `entryId|field`. */
  readonly directions: ReadonlyMap<string, string>;
  readonly weekly: readonly { week: Date; direction: string; n: number }[];
  readonly alerts: readonly { severity: string; n: number; undelivered: number }[];
  readonly changes: readonly ChangeLogRow[];
  readonly changeCount: number;
  readonly health: ExporterHealth | undefined;
  /** The source's integrity over the whole history (not only the period): last reconcile, open counts. */
  readonly integrity: SourceIntegrity;
  /** The newest recorded discrepancies of the tenant, newest first, at most {@link REPORT_DISCREPANCY_ROWS}. */
  readonly discrepancies: readonly DiscrepancyRow[];
  /** How many discrepancies are recorded for the tenant in all. */
  readonly discrepancyCount: number;
  /** The newest alerts of the period, at most {@link REPORT_ALERT_ROWS}. */
  readonly alertList?: readonly ReportAlert[] | undefined;
  /** What the rules find in backfilled entries of the period, which raised no per-entry alerts. */
  readonly backfill?: BackfillFindings | undefined;
  /** Conformance to the tenant's baseline over the period; undefined when no baseline judges it. */
  readonly compliance?: ReportCompliance | undefined;
}

/**
 * The report's data for [from, to). Without `to`: up to now, as documented: an auditor reads the
 * posture up to the day of the report, and a quiet tenant shows as quiet (its settings held, no
 * changes) rather than a period that silently ends at its last entry. Without `from`: 90 days
 * before the newest stored entry, or before `to` when that is sooner: a tenant changed every day
 * gets the last quarter, and a quiet one (or the sandbox, whose history ends in 2026-02) shows its
 * last quarter of changes and the quiet since, instead of "no changes in this period" beside the
 * alerts the terminal just listed. The period stays bounded (one quarter of changes), whatever
 * the length of the stored history.
 */
export async function loadReportData(
  db: Session,
  options: {
    tenantId: string;
    from?: Date | undefined;
    to?: Date | undefined;
    now: Date;
    /** The rule pack the backfill findings are evaluated with (default: the built-in one). */
    pack?: RulePack | undefined;
  },
): Promise<ReportData> {
  const to = options.to ?? options.now;
  const from = options.from ?? (await defaultFrom(db, options.tenantId, to));
  const filter = { tenantId: options.tenantId, since: from, until: to };
  const timeline = await findTimeline(db, options.tenantId, { from, to });
  const discrepancies = await findLatestDiscrepancies(db, options.tenantId, REPORT_DISCREPANCY_ROWS);
  return {
    tenantId: options.tenantId,
    from,
    to,
    generatedAt: options.now,
    timeline,
    directions: await findChangeDirections(
      db,
      options.tenantId,
      timeline.map((t) => t.entryId),
    ),
    weekly: await countChangesPerWeek(db, filter),
    alerts: await countAlertsBySeverity(db, filter),
    changes: await findLatestChanges(db, filter, REPORT_CHANGE_ROWS),
    changeCount: await countChanges(db, filter),
    health: await findExporterHealth(db, options.tenantId),
    integrity: await findSourceIntegrity(db, options.tenantId),
    discrepancies: discrepancies.rows,
    discrepancyCount: discrepancies.total,
    ...(await loadReportAlerts(db, filter, options.pack)),
    compliance: await loadReportCompliance(db, {
      tenantId: options.tenantId,
      from,
      to,
      now: options.now,
      ranks: options.pack?.ranks,
    }),
  };
}

const QUARTER_MS = 90 * 86_400_000;

/** 90 days before the newest stored entry, or before `to` when that is sooner. */
async function defaultFrom(db: Session, tenantId: string, to: Date): Promise<Date> {
  const range = await findEntryRange(db, tenantId);
  const end = range === undefined || range.last > to ? to : range.last;
  return new Date(end.getTime() - QUARTER_MS);
}
