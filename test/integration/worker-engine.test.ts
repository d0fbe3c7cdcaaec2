/**
 * The job engine's promises beyond one-run-per-slot: a failing tenant is retried with backoff
 * inside its slot and its failure recorded once (one ledger row, one dead-letter job); a reconcile
 * slot missed while no worker ran is run once when workers come back; and the embedded database
 * (PGlite) runs the same engine on schedule.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { syncTenant } from '../../src/app/tenant-run.js';
import { startWorkerService, type WorkerService } from '../../src/app/worker.js';
import { type Sandbox, startSandbox } from '../../src/sandbox/index.js';
import { openDatabase } from '../../src/store/database.js';
import { migrate } from '../../src/store/migrate.js';
import { createEngine } from '../../src/worker/engine.js';
import { ENGINE_SCHEMA, type JobEvent, QUEUES } from '../../src/worker/engine-setup.js';
import { slotAtOrBefore } from '../../src/worker/slots.js';
import { createTestDatabase, NEEDS_SERVER, onServer, type TestDatabase } from '../helpers/database.js';
import { FAST_ENGINE, ledgerBySlot, sandboxTenants } from '../helpers/fleet.js';
import { capturingLogger, testConfig } from '../helpers/harness.js';

const YEARLY = '0 0 1 1 *';

describe('job engine', () => {
  let sandbox: Sandbox;
  const services: WorkerService[] = [];
  const databases: TestDatabase[] = [];

  beforeAll(async () => {
    sandbox = await startSandbox({ entries: 5, seed: 21 });
  });

  afterAll(async () => {
    for (const s of services) await s.stop(0);
    await sandbox.close();
    for (const d of databases) await d.close();
  });

  it.skipIf(!onServer)(
    `retries a failing tenant with backoff inside its slot and records the failure once (${NEEDS_SERVER})`,
    async () => {
      const testDb = await createTestDatabase();
      databases.push(testDb);
      const [tenant] = sandboxTenants(sandbox, 1, 'failing');
      const config = {
        ...testConfig({
          DATABASE_URL: testDb.url as string,
          GOVTRAIL_SCHEDULE: YEARLY,
          GOVTRAIL_RECONCILE_SCHEDULE: 'off',
          GOVTRAIL_HTTP_MAX_ATTEMPTS: '1',
          GOVTRAIL_JOB_RETRIES: '2',
        }),
        tenants: [tenant as NonNullable<typeof tenant>],
      };
      const service = await startWorkerService({
        config,
        logger: capturingLogger().logger,
        database: await openDatabase({ url: testDb.url }),
        httpPort: 0,
        httpHost: '127.0.0.1',
        processMetrics: false,
        engineTuning: FAST_ENGINE,
      });
      services.push(service);
      const before = sandbox.stats.historyRequests;
      sandbox.faults.add({ route: 'history', kind: '500', times: Number.POSITIVE_INFINITY });
      try {
        await service.engine.start({ initialRun: false });
        const slot = new Date();
        await service.engine.planSlot('sync', slot);
        const db = testDb.database.db;
        // The job ends in the dead-letter queue after its last attempt.
        await vi.waitFor(
          async () => {
            const { rows } = await sql<{ n: number }>`
              select count(*)::int as n from ${sql.raw(ENGINE_SCHEMA)}.job where name = ${QUEUES.dead}`.execute(
              db,
            );
            if ((rows[0]?.n ?? 0) < 1) throw new Error('not dead-lettered yet');
          },
          { timeout: 30_000, interval: 200 },
        );
        // Three attempts reached the tenant API: the first and two retries.
        expect(sandbox.stats.historyRequests - before).toBe(3);
        // One ledger row, for the last attempt: the failure is recorded once.
        const rows = await ledgerBySlot(db);
        expect(rows.map((r) => [r.tenant, r.status, r.errorCode, r.slot])).toEqual([
          [tenant?.name, 'failed', 'HTTP_ERROR', slot.toISOString()],
        ]);
        // The retries waited with exponential backoff (pg-boss's retryBackoff on the queue).
        const { rows: queue } = await sql<{ retry_backoff: boolean; retry_limit: number }>`
          select retry_backoff, retry_limit from ${sql.raw(ENGINE_SCHEMA)}.queue where name = ${QUEUES.sync}`.execute(
          db,
        );
        expect(queue).toEqual([{ retry_backoff: true, retry_limit: 2 }]);
        const health = await service.health();
        expect(health.tenants[0]?.consecutiveFailures).toBe(1);
        expect(health.engine?.queues?.['sync']?.dead).toBe(1);
      } finally {
        sandbox.faults.clear();
      }
    },
    60_000,
  );

  it.skipIf(!onServer)(
    `runs a reconcile slot missed while no worker ran once, however many replicas come back (${NEEDS_SERVER})`,
    async () => {
      const testDb = await createTestDatabase();
      databases.push(testDb);
      const tenants = sandboxTenants(sandbox, 3, 'missed');
      const reconcileSchedule = '0 0 * * * *'; // hourly, at minute 0
      const missedSlot = slotAtOrBefore(reconcileSchedule, new Date()) as Date;
      const db = testDb.database.db;
      // The tenants were synced before the slot; no worker ran at the slot.
      for (const t of tenants) {
        await sql`insert into govtrail.sync_run (tenant_id, trigger, kind, status, started_at, finished_at)
                  values (${t.name}, 'schedule', 'sync', 'succeeded',
                          ${new Date(missedSlot.getTime() - 60_000).toISOString()}::timestamptz,
                          ${new Date(missedSlot.getTime() - 59_000).toISOString()}::timestamptz)`.execute(db);
      }
      const config = {
        ...testConfig({
          DATABASE_URL: testDb.url as string,
          GOVTRAIL_SCHEDULE: YEARLY,
          GOVTRAIL_RECONCILE_SCHEDULE: reconcileSchedule,
        }),
        tenants,
      };
      const start = async (name: string) => {
        const service = await startWorkerService({
          config,
          logger: capturingLogger().logger,
          database: await openDatabase({ url: testDb.url, applicationName: name }),
          httpPort: 0,
          httpHost: '127.0.0.1',
          processMetrics: false,
          engineTuning: FAST_ENGINE,
          replicaName: name,
        });
        services.push(service);
        await service.engine.start({ initialRun: false });
        return service;
      };
      // Two replicas come back at once, a third a little later.
      await Promise.all([start('back-a'), start('back-b')]);
      await vi.waitFor(
        async () => {
          const done = (await ledgerBySlot(db, 'reconcile')).filter((r) => r.status === 'succeeded');
          if (done.length < tenants.length) throw new Error(`${done.length} reconciles so far`);
        },
        { timeout: 30_000, interval: 200 },
      );
      await start('back-c');
      for (const s of services.splice(-3)) await s.stop(5_000);

      const reconciles = await ledgerBySlot(db, 'reconcile');
      expect(reconciles.map((r) => [r.tenant, r.status, r.slot]).sort()).toEqual(
        tenants.map((t) => [t.name, 'succeeded', missedSlot.toISOString()]),
      );
    },
    60_000,
  );

  it.skipIf(!onServer)(
    `does not run a tenant again when its replica committed the slot's run and died before closing the job (${NEEDS_SERVER})`,
    async () => {
      const testDb = await createTestDatabase();
      databases.push(testDb);
      const [tenant] = sandboxTenants(sandbox, 1, 'committed');
      const config = testConfig({ DATABASE_URL: testDb.url as string, GOVTRAIL_RECONCILE_SCHEDULE: 'off' });
      const { logger } = capturingLogger();
      const database = await openDatabase({ url: testDb.url });
      const events: JobEvent[] = [];
      let attempts = 0;
      const engine = createEngine({
        connection: { kind: 'postgres', url: testDb.url as string, max: 2 },
        schedule: YEARLY,
        reconcileSchedule: undefined,
        spreadMs: 0,
        concurrency: 1,
        logger,
        tenants: async () => [tenant as NonNullable<typeof tenant>],
        // The first attempt commits its run, then its "replica" dies before pg-boss closes the job:
        // the job fails and comes back as a retry, as it does after a heartbeat of a killed replica.
        run: async (_kind, t, signal, attempt) => {
          attempts++;
          const summary = await syncTenant({
            database,
            config,
            logger,
            tenant: t,
            trigger: 'schedule',
            signal,
            engineAttempt: attempt,
          });
          if (attempts === 1) throw new Error('replica lost after its commit');
          return summary;
        },
        onJob: (e) => events.push(e),
        tuning: FAST_ENGINE,
      });
      try {
        await engine.start({ initialRun: false });
        const slot = new Date();
        await engine.planSlot('sync', slot);
        await vi.waitFor(
          () => {
            if (events.length < 2) throw new Error(`outcomes so far: ${events.map((e) => e.outcome)}`);
          },
          { timeout: 30_000, interval: 200 },
        );
        expect(attempts).toBe(2);
        // One run in the ledger for the slot: the retry found it and did not sync the tenant again.
        const rows = await ledgerBySlot(testDb.database.db);
        expect(rows.map((r) => [r.tenant, r.status, r.slot])).toEqual([
          [tenant?.name, 'succeeded', slot.toISOString()],
        ]);
        expect(events.map((e) => e.outcome)).toEqual(['retry', 'done']);
      } finally {
        await engine.stop(5_000);
        await database.close();
      }
    },
    60_000,
  );

  it('runs the embedded (PGlite) worker on schedule through the same engine', async () => {
    const database = await openDatabase({ dataDir: 'memory://' });
    await migrate(database, capturingLogger().logger);
    const tenants = sandboxTenants(sandbox, 2, 'embedded');
    const config = {
      ...testConfig({ GOVTRAIL_SCHEDULE: '*/2 * * * * *', GOVTRAIL_RECONCILE_SCHEDULE: 'off' }),
      tenants,
    };
    const service = await startWorkerService({
      config,
      logger: capturingLogger().logger,
      database,
      httpPort: 0,
      httpHost: '127.0.0.1',
      processMetrics: false,
      engineTuning: FAST_ENGINE,
    });
    services.push(service);
    await service.engine.start({ initialRun: false });
    // Two slots in which both tenants ran, from the schedule alone.
    await vi.waitFor(
      async () => {
        const rows = await ledgerBySlot(database.db);
        const slots = new Map<string, number>();
        for (const r of rows.filter((x) => x.status === 'succeeded')) {
          slots.set(r.slot, (slots.get(r.slot) ?? 0) + 1);
        }
        if ([...slots.values()].filter((n) => n === tenants.length).length < 2) {
          throw new Error('not two full slots yet');
        }
      },
      { timeout: 45_000, interval: 250 },
    );
    const health = await service.health();
    expect(health.engine).toMatchObject({ name: 'pg-boss', state: 'running', schema: ENGINE_SCHEMA });
    await service.stop(5_000);
    services.pop();
  }, 60_000);
});
