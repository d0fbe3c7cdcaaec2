/**
 * `govtrail rules backtest` (docs/design/alerts.md, "Rules as code"): it writes nothing — the row
 * count of every table of the schema is unchanged, and the transaction is read-only — and its
 * "would raise" per rule equals what a real run with the candidate pack raises on the same history.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { runCli } from '../../src/cli.js';
import { loadRulePack } from '../../src/config/rule-pack.js';
import type { Session } from '../../src/store/database.js';
import { backtest } from '../../src/sync/backtest.js';
import { createHarness, type Harness } from '../helpers/harness.js';

const harnesses: Harness[] = [];
afterEach(async () => {
  vi.unstubAllEnvs();
  vi.restoreAllMocks();
  for (const h of harnesses.splice(0)) await h.close();
});

/** A stricter pack: a burst is two entries within the hour, and any change to the client types fires. */
const STRICTER = [
  'rules:',
  '  - id: AIGOV-015',
  '    condition: { entries_in_window: { count: 2, window: 1h } }',
  '  - id: AIGOV-004',
  '    condition: { field_changed: { field: allowed_client_types } }',
  '',
].join('\n');

function rulesFile(): string {
  const file = path.join(mkdtempSync(path.join(tmpdir(), 'govtrail-backtest-')), 'stricter.yaml');
  writeFileSync(file, STRICTER);
  return file;
}

/** One synced tenant whose first run raised per-entry alerts (so every entry was alerted on). */
async function synced(env: Record<string, string> = {}): Promise<Harness> {
  const h = await createHarness(
    { entries: 80, seed: 12, scenarios: true },
    { GOVTRAIL_BACKFILL_PER_ENTRY_ALERTS: 'true', ...env },
  );
  harnesses.push(h);
  expect((await h.sync()).status).toBe('succeeded');
  return h;
}

async function rowCounts(db: Session): Promise<Record<string, number>> {
  const { rows } = await sql<{ table_name: string }>`
    select table_name from information_schema.tables
    where table_schema = 'govtrail' and table_type = 'BASE TABLE' order by table_name`.execute(db);
  const counts: Record<string, number> = {};
  for (const { table_name } of rows) {
    const r = await sql<{
      n: number;
    }>`select count(*)::int as n from ${sql.table(`govtrail.${table_name}`)}`.execute(db);
    counts[table_name] = r.rows[0]?.n ?? -1;
  }
  return counts;
}

async function alertsPerRule(db: Session): Promise<Record<string, number>> {
  const { rows } = await sql<{ rule_id: string; n: number }>`
    select rule_id, count(*)::int as n from govtrail.alert where entry_id is not null group by rule_id`.execute(
    db,
  );
  return Object.fromEntries(rows.map((r) => [r.rule_id, r.n]));
}

const ALL_TIME = { from: new Date('2000-01-01T00:00:00Z'), to: new Date('2100-01-01T00:00:00Z') };

describe('rules backtest', () => {
  it('with the pack that ran: everything unchanged; nothing written, table by table', async () => {
    const h = await synced();
    const before = await rowCounts(h.database.db);
    expect(before['alert']).toBeGreaterThan(5);
    const result = await backtest(h.database.db, loadRulePack(), { tenants: ['acme'], ...ALL_TIME });
    expect(await rowCounts(h.database.db)).toEqual(before);
    expect(result.entries).toBe(before['history_entry']);
    for (const row of result.rows) {
      expect({ rule: row.ruleId, new: row.added, gone: row.gone }).toEqual({
        rule: row.ruleId,
        new: 0,
        gone: 0,
      });
      expect(row.unchanged).toBe(row.raised);
    }
    expect(
      Object.fromEntries(result.rows.filter((r) => r.raised > 0).map((r) => [r.ruleId, r.raised])),
    ).toEqual(await alertsPerRule(h.database.db));
  });

  it("a stricter pack's counts equal a real run's with that pack on the same history", async () => {
    const file = rulesFile();
    const a = await synced();
    const result = await backtest(a.database.db, loadRulePack(file), { tenants: ['acme'], ...ALL_TIME });
    const b = await synced({ GOVTRAIL_ALERT_RULES: file });
    const real = await alertsPerRule(b.database.db);
    const would = Object.fromEntries(
      result.rows.filter((r) => r.wouldRaise > 0).map((r) => [r.ruleId, r.wouldRaise]),
    );
    expect(would).toEqual(real);
    // Stricter: both changed rules raise alerts the old pack did not; any change of the client
    // types includes every widening, so nothing AIGOV-004 raised is gone (a burst of two fires on
    // the second entry, not the third, so AIGOV-015's can be).
    for (const id of ['AIGOV-015', 'AIGOV-004'])
      expect(result.rows.find((r) => r.ruleId === id)?.added).toBeGreaterThan(0);
    expect(result.rows.find((r) => r.ruleId === 'AIGOV-004')?.gone).toBe(0);
    // The other rules are unchanged.
    for (const row of result.rows.filter((r) => !['AIGOV-015', 'AIGOV-004'].includes(r.ruleId))) {
      expect([row.ruleId, row.added, row.gone]).toEqual([row.ruleId, 0, 0]);
    }
  });

  it('the command prints the table, and refuses a write inside its transaction', async () => {
    const h = await synced();
    if (h.testDb.url === undefined) return;
    vi.stubEnv('DATABASE_URL', h.testDb.url);
    vi.stubEnv('LOG_LEVEL', 'silent');
    const out: string[] = [];
    vi.spyOn(process.stdout, 'write').mockImplementation((c: string | Uint8Array) => {
      out.push(String(c));
      return true;
    });
    const code = await runCli([
      'node',
      'govtrail',
      'rules',
      'backtest',
      '--from',
      '2000-01-01',
      '--rules',
      rulesFile(),
    ]);
    vi.restoreAllMocks();
    expect(code).toBe(0);
    const text = out.join('');
    expect(text).toMatch(/entries of 1 tenant\(s\) .* replayed; nothing written/);
    expect(text).toMatch(/rule +would raise +raised +new +gone +unchanged +backfilled/);
    expect(text).toMatch(/AIGOV-015 +\d+ +\d+ +[1-9]\d* +\d+ +\d+ +0/);
    // The transaction is read-only: the database itself refuses a write in it.
    await expect(
      h.database.db.transaction().execute(async (tx) => {
        await sql`set transaction read only`.execute(tx);
        await sql`insert into govtrail.alert_event (alert_id, kind, actor) values (1, 'noted', 'x')`.execute(
          tx,
        );
      }),
    ).rejects.toThrow(/read-only transaction/);
  });
});
