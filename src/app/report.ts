/** The HTML report of one tenant, or of each tenant of a group, written to files (`govtrail report`, and the demo's). */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { RulePack } from '../core/rules/rules.js';
import { loadReportData } from '../outputs/report/data.js';
import { esc } from '../outputs/report/escape.js';
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

/**
 * The reports of a group (`govtrail report --group G --out DIR`): one `<tenant>.html` per member at
 * this moment, and `index.html` naming the group, its members and the period, linking each.
 * Returns the files written, the index first.
 */
export async function writeGroupReports(
  db: Session,
  options: {
    group: string;
    tenants: readonly string[];
    outDir: string;
    from?: Date | undefined;
    to?: Date | undefined;
    pack?: RulePack | undefined;
  },
): Promise<string[]> {
  mkdirSync(options.outDir, { recursive: true });
  const written: string[] = [];
  for (const tenantId of options.tenants) {
    const out = path.join(options.outDir, `${tenantId}.html`);
    written.push(
      await writeReport(db, { tenantId, out, from: options.from, to: options.to, pack: options.pack }),
    );
  }
  const index = path.join(options.outDir, 'index.html');
  writeFileSync(index, renderGroupIndex(options.group, options.tenants, new Date()));
  return [index, ...written];
}

/** The index page of a group's reports: no script, no network, like the reports. */
export function renderGroupIndex(group: string, tenants: readonly string[], at: Date): string {
  const items = tenants
    .map((t) => `<li><a href="${esc(encodeURIComponent(t))}.html">${esc(t)}</a></li>`)
    .join('\n');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>govtrail reports of group ${esc(group)}</title>
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
</head><body>
<h1>Group ${esc(group)}</h1>
<p>${tenants.length} member tenant${tenants.length === 1 ? '' : 's'} at ${esc(at.toISOString())} (govtrail.tenant_group), one report each:</p>
<ul>
${items}
</ul>
</body></html>
`;
}
