/**
 * `govtrail worker` as a user runs it: a child process against a sandbox with a long, slow
 * history. SIGTERM in the middle of the backfill must end it with exit 0 within the grace period,
 * keep no partial entry, release the tenant lock, and let the next run complete.
 */
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createAlerting } from '../../src/app/alerting.js';
import { syncTenant } from '../../src/app/tenant-run.js';
import { runCli } from '../../src/cli.js';
import { type Sandbox, startSandbox } from '../../src/sandbox/index.js';
import { createTestDatabase, NEEDS_SERVER, onServer, type TestDatabase } from '../helpers/database.js';
import { capturingLogger, testConfig, truthIds } from '../helpers/harness.js';

const ROOT = new URL('../../', import.meta.url).pathname;
const GRACE_MS = 1_000;

/** Resolves with the first parsed JSON log line that satisfies `match`. */
function waitForLog(
  child: ChildProcessWithoutNullStreams,
  match: (line: Record<string, unknown>) => boolean,
): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    let buffer = '';
    const onData = (d: Buffer) => {
      buffer += d.toString();
      let nl = buffer.indexOf('\n');
      while (nl >= 0) {
        const text = buffer.slice(0, nl);
        buffer = buffer.slice(nl + 1);
        nl = buffer.indexOf('\n');
        try {
          const line = JSON.parse(text) as Record<string, unknown>;
          if (match(line)) {
            child.stderr.off('data', onData);
            resolve(line);
            return;
          }
        } catch {
          // Not a log line (a stack trace, say): keep reading.
        }
      }
    };
    child.stderr.on('data', onData);
    child.once('exit', (code) => reject(new Error(`worker exited (${code}) before the awaited log line`)));
  });
}

describe('govtrail worker (process)', () => {
  let testDb: TestDatabase | undefined;
  let sandbox: Sandbox;

  beforeAll(async () => {
    // 40 pages of 100; each page answers after 300 ms: a backfill of about 12 s.
    sandbox = await startSandbox({ entries: 4_000, seed: 3 });
    sandbox.faults.add({ route: 'history', kind: 'slow', delayMs: 300, times: Number.POSITIVE_INFINITY });
    if (onServer) testDb = await createTestDatabase();
  });

  afterAll(async () => {
    await sandbox.close();
    await testDb?.close();
  });

  it.skipIf(!onServer)(
    `exits 0 within the grace period on SIGTERM mid-backfill, keeping nothing partial (${NEEDS_SERVER})`,
    async () => {
      const db = (testDb as TestDatabase).database.db;
      const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', 'worker'], {
        cwd: ROOT,
        env: {
          PATH: process.env['PATH'] ?? '',
          DATABASE_URL: (testDb as TestDatabase).url as string,
          GOVTRAIL_BASE_URL: sandbox.baseUrl,
          GOVTRAIL_CLIENT_ID: sandbox.credentials.secret.clientId,
          GOVTRAIL_CLIENT_SECRET: sandbox.credentials.secret.clientSecret,
          GOVTRAIL_TENANT: 'acme',
          GOVTRAIL_HTTP_PORT: '0',
          // Once a year: only the start-up run (the current slot, planned at start) happens.
          GOVTRAIL_SCHEDULE: '0 0 1 1 *',
          GOVTRAIL_SHUTDOWN_GRACE: `${GRACE_MS}ms`,
          LOG_LEVEL: 'info',
        },
      });
      const listening = waitForLog(child, (l) => l['msg'] === 'health and metrics listening');
      const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
      const port = (await listening)['port'] as number;

      // Wait until the backfill has fetched and written some pages (one batch = 10 pages).
      await vi.waitFor(
        () => {
          if (sandbox.stats.historyRequests < 12) throw new Error('backfill not far enough yet');
        },
        { timeout: 40_000, interval: 50 },
      );
      const health = await fetch(`http://127.0.0.1:${port}/healthz`);
      expect(health.status).toBe(200);
      await health.text();

      const signalledAt = Date.now();
      child.kill('SIGTERM');
      const code = await exited;
      const took = Date.now() - signalledAt;
      expect(code).toBe(0);
      // Grace period, then the abort and the rollback (margin for a loaded 2-core machine): well
      // under the ~8 s the backfill still needed.
      expect(took).toBeLessThan(GRACE_MS + 4_000);
      expect(sandbox.stats.historyRequests).toBeLessThan(40);

      // Nothing of the interrupted backfill was kept, and the ledger says why.
      const entries = await db.selectFrom('govtrail.history_entry').select('entry_id').execute();
      expect(entries).toEqual([]);
      const runs = await db.selectFrom('govtrail.sync_run').select(['status', 'error_code']).execute();
      expect(runs).toEqual([{ status: 'failed', error_code: 'ABORTED' }]);
      const checkpoint = await db.selectFrom('govtrail.checkpoint').selectAll().execute();
      expect(checkpoint).toEqual([]);

      // The next run takes the lock (released on exit) and completes the backfill.
      sandbox.faults.clear();
      const { logger } = capturingLogger();
      const config = testConfig();
      const summary = await syncTenant({
        database: (testDb as TestDatabase).database,
        config,
        logger,
        tenant: {
          name: 'acme',
          baseUrl: sandbox.baseUrl,
          clientId: sandbox.credentials.secret.clientId,
          clientSecret: sandbox.credentials.secret.clientSecret,
          pageSize: 100,
          lookbackMs: 15 * 60_000,
        },
        trigger: 'cli',
        alerting: createAlerting(config, logger, (testDb as TestDatabase).database),
      });
      expect(summary.status).toBe('succeeded');
      const stored = await db.selectFrom('govtrail.history_entry').select('entry_id').execute();
      expect(stored.length).toBe(truthIds(sandbox).length);
    },
    // A cold start through tsx, the migrations and the job engine take a while on a loaded machine.
    90_000,
  );

  it('exits 2 naming GOVTRAIL_CLIENT_ID when no tenant is configured', async () => {
    vi.stubEnv('GOVTRAIL_CLIENT_ID', '');
    vi.stubEnv('GOVTRAIL_CLIENT_SECRET', '');
    vi.stubEnv('GOVTRAIL_CONFIG', '');
    let stderr = '';
    const spy = vi.spyOn(process.stderr, 'write').mockImplementation((chunk: unknown) => {
      stderr += String(chunk);
      return true;
    });
    try {
      expect(await runCli(['node', 'govtrail', 'worker'])).toBe(2);
    } finally {
      spy.mockRestore();
      vi.unstubAllEnvs();
    }
    expect(stderr).toMatch(/GOVTRAIL_CLIENT_ID/);
  });
});
