/**
 * dashboards/grafana/govtrail.json is what scripts/dashboard.ts generates (`npm run dashboard`
 * rewrites it), and is shaped as the provisioning and the docs expect: the govtrail data source
 * through the `datasource` variable, one tenant at a time, every data query filtered on it.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import {
  DASHBOARD_FILE,
  DATASOURCE_TYPE,
  DATASOURCE_UID,
  dashboardQueries,
  FLEET_PANELS,
  renderDashboard,
} from '../../scripts/dashboard.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const committed = readFileSync(path.join(ROOT, DASHBOARD_FILE), 'utf8');
const model = JSON.parse(committed) as {
  uid: string;
  panels: Array<{
    id: number;
    type: string;
    title: string;
    datasource?: unknown;
    targets?: Array<Record<string, unknown>>;
  }>;
  templating: { list: Array<{ name: string; type: string; query?: unknown; current?: { value?: unknown } }> };
};

/** The data source the `datasource` variable picks. */
// biome-ignore lint/suspicious/noTemplateCurlyInString: Grafana variable syntax, not a template
const CHOSEN = { type: DATASOURCE_TYPE, uid: '${datasource}' };

describe('the committed dashboard', () => {
  it('is exactly what scripts/dashboard.ts generates (run npm run dashboard after changing it)', () => {
    expect(committed).toBe(renderDashboard());
  });

  it('has a stable uid and unique panel ids', () => {
    expect(model.uid).toBe('govtrail');
    const ids = model.panels.map((p) => p.id);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('picks its data source with a variable defaulting to the provisioned one, then a tenant', () => {
    const vars = model.templating.list;
    expect(vars.map((v) => [v.name, v.type])).toEqual([
      ['datasource', 'datasource'],
      ['tenant', 'query'],
    ]);
    expect(vars[0]).toMatchObject({ query: DATASOURCE_TYPE, current: { value: DATASOURCE_UID } });
    const provisioning = readFileSync(
      path.join(ROOT, 'dashboards/grafana/provisioning/datasources/govtrail.yaml'),
      'utf8',
    );
    expect(provisioning).toContain(`uid: ${DATASOURCE_UID}`);
    expect(provisioning).toContain(`type: ${DATASOURCE_TYPE}`);
  });

  it('sends every query to the chosen PostgreSQL data source, filtered on the tenant', () => {
    for (const p of model.panels.filter((x) => x.type !== 'row')) {
      expect(p.datasource, p.title).toEqual(CHOSEN);
      for (const t of p.targets ?? []) {
        expect(t['datasource'], p.title).toEqual(CHOSEN);
      }
    }
    const queries = dashboardQueries(model).filter((x) => x.kind !== 'variable');
    const fleet = (q: { name: string }) => FLEET_PANELS.some((t) => q.name.endsWith(` ${t}`));
    for (const q of queries.filter((x) => !fleet(x))) {
      expect(q.rawSql, q.name).toContain("'$tenant'");
    }
    // The Fleet row, and only it, reads every tenant.
    expect(queries.filter(fleet).map((q) => q.name.replace(/^panel \d+ /, ''))).toEqual(FLEET_PANELS);
    for (const q of queries.filter(fleet)) expect(q.rawSql, q.name).not.toContain('$tenant');
  });
});
