/**
 * The worker as a whole: the job engine (pg-boss) + health and metrics server, over one database
 * and one shared HTTP agent. `govtrail worker` is this plus signal handling; tests start several
 * in one process, each with its own database pool, to stand in for replicas.
 */
import type { Agent } from 'undici';
import type { DeliverySummary } from '../alerts/deliver.js';
import type { Config, TenantConfig } from '../config/settings.js';
import { createRunAnchorer, type RunAnchorer } from '../outputs/anchor/after-run.js';
import type { Logger } from '../runtime/logger.js';
import { TokenCache } from '../source/auth.js';
import { createHttpAgent } from '../source/http.js';
import type { Database } from '../store/database.js';
import { readLastSuccesses, readMissedReconciles, readNextDeliveryDue } from '../store/read/fleet.js';
import {
  databaseNow,
  measureClockSkew,
  pingDatabase,
  readCheckpointTimes,
  readFleetHealth,
} from '../store/read/health.js';
import type { EngineAttempt } from '../sync/run-types.js';
import { createEngine, type Engine } from '../worker/engine.js';
import type { EngineConnection, EngineTuning } from '../worker/engine-setup.js';
import { createWorkerMetrics, type WorkerMetrics } from '../worker/metrics.js';
import { type HealthServer, startHealthServer } from '../worker/server.js';
import { slotAfter } from '../worker/slots.js';
import {
  type EngineHealth,
  type HealthReport,
  healthVerdict,
  UNHEALTHY_AFTER_FAILURES,
} from '../worker/status.js';
import { type Alerting, createAlerting } from './alerting.js';
import { reconcileTenant, syncTenant, type TenantRunOptions } from './tenant-run.js';

/**
 * THE tenant-list injection point of the worker: given the configured tenants (`GOVTRAIL_CONFIG` /
 * the environment, re-read on SIGHUP), the tenants to schedule. Asked when a slot is planned and
 * after a reload. Default: the configured tenants as they are.
 */
export type TenantLister = (configured: readonly TenantConfig[]) => Promise<readonly TenantConfig[]>;

export interface WorkerServiceOptions {
  readonly config: Config;
  readonly logger: Logger;
  /** Migrated database; the service closes it on stop. */
  readonly database: Database;
  /** Default: every configured tenant (what {@link TenantLister} is given). */
  readonly tenants?: readonly TenantConfig[];
  /** See {@link TenantLister}; default: the configured tenants. */
  readonly listTenants?: TenantLister;
  /** Engine timings (tests shorten them); retries and their delay default to the configuration. */
  readonly engineTuning?: Partial<EngineTuning>;
  /** Name of this replica in the engine's instance registry and pg_stat_activity. */
  readonly replicaName?: string;
  /** Default: config.httpPort. */
  readonly httpPort?: number;
  readonly httpHost?: string;
  /** Default process metrics in /metrics; default true. */
  readonly processMetrics?: boolean;
}

export interface WorkerService {
  readonly engine: Engine;
  readonly metrics: WorkerMetrics;
  readonly alerting: Alerting;
  /** The bound health and metrics port. */
  readonly port: number;
  health(): Promise<HealthReport>;
  /**
   * Takes a new configuration's tenants (SIGHUP): the next slot plans them, and a queued job of a
   * tenant no longer listed is dropped. Other settings need a restart.
   */
  reload(config: Config): Promise<void>;
  /** Graceful stop: schedule, run in flight (grace period, then abort), server, agent, database. */
  stop(graceMs?: number): Promise<{ aborted: boolean }>;
}

const HEALTH_QUERY_TIMEOUT_MS = 5_000;

/** The tenants configured and the tenants last scheduled, shared by the engine, health and metrics. */
interface TenantScope {
  configured: readonly TenantConfig[];
  /** The tenants last scheduled: what health and the per-tenant metrics report on. */
  scheduled: readonly TenantConfig[];
  readonly list: TenantLister;
}

/** What the parts of one worker share. */
interface WorkerShared {
  readonly options: WorkerServiceOptions;
  readonly config: Config;
  readonly database: Database;
  readonly logger: Logger;
  readonly tenants: TenantScope;
  readonly agent: Agent;
  /** Access tokens kept from run to run: a run of a tenant whose token is still valid asks none. */
  readonly tokens: TokenCache;
  readonly alerting: Alerting;
  readonly anchorer: RunAnchorer;
  readonly metrics: WorkerMetrics;
  /** When this worker started (stale tenants are judged only after a full window). */
  readonly startedAt: Date;
  /**
   * The database's clock minus this process's: the engine judges slots by the database's clock
   * (Date.now() + skewMs), so a replica whose clock runs ahead or behind still runs its slots.
   */
  readonly clock: { skewMs: number; timer?: NodeJS.Timeout };
  /** staleAfterMs of the configuration, once computed. */
  staleMs?: number;
}

/** How often the clock skew is measured again. */
const SKEW_INTERVAL_MS = 60_000;

/** Measures the skew now and every SKEW_INTERVAL_MS; a failed measure keeps the last one. */
async function trackClockSkew(shared: WorkerShared): Promise<void> {
  const measure = () =>
    measureClockSkew(shared.database.db).then(
      (ms) => {
        shared.clock.skewMs = ms;
        if (Math.abs(ms) > 5_000)
          shared.logger.warn(
            { skewMs: Math.round(ms) },
            "this host's clock differs from the database's: slots follow the database",
          );
      },
      (err: unknown) => shared.logger.warn({ err }, 'could not measure the clock skew'),
    );
  await measure();
  shared.clock.timer = setInterval(() => void measure(), SKEW_INTERVAL_MS);
  shared.clock.timer.unref();
}

function scheduledNames(tenants: TenantScope): string[] {
  return tenants.scheduled.map((t) => t.name);
}

export async function startWorkerService(options: WorkerServiceOptions): Promise<WorkerService> {
  const { config, database } = options;
  const logger = options.logger.child({ component: 'worker' });
  const configured = options.tenants ?? config.tenants;
  const list: TenantLister = options.listTenants ?? (async (c) => c);
  const tenants: TenantScope = { configured, scheduled: await list(configured), list };
  // One agent for every run: keep-alive connections and TLS sessions survive from slot to slot.
  const agent: Agent = createHttpAgent(config.http);
  // The alert sinks and the runs bind their own component (alerts, tenant-api): given the
  // worker's child, their lines would carry "component" twice.
  const alerting = createAlerting(config, options.logger, database);
  // After every run that stored entries, an anchor of the tenant's chain (GOVTRAIL_ANCHOR_DIR).
  const anchorer = createRunAnchorer(config, database, logger);
  let worker: Engine | undefined;
  const clock = { skewMs: 0 };
  const metrics = createMetrics(config, options, database, logger, tenants, () => worker, clock);
  const shared: WorkerShared = {
    options,
    config,
    database,
    logger,
    tenants,
    agent,
    tokens: new TokenCache(),
    alerting,
    anchorer,
    metrics,
    startedAt: new Date(),
    clock,
  };
  await trackClockSkew(shared);
  worker = createWorkerEngine(shared);
  const engine = worker;
  const health = (): Promise<HealthReport> => checkHealth(shared, engine);
  const server = await startServer(shared, health);
  return serviceOf(shared, engine, server, health);
}

/** The worker's metrics; the engine's status is read through `engine` once it exists. */
function createMetrics(
  config: Config,
  options: WorkerServiceOptions,
  database: Database,
  logger: Logger,
  tenants: TenantScope,
  engine: () => Engine | undefined,
  clock: { skewMs: number },
): WorkerMetrics {
  return createWorkerMetrics({
    tenants: scheduledNames(tenants),
    tenantSeries: config.metricsTenants,
    clockSkew: () => clock.skewMs / 1000,
    ...(options.processMetrics !== undefined ? { processMetrics: options.processMetrics } : {}),
    checkpointTimes: () =>
      readCheckpointTimes(database.db, scheduledNames(tenants)).catch((err: unknown) => {
        // A scrape must still answer when the database does not: the gauge is left out instead.
        logger.warn({ err }, 'could not read checkpoints for the metrics');
        return new Map<string, Date>();
      }),
    lastSuccesses: () => readLastSuccesses(database.db, scheduledNames(tenants)),
    engineStatus: async () => engine()?.status(),
  });
}

/** What every scheduled run of a tenant shares: the database, the agent, the outbox, the metrics. */
function runOptions(
  shared: WorkerShared,
  tenant: TenantConfig,
  signal: AbortSignal,
  engineAttempt: Required<EngineAttempt>,
): TenantRunOptions {
  const { database, config, agent, tokens, alerting, metrics } = shared;
  return {
    database,
    config,
    logger: shared.options.logger,
    tenant,
    trigger: 'schedule',
    dispatcher: agent,
    tokens,
    signal,
    alerting,
    engineAttempt,
    onRetry: () => metrics.recordRetry(tenant.name),
  };
}

/** The job engine's database: the embedded one, or the server (which needs config.databaseUrl). */
function engineConnection(shared: WorkerShared): EngineConnection {
  const { database, config, options } = shared;
  const connection: EngineConnection =
    database.serialisedLite !== undefined
      ? { kind: 'embedded', pglite: database.serialisedLite }
      : {
          kind: 'postgres',
          url: config.databaseUrl ?? '',
          applicationName: `${options.replicaName ?? 'govtrail-worker'}-engine`,
        };
  if (connection.kind === 'postgres' && connection.url === '') {
    throw new Error('the worker on a server needs config.databaseUrl for its job engine');
  }
  return connection;
}

/** The job engine, wired to the tenant runs, alert delivery, the metrics and the anchorer. */
function createWorkerEngine(shared: WorkerShared): Engine {
  const { config, database, logger, tenants, metrics, anchorer, options } = shared;
  return createEngine({
    connection: engineConnection(shared),
    schedule: config.schedule,
    reconcileSchedule: config.reconcileSchedule,
    spreadMs: config.spreadMs,
    concurrency: config.workerConcurrency,
    logger,
    tenants: async () => {
      tenants.scheduled = await tenants.list(tenants.configured);
      return tenants.scheduled;
    },
    run: (kind, tenant, signal, attempt) =>
      kind === 'sync'
        ? syncTenant(runOptions(shared, tenant, signal, attempt))
        : reconcileTenant(runOptions(shared, tenant, signal, attempt)),
    deliverAlerts: (signal) => deliverAlerts(shared, signal),
    missedReconciles: (slot, list) => readMissedReconciles(database.db, slot, list),
    onRun: (s) => {
      metrics.recordRun(s);
      anchorer.onRun(s);
    },
    onJob: (e) => metrics.recordJob(e),
    now: () => Date.now() + shared.clock.skewMs,
    tuning: {
      retryLimit: config.jobRetries,
      retryDelaySeconds: Math.max(1, Math.round(config.jobRetryDelayMs / 1000)),
      heartbeatSeconds: Math.round(config.jobHeartbeatMs / 1000),
      superviseIntervalSeconds: Math.max(1, Math.round(config.jobHeartbeatMs / 2000)),
      ...options.engineTuning,
    },
    ...(options.replicaName !== undefined ? { instanceName: options.replicaName } : {}),
  });
}

/** One delivery pass over the outbox, and when the next due delivery is. */
async function deliverAlerts(
  shared: WorkerShared,
  signal: AbortSignal,
): Promise<{ summary: DeliverySummary; nextDue?: Date }> {
  const summary = await shared.alerting.deliver(signal);
  shared.metrics.recordDeliveries(summary);
  const due = await readNextDeliveryDue(shared.database.db);
  // Not sooner than a few seconds from now: a delivery that cannot make progress must not spin.
  const nextDue = due === undefined ? undefined : new Date(Math.max(due.getTime(), Date.now() + 5_000));
  return nextDue === undefined ? { summary } : { summary, nextDue };
}

/** Tenants /healthz lists by name (failing and stale ones first); the rest are counted. */
const HEALTH_TENANTS_LISTED = 100;

/**
 * How old a tenant's last successful sync may be before /healthz calls it stale: the setting, or
 * three schedule intervals and at least 10 minutes.
 */
export function staleAfterMs(config: Config): number {
  if (config.healthStaleAfterMs !== undefined) return config.healthStaleAfterMs;
  const first = slotAfter(config.schedule, new Date());
  const second = first === undefined ? undefined : slotAfter(config.schedule, first);
  const interval = first === undefined || second === undefined ? 0 : second.getTime() - first.getTime();
  return Math.max(3 * interval, 600_000);
}

/**
 * The health report, within HEALTH_QUERY_TIMEOUT_MS at any fleet size (one statement for every
 * tenant): the database, the engine (unhealthy unless it is running), each tenant's failure streak
 * and freshness (unhealthy once a tenant failed its last N runs, or has had no successful sync for
 * longer than staleAfterMs while this worker was up).
 */
async function checkHealth(shared: WorkerShared, engine: Engine): Promise<HealthReport> {
  const { database, tenants, logger, config } = shared;
  let timer: NodeJS.Timeout | undefined;
  try {
    const [fleet, engineStatus, now] = await Promise.race([
      Promise.all([
        pingDatabase(database.db).then(() => readFleetHealth(database.db, scheduledNames(tenants))),
        engine.status().catch(() => undefined),
        databaseNow(database.db),
      ]),
      new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new Error(`database did not answer within ${HEALTH_QUERY_TIMEOUT_MS} ms`)),
          HEALTH_QUERY_TIMEOUT_MS,
        );
      }),
    ]);
    // Computed once: cron-parser walks a sparse schedule day by day, which costs on every probe.
    shared.staleMs ??= staleAfterMs(config);
    const staleMs = shared.staleMs;
    // A tenant is not stale before this worker has been up for the whole window.
    const judged = now.getTime() - shared.startedAt.getTime() >= staleMs;
    const isStale = (t: { lastSuccessAt: Date | null }) =>
      judged && (t.lastSuccessAt === null || now.getTime() - t.lastSuccessAt.getTime() > staleMs);
    const failing = fleet.filter((t) => t.consecutiveFailures >= UNHEALTHY_AFTER_FAILURES).length;
    const stale = fleet.filter(isStale).length;
    const engineHealth: EngineHealth =
      engineStatus === undefined
        ? { name: 'pg-boss', state: 'unreachable' }
        : {
            name: 'pg-boss',
            state: engineStatus.running ? 'running' : 'stopped',
            schema: engineStatus.schema,
            replicasAlive: engineStatus.replicasAlive,
            queues: engineStatus.queues,
          };
    const rank = (t: (typeof fleet)[number]) =>
      t.consecutiveFailures >= UNHEALTHY_AFTER_FAILURES ? 0 : isStale(t) ? 1 : 2;
    const listed =
      fleet.length <= HEALTH_TENANTS_LISTED
        ? fleet
        : [...fleet].sort((x, y) => rank(x) - rank(y)).slice(0, HEALTH_TENANTS_LISTED);
    return {
      status:
        healthVerdict(fleet) === 'ok' && stale === 0 && engineHealth.state === 'running' ? 'ok' : 'unhealthy',
      database: 'ok',
      engine: engineHealth,
      fleet: { tenants: fleet.length, failing, stale, staleAfterSeconds: Math.round(staleMs / 1000) },
      tenants: listed.map(({ lastSuccessAt: _, ...t }) => t),
    };
  } catch (err) {
    logger.warn({ err }, 'health check: the database did not answer');
    return { status: 'unhealthy', database: 'unreachable', tenants: [] };
  } finally {
    clearTimeout(timer);
  }
}

function hostOption(host: string | undefined): { host?: string } {
  return host === undefined ? {} : { host };
}

/** The health and metrics server; when it cannot start, the sinks and the agent are closed. */
async function startServer(shared: WorkerShared, health: () => Promise<HealthReport>): Promise<HealthServer> {
  const { options, config, logger, metrics, alerting, agent } = shared;
  try {
    return await startHealthServer({
      port: options.httpPort ?? config.httpPort,
      // GOVTRAIL_HTTP_HOST: tenant names and error codes are served unauthenticated, so bind where
      // only the scraper and the probes reach (default: every interface, as a container needs).
      ...hostOption(options.httpHost ?? config.httpHost),
      logger,
      health,
      metrics: async () => ({ body: await metrics.render(), contentType: metrics.contentType }),
    });
  } catch (err) {
    await alerting.close();
    await agent.close();
    throw err;
  }
}

/** The running service: reload takes a new tenant list; stop shuts everything down once, in order. */
function serviceOf(
  shared: WorkerShared,
  engine: Engine,
  server: HealthServer,
  health: () => Promise<HealthReport>,
): WorkerService {
  const { config, logger, tenants, metrics, alerting, agent, anchorer, database } = shared;
  let stopping: Promise<{ aborted: boolean }> | undefined;
  return {
    engine,
    metrics,
    alerting,
    port: server.port,
    health,
    async reload(next) {
      tenants.configured = next.tenants;
      await engine.refreshTenants();
      // New tenants get zero series, tenants no longer scheduled lose theirs.
      await metrics.setTenants(scheduledNames(tenants));
      logger.info({ tenants: scheduledNames(tenants) }, 'configuration reloaded: tenant list replaced');
    },
    stop(graceMs = config.shutdownGraceMs) {
      stopping ??= (async () => {
        clearInterval(shared.clock.timer);
        const result = await engine.stop(graceMs);
        await server.close();
        // Sinks that hold connections (a pooled SMTP transport, a syslog socket) close here.
        await alerting
          .close()
          .catch((err: unknown) => logger.warn({ err }, 'closing the alert sinks failed'));
        await agent.close();
        await anchorer.idle();
        await database.close();
        logger.info({ aborted: result.aborted }, 'worker stopped');
        return result;
      })();
      return stopping;
    },
  };
}
