/**
 * Every command ends: run as real child processes, `sync`, `reconcile`, `alerts deliver`,
 * `alerts test` and `demo` must exit after printing their result even though a TCP syslog sink is
 * configured whose receiver never closes its side of the connection (issue 20, item 9); `demo`
 * against a DATABASE_URL naming a missing database must print the error and exit (item 10); and
 * usage errors of the process itself (worker port in use, GOVTRAIL_DATA_DIR naming a file, a bad
 * rule file) end with exit 2 and one line (item 13).
 *
 * "Exits" is judged with a generous deadline as the failure condition (a hung process is killed
 * and reported), never as a measure of speed.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Sandbox, startSandbox } from '../../src/sandbox/index.js';
import { createTestDatabase, NEEDS_SERVER, onServer, type TestDatabase } from '../helpers/database.js';

const ROOT = new URL('../../', import.meta.url).pathname;
/** A process still running after this long is taken to hang (the commands here need seconds). */
const HANG_MS = 90_000;

interface Ended {
  /** Exit code, or 'hung' when the process had to be killed at the deadline. */
  readonly code: number | 'hung';
  readonly stdout: string;
  readonly stderr: string;
}

/** Environment of the parent minus what would point a child at another database or config. */
function baseEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (v === undefined || k.startsWith('GOVTRAIL_') || k === 'DATABASE_URL') continue;
    env[k] = v;
  }
  return env;
}

/** Runs the CLI (from source, through tsx) and waits for it to end, or kills it at the deadline. */
function runGovtrail(args: readonly string[], env: Record<string, string>): Promise<Ended> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', ...args], {
    cwd: ROOT,
    env: { ...baseEnv(), LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => {
    stdout += d.toString();
  });
  child.stderr.on('data', (d: Buffer) => {
    stderr += d.toString();
  });
  return new Promise<Ended>((resolve) => {
    let hung = false;
    const timer = setTimeout(() => {
      hung = true;
      child.kill('SIGKILL');
    }, HANG_MS);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code: hung ? 'hung' : (code ?? -1), stdout, stderr });
    });
  });
}

/** A syslog receiver over TCP that reads everything and never ends or closes a connection. */
async function stubbornReceiver(): Promise<{ port: number; frames: () => string; close(): Promise<void> }> {
  const sockets = new Set<net.Socket>();
  let received = '';
  // allowHalfOpen: the client's FIN does not end our side; only a client that destroys its socket gets away.
  const server = net.createServer({ allowHalfOpen: true }, (socket) => {
    sockets.add(socket);
    socket.on('data', (d: Buffer) => {
      received += d.toString();
    });
    socket.on('error', () => {});
  });
  server.on('error', () => {});
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    frames: () => received,
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

describe('every command ends, even with a syslog receiver that never closes its side', () => {
  let testDb: TestDatabase | undefined;
  let sandbox: Sandbox;
  let receiver: Awaited<ReturnType<typeof stubbornReceiver>>;
  let env: Record<string, string> = {};

  beforeAll(async () => {
    sandbox = await startSandbox({ entries: 30, seed: 3 });
    receiver = await stubbornReceiver();
    if (!onServer) return;
    testDb = await createTestDatabase();
    env = {
      DATABASE_URL: testDb.url as string,
      GOVTRAIL_BASE_URL: sandbox.baseUrl,
      GOVTRAIL_CLIENT_ID: sandbox.credentials.secret.clientId,
      GOVTRAIL_CLIENT_SECRET: sandbox.credentials.secret.clientSecret,
      GOVTRAIL_TENANT: 'acme',
      GOVTRAIL_SYSLOG_URL: `tcp://127.0.0.1:${receiver.port}`,
      GOVTRAIL_HTTP_RETRY_BASE: '1ms',
      GOVTRAIL_HTTP_RETRY_MAX_DELAY: '5ms',
    };
  });

  afterAll(async () => {
    await receiver.close();
    await sandbox.close();
    await testDb?.close();
  });

  it.skipIf(!onServer)(
    `sync, alerts deliver, reconcile, alerts test and demo each exit (${NEEDS_SERVER})`,
    async () => {
      // sync: a first run is a backfill, whose digest alert goes to the receiver.
      const sync = await runGovtrail(['sync'], env);
      expect(sync.code, sync.stderr).toBe(0);
      expect(sync.stdout).toMatch(/acme\s+succeeded/);
      expect(receiver.frames()).toContain('AIGOV-016');

      // alerts deliver: a delivery that failed while the receiver was unreachable, retried now.
      const closedPort = await new Promise<number>((resolve) => {
        const s = net.createServer().listen(0, '127.0.0.1', () => {
          const p = (s.address() as net.AddressInfo).port;
          s.close(() => resolve(p));
        });
      });
      sandbox.appendScenarios();
      const missed = await runGovtrail(['sync'], {
        ...env,
        GOVTRAIL_SYSLOG_URL: `tcp://127.0.0.1:${closedPort}`,
      });
      expect(missed.code, missed.stderr).toBe(0);
      expect(missed.stdout).toMatch(/to retry/);
      const before = receiver.frames().length;
      const deliver = await runGovtrail(['alerts', 'deliver'], env);
      expect(deliver.code, deliver.stderr).toBe(0);
      expect(deliver.stdout).toMatch(/^[1-9]\d* delivered, 0 to retry later/);
      expect(receiver.frames().length).toBeGreaterThan(before);

      // reconcile: a rewritten entry is found and alerted (AIGOV-018) to the receiver.
      const served = sandbox.history.entries() as Array<{ metadata?: { id?: string } }>;
      sandbox.history.rewrite(served[5]?.metadata?.id as string);
      const reconcile = await runGovtrail(['reconcile'], env);
      expect(reconcile.code, reconcile.stderr).toBe(1); // it differs: exit 1, but it exits
      expect(reconcile.stdout).toMatch(/differs/);
      expect(receiver.frames()).toContain('AIGOV-018');

      const test = await runGovtrail(['alerts', 'test', '--sink', 'syslog'], env);
      expect(test.code, test.stderr).toBe(0);
      expect(test.stdout).toMatch(/syslog\s+delivered/);

      const dataDir = mkdtempSync(path.join(tmpdir(), 'govtrail-exit-'));
      const demo = await runGovtrail(['demo', '--entries', '40'], { ...env, GOVTRAIL_DATA_DIR: dataDir });
      expect(demo.code, demo.stderr).toBe(0);
      expect(demo.stdout).toMatch(/HTML report/);
    },
    6 * HANG_MS,
  );

  it.skipIf(!onServer)(
    `demo against a DATABASE_URL naming a missing database prints the error and exits (${NEEDS_SERVER})`,
    async () => {
      const url = new URL(testDb?.url as string);
      url.pathname = '/govtrail_no_such_database_here';
      const demo = await runGovtrail(['demo', '--entries', '10'], { DATABASE_URL: url.toString() });
      expect(demo.code).toBe(1);
      expect(demo.stderr).toMatch(/govtrail_no_such_database_here.*does not exist/);
    },
    2 * HANG_MS,
  );
});

describe('usage errors of the process: exit 2, one line', () => {
  /** The one line govtrail writes to stderr about the error (commander's help hint aside). */
  const oneLine = (stderr: string) => stderr.split('\n').filter((l) => l.startsWith('govtrail: '));

  it(
    'GOVTRAIL_DATA_DIR naming a file',
    async () => {
      const dir = mkdtempSync(path.join(tmpdir(), 'govtrail-datadir-'));
      const file = path.join(dir, 'not-a-directory');
      writeFileSync(file, 'x');
      const r = await runGovtrail(['settings'], { GOVTRAIL_DATA_DIR: file });
      expect(r.code).toBe(2);
      expect(oneLine(r.stderr)).toEqual([
        `govtrail: GOVTRAIL_DATA_DIR: ${file} is not a directory (the embedded database needs a directory; or set DATABASE_URL)`,
      ]);
      expect(r.stderr).not.toMatch(/\n\s+at /);
    },
    HANG_MS,
  );

  it.skipIf(!onServer)(
    `worker port in use (${NEEDS_SERVER})`,
    async () => {
      const testDb = await createTestDatabase();
      const sandbox = await startSandbox({ entries: 0 });
      const busy = net.createServer();
      await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve));
      const port = (busy.address() as net.AddressInfo).port;
      try {
        const r = await runGovtrail(['worker', '--no-initial-run'], {
          DATABASE_URL: testDb.url as string,
          GOVTRAIL_BASE_URL: sandbox.baseUrl,
          GOVTRAIL_CLIENT_ID: sandbox.credentials.secret.clientId,
          GOVTRAIL_CLIENT_SECRET: sandbox.credentials.secret.clientSecret,
          GOVTRAIL_HTTP_PORT: String(port),
          GOVTRAIL_SYSLOG_URL: 'tcp://127.0.0.1:9',
        });
        expect(r.code).toBe(2);
        expect(oneLine(r.stderr)).toEqual([
          `govtrail: GOVTRAIL_HTTP_PORT: port ${port} is already in use: stop the other process or choose another port`,
        ]);
        expect(r.stderr).not.toMatch(/\n\s+at /);
      } finally {
        await new Promise<void>((resolve) => busy.close(() => resolve()));
        await sandbox.close();
        await testDb.close();
      }
    },
    HANG_MS,
  );

  it.skipIf(!onServer)(
    `a bad rule file (${NEEDS_SERVER})`,
    async () => {
      const testDb = await createTestDatabase();
      const dir = mkdtempSync(path.join(tmpdir(), 'govtrail-rules-'));
      const rules = path.join(dir, 'rules.yaml');
      writeFileSync(rules, 'rules:\n  - id: X\n    nonsense: [\n');
      try {
        const r = await runGovtrail(['alerts', 'test'], {
          GOVTRAIL_ALERT_RULES: rules,
          DATABASE_URL: testDb.url as string,
        });
        expect(r.code).toBe(2);
        expect(oneLine(r.stderr)).toHaveLength(1);
        expect(oneLine(r.stderr)[0]).toMatch(/rules\.yaml.*\[RULES_INVALID\]$/);
      } finally {
        await testDb.close();
      }
    },
    HANG_MS,
  );
});
