/**
 * `govtrail demo` applies the shipped recommended baseline and ends by saying which controls the
 * sandbox tenant fails now and its % compliant over the last 90 days; the figures are those of the
 * stored control periods (the report's loader), and the periods were written by the demo's runs.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { runCli } from '../../src/cli.js';
import { DEFAULT_RANKS } from '../../src/core/diff.js';
import { loadReportCompliance } from '../../src/outputs/report/compliance-data.js';
import { percent } from '../../src/outputs/report/compliance-section.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';

let db: TestDatabase | undefined;
afterEach(async () => {
  vi.unstubAllEnvs();
  vi.restoreAllMocks();
  await db?.close();
  db = undefined;
});

async function cli(...args: string[]): Promise<{ code: number; out: string }> {
  const out: string[] = [];
  const spy = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    out.push(String(chunk));
    return true;
  });
  try {
    const code = await runCli(['node', 'govtrail', ...args]);
    return { code, out: out.join('') };
  } finally {
    spy.mockRestore();
  }
}

describe('govtrail demo', () => {
  it('ends its story with the compliance summary of the recommended baseline, then the report as the last line', async () => {
    db = await createTestDatabase();
    if (db.url !== undefined) vi.stubEnv('DATABASE_URL', db.url);
    vi.stubEnv('GOVTRAIL_DATA_DIR', path.join(mkdtempSync(path.join(tmpdir(), 'govtrail-demo-')), 'fresh'));
    vi.stubEnv('LOG_LEVEL', 'silent');
    const { code, out } = await cli('demo', '--entries', '120');
    expect(code).toBe(0);
    const tail = out.slice(out.lastIndexOf('\nCompliance of tenant "sandbox"'));
    expect(tail).toMatch(
      /^\nCompliance of tenant "sandbox" with baseline govtrail-recommended \(.*baselines\/recommended\.yaml, sha256 [0-9a-f]{12}…\)/,
    );
    expect(tail).toMatch(
      /Over the last 90 days it was compliant \d+\.\d % of the time \(failing \d+\.\d %, excepted \d+\.\d %, unknown \d+\.\d %\)\.\n\nHTML report[^\n]*\n[^\n]*report\.html\n$/,
    );
    expect(tail).toMatch(/It (fails \d of 9 controls now:|meets all 9 controls now\.)/);
    // The runs judged the tenant: the periods are stored (in DATABASE_URL when the tests have a
    // server), and the summary says what they say.
    if (db.url === undefined) return;
    const now = new Date();
    const c = await loadReportCompliance(db.database.db, {
      tenantId: 'sandbox',
      from: new Date(now.getTime() - 90 * 86_400_000),
      to: now,
      now,
      ranks: DEFAULT_RANKS,
    });
    expect(c).toBeDefined();
    const failing = (c?.controls ?? []).filter((x) => x.status === 'fail' || x.status === 'deleted');
    expect(tail).toContain(
      failing.length === 0 ? 'It meets all 9 controls now.' : `It fails ${failing.length} of 9 controls now:`,
    );
    for (const x of failing) expect(tail).toContain(`${x.id.padEnd(7)} ${x.title}`);
    expect(tail).toContain(`compliant ${percent((c?.share.pass ?? 0) + (c?.share.excepted ?? 0))}`);
    const { rows } = await sql<{ n: number }>`
      select count(*)::int as n from govtrail.control_period where tenant_id = 'sandbox'`.execute(
      db.database.db,
    );
    expect(rows[0]?.n).toBeGreaterThan(9);
  }, 180_000);
});
