/**
 * Ctrl-C during `govtrail sync`: the run in flight is aborted and rolled back, its ledger row is
 * closed at once (failed, ABORTED: not left `running` until the next run), and one line says what
 * was kept and what was rolled back; the exit code is 130 as for any interrupted command.
 */
import { spawn } from 'node:child_process';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Sandbox, startSandbox } from '../../src/sandbox/index.js';
import { baseEnv } from '../helpers/cli-process.js';
import { createTestDatabase, NEEDS_SERVER, onServer, type TestDatabase } from '../helpers/database.js';

const ROOT = new URL('../../', import.meta.url).pathname;

describe.skipIf(!onServer)(`govtrail sync interrupted${onServer ? '' : ` (${NEEDS_SERVER})`}`, () => {
  let sandbox: Sandbox;
  let testDb: TestDatabase;
  beforeAll(async () => {
    // Every page slow: the run is still paging when the signal comes.
    sandbox = await startSandbox({ entries: 3_000, seed: 5, faults: 'slow:1' });
    testDb = await createTestDatabase();
  });
  afterAll(async () => {
    await sandbox.close();
    await testDb.close();
  });

  it('rolls the run back, closes its ledger row at once and says so in one line (exit 130)', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', 'sync'], {
      cwd: ROOT,
      env: {
        ...baseEnv(),
        LOG_LEVEL: 'info',
        DATABASE_URL: testDb.url as string,
        GOVTRAIL_BASE_URL: sandbox.baseUrl,
        GOVTRAIL_CLIENT_ID: sandbox.credentials.secret.clientId,
        GOVTRAIL_CLIENT_SECRET: sandbox.credentials.secret.clientSecret,
        GOVTRAIL_TENANT: 'acme',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
    });
    const started = new Promise<void>((resolve) => {
      child.stderr.on('data', (d: Buffer) => {
        stderr += d.toString();
        if (stderr.includes('"msg":"sync started"')) resolve();
      });
    });
    const ended = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
    await started;
    child.kill('SIGINT');
    expect(await ended).toBe(130);
    expect(stdout).toContain(
      'interrupted (SIGINT): rolled back acme (nothing of its run stored; its ledger row closed as failed, ABORTED); pending alerts stay in the outbox',
    );
    const { rows } = await sql<{ status: string; error_code: string | null; finished: boolean; n: number }>`
      select status, error_code, finished_at is not null as finished,
             (select count(*)::int from govtrail.history_entry) as n
      from govtrail.sync_run`.execute(testDb.database.db);
    expect(rows).toEqual([{ status: 'failed', error_code: 'ABORTED', finished: true, n: 0 }]);
  }, 120_000);
});
