/**
 * S3 under SIGKILL: a `govtrail sync` child process killed in the middle of a backfill (after the
 * sandbox served some pages) leaves no entry, no partial entry and no checkpoint; the next run
 * closes the orphaned `running` ledger row as failed/ABORTED and ends equal to the truth.
 */
import type { ChildProcess } from 'node:child_process';
import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { govtrailEnv, runGovtrail, type SandboxProcess } from '../../bench/lib.js';
import type { startSandbox } from '../../src/sandbox/index.js';
import { NEEDS_SERVER, onServer } from '../helpers/database.js';
import { createHarness, type Harness } from '../helpers/harness.js';
import { compareWithTruth, partialEntries, storedState } from '../helpers/state.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

/** The harness's in-process sandbox, as the CLI helpers see one. */
function asProcess(sb: Awaited<ReturnType<typeof startSandbox>>): SandboxProcess {
  return {
    baseUrl: sb.baseUrl,
    clientId: sb.credentials.secret.clientId,
    clientSecret: sb.credentials.secret.clientSecret,
  } as SandboxProcess;
}

describe.skipIf(!onServer)(`SIGKILL during a backfill (${NEEDS_SERVER})`, () => {
  it('leaves nothing behind; the rerun closes the orphan as ABORTED and equals the truth', async () => {
    h = await createHarness({ entries: 6000, seed: 5 });
    const harness = h;
    const env = govtrailEnv(asProcess(harness.sandbox), harness.testDb.url as string, {
      GOVTRAIL_PAGE_SIZE: '50',
    });
    let child: ChildProcess | undefined;
    let killedAfterPages = 0;
    const run = runGovtrail(['sync'], env, {
      onSpawn: (c) => {
        child = c;
      },
    });
    // Kill once the sandbox has served 20 pages (of 120): the run is mid-backfill, with batches written.
    await new Promise<void>((resolve, reject) => {
      const timer = setInterval(() => {
        if (harness.sandbox.stats.historyRequests >= 20) {
          clearInterval(timer);
          killedAfterPages = harness.sandbox.stats.historyRequests;
          child?.kill('SIGKILL');
          resolve();
        } else if (child?.exitCode !== null && child?.exitCode !== undefined) {
          clearInterval(timer);
          reject(new Error(`sync ended before it could be killed (exit ${child.exitCode})`));
        }
      }, 5);
    });
    const killed = await run;
    expect(killed.signal).toBe('SIGKILL');
    expect(killedAfterPages).toBeLessThan(120);

    const after = await storedState(harness.database, 'acme');
    expect(after.entries.size).toBe(0);
    expect(partialEntries(after)).toEqual([]);
    expect(after.checkpoint).toBeUndefined();
    expect(after.runs.map((r) => r.status)).toEqual(['running']);

    const rerun = await runGovtrail(['sync'], env);
    expect(rerun.code, rerun.stderr).toBe(0);
    const final = await storedState(harness.database, 'acme');
    expect(compareWithTruth(final, harness.sandbox.history.entries())).toEqual([]);
    expect(partialEntries(final)).toEqual([]);
    const newest = (harness.sandbox.history.entries()[0] as { metadata: { id: string } }).metadata.id;
    expect(final.checkpoint?.entry_id).toBe(newest);
    expect(final.runs.map((r) => [r.status, r.error_code])).toEqual([
      ['failed', 'ABORTED'],
      ['succeeded', null],
    ]);
  });
});

describe.skipIf(!onServer)(`SIGKILL during a reconcile (${NEEDS_SERVER})`, () => {
  it('leaves no finding, no entry and no alert of it; the next reconcile completes', async () => {
    h = await createHarness({ entries: 6000, seed: 7 });
    const harness = h;
    const env = govtrailEnv(asProcess(harness.sandbox), harness.testDb.url as string, {
      GOVTRAIL_PAGE_SIZE: '50',
    });
    expect((await runGovtrail(['sync'], env)).code).toBe(0);
    const all = harness.sandbox.history.entries() as Array<{ metadata: { id: string; createdAt: string } }>;
    // Findings early in the paging (a rewrite near the top), and a backdated entry and a hole late in it.
    harness.sandbox.history.rewrite(all[30]?.metadata.id as string);
    harness.sandbox.history.remove(all[5000]?.metadata.id as string);
    const t = Date.parse(all[5500]?.metadata.createdAt as string);
    harness.sandbox.history.backdate({ at: new Date(t + 1000).toISOString() });
    const before = await storedState(harness.database, 'acme');
    const requestsBefore = harness.sandbox.stats.historyRequests;

    let child: ChildProcess | undefined;
    const run = runGovtrail(['reconcile'], env, {
      onSpawn: (c) => {
        child = c;
      },
    });
    await new Promise<void>((resolve, reject) => {
      const timer = setInterval(() => {
        if (harness.sandbox.stats.historyRequests - requestsBefore >= 40) {
          clearInterval(timer);
          child?.kill('SIGKILL');
          resolve();
        } else if (child?.exitCode !== null && child?.exitCode !== undefined) {
          clearInterval(timer);
          reject(new Error(`reconcile ended before it could be killed (exit ${child.exitCode})`));
        }
      }, 5);
    });
    expect((await run).signal).toBe('SIGKILL');

    const counts = async () =>
      (
        await sql<{ findings: number; alerts: number }>`
          select (select count(*)::int from govtrail.source_discrepancy) as findings,
                 (select count(*)::int from govtrail.alert where rule_id = 'AIGOV-018') as alerts`.execute(
          harness.database.db,
        )
      ).rows[0];
    expect(await counts()).toEqual({ findings: 0, alerts: 0 });
    const after = await storedState(harness.database, 'acme');
    expect(after.entries.size).toBe(before.entries.size);
    expect(partialEntries(after)).toEqual([]);

    const rerun = await runGovtrail(['reconcile'], env);
    expect(rerun.code, rerun.stderr).toBe(1);
    expect(await counts()).toEqual({ findings: 3, alerts: 3 });
    const { rows } = await sql<{ status: string; error_code: string | null }>`
      select status, error_code from govtrail.sync_run where kind = 'reconcile' order by run_id`.execute(
      harness.database.db,
    );
    expect(rows).toEqual([
      { status: 'failed', error_code: 'ABORTED' },
      { status: 'succeeded', error_code: null },
    ]);
  });
});

describe.skipIf(!onServer)(`a fetch failure while a batch is being written (${NEEDS_SERVER})`, () => {
  it('lets the write finish inside the transaction, then rolls everything back', async () => {
    h = await createHarness({ entries: 3000, seed: 6 });
    // Pages 1–10 fill the first batch of 1 000, whose write starts while page 11 is fetched: that
    // page and every later request fails, so the run fails with the write in flight.
    h.sandbox.faults.add({ kind: '500', afterRequests: 10, times: Number.POSITIVE_INFINITY });
    const run = await h.sync({ tenant: { pageSize: 100 } });
    expect(run.status).toBe('failed');
    expect(run.counters.pagesFetched).toBe(10);
    const state = await storedState(h.database, 'acme');
    expect(state.entries.size).toBe(0);
    expect(state.annotationCounts.size).toBe(0);
    expect(state.snapshotIds.size).toBe(0);
    expect(state.checkpoint).toBeUndefined();
    h.sandbox.faults.clear();
    const again = await h.sync({ tenant: { pageSize: 100 } });
    expect(again.status).toBe('succeeded');
    expect(compareWithTruth(await storedState(h.database, 'acme'), h.sandbox.history.entries())).toEqual([]);
  });
});
