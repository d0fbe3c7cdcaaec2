/**
 * The HTML report from a synced sandbox tenant whose history makes every alert rule fire, rendered
 * in headless Chromium: it must be self-contained (no request but the page itself) and clean (no
 * console messages). The screenshot is kept in test-artifacts/ for a person to look at.
 */
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeReport } from '../../src/app/report.js';
import { loadBaselineFile } from '../../src/config/baseline.js';
import { DEFAULT_RANKS } from '../../src/core/diff.js';
import { loadReportData } from '../../src/outputs/report/data.js';
import { judgeTenant } from '../../src/sync/conformance.js';
import { createHarness, type Harness } from '../helpers/harness.js';

const CHROMIUM = '/usr/bin/chromium';
let h: Harness;
let file: string;

beforeAll(async () => {
  h = await createHarness({ entries: 400, seed: 7, start: '2025-01-06T09:00:00Z' });
  expect((await h.sync()).status).toBe('succeeded');
  // A backfill raises only a digest; changes synced incrementally raise alerts per entry.
  h.sandbox.history.appendEntry({ annotations: [], set: { requireToolApproval: false } });
  h.sandbox.history.appendEntry({ set: { auditVerbosity: 'AUDIT_VERBOSITY_MINIMAL' } });
  h.sandbox.history.appendEntry({ set: { allowedClientTypes: [] } });
  h.sandbox.history.appendEntry({ set: { requireToolApproval: true } });
  expect((await h.sync()).status).toBe('succeeded');
  // Judged by the shipped recommended baseline: the report shows % compliant and what fails now.
  // Judged in a transaction, as a run judges (the judge reads through a cursor).
  await h.database.db
    .transaction()
    .execute((trx) =>
      judgeTenant(trx, 'acme', loadBaselineFile('baselines/recommended.yaml', DEFAULT_RANKS), null),
    );
  file = path.join(mkdtempSync(path.join(tmpdir(), 'govtrail-report-')), 'report.html');
  // The history is dated 2025 and --to defaults to now: the period is given, to cover it.
  await writeReport(h.database.db, { tenantId: 'acme', out: file, from: new Date('2025-01-01T00:00:00Z') });
  // Kept next to the screenshot for a person to open.
  mkdirSync('test-artifacts', { recursive: true });
  copyFileSync(file, 'test-artifacts/report.html');
});
afterAll(async () => {
  await h?.close();
});

describe('govtrail report', () => {
  it('references nothing outside the file: no script, stylesheet link, font or remote image', () => {
    const html = readFileSync(file, 'utf8');
    expect(html).not.toMatch(/<script|<link|<img|@import|url\(\s*['"]?(https?:|\/\/)/i);
    // The CSP forbids any fetch, so a later edit that adds one fails loudly in the browser too.
    expect(html).toContain("default-src 'none'");
    expect(html).toContain('<svg');
  });

  it('shows the sections, loosened periods and ticket links', () => {
    const html = readFileSync(file, 'utf8');
    for (const title of [
      'Posture timeline',
      'Changes per week',
      'Alerts by severity',
      'Changes',
      'Exporter health',
    ]) {
      expect(html).toContain(`<h2>${title}</h2>`);
    }
    // The scenario tail loosens settings, so some timeline period is drawn in the loosened colour.
    expect(html).toMatch(/fill="#c8553d"/);
    expect(html).toMatch(/<a href="https:\/\/[^"]+">/);
    // The incremental run raised alerts for changes inside the period, so the bars are not all zero.
    expect(html).toMatch(/class="num">[1-9]/);
  });

  it('lists the alerts, not only their counts: the digest and the per-change ones (issue 20, item 17)', () => {
    const html = readFileSync(file, 'utf8');
    const section = html.slice(html.indexOf('<h2>Alerts</h2>'), html.indexOf('<h2>Changes</h2>'));
    expect(section).toContain('<h2>Alerts</h2>');
    expect(section).toMatch(/<td>AIGOV-016<\/td><td>Settings history backfilled<\/td>/);
    expect(section).toMatch(/<td>AIGOV-0(0[1-9]|1[0-5])<\/td>/);
  });

  it('lists what the rules find in the backfilled history, marked as found by backfill (issue 20, item 16)', () => {
    const html = readFileSync(file, 'utf8');
    expect(html).toContain('<h2>Found by backfill (not alerted)</h2>');
    const panel = html.slice(html.indexOf('<h2>Found by backfill (not alerted)</h2>'));
    expect(panel).toMatch(/400 entries of this period were stored by a backfill/);
    expect(panel).toMatch(
      /<td>AIGOV-\d{3}<\/td><td>[^<]+<\/td><td><code>[0-9A-Za-z]{27}<\/code><\/td><td>found by backfill<\/td>/,
    );
  });

  it('shows % compliant over the period and the controls failing now, with the change that made them fail', async () => {
    const html = readFileSync(file, 'utf8');
    const section = html.slice(
      html.indexOf('<h2>Compliance</h2>'),
      html.indexOf('<h2>Posture timeline</h2>'),
    );
    expect(section).toContain('govtrail-recommended');
    expect(section).toMatch(/compliant <strong>\d+\.\d %<\/strong> of the time/);
    // The last appended entries leave verbosity MINIMAL and every client type allowed: both fail now.
    const failing = section.slice(
      section.indexOf('<h2>Controls failing now</h2>'),
      section.indexOf('<h2>Every control'),
    );
    expect(failing).toContain('<strong>AIG-02</strong>');
    expect(failing).toContain('<strong>AIG-03</strong>');
    expect(failing).not.toContain('<strong>AIG-01</strong>');
    expect(html).toMatch(
      /<div class="kpi warn"><div class="v">\d+\.\d %<\/div><div class="l">compliant \(\d+ controls? failing now\)<\/div><\/div>/,
    );
    const data = await loadReportData(h.database.db, {
      tenantId: 'acme',
      from: new Date('2025-01-01T00:00:00Z'),
      now: new Date(),
    });
    const sum = Object.values(data.compliance?.share ?? {}).reduce((a, b) => a + b, 0);
    expect(sum).toBeCloseTo(1, 9);
  });

  it('keeps entry ids on one line (issue 20, item 17)', () => {
    const html = readFileSync(file, 'utf8');
    expect(html).toContain('td code { white-space: nowrap; }');
    expect(html).not.toMatch(/overflow-wrap:\s*anywhere/);
  });

  it('ends the period now by default, as --help says (issue 20, item 17)', async () => {
    const now = new Date('2027-03-04T05:06:07Z');
    const data = await loadReportData(h.database.db, { tenantId: 'acme', now });
    expect(data.to).toEqual(now);
  });

  it('starts it 90 days before the newest stored entry, so a history that ended long ago is not an empty report', async () => {
    const now = new Date('2027-03-04T05:06:07Z');
    const newest = h.sandbox.history.entries()[0]?.metadata?.createdAt as string;
    const data = await loadReportData(h.database.db, { tenantId: 'acme', now });
    expect(data.from.getTime()).toBe(Date.parse(newest.slice(0, 23)) - 90 * 86_400_000);
    expect(data.changeCount).toBeGreaterThan(0);
    // A tenant changed recently: the 90 days up to `to`.
    const soon = new Date(Date.parse(newest.slice(0, 23)) - 86_400_000);
    const before = await loadReportData(h.database.db, { tenantId: 'acme', now: soon });
    expect(before.from).toEqual(new Date(soon.getTime() - 90 * 86_400_000));
  });

  it.skipIf(!existsSync(CHROMIUM))(
    'renders in headless Chromium with no console message and no request but the page itself',
    async () => {
      const browser = await chromium.launch({
        executablePath: CHROMIUM,
        args: [
          '--headless',
          '--no-sandbox',
          '--disable-gpu',
          '--no-first-run',
          '--disable-background-networking',
          '--disable-component-update',
          '--disable-sync',
          '--disable-quic',
        ],
      });
      try {
        const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
        const console: string[] = [];
        const requests: string[] = [];
        page.on('console', (m) => console.push(`${m.type()}: ${m.text()}`));
        page.on('pageerror', (e) => console.push(`pageerror: ${e.message}`));
        page.on('request', (r) => requests.push(r.url()));
        const url = pathToFileURL(file).href;
        await page.goto(url, { waitUntil: 'load' });
        mkdirSync('test-artifacts', { recursive: true });
        await page.screenshot({ path: 'test-artifacts/report.png', fullPage: true });
        expect(console).toEqual([]);
        expect(requests.filter((r) => r !== url && !r.startsWith('about:'))).toEqual([]);
        // Readable at 1280 px: nothing overflows sideways.
        // A string, evaluated in the page: the test's TypeScript has no DOM types.
        const overflow = await page.evaluate<number>(
          'document.documentElement.scrollWidth - window.innerWidth',
        );
        expect(overflow).toBeLessThanOrEqual(0);
      } finally {
        await browser.close();
      }
    },
  );
});
