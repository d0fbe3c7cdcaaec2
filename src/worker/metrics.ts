/**
 * The worker's Prometheus metrics, on a registry of its own (never prom-client's global one, so
 * that two workers in one process — tests — and library users do not share counters).
 */
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import type { DeliverySummary } from '../alerts/deliver.js';
import type { SyncRunSummary } from '../sync/run.js';
import type { EngineStatus, JobEvent } from './engine-setup.js';

export interface WorkerMetrics {
  readonly registry: Registry;
  /** Counts one finished run (any status) and its figures. */
  recordRun(summary: SyncRunSummary): void;
  /** Counts one HTTP retry of a tenant's run (from syncTenant's onRetry, as it happens). */
  recordRetry(tenant: string): void;
  recordDeliveries(summary: DeliverySummary): void;
  /** Counts one finished job of the engine, with its wait and run time. */
  recordJob(event: JobEvent): void;
  /** Prometheus text exposition of every metric. */
  render(): Promise<string>;
  readonly contentType: string;
}

/** Options of {@link createWorkerMetrics}. */
export interface WorkerMetricsOptions {
  tenants: readonly string[];
  /**
   * Reads each tenant's checkpoint entry time at scrape, so that the age is right even when this
   * replica has not run the tenant lately (another replica did).
   */
  checkpointTimes: () => Promise<ReadonlyMap<string, Date>>;
  now?: () => number;
  /** Default process metrics (CPU, memory, event loop); default true. */
  processMetrics?: boolean;
  /** The engine's queue counts and live replicas, read at scrape (absent: no fleet gauges). */
  engineStatus?: () => Promise<EngineStatus | undefined>;
  /** Each scheduled tenant's last successful sync, read at scrape. */
  lastSuccesses?: () => Promise<ReadonlyMap<string, Date>>;
}

/** The worker's metrics, with zero series for every tenant in `options.tenants`. */
export function createWorkerMetrics(options: WorkerMetricsOptions): WorkerMetrics {
  const registry = new Registry();
  if (options.processMetrics !== false) collectDefaultMetrics({ register: registry });
  const now = options.now ?? Date.now;
  // Created in exposition order: the order of the families in /metrics.
  const sync = syncMetrics(registry);
  const reconcile = reconcileMetrics(registry);
  const deliveries = new Counter({
    name: 'govtrail_alert_deliveries_total',
    help: 'Alert delivery attempts by sink and outcome (delivered, retried, failed = given up)',
    labelNames: ['sink', 'outcome'] as const,
    registers: [registry],
  });
  checkpointAgeGauge(registry, options.checkpointTimes, now);
  const jobs = jobMetrics(registry);
  if (options.engineStatus !== undefined) fleetGauges(registry, options.engineStatus);
  if (options.lastSuccesses !== undefined) freshnessGauge(registry, options.lastSuccesses, now);
  zeroSeries(options.tenants, sync, reconcile);

  return {
    registry,
    contentType: registry.contentType,
    recordRun(s) {
      if (s.kind === 'reconcile') recordReconcile(reconcile, s);
      else recordSync(sync, reconcile, s, now);
    },
    recordRetry(tenant) {
      sync.retries.inc({ tenant });
    },
    recordDeliveries(summary) {
      for (const [sink, t] of Object.entries(summary.bySink)) {
        if (t.delivered > 0) deliveries.inc({ sink, outcome: 'delivered' }, t.delivered);
        if (t.retried > 0) deliveries.inc({ sink, outcome: 'retried' }, t.retried);
        if (t.failed > 0) deliveries.inc({ sink, outcome: 'failed' }, t.failed);
      }
    },
    recordJob(event) {
      jobs.finished.inc({ kind: event.queue, outcome: event.outcome });
      if (event.outcome === 'superseded' || event.outcome === 'removed') return;
      jobs.wait.observe({ kind: event.queue }, event.waitMs / 1000);
      jobs.run.observe({ kind: event.queue }, event.runMs / 1000);
    },
    render: () => registry.metrics(),
  };
}

type SyncMetrics = ReturnType<typeof syncMetrics>;
type ReconcileMetrics = ReturnType<typeof reconcileMetrics>;

/** Runs, entries stored, run durations, HTTP retries and last success, per tenant. */
function syncMetrics(registry: Registry) {
  const runs = new Counter({
    name: 'govtrail_sync_runs_total',
    help: 'Sync runs started by this process, by tenant and final status (skipped: another process held the tenant lock)',
    labelNames: ['tenant', 'status'] as const,
    registers: [registry],
  });
  const inserted = new Counter({
    name: 'govtrail_entries_inserted_total',
    help: 'History entries stored by this process (committed runs only)',
    labelNames: ['tenant'] as const,
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'govtrail_sync_run_duration_seconds',
    help: 'Duration of sync runs that did the work (skipped runs excluded)',
    labelNames: ['tenant'] as const,
    buckets: [0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 900],
    registers: [registry],
  });
  const retries = new Counter({
    name: 'govtrail_http_retries_total',
    help: 'HTTP attempts retried while syncing (408, 429, 5xx, network errors)',
    labelNames: ['tenant'] as const,
    registers: [registry],
  });
  const lastSuccess = new Gauge({
    name: 'govtrail_last_success_timestamp_seconds',
    help: 'Unix time of the last successful run by this process',
    labelNames: ['tenant'] as const,
    registers: [registry],
  });
  return { runs, inserted, duration, retries, lastSuccess };
}

/** Reconcile outcomes, the discrepancies that held at the last one, and findings recorded. */
function reconcileMetrics(registry: Registry) {
  const reconciles = new Counter({
    name: 'govtrail_reconcile_runs_total',
    help: 'Reconcile runs started by this process, by tenant and outcome (agrees, differs, failed, skipped)',
    labelNames: ['tenant', 'outcome'] as const,
    registers: [registry],
  });
  const discrepancies = new Gauge({
    name: 'govtrail_source_discrepancies',
    help: 'Discrepancies between the source and the store that held at the last reconcile of this process, by tenant and kind',
    labelNames: ['tenant', 'kind'] as const,
    registers: [registry],
  });
  const findings = new Counter({
    name: 'govtrail_source_discrepancies_recorded_total',
    help: 'New findings against the source recorded by this process (syncs and reconciles), by tenant',
    labelNames: ['tenant'] as const,
    registers: [registry],
  });
  return { reconciles, discrepancies, findings };
}

function checkpointAgeGauge(
  registry: Registry,
  checkpointTimes: () => Promise<ReadonlyMap<string, Date>>,
  now: () => number,
): void {
  new Gauge({
    name: 'govtrail_checkpoint_age_seconds',
    help: 'Now minus the creation time of the newest stored entry (the checkpoint), read from the database at scrape',
    labelNames: ['tenant'] as const,
    registers: [registry],
    async collect() {
      this.reset();
      const times = await checkpointTimes();
      for (const [tenant, at] of times) this.set({ tenant }, Math.max(0, (now() - at.getTime()) / 1000));
    },
  });
}

/** The engine's jobs finished in this process: wait, run time and outcome, by kind. */
function jobMetrics(registry: Registry) {
  const wait = new Histogram({
    name: 'govtrail_job_wait_seconds',
    help: 'Time a job of the engine waited between its start time (slot plus spread offset) and its start, by kind',
    labelNames: ['kind'] as const,
    buckets: [0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900],
    registers: [registry],
  });
  const run = new Histogram({
    name: 'govtrail_job_run_seconds',
    help: 'Run time of a job of the engine in this process, by kind',
    labelNames: ['kind'] as const,
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900],
    registers: [registry],
  });
  const finished = new Counter({
    name: 'govtrail_jobs_finished_total',
    help: 'Jobs of the engine finished by this process, by kind and outcome (completed, retry, dead, superseded, removed, busy, done = its slot already succeeded)',
    labelNames: ['kind', 'outcome'] as const,
    registers: [registry],
  });
  return { wait, run, finished };
}

/** The fleet as the engine sees it (every replica's jobs, replicas alive), read at scrape. */
function fleetGauges(registry: Registry, engineStatus: () => Promise<EngineStatus | undefined>): void {
  // One read of the engine serves every fleet gauge of a scrape.
  let pending: Promise<EngineStatus | undefined> | undefined;
  const read = (): Promise<EngineStatus | undefined> => {
    pending ??= engineStatus()
      .catch(() => undefined)
      .finally(() => {
        setTimeout(() => {
          pending = undefined;
        }, 100).unref();
      });
    return pending;
  };
  new Gauge({
    name: 'govtrail_jobs',
    help: 'Jobs of the engine by kind and state (queued, active, failed, dead), for every replica, as pg-boss last counted them',
    labelNames: ['kind', 'state'] as const,
    registers: [registry],
    async collect() {
      this.reset();
      const status = await read();
      if (status === undefined) return;
      for (const [kind, c] of Object.entries(status.queues)) {
        for (const state of ['queued', 'active', 'failed', 'dead'] as const)
          this.set({ kind, state }, c[state]);
      }
    },
  });
  new Gauge({
    name: 'govtrail_replicas_alive',
    help: 'Worker replicas whose engine heartbeat is recent (pg-boss instance registry)',
    registers: [registry],
    async collect() {
      const status = await read();
      if (status !== undefined) this.set(status.replicasAlive);
    },
  });
}

function freshnessGauge(
  registry: Registry,
  lastSuccesses: () => Promise<ReadonlyMap<string, Date>>,
  now: () => number,
): void {
  new Gauge({
    name: 'govtrail_tenant_freshness_seconds',
    help: 'Seconds since the last successful sync of each scheduled tenant (any replica), read from the run ledger at scrape',
    labelNames: ['tenant'] as const,
    registers: [registry],
    async collect() {
      this.reset();
      const times = await lastSuccesses().catch(() => new Map<string, Date>());
      for (const [tenant, at] of times) this.set({ tenant }, Math.max(0, (now() - at.getTime()) / 1000));
    },
  });
}

/** Zero series for every configured tenant, so that rate() and absent() work from the first scrape. */
function zeroSeries(tenants: readonly string[], sync: SyncMetrics, reconcile: ReconcileMetrics): void {
  for (const tenant of tenants) {
    for (const status of ['succeeded', 'failed', 'skipped']) sync.runs.inc({ tenant, status }, 0);
    for (const outcome of ['agrees', 'differs', 'failed', 'skipped'])
      reconcile.reconciles.inc({ tenant, outcome }, 0);
    reconcile.findings.inc({ tenant }, 0);
    sync.inserted.inc({ tenant }, 0);
    sync.retries.inc({ tenant }, 0);
  }
}

function recordSync(
  sync: SyncMetrics,
  reconcile: ReconcileMetrics,
  s: SyncRunSummary,
  now: () => number,
): void {
  sync.runs.inc({ tenant: s.tenantId, status: s.status });
  if (s.findings > 0) reconcile.findings.inc({ tenant: s.tenantId }, s.findings);
  if (s.status === 'skipped') return;
  sync.duration.observe({ tenant: s.tenantId }, s.durationMs / 1000);
  if (s.status === 'succeeded') {
    sync.inserted.inc({ tenant: s.tenantId }, s.counters.entriesInserted);
    sync.lastSuccess.set({ tenant: s.tenantId }, now() / 1000);
  }
}

function recordReconcile(m: ReconcileMetrics, s: SyncRunSummary): void {
  const i = s.integrity;
  if (s.status !== 'succeeded' || i === undefined) {
    m.reconciles.inc({ tenant: s.tenantId, outcome: s.status });
    return;
  }
  const held = {
    changed_at_source: s.counters.entriesChanged,
    missing_at_source: i.entriesMissing,
    expired_at_source: i.entriesExpired,
    backdated: i.entriesBackdated,
    conflicting_ids: i.entriesConflicting,
  };
  const differs = held.changed_at_source + held.missing_at_source + held.backdated + held.conflicting_ids > 0;
  m.reconciles.inc({ tenant: s.tenantId, outcome: differs ? 'differs' : 'agrees' });
  for (const [kind, n] of Object.entries(held)) m.discrepancies.set({ tenant: s.tenantId, kind }, n);
  m.findings.inc({ tenant: s.tenantId }, s.findings);
}
