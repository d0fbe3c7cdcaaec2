/**
 * `govtrail export ocsf`: the OCSF events of a period as JSON Lines, one event a line — Entity
 * Management for the history entries, then Detection Finding for the alerts. Reads keyset pages and
 * honours the file's backpressure, so memory stays bounded whatever the period holds. The file is
 * written beside its final name and renamed when complete: a collector watching the directory
 * never picks up half an export.
 */
import { once } from 'node:events';
import { createWriteStream, renameSync, rmSync } from 'node:fs';
import { alertToDetectionFinding } from '../../core/ocsf/finding.js';
import { entryToEntityManagement } from '../../core/ocsf/mapping.js';
import type { OcsfOptions } from '../../core/ocsf/types.js';
import type { Session } from '../../store/database.js';
import { iterateOcsfAlerts, iterateOcsfEntries } from '../../store/read/ocsf.js';

/** Which records to export. */
export type OcsfExportKind = 'changes' | 'alerts' | 'all';
export const OCSF_EXPORT_KINDS: readonly OcsfExportKind[] = ['changes', 'alerts', 'all'];

export interface OcsfExportOptions extends OcsfOptions {
  readonly tenantId: string;
  readonly from: Date;
  readonly to: Date;
  readonly kind: OcsfExportKind;
  readonly out: string;
  /** Rows per database page (default 500). */
  readonly pageSize?: number;
}

export interface OcsfExportResult {
  readonly path: string;
  /** Entity Management (3004) events written. */
  readonly entityManagement: number;
  /** Detection Finding (2004) events written. */
  readonly detectionFinding: number;
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
  let complete = false;
  try {
    if (options.kind !== 'alerts') {
      for await (const entry of iterateOcsfEntries(db, period, options.pageSize)) {
        await write(entryToEntityManagement(entry, mapping));
        entityManagement++;
      }
    }
    if (options.kind !== 'changes') {
      for await (const alert of iterateOcsfAlerts(db, period, options.pageSize)) {
        await write(alertToDetectionFinding(alert, mapping));
        detectionFinding++;
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
  return { path: options.out, entityManagement, detectionFinding, bytes };
}
