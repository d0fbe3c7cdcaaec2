/**
 * Two worker replicas — two in-process services, each with its own database pool — against one
 * database and five sandbox tenants. Ticks are driven directly, both replicas at once, with slow
 * history pages so that their runs overlap: the advisory locks must let exactly one replica sync
 * each tenant per tick, and the other must record `skipped`.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TenantConfig } from '../../src/config.js';
import { type Sandbox, startSandbox } from '../../src/sandbox/index.js';
import { openDatabase } from '../../src/store/database.js';
import type { SyncRunSummary } from '../../src/sync/run.js';
import { startWorkerService, type WorkerService } from '../../src/worker/service.js';
import type { TickResult } from '../../src/worker/worker.js';
import { createTestDatabase, NEEDS_SERVER, onServer, type TestDatabase } from '../helpers/database.js';
import { capturingLogger, testConfig, truthIds } from '../helpers/harness.js';

const TENANTS = 5;
const TICKS = 3;

describe('worker replicas', () => {
  let testDb: TestDatabase | undefined;
  const sandboxes: Sandbox[] = [];
  const replicas: WorkerService[] = [];
  let tenants: TenantConfig[] = [];

  beforeAll(async () => {
    if (!onServer) return;
    testDb = await createTestDatabase();
    for (let i = 0; i < TENANTS; i++) {
      const s = await startSandbox({ entries: 150, seed: 100 + i });
      // Every history page takes 200 ms: both replicas' lock attempts land while a run holds it.
      s.faults.add({ route: 'history', kind: 'slow', delayMs: 200, times: Number.POSITIVE_INFINITY });
      sandboxes.push(s);
    }
    tenants = sandboxes.map((s, i) => ({
      name: `tenant-${i}`,
      baseUrl: s.baseUrl,
      clientId: s.credentials.secret.clientId,
      clientSecret: s.credentials.secret.clientSecret,
      pageSize: 100,
      lookbackMs: 15 * 60_000,
    }));
    const config = { ...testConfig({ GOVTRAIL_WORKER_CONCURRENCY: String(TENANTS) }), tenants };
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
        }),
      );
    }
  });

  afterAll(async () => {
    for (const r of replicas) await r.stop(0);
    for (const s of sandboxes) await s.close();
    await testDb?.close();
  });

  it.skipIf(!onServer)(
    `syncs every tenant exactly once per tick across two replicas; the other records skipped (${NEEDS_SERVER})`,
    async () => {
      const db = (testDb as TestDatabase).database.db;
      for (let tick = 1; tick <= TICKS; tick++) {
        // New work for every tenant on every tick after the backfill.
        if (tick > 1) for (const s of sandboxes) s.history.append(3);
        const results = await Promise.all(replicas.map((r) => r.worker.tick('schedule')));
        const summaries: SyncRunSummary[] = [];
        for (const r of results) {
          expect(typeof r).toBe('object');
          summaries.push(...(r as TickResult).summaries);
          expect((r as TickResult).errors).toEqual([]);
        }
        for (const t of tenants) {
          const mine = summaries.filter((s) => s.tenantId === t.name).map((s) => s.status);
          expect(mine.sort(), `tick ${tick}, ${t.name}`).toEqual(['skipped', 'succeeded']);
        }
      }

      // The ledger says the same: per tenant, TICKS runs did the work and TICKS were skipped.
      const ledger = await db
        .selectFrom('govtrail.sync_run')
        .select(['tenant_id', 'status', sql<number>`count(*)::int`.as('n')])
        .where('trigger', '=', 'schedule')
        .groupBy(['tenant_id', 'status'])
        .orderBy('tenant_id')
        .orderBy('status')
        .execute();
      expect(ledger).toEqual(
        tenants.flatMap((t) => [
          { tenant_id: t.name, status: 'skipped', n: TICKS },
          { tenant_id: t.name, status: 'succeeded', n: TICKS },
        ]),
      );

      // No duplicate and nothing missing: each tenant holds exactly what its sandbox serves.
      for (const [i, t] of tenants.entries()) {
        const rows = await db
          .selectFrom('govtrail.history_entry')
          .select(['entry_id'])
          .where('tenant_id', '=', t.name)
          .execute();
        const ids = rows.map((r) => r.entry_id);
        expect(new Set(ids).size).toBe(ids.length);
        expect(ids.sort()).toEqual(truthIds(sandboxes[i] as Sandbox).sort());
      }
    },
  );
});
