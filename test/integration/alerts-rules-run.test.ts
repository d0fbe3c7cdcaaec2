/**
 * Run-level rules and the rule file, end to end: the backfill digest (AIGOV-016) and its
 * per-entry alternative, sync-failing (AIGOV-017) after consecutive failed runs, an override file
 * that disables a rule, and an invalid override file refusing to start (RULES_INVALID).
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createAlerting } from '../../src/app/alerting.js';
import { runCli } from '../../src/cli.js';
import { silentLogger } from '../../src/runtime/logger.js';
import { alertRows, rulesFile, runScenario } from '../helpers/alerts.js';
import { createHarness, type Harness, testConfig } from '../helpers/harness.js';

let h: Harness | undefined;
let other: Harness | undefined;
afterEach(async () => {
  vi.unstubAllEnvs();
  vi.restoreAllMocks();
  await h?.close();
  await other?.close();
  h = undefined;
  other = undefined;
});

describe('AIGOV-016 backfill digest', () => {
  it('the first run raises exactly one digest, with the per-rule counts of the alerts it replaces', async () => {
    // The curated scenario tail makes every per-entry rule fire at least once in the backfill.
    h = await createHarness({ entries: 60, seed: 4, scenarios: true });
    const run = await h.sync();
    expect(run.status).toBe('succeeded');
    expect(run.isBackfill).toBe(true);
    const alerts = await alertRows(h.database.db);
    expect(alerts).toHaveLength(1);
    const digest = alerts[0];
    expect(digest).toMatchObject({
      rule_id: 'AIGOV-016',
      severity: 'low',
      entry_id: null,
      run_id: run.runId,
      dedupe_key: `AIGOV-016:acme:run-${run.runId}`,
    });
    const details = digest?.context.details as {
      entriesStored: number;
      perRuleCounts: Record<string, number>;
    };
    expect(details.entriesStored).toBe(h.sandbox.history.size);

    // The same history with per-entry alerts: its counts are the digest's counts, and no digest.
    other = await createHarness(
      { entries: 60, seed: 4, scenarios: true },
      { GOVTRAIL_BACKFILL_PER_ENTRY_ALERTS: 'true' },
    );
    const perEntryRun = await other.sync();
    expect(perEntryRun.status).toBe('succeeded');
    const perEntry = await alertRows(other.database.db);
    const counts: Record<string, number> = {};
    for (const a of perEntry) counts[a.rule_id] = (counts[a.rule_id] ?? 0) + 1;
    expect(counts['AIGOV-016']).toBeUndefined();
    expect(details.perRuleCounts).toEqual(counts);
    for (let n = 1; n <= 15; n++) {
      expect(counts[`AIGOV-${String(n).padStart(3, '0')}`], `AIGOV-${n}`).toBeGreaterThan(0);
    }
    expect(perEntry.every((a) => a.entry_id !== null && a.run_id === perEntryRun.runId)).toBe(true);
  });

  it('a second run raises per-entry alerts, not another digest', async () => {
    const s = await runScenario({ after: [{ set: { requireToolApproval: false } }] });
    h = s.h;
    expect(s.alerts.map((a) => a.rule_id)).toEqual(['AIGOV-002']);
    const all = await alertRows(h.database.db);
    expect(all.filter((a) => a.rule_id === 'AIGOV-016')).toHaveLength(1);
  });
});

describe('AIGOV-017 sync failing', () => {
  it('three consecutive failed runs raise one high alert; a fourth does not raise another', async () => {
    h = await createHarness({ entries: 20, seed: 7 });
    expect((await h.sync()).status).toBe('succeeded');
    h.sandbox.faults.add({ kind: '500', times: Number.POSITIVE_INFINITY });
    const failing = async () =>
      (await alertRows(h?.database.db as never)).filter((a) => a.rule_id === 'AIGOV-017');

    const runs = [];
    for (let i = 1; i <= 2; i++) {
      const run = await h.sync();
      expect(run.status).toBe('failed');
      runs.push(run);
      expect(await failing()).toEqual([]);
    }
    const third = await h.sync();
    expect(third.status).toBe('failed');
    const raised = await failing();
    expect(raised).toHaveLength(1);
    expect(raised[0]).toMatchObject({
      severity: 'high',
      entry_id: null,
      run_id: third.runId,
      dedupe_key: `AIGOV-017:acme:run-${third.runId}`,
    });
    expect(raised[0]?.context.details).toMatchObject({
      consecutiveFailures: 3,
      lastErrorCode: third.error?.code,
    });
    const { rows } = await sql<{ n: number }>`
      select count(*)::int as n from govtrail.alert_delivery where alert_id = ${raised[0]?.alert_id}`.execute(
      h.database.db,
    );
    expect(rows[0]?.n).toBeGreaterThan(0);

    expect((await h.sync()).status).toBe('failed');
    expect(await failing()).toHaveLength(1);
  });

  it('a sync that succeeds again resolves the sync-failing alert automatically, with the reason', async () => {
    h = await createHarness({ entries: 20, seed: 7 });
    expect((await h.sync()).status).toBe('succeeded');
    h.sandbox.faults.add({ kind: '500', times: Number.POSITIVE_INFINITY });
    for (let i = 1; i <= 3; i++) expect((await h.sync()).status).toBe('failed');
    const state = async () =>
      (
        await sql<{ state: string; resolved_by: string | null; resolved_note: string | null }>`
          select state, resolved_by, resolved_note from govtrail.alert_state where rule_id = 'AIGOV-017'`.execute(
          h?.database.db as never,
        )
      ).rows;
    expect(await state()).toEqual([{ state: 'open', resolved_by: null, resolved_note: null }]);
    h.sandbox.faults.clear();
    const recovered = await h.sync();
    expect(recovered.status).toBe('succeeded');
    expect(await state()).toEqual([
      {
        state: 'resolved',
        resolved_by: 'govtrail',
        resolved_note: `the sync succeeded again (run ${recovered.runId})`,
      },
    ]);
  });

  it('a success in between restarts the count', async () => {
    h = await createHarness({ entries: 20, seed: 7 });
    h.sandbox.faults.add({ kind: '500', times: Number.POSITIVE_INFINITY });
    expect((await h.sync()).status).toBe('failed');
    expect((await h.sync()).status).toBe('failed');
    h.sandbox.faults.clear();
    expect((await h.sync()).status).toBe('succeeded');
    h.sandbox.faults.add({ kind: '500', times: Number.POSITIVE_INFINITY });
    expect((await h.sync()).status).toBe('failed');
    expect((await h.sync()).status).toBe('failed');
    expect((await alertRows(h.database.db)).filter((a) => a.rule_id === 'AIGOV-017')).toEqual([]);
  });
});

describe('the GOVTRAIL_ALERT_RULES override file', () => {
  it('disabling a rule silences it end to end, and only it', async () => {
    const file = rulesFile('rules:\n  - id: AIGOV-002\n    enabled: false\n');
    const s = await runScenario(
      { after: [{ annotations: [], set: { requireToolApproval: false } }] },
      { GOVTRAIL_ALERT_RULES: file },
    );
    h = s.h;
    expect(s.alerts.map((a) => `${a.rule_id}/${a.severity}`)).toEqual(['AIGOV-013/medium']);
  });

  const invalid = 'rules:\n  - id: AIGOV-002\n    enabeld: false\n';

  it('an unknown key makes createAlerting fail, naming the rule and the key', async () => {
    h = await createHarness({ entries: 0 });
    const config = testConfig({ GOVTRAIL_ALERT_RULES: rulesFile(invalid) });
    let caught: unknown;
    try {
      createAlerting(config, silentLogger, h.database);
    } catch (err) {
      caught = err;
    }
    expect(caught).toMatchObject({ code: 'RULES_INVALID' });
    expect((caught as Error).message).toMatch(/AIGOV-002/);
    expect((caught as Error).message).toMatch(/"enabeld"/);
  });

  it('an unknown key makes `govtrail sync` fail at start-up, before any request or run', async () => {
    h = await createHarness({ entries: 5 });
    vi.stubEnv('GOVTRAIL_ALERT_RULES', rulesFile(invalid));
    vi.stubEnv('GOVTRAIL_BASE_URL', h.sandbox.baseUrl);
    vi.stubEnv('GOVTRAIL_CLIENT_ID', h.sandbox.credentials.secret.clientId);
    vi.stubEnv('GOVTRAIL_CLIENT_SECRET', h.sandbox.credentials.secret.clientSecret);
    vi.stubEnv('LOG_LEVEL', 'silent');
    if (h.testDb.url !== undefined) vi.stubEnv('DATABASE_URL', h.testDb.url);
    else vi.stubEnv('GOVTRAIL_DATA_DIR', mkdtempSync(path.join(tmpdir(), 'govtrail-data-')));
    const stderr: string[] = [];
    vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
      stderr.push(String(chunk));
      return true;
    });
    const code = await runCli(['node', 'govtrail', 'sync']);
    const text = stderr.join('');
    expect(code).not.toBe(0);
    expect(text).toContain('RULES_INVALID');
    expect(text).toContain('AIGOV-002');
    expect(text).toContain('enabeld');
    expect(h.sandbox.stats.historyRequests).toBe(0);
    if (h.testDb.url !== undefined) {
      const { rows } = await sql<{ n: number }>`select count(*)::int as n from govtrail.sync_run`.execute(
        h.database.db,
      );
      expect(rows[0]?.n).toBe(0);
    }
  });
});
