/**
 * The report's "Source integrity" panel (docs/design/integrity.md), from a synced sandbox tenant: before any
 * reconcile it says so and names the command; after the source rewrote one entry and dropped
 * another, it shows the verdict, the coverage, the open discrepancies per kind and the findings,
 * with hostile text (an entry id of HTML) escaped.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAlerting } from '../../src/app/alerting.js';
import { writeReport } from '../../src/app/report.js';
import { reconcileTenant } from '../../src/app/tenant-run.js';
import { loadReportData } from '../../src/outputs/report/data.js';
import { renderReport } from '../../src/outputs/report/html.js';
import type { SandboxEntry } from '../../src/sandbox/index.js';
import type { RunSummary } from '../../src/sync/run-types.js';
import { createHarness, type Harness } from '../helpers/harness.js';

const PAGE = { pageSize: 10 };
const HOSTILE_ID = '<b>x</b>';

let h: Harness;
let before: string;
let after: string;
let run: RunSummary;
let removedId: string;

/** The integrity panel's markup, from its heading to the end of its section. */
function panel(html: string): string {
  const start = html.indexOf('<h2>Source integrity</h2>');
  expect(start).toBeGreaterThan(0);
  return html.slice(start, html.indexOf('</section>', start));
}

/** The text of the `<dd>` after the `<dt>` with this label, tags stripped. */
function dd(html: string, label: string): string | undefined {
  const m = new RegExp(`<dt>${label}</dt><dd>(.*?)</dd>`).exec(html);
  return m?.[1]?.replace(/<[^>]+>/g, '');
}

async function render(x: Harness): Promise<string> {
  const file = path.join(mkdtempSync(path.join(tmpdir(), 'govtrail-report-')), 'report.html');
  await writeReport(x.database.db, { tenantId: 'acme', out: file });
  return readFileSync(file, 'utf8');
}

beforeAll(async () => {
  h = await createHarness({ entries: 120, seed: 41 });
  // An entry whose id is markup, at the top of the history.
  h.sandbox.history.insertRaw({
    metadata: { id: HOSTILE_ID, createdAt: '2030-01-01T00:00:00Z', changeKind: 'CHANGE_KIND_PUT' },
    snapshot: { enabled: true, requireToolApproval: true },
  });
  expect((await h.sync({ tenant: PAGE })).status).toBe('succeeded');
  before = await render(h);

  h.sandbox.history.rewrite(HOSTILE_ID);
  removedId = (h.sandbox.history.entries() as SandboxEntry[])[60]?.metadata?.id as string;
  h.sandbox.history.remove(removedId);
  run = await reconcileTenant({
    database: h.database,
    config: h.config,
    logger: h.logger,
    tenant: h.tenant(PAGE),
    trigger: 'cli',
    alerting: createAlerting(h.config, h.logger, h.database),
  });
  expect(run.status).toBe('succeeded');
  after = await render(h);
});
afterAll(async () => {
  await h?.close();
});

describe('the report’s source integrity panel', () => {
  it('says plainly that no reconcile ran, and how to run one', () => {
    const p = panel(before);
    expect(p).toContain('Not verified against the source.');
    expect(p).toContain('No reconcile has run for this tenant');
    expect(p).toContain('<code>govtrail reconcile --tenant acme</code>');
    expect(p).not.toContain('Source verified on');
    // Only a reconcile finds holes, expiry and backdating.
    expect(dd(p, 'Missing at source')).toMatch(/^not checked/);
    expect(dd(p, 'Changed at source')).toMatch(/^0 /);
    expect(p).toContain('No discrepancy has been recorded for this tenant.');
  });

  it('after a reconcile, shows the verdict, the coverage, the counts per kind and the findings', () => {
    const p = panel(after);
    const matched = run.counters.entriesMatched;
    expect(matched).toBeGreaterThan(100);
    expect(p).toMatch(
      new RegExp(
        `Source verified on \\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d UTC: ${matched} entries match; 2 discrepancies`,
      ),
    );
    expect(p).not.toContain('No reconcile has run');
    const served = h.sandbox.history.entries() as SandboxEntry[];
    const oldest = served.at(-1)?.metadata?.createdAt as string;
    const newest = served[0]?.metadata?.createdAt as string;
    expect(dd(p, 'Coverage')).toBe(
      `every entry created from ${oldest} to ${newest}: ${served.length} entries served, ${matched} identical to the store`,
    );
    expect(dd(p, 'Verified by')).toMatch(new RegExp(`^reconcile run ${run.runId}, finished `));
    expect(dd(p, 'Changed at source')).toMatch(/^1 /);
    expect(dd(p, 'Missing at source')).toMatch(/^1 /);
    expect(dd(p, 'Backdated')).toMatch(/^0 /);
    expect(dd(p, 'Expired at source')).toMatch(/^0 /);

    const rows = [...p.matchAll(/<tr><td class="t">.*?<\/tr>/g)].map((m) => m[0]);
    expect(rows).toHaveLength(2);
    const byKind = (kind: string) => rows.find((r) => r.includes(`>${kind}</span>`));
    const changed = byKind('changed_at_source');
    const missing = byKind('missing_at_source');
    expect(missing).toContain(`<code>${removedId}</code>`);
    expect(changed).toContain('<code>&lt;b&gt;x&lt;/b&gt;</code>');
    // Both hashes for a rewrite, shortened with the whole in the tooltip; none served for a hole.
    expect(changed).toMatch(/<code title="[0-9a-f]{64}">[0-9a-f]{12}…<\/code>.*<code title="[0-9a-f]{64}">/);
    expect(missing).toMatch(/<code title="[0-9a-f]{64}">[0-9a-f]{12}…<\/code><\/td><td>—<\/td>/);
    for (const r of rows) expect(r).toContain(`<td>${run.runId}</td>`);
  });

  it('escapes an entry id of markup everywhere', () => {
    for (const html of [before, after]) {
      expect(html).not.toContain(HOSTILE_ID);
    }
    expect(panel(after)).toContain('&lt;b&gt;x&lt;/b&gt;');
  });

  it('caps the list at the newest 50 with an "and K more" line, and quotes an odd tenant name in the command', async () => {
    const data = await loadReportData(h.database.db, { tenantId: 'acme', now: new Date() });
    const row = data.discrepancies[0];
    expect(row).toBeDefined();
    if (row === undefined) return;
    const many = Array.from({ length: 50 }, (_, i) => ({ ...row, discrepancyId: 1000 + i }));
    const html = renderReport({
      ...data,
      tenantId: `it's <i>`,
      integrity: { ...data.integrity, verified: undefined, lastReconcileAt: null },
      discrepancies: many,
      discrepancyCount: 57,
    });
    const p = panel(html);
    expect(p).toContain('<tr><td colspan="7">and 7 more</td></tr>');
    expect(p).toContain('(the newest 50)');
    expect(p).toContain('<code>govtrail reconcile --tenant &#39;it&#39;\\&#39;&#39;s &lt;i&gt;&#39;</code>');
  });
});
