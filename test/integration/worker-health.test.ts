/**
 * /healthz and /metrics of a worker service over real sockets: health follows a tenant's streak
 * of failures (sandbox answering 500 forever, then recovering), and the metrics parse as
 * Prometheus text and agree with the run ledger.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWorkerService, type WorkerService } from '../../src/app/worker.js';
import type { TenantConfig } from '../../src/config/settings.js';
import { type Sandbox, startSandbox } from '../../src/sandbox/index.js';
import { openDatabase } from '../../src/store/database.js';
import { UNHEALTHY_AFTER_FAILURES } from '../../src/worker/status.js';
import { createTestDatabase, NEEDS_SERVER, onServer, type TestDatabase } from '../helpers/database.js';
import { FAST_ENGINE, runSlotNow } from '../helpers/fleet.js';
import { capturingLogger, testConfig } from '../helpers/harness.js';

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/**
 * A strict reader of the Prometheus text format (0.0.4): every line is a comment, blank, or
 * `name{label="value",…} number`; anything else throws. A value is what Go's ParseFloat reads, as
 * the format says: special values in any case, so prom-client's `Nan` (an event-loop lag not yet
 * sampled) is a value, as it is to Prometheus.
 */
function parsePrometheus(text: string): Sample[] {
  const samples: Sample[] = [];
  const line =
    /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? ([0-9.eE+-]+|[+-]?(?:nan|inf(?:inity)?))(?: -?\d+)?$/i;
  const label = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)",?/gy;
  for (const raw of text.split('\n')) {
    if (raw === '' || raw.startsWith('# HELP ') || raw.startsWith('# TYPE ')) continue;
    const m = line.exec(raw);
    if (m === null) throw new Error(`not Prometheus text: ${raw}`);
    const labels: Record<string, string> = {};
    const body = m[2] ?? '';
    label.lastIndex = 0;
    for (let l = label.exec(body); l !== null; l = label.exec(body)) labels[l[1] as string] = l[2] as string;
    if (label.lastIndex !== 0 && label.lastIndex !== body.length) throw new Error(`bad labels: ${raw}`);
    samples.push({ name: m[1] as string, labels, value: special(m[3] as string) });
  }
  return samples;
}

function special(text: string): number {
  const lower = text.toLowerCase();
  if (lower.endsWith('nan')) return Number.NaN;
  if (lower.endsWith('inf') || lower.endsWith('infinity'))
    return lower.startsWith('-') ? -Infinity : Infinity;
  return Number(text);
}

function value(samples: Sample[], name: string, labels: Record<string, string>): number | undefined {
  return samples.find((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))
    ?.value;
}

describe('worker health and metrics', () => {
  let testDb: TestDatabase | undefined;
  let sandbox: Sandbox | undefined;
  let service: WorkerService | undefined;
  let base = '';

  beforeAll(async () => {
    if (!onServer) return;
    testDb = await createTestDatabase();
    sandbox = await startSandbox({ entries: 120, seed: 7, scenarios: true });
    const tenant: TenantConfig = {
      name: 'acme',
      baseUrl: sandbox.baseUrl,
      clientId: sandbox.credentials.secret.clientId,
      clientSecret: sandbox.credentials.secret.clientSecret,
      pageSize: 50,
      lookbackMs: 15 * 60_000,
    };
    const config = {
      ...testConfig({
        GOVTRAIL_HTTP_MAX_ATTEMPTS: '3',
        DATABASE_URL: testDb.url as string,
        // Once a year: the test plans its own slots.
        GOVTRAIL_SCHEDULE: '0 0 1 1 *',
      }),
      tenants: [tenant],
    };
    const { logger } = capturingLogger();
    service = await startWorkerService({
      config,
      logger,
      database: await openDatabase({ url: testDb.url }),
      httpPort: 0,
      httpHost: '127.0.0.1',
      // One attempt per slot: each planned slot adds exactly one finished run to the ledger.
      engineTuning: { ...FAST_ENGINE, retryLimit: 0 },
    });
    await service.engine.start({ initialRun: false });
    base = `http://127.0.0.1:${service.port}`;
  });

  afterAll(async () => {
    await service?.stop(0);
    await sandbox?.close();
    await testDb?.close();
  });

  it.skipIf(!onServer)(
    `turns /healthz 503 after ${UNHEALTHY_AFTER_FAILURES} failed runs and 200 again after a success (${NEEDS_SERVER})`,
    async () => {
      const s = service as WorkerService;
      const sb = sandbox as Sandbox;
      let res = await fetch(`${base}/healthz`);
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({
        status: 'ok',
        database: 'ok',
        engine: { name: 'pg-boss', state: 'running', schema: 'govtrail_boss' },
        tenants: [{ tenant: 'acme', lastRun: null, consecutiveFailures: 0 }],
      });

      const db = (testDb as TestDatabase).database.db;
      const tick = (kind: 'sync' | 'reconcile' = 'sync') => runSlotNow(s.engine, db, kind, 1);
      await tick(); // backfill succeeds
      sb.faults.add({ route: 'history', kind: '500', times: Number.POSITIVE_INFINITY });
      for (let i = 1; i <= UNHEALTHY_AFTER_FAILURES; i++) {
        await tick();
        res = await fetch(`${base}/healthz`);
        const body = (await res.json()) as {
          status: string;
          tenants: Array<{ consecutiveFailures: number; lastRun: { status: string; errorCode: string } }>;
        };
        expect(body.tenants[0]?.consecutiveFailures).toBe(i);
        expect(body.tenants[0]?.lastRun.status).toBe('failed');
        expect(body.tenants[0]?.lastRun.errorCode).toBe('HTTP_ERROR');
        // Healthy until the Nth failure in a row, unhealthy from it.
        expect(res.status).toBe(i < UNHEALTHY_AFTER_FAILURES ? 200 : 503);
        expect(body.status).toBe(i < UNHEALTHY_AFTER_FAILURES ? 'ok' : 'unhealthy');
      }

      sb.faults.clear();
      await tick();
      res = await fetch(`${base}/healthz`);
      expect(res.status).toBe(200);
      const body = (await res.json()) as { tenants: Array<{ consecutiveFailures: number }> };
      expect(body.tenants[0]?.consecutiveFailures).toBe(0);
    },
  );

  it.skipIf(!onServer)(
    `serves Prometheus text whose counters match the run ledger (${NEEDS_SERVER})`,
    async () => {
      const db = (testDb as TestDatabase).database.db;
      const res = await fetch(`${base}/metrics`);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
      const samples = parsePrometheus(await res.text());

      const ledger = await db
        .selectFrom('govtrail.sync_run')
        .select([
          'status',
          sql<number>`count(*)::int`.as('n'),
          sql<number>`coalesce(sum(entries_inserted), 0)::int`.as('inserted'),
          sql<number>`coalesce(sum(http_retries), 0)::int`.as('retries'),
        ])
        .where('tenant_id', '=', 'acme')
        .groupBy('status')
        .execute();
      const by = Object.fromEntries(ledger.map((r) => [r.status, r]));
      expect(by['succeeded']?.n).toBe(2);
      expect(by['failed']?.n).toBe(UNHEALTHY_AFTER_FAILURES);
      for (const status of ['succeeded', 'failed'] as const) {
        expect(value(samples, 'govtrail_sync_runs_total', { tenant: 'acme', status })).toBe(by[status]?.n);
      }
      expect(value(samples, 'govtrail_sync_runs_total', { tenant: 'acme', status: 'skipped' })).toBe(0);
      expect(value(samples, 'govtrail_entries_inserted_total', { tenant: 'acme' })).toBe(
        by['succeeded']?.inserted,
      );
      expect(by['succeeded']?.inserted).toBeGreaterThan(0);
      // Retries are counted as they happen, failed runs' included: the ledger records them too.
      expect(value(samples, 'govtrail_http_retries_total', { tenant: 'acme' })).toBe(
        (by['succeeded']?.retries ?? 0) + (by['failed']?.retries ?? 0),
      );
      expect(value(samples, 'govtrail_http_retries_total', { tenant: 'acme' })).toBeGreaterThan(0);
      expect(value(samples, 'govtrail_sync_run_duration_seconds_count', { tenant: 'acme' })).toBe(
        2 + UNHEALTHY_AFTER_FAILURES,
      );
      const lastSuccess = value(samples, 'govtrail_last_success_timestamp_seconds', { tenant: 'acme' });
      expect(Math.abs((lastSuccess ?? 0) - Date.now() / 1000)).toBeLessThan(60);
      // The checkpoint is the newest seeded entry: its age is now minus its createdAt.
      const cp = await db
        .selectFrom('govtrail.checkpoint')
        .select('entry_created_at')
        .where('tenant_id', '=', 'acme')
        .executeTakeFirstOrThrow();
      const age = value(samples, 'govtrail_checkpoint_age_seconds', { tenant: 'acme' }) ?? -1;
      expect(Math.abs(age - (Date.now() - new Date(cp.entry_created_at).getTime()) / 1000)).toBeLessThan(60);
      // The scenarios raise alerts, delivered to the default log sink after the backfill tick: by
      // the worker's delivery loop, in its own time (on a busy machine, after this test starts).
      const deliveredNow = async () => {
        const text = await (await fetch(`${base}/metrics`)).text();
        const metric = parsePrometheus(text)
          .filter((x) => x.name === 'govtrail_alert_deliveries_total' && x.labels['outcome'] === 'delivered')
          .reduce((a, x) => a + x.value, 0);
        const outbox = await db
          .selectFrom('govtrail.alert_delivery')
          .select(sql<number>`count(*)::int`.as('n'))
          .where('status', '=', 'delivered')
          .executeTakeFirstOrThrow();
        return { metric, outbox: outbox.n };
      };
      let delivered = await deliveredNow();
      for (let i = 0; i < 100 && (delivered.metric === 0 || delivered.metric !== delivered.outbox); i++) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        delivered = await deliveredNow();
      }
      expect(delivered.metric).toBe(delivered.outbox);
      expect(delivered.metric).toBeGreaterThan(0);
      // Default process metrics are there too.
      expect(samples.some((x) => x.name === 'process_cpu_user_seconds_total')).toBe(true);
    },
  );

  it.skipIf(!onServer)(`answers 503 when the database does not answer (${NEEDS_SERVER})`, async () => {
    const database = await openDatabase({ url: (testDb as TestDatabase).url });
    const lonely = await startWorkerService({
      config: { ...testConfig({ DATABASE_URL: (testDb as TestDatabase).url as string }), tenants: [] },
      logger: capturingLogger().logger,
      database,
      httpPort: 0,
      httpHost: '127.0.0.1',
      processMetrics: false,
    });
    try {
      // Health includes the engine: not started yet, the worker is not healthy.
      let res = await fetch(`http://127.0.0.1:${lonely.port}/healthz`);
      expect(res.status).toBe(503);
      expect(((await res.json()) as { engine: { state: string } }).engine.state).not.toBe('running');
      await lonely.engine.start({ initialRun: false });
      res = await fetch(`http://127.0.0.1:${lonely.port}/healthz`);
      expect(res.status).toBe(200);
      await res.text();
      // Stands for a lost server: every query of this pool now fails.
      await database.close();
      res = await fetch(`http://127.0.0.1:${lonely.port}/healthz`);
      expect(res.status).toBe(503);
      expect(await res.json()).toEqual({ status: 'unhealthy', database: 'unreachable', tenants: [] });
    } finally {
      await lonely.stop(0);
    }
  });

  it.skipIf(!onServer)(
    `answers 503 when a tenant has gone without a successful sync too long (${NEEDS_SERVER})`,
    async () => {
      const database = await openDatabase({ url: (testDb as TestDatabase).url });
      const stale = {
        name: 'never-synced',
        baseUrl: 'http://127.0.0.1:9',
        clientId: 'x',
        clientSecret: 'y',
        pageSize: 50,
        lookbackMs: 60_000,
      };
      const worker = await startWorkerService({
        config: {
          ...testConfig({
            DATABASE_URL: (testDb as TestDatabase).url as string,
            GOVTRAIL_SCHEDULE: '0 0 1 1 *',
            GOVTRAIL_HEALTH_STALE_AFTER: '1s',
          }),
          tenants: [stale],
        },
        logger: capturingLogger().logger,
        database,
        httpPort: 0,
        httpHost: '127.0.0.1',
        processMetrics: false,
        engineTuning: FAST_ENGINE,
      });
      try {
        await worker.engine.start({ initialRun: false });
        let res = await fetch(`http://127.0.0.1:${worker.port}/healthz`);
        expect(res.status).toBe(200);
        await res.text();
        await new Promise((resolve) => setTimeout(resolve, 1200));
        res = await fetch(`http://127.0.0.1:${worker.port}/healthz`);
        expect(res.status).toBe(503);
        expect(((await res.json()) as { fleet: unknown }).fleet).toEqual({
          tenants: 1,
          failing: 0,
          stale: 1,
          staleAfterSeconds: 1,
        });
      } finally {
        await worker.stop(0);
      }
    },
  );

  it.skipIf(!onServer)(
    `counts reconcile outcomes and the discrepancies that held, and keeps health to syncs (${NEEDS_SERVER})`,
    async () => {
      const s = service as WorkerService;
      const sb = sandbox as Sandbox;
      const ledger = (testDb as TestDatabase).database.db;
      await runSlotNow(s.engine, ledger, 'sync', 1);
      const slot = await runSlotNow(s.engine, ledger, 'reconcile', 1);
      const clean = await ledger
        .selectFrom('govtrail.sync_run')
        .select(['kind', 'status'])
        .where('slot', '=', slot)
        .execute();
      expect(clean).toEqual([{ kind: 'reconcile', status: 'succeeded' }]);
      const entries = sb.history.entries() as Array<{ metadata: { id: string } }>;
      sb.history.rewrite(entries[40]?.metadata.id as string);
      sb.history.remove(entries[60]?.metadata.id as string);
      await runSlotNow(s.engine, ledger, 'reconcile', 1);
      const samples = parsePrometheus(await (await fetch(`${base}/metrics`)).text());
      expect(value(samples, 'govtrail_reconcile_runs_total', { tenant: 'acme', outcome: 'agrees' })).toBe(1);
      expect(value(samples, 'govtrail_reconcile_runs_total', { tenant: 'acme', outcome: 'differs' })).toBe(1);
      expect(
        value(samples, 'govtrail_source_discrepancies', { tenant: 'acme', kind: 'changed_at_source' }),
      ).toBe(1);
      expect(
        value(samples, 'govtrail_source_discrepancies', { tenant: 'acme', kind: 'missing_at_source' }),
      ).toBe(1);
      expect(value(samples, 'govtrail_source_discrepancies_recorded_total', { tenant: 'acme' })).toBe(2);
      const health = (await (await fetch(`${base}/healthz`)).json()) as {
        tenants: Array<{ lastRun: { runId: number } }>;
      };
      const db = await openDatabase({ url: (testDb as TestDatabase).url });
      const { rows } = await sql<{ run_id: number }>`
        select max(run_id)::int as run_id from govtrail.sync_run where kind = 'sync' and status = 'succeeded'`
        .execute(db.db)
        .finally(() => db.close());
      expect(health.tenants[0]?.lastRun.runId).toBe(rows[0]?.run_id);
    },
  );

  it.skipIf(!onServer)(`answers 404 on other paths (${NEEDS_SERVER})`, async () => {
    const res = await fetch(`${base}/nope`);
    expect(res.status).toBe(404);
    await res.text();
  });
});
