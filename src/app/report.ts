/** The HTML report of one tenant, written to a file (`govtrail report`, and the demo's). */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { RulePack } from '../core/rules/rules.js';
import { loadReportData } from '../outputs/report/data.js';
import { renderReport } from '../outputs/report/html.js';
import type { Session } from '../store/database.js';

/** Loads, renders and writes the report of one tenant; returns the path written. */
export async function writeReport(
  db: Session,
  options: {
    tenantId: string;
    out: string;
    from?: Date | undefined;
    to?: Date | undefined;
    pack?: RulePack | undefined;
  },
): Promise<string> {
  const data = await loadReportData(db, { ...options, now: new Date() });
  // The demo writes into GOVTRAIL_DATA_DIR, which does not exist when DATABASE_URL is set.
  mkdirSync(path.dirname(path.resolve(options.out)), { recursive: true });
  writeFileSync(options.out, renderReport(data));
  return options.out;
}
