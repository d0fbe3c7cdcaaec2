/**
 * `govtrail sync` over several tenants (issue 18): GOVTRAIL_WORKER_CONCURRENCY runs in flight at
 * once, seen in the run ledger while the tenant API holds them (no clock involved); the exit code
 * is the worst outcome; on a terminal a line per finished tenant, and the summary on stdout in the
 * configured order. The CLI runs in-process (runCli, environment stubbed) to spare the machine.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { stringify } from 'yaml';
import { runCli } from '../../src/cli.js';
import { type Sandbox, startSandbox } from '../../src/sandbox/index.js';
import { createTestDatabase, NEEDS_SERVER, onServer, type TestDatabase } from '../helpers/database.js';

let testDb: TestDatabase | undefined;
let dir: string | undefined;
const sandboxes: Sandbox[] = [];
let restoreTty: (() => void) | undefined;
afterEach(async () => {
  restoreTty?.();
  restoreTty = undefined;
  vi.unstubAllEnvs();
  vi.restoreAllMocks();
  for (const s of sandboxes.splice(0)) await s.close();
  await testDb?.close();
  testDb = undefined;
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  dir = undefined;
});

async function sandbox(entries: number): Promise<Sandbox> {
  const s = await startSandbox({ entries });
  sandboxes.push(s);
  return s;
}

/** Environment for `govtrail sync` over the named tenants, each on its sandbox. */
async function fleetEnv(
  db: TestDatabase,
  tenants: ReadonlyArray<[string, Sandbox]>,
  concurrency: number,
): Promise<Record<string, string>> {
  dir = await mkdtemp(path.join(os.tmpdir(), 'govtrail-fleet-'));
  const file = path.join(dir, 'govtrail.yaml');
  await writeFile(
    file,
    stringify({
      tenants: tenants.map(([name, s]) => ({
        name,
        base_url: s.baseUrl,
        client_id: s.credentials.secret.clientId,
        client_secret: s.credentials.secret.clientSecret,
      })),
    }),
  );
  return {
    DATABASE_URL: db.url as string,
    GOVTRAIL_CONFIG: file,
    GOVTRAIL_WORKER_CONCURRENCY: String(concurrency),
    GOVTRAIL_HTTP_RETRY_BASE: '1ms',
    GOVTRAIL_HTTP_RETRY_MAX_DELAY: '5ms',
    LOG_LEVEL: 'silent',
  };
}

/** Starts the CLI in-process; stdout and stderr are captured (stderr as a terminal when asked). */
function startCli(env: Record<string, string>, options: { tty?: boolean } = {}) {
  for (const [k, v] of Object.entries(env)) vi.stubEnv(k, v);
  const output = { stdout: '', stderr: '' };
  vi.spyOn(process.stdout, 'write').mockImplementation((chunk: unknown) => {
    output.stdout += String(chunk);
    return true;
  });
  vi.spyOn(process.stderr, 'write').mockImplementation((chunk: unknown) => {
    output.stderr += String(chunk);
    return true;
  });
  if (options.tty === true) {
    const before = Object.getOwnPropertyDescriptor(process.stderr, 'isTTY');
    Object.defineProperty(process.stderr, 'isTTY', { value: true, configurable: true });
    restoreTty = () => {
      if (before === undefined) delete (process.stderr as { isTTY?: boolean }).isTTY;
      else Object.defineProperty(process.stderr, 'isTTY', before);
    };
  }
  const code = runCli(['node', 'govtrail', 'sync']);
  return { code, output };
}

async function runningTenants(db: TestDatabase): Promise<string[]> {
  const r = await sql<{ tenant_id: string }>`
    select tenant_id from govtrail.sync_run where status = 'running' order by tenant_id`.execute(
    db.database.db,
  );
  return r.rows.map((row) => row.tenant_id);
}

async function ledger(db: TestDatabase): Promise<Array<{ tenant_id: string; status: string }>> {
  const r = await sql<{ tenant_id: string; status: string }>`
    select tenant_id, status from govtrail.sync_run order by tenant_id`.execute(db.database.db);
  return r.rows;
}

/** Strips what a terminal overwrites (progress drawn in place) and keeps the lines that stay. */
function permanentLines(text: string): string[] {
  return text
    .split('\n')
    .map((l) => l.replace(/^[\s\S]*\r\x1b\[2K/, ''))
    .filter((l) => l !== '');
}

describe('govtrail sync over a fleet', () => {
  it.skipIf(!onServer)(
    `has GOVTRAIL_WORKER_CONCURRENCY tenants in flight at once, no more; exits with the worst outcome (${NEEDS_SERVER})`,
    async () => {
      testDb = await createTestDatabase();
      const db = testDb;
      // Both first history requests on this sandbox get no answer until it is closed.
      const holding = await sandbox(30);
      holding.faults.add({ kind: 'hang', times: 2 });
      const fine = await sandbox(30);
      const env = await fleetEnv(
        db,
        [
          ['a-held', holding],
          ['b-held', holding],
          ['c-fine', fine],
        ],
        2,
      );
      const cli = startCli(env, { tty: true });
      let done = false;
      void cli.code.finally(() => {
        done = true;
      });
      // Sequentially, the first run would hold the CLI alone: two runs are never open together
      // (the wait gives up after 30 s so that such a CLI fails the test instead of hanging it).
      let running: string[] = [];
      const giveUp = Date.now() + 30_000;
      while (!done && Date.now() < giveUp) {
        running = await runningTenants(db);
        if (running.length >= 2) break;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      expect(running).toEqual(['a-held', 'b-held']);
      // With two lanes busy, the third tenant has not started.
      expect((await ledger(db)).map((r) => r.tenant_id)).toEqual(['a-held', 'b-held']);

      // Closing the sandbox fails the held runs; the third tenant then runs and succeeds.
      await holding.close();
      expect(await cli.code).toBe(1);
      expect(await ledger(db)).toEqual([
        { tenant_id: 'a-held', status: 'failed' },
        { tenant_id: 'b-held', status: 'failed' },
        { tenant_id: 'c-fine', status: 'succeeded' },
      ]);
      // A line per finished tenant on the terminal, the last one the tenant that ran last.
      const lines = permanentLines(cli.output.stderr).filter((l) => /^\[\d\/3\]/.test(l));
      expect(lines).toHaveLength(3);
      expect(lines[2]).toMatch(/^\[3\/3\] c-fine: succeeded \(backfill\), 30 new, /);
      expect(
        lines
          .slice(0, 2)
          .map((l) => l.replace(/^\[[12]\/3\] /, ''))
          .sort(),
      ).toEqual([
        expect.stringMatching(/^a-held: failed, NETWORK: /),
        expect.stringMatching(/^b-held: failed, NETWORK: /),
      ]);
      // The summary on stdout keeps the configured order.
      const rows = cli.output.stdout.split('\n').filter((l) => /^(a-held|b-held|c-fine)\b/.test(l));
      expect(rows.map((l) => l.split(/\s+/).slice(0, 2))).toEqual([
        ['a-held', 'failed'],
        ['b-held', 'failed'],
        ['c-fine', 'succeeded'],
      ]);
    },
  );

  it.skipIf(!onServer)(
    `prints no progress lines when stderr is not a terminal, and exits 0 when all succeeded (${NEEDS_SERVER})`,
    async () => {
      testDb = await createTestDatabase();
      const s = await sandbox(20);
      const env = await fleetEnv(
        testDb,
        [
          ['one', s],
          ['two', s],
          ['three', s],
        ],
        3,
      );
      const cli = startCli(env);
      expect(await cli.code).toBe(0);
      expect(cli.output.stderr).not.toMatch(/\[\d\/3\]/);
      expect(cli.output.stderr).not.toContain('\x1b[2K');
      const rows = cli.output.stdout.split('\n').filter((l) => /^(one|two|three)\b/.test(l));
      expect(rows.map((l) => l.split(/\s+/).slice(0, 3))).toEqual([
        ['one', 'succeeded', '20'],
        ['two', 'succeeded', '20'],
        ['three', 'succeeded', '20'],
      ]);
    },
  );
});
