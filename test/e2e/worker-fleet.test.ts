/**
 * `govtrail worker` replicas as a user runs them: child processes over one database, 100 tenants
 * of one YAML file (one sandbox, slow history pages so a slot lasts a few seconds). One replica is
 * SIGKILLed in the middle of a slot, holding runs: the other must sync every tenant in the next slot,
 * the runs the dead one had in flight must end `failed` (none left `running`), and no tenant may
 * succeed twice in one slot nor any replica record `skipped`.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { TenantConfig } from '../../src/config/settings.js';
import { type Sandbox, startSandbox } from '../../src/sandbox/index.js';
import { slotAfter } from '../../src/worker/slots.js';
import { createTestDatabase, NEEDS_SERVER, onServer, type TestDatabase } from '../helpers/database.js';
import { ledgerBySlot, sandboxTenants, tenantsYaml } from '../helpers/fleet.js';

const ROOT = new URL('../../', import.meta.url).pathname;
const TENANTS = 100;
const SCHEDULE = '*/20 * * * * *';

function startReplica(env: Record<string, string>, name: string): ChildProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', 'worker', '--no-initial-run'], {
    cwd: ROOT,
    env: { PATH: process.env['PATH'] ?? '', ...env, GOVTRAIL_HTTP_PORT: '0', LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  child.stderr?.on('data', (d: Buffer) => {
    if (process.env['FLEET_TEST_LOGS'] !== undefined) process.stderr.write(`[${name}] ${d}`);
  });
  return child;
}

describe('govtrail worker replicas (processes)', () => {
  let testDb: TestDatabase | undefined;
  let sandbox: Sandbox;
  let dir = '';
  const children: ChildProcess[] = [];

  beforeAll(async () => {
    sandbox = await startSandbox({ entries: 5, seed: 11 });
    // Every history page answers after 150 ms: a slot's runs overlap, and a kill finds some in flight.
    sandbox.faults.add({ route: 'history', kind: 'slow', delayMs: 150, times: Number.POSITIVE_INFINITY });
    dir = mkdtempSync(path.join(tmpdir(), 'govtrail-fleet-'));
    if (onServer) testDb = await createTestDatabase();
  });

  afterAll(async () => {
    for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
    await sandbox.close();
    await testDb?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it.skipIf(!onServer)(
    `a replica killed mid-slot: the other syncs every tenant in the next slot, the dead one's runs end failed (${NEEDS_SERVER})`,
    async () => {
      const db = (testDb as TestDatabase).database.db;
      const tenants = sandboxTenants(sandbox, TENANTS);
      const names = tenants.map((t) => t.name);
      const config = path.join(dir, 'govtrail.yaml');
      writeFileSync(config, tenantsYaml(tenants));
      const env = {
        DATABASE_URL: (testDb as TestDatabase).url as string,
        GOVTRAIL_CONFIG: config,
        GOVTRAIL_SCHEDULE: SCHEDULE,
        GOVTRAIL_RECONCILE_SCHEDULE: 'off',
        GOVTRAIL_WORKER_CONCURRENCY: '6',
        GOVTRAIL_JOB_HEARTBEAT: '10s',
        GOVTRAIL_JOB_RETRY_DELAY: '1s',
      };
      const survivor = startReplica(env, 'a');
      const victim = startReplica(env, 'b');
      children.push(survivor, victim);

      // Wait until the victim holds runs: each replica runs at most 6 at once, so 8 running means both do.
      await vi.waitFor(
        async () => {
          const running = await db
            .selectFrom('govtrail.sync_run')
            .select(sql<number>`count(*)::int`.as('n'))
            .where('status', '=', 'running')
            .executeTakeFirstOrThrow();
          if (running.n < 8) throw new Error('not enough runs in flight yet');
        },
        { timeout: 90_000, interval: 100 },
      );
      const killedAt = new Date();
      victim.kill('SIGKILL');
      const nextSlot = (slotAfter(SCHEDULE, killedAt) as Date).toISOString();

      // Every tenant succeeds in the slot after the kill, and no run is left running.
      await vi.waitFor(
        async () => {
          const rows = await ledgerBySlot(db);
          const done = new Set(
            rows.filter((r) => r.slot === nextSlot && r.status === 'succeeded').map((r) => r.tenant),
          );
          if (done.size < TENANTS) throw new Error(`${done.size} tenants done in ${nextSlot}`);
        },
        { timeout: 90_000, interval: 500 },
      );
      const exited = new Promise((resolve) => survivor.once('exit', resolve));
      survivor.kill('SIGTERM');
      await exited;

      const rows = await ledgerBySlot(db);
      expect(rows.filter((r) => r.status === 'running')).toEqual([]);
      expect(rows.filter((r) => r.status === 'skipped')).toEqual([]);
      // The runs the victim had in flight were closed as failed when their tenants ran next.
      const orphans = rows.filter((r) => r.status === 'failed');
      expect(orphans.length).toBeGreaterThan(0);
      for (const o of orphans) expect(o.errorCode).toBe('ABORTED');
      // Never two successful runs of a tenant in one slot.
      const succeeded = new Map<string, number>();
      for (const r of rows.filter((x) => x.status === 'succeeded')) {
        const key = `${r.tenant}@${r.slot}`;
        succeeded.set(key, (succeeded.get(key) ?? 0) + 1);
      }
      expect(Math.max(...succeeded.values())).toBe(1);
      const afterKill = new Set(rows.filter((r) => r.slot === nextSlot).map((r) => r.tenant));
      expect([...afterKill].sort()).toEqual(names);
    },
    240_000,
  );

  it.skipIf(!onServer)(
    `SIGHUP re-reads the configuration: a tenant added is synced, a tenant dropped is not, without a restart (${NEEDS_SERVER})`,
    async () => {
      const hupDb = await createTestDatabase();
      try {
        const db = hupDb.database.db;
        const [a, b, c] = sandboxTenants(sandbox, 3, 'hup') as [TenantConfig, TenantConfig, TenantConfig];
        const config = path.join(dir, 'hup.yaml');
        writeFileSync(config, tenantsYaml([a, b]));
        const schedule = '*/4 * * * * *';
        const worker = startReplica(
          {
            DATABASE_URL: hupDb.url as string,
            GOVTRAIL_CONFIG: config,
            GOVTRAIL_SCHEDULE: schedule,
            GOVTRAIL_RECONCILE_SCHEDULE: 'off',
          },
          'hup',
        );
        children.push(worker);
        const tenantsOf = async (slot: string) =>
          (await ledgerBySlot(db))
            .filter((r) => r.slot === slot && r.status === 'succeeded')
            .map((r) => r.tenant)
            .sort();
        const slotsWith = async (names: string[]) => {
          const rows = await ledgerBySlot(db);
          const slots = [...new Set(rows.map((r) => r.slot))].sort();
          const out: string[] = [];
          for (const slot of slots) if ((await tenantsOf(slot)).join() === names.join()) out.push(slot);
          return out;
        };
        await vi.waitFor(
          async () => {
            if ((await slotsWith([a.name, b.name])).length < 1) throw new Error('no slot of a and b yet');
          },
          { timeout: 60_000, interval: 250 },
        );
        // Tenant c replaces tenant a in the file; the same process is told to read it again.
        writeFileSync(config, tenantsYaml([b, c]));
        const hupAt = new Date();
        worker.kill('SIGHUP');
        await vi.waitFor(
          async () => {
            const after = (await slotsWith([b.name, c.name])).filter((s) => s > hupAt.toISOString());
            if (after.length < 2) throw new Error('not two slots of b and c yet');
          },
          { timeout: 60_000, interval: 250 },
        );
        const exited = new Promise((resolve) => worker.once('exit', resolve));
        worker.kill('SIGTERM');
        expect(await exited).toBe(0);
        // After the reload a is planned no more, and the process was never restarted.
        const rows = await ledgerBySlot(db);
        const lastA = rows.filter((r) => r.tenant === a.name).at(-1) as { slot: string };
        const firstC = rows.filter((r) => r.tenant === c.name)[0] as { slot: string };
        expect(lastA.slot < firstC.slot).toBe(true);
        expect(rows.filter((r) => r.status === 'skipped')).toEqual([]);
        expect(worker.pid).toBeDefined();
      } finally {
        await hupDb.close();
      }
    },
    120_000,
  );
});
