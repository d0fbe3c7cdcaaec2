/**
 * Every command ends: run as real child processes, `sync`, `reconcile`, `alerts deliver`,
 * `alerts test` and `demo` must exit after printing their result even though a TCP syslog sink is
 * configured whose receiver never closes its side of the connection (issue 20, item 9); and `demo`
 * against a DATABASE_URL naming a missing database must print the error and exit (item 10).
 *
 * "Exits" is judged with a generous deadline as the failure condition (a hung process is killed
 * and reported), never as a measure of speed.
 */
import { mkdtempSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Sandbox, startSandbox } from '../../src/sandbox/index.js';
import { HANG_MS, runGovtrail } from '../helpers/cli-process.js';
import { createTestDatabase, NEEDS_SERVER, onServer, type TestDatabase } from '../helpers/database.js';

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
