/**
 * `govtrail export ocsf`: the OCSF events of a period as JSON Lines, one event a line — Entity
 * Management for the history entries, then Detection Finding for the alerts, then Compliance
 * Finding for the status changes of the baseline's controls (when a baseline judges the tenant). Reads keyset pages and
 * honours the file's backpressure, so memory stays bounded whatever the period holds. The file is
 * written beside its final name and renamed when complete: a collector watching the directory
 * never picks up half an export.
 */
import { once } from 'node:events';
import { createWriteStream, renameSync, rmSync } from 'node:fs';
import type { Ranks } from '../../core/diff.js';
import { dateKey } from '../../core/normalise/time.js';
import { complianceChangesOf, complianceChangeToFinding } from '../../core/ocsf/compliance.js';
import { alertToDetectionFinding } from '../../core/ocsf/finding.js';
import { entryToEntityManagement } from '../../core/ocsf/mapping.js';
import type { OcsfOptions } from '../../core/ocsf/types.js';
import type { Session } from '../../store/database.js';
import { iterateOcsfAlerts, iterateOcsfEntries } from '../../store/read/ocsf.js';
import { loadTenantConformance } from '../conformance/load.js';

/** Which records to export. */
export type OcsfExportKind = 'changes' | 'alerts' | 'compliance' | 'all';
export const OCSF_EXPORT_KINDS: readonly OcsfExportKind[] = ['changes', 'alerts', 'compliance', 'all'];

export interface OcsfExportOptions extends OcsfOptions {
  readonly tenantId: string;
  readonly from: Date;
  readonly to: Date;
  readonly kind: OcsfExportKind;
  readonly out: string;
  /** Rows per database page (default 500). */
  readonly pageSize?: number;
  /** The rule pack's ranks, which the judging baseline's bounds are read with (compliance findings). */
  readonly ranks?: Ranks | undefined;
}

export interface OcsfExportResult {
  readonly path: string;
  /** Entity Management (3004) events written. */
  readonly entityManagement: number;
  /** Detection Finding (2004) events written. */
  readonly detectionFinding: number;
  /** Compliance Finding (2003) events written. */
  readonly complianceFinding: number;
  /** Whether a baseline has judged the tenant (no compliance findings without one). */
  readonly judged: boolean;
  readonly bytes: number;
}

/** Writes the period's events to `out` (replaced when it exists). */
export async function writeOcsfJsonl(db: Session, options: OcsfExportOptions): Promise<OcsfExportResult> {
  const partial = `${options.out}.partial`;
  const file = createWriteStream(partial, { flags: 'w' });
  const failed = new Promise<never>((_, reject) => file.once('error', reject));
  failed.catch(() => {});
  let bytes = 0;
  const write = async (event: unknown): Promise<void> => {
    const line = `${JSON.stringify(event)}\n`;
    bytes += Buffer.byteLength(line, 'utf8');
    if (!file.write(line, 'utf8')) await Promise.race([once(file, 'drain'), failed]);
  };
  const mapping: OcsfOptions = { now: options.now, productVersion: options.productVersion };
  const period = { tenantId: options.tenantId, from: options.from, to: options.to };
  let entityManagement = 0;
  let detectionFinding = 0;
  let complianceFinding = 0;
  let judged = false;
  let complete = false;
  try {
    if (options.kind === 'changes' || options.kind === 'all') {
      for await (const entry of iterateOcsfEntries(db, period, options.pageSize)) {
        await write(entryToEntityManagement(entry, mapping));
        entityManagement++;
      }
    }
    if (options.kind === 'alerts' || options.kind === 'all') {
      for await (const alert of iterateOcsfAlerts(db, period, options.pageSize)) {
        await write(alertToDetectionFinding(alert, mapping));
        detectionFinding++;
      }
    }
    if ((options.kind === 'compliance' || options.kind === 'all') && options.ranks !== undefined) {
      const toKey = dateKey(options.to);
      const c = await loadTenantConformance(db, options.tenantId, options.ranks, toKey);
      judged = c !== undefined;
      if (c !== undefined) {
        const changes = complianceChangesOf(
          options.tenantId,
          c.baseline,
          c.loadedAtKey,
          c.periods,
          dateKey(options.from),
          toKey,
        );
        for (const change of changes) {
          await write(complianceChangeToFinding(change, mapping));
          complianceFinding++;
        }
      }
    }
    file.end();
    await Promise.race([once(file, 'finish'), failed]);
    renameSync(partial, options.out);
    complete = true;
  } finally {
    if (!complete) {
      file.destroy();
      rmSync(partial, { force: true });
    }
  }
  return { path: options.out, entityManagement, detectionFinding, complianceFinding, judged, bytes };
}
