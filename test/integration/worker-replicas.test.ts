/**
 * Two worker replicas — two in-process services, each with its own database pool and its own
 * pg-boss — against one database and 120 tenants of one sandbox, on a schedule that fires every
 * 10 seconds. Both plan every slot; the jobs' keys must let each tenant run exactly once per slot
 * across the two, with no `skipped` row in the ledger.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startWorkerService, type WorkerService } from '../../src/app/worker.js';
import type { TenantConfig } from '../../src/config/settings.js';
import { type Sandbox, startSandbox } from '../../src/sandbox/index.js';
import { openDatabase } from '../../src/store/database.js';
import { createTestDatabase, NEEDS_SERVER, onServer, type TestDatabase } from '../helpers/database.js';
import { FAST_ENGINE, ledgerBySlot, sandboxTenants, slotTally } from '../helpers/fleet.js';
import { capturingLogger, testConfig } from '../helpers/harness.js';

const TENANTS = 120;
const SLOTS = 3;
const SCHEDULE = '*/10 * * * * *';

describe('worker replicas', () => {
  let testDb: TestDatabase | undefined;
  let sandbox: Sandbox;
  const replicas: WorkerService[] = [];
  let tenants: TenantConfig[] = [];

  beforeAll(async () => {
    if (!onServer) return;
    testDb = await createTestDatabase();
    sandbox = await startSandbox({ entries: 5, seed: 100 });
    tenants = sandboxTenants(sandbox, TENANTS);
    const config = {
      ...testConfig({
        DATABASE_URL: testDb.url as string,
        GOVTRAIL_SCHEDULE: SCHEDULE,
        GOVTRAIL_RECONCILE_SCHEDULE: 'off',
        GOVTRAIL_WORKER_CONCURRENCY: '4',
      }),
      tenants,
    };
    for (const name of ['replica-a', 'replica-b']) {
      const database = await openDatabase({ url: testDb.url, applicationName: name });
      const { logger } = capturingLogger();
      replicas.push(
        await startWorkerService({
          config,
          logger: logger.child({ replica: name }),
          database,
          httpPort: 0,
          httpHost: '127.0.0.1',
          processMetrics: false,
          engineTuning: FAST_ENGINE,
          replicaName: name,
        }),
      );
    }
  });

  afterAll(async () => {
    for (const r of replicas) await r.stop(0);
    await sandbox?.close();
    await testDb?.close();
  });

  it.skipIf(!onServer)(
    `syncs every tenant once per slot across two replicas, none twice, no skipped row (${NEEDS_SERVER})`,
    async () => {
      const db = (testDb as TestDatabase).database.db;
      const names = tenants.map((t) => t.name);
      // Both replicas start together and both plan each slot from the next one on.
      await Promise.all(replicas.map((r) => r.engine.start({ initialRun: false })));
      await vi.waitFor(
        async () => {
          const tally = slotTally(await ledgerBySlot(db), names);
          if (tally.completeSlots.length < SLOTS)
            throw new Error(`${tally.completeSlots.length} slots so far`);
        },
        { timeout: 150_000, interval: 1_000 },
      );
      await Promise.all(replicas.map((r) => r.engine.stop(10_000)));

      const rows = await ledgerBySlot(db);
      const tally = slotTally(rows, names);
      expect(tally.maxPerTenantSlot).toBe(1);
      expect(rows.filter((r) => r.status === 'skipped')).toEqual([]);
      expect(rows.filter((r) => r.status !== 'succeeded')).toEqual([]);
      expect(tally.completeSlots.length).toBeGreaterThanOrEqual(SLOTS);
      // Both replicas did part of the work (the jobs are shared out, not all taken by one).
      const done = await Promise.all(replicas.map((r) => r.metrics.render()));
      for (const text of done)
        expect(text).toMatch(/govtrail_jobs_finished_total\{kind="sync",outcome="completed"\} [1-9]/);
    },
    200_000,
  );
});
