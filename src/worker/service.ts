/**
 * The worker as a whole: schedule + tenant loop + health and metrics server, over one database
 * and one shared HTTP agent. `govtrail worker` is this plus signal handling; tests start several
 * in one process, each with its own database pool, to stand in for replicas.
 */
import type { Agent } from 'undici';
import { type Alerting, createAlerting } from '../alerts/setup.js';
import { createRunAnchorer } from '../anchor/after-run.js';
import type { Config, TenantConfig } from '../config.js';
import type { Logger } from '../logger.js';
import type { Database } from '../store/database.js';
import { reconcileTenant, type SyncTenantOptions, syncTenant } from '../sync/service.js';
import { createHttpAgent } from '../tenant-api/http.js';
import { createWorkerMetrics, type WorkerMetrics } from './metrics.js';
import { type HealthServer, startHealthServer } from './server.js';
import {
  type HealthReport,
  healthVerdict,
  pingDatabase,
  readCheckpointTimes,
  readTenantHealth,
} from './status.js';
import { createWorker, type Worker } from './worker.js';

export interface WorkerServiceOptions {
  readonly config: Config;
  readonly logger: Logger;
  /** Migrated database; the service closes it on stop. */
  readonly database: Database;
  /** Default: every configured tenant. */
  readonly tenants?: readonly TenantConfig[];
  /** Default: config.httpPort. */
  readonly httpPort?: number;
  readonly httpHost?: string;
  /** Default process metrics in /metrics; default true. */
  readonly processMetrics?: boolean;
}

export interface WorkerService {
  readonly worker: Worker;
  readonly metrics: WorkerMetrics;
  readonly alerting: Alerting;
  /** The bound health and metrics port. */
  readonly port: number;
  health(): Promise<HealthReport>;
  /** Graceful stop: schedule, run in flight (grace period, then abort), server, agent, database. */
  stop(graceMs?: number): Promise<{ aborted: boolean }>;
}

const HEALTH_QUERY_TIMEOUT_MS = 5_000;

export async function startWorkerService(options: WorkerServiceOptions): Promise<WorkerService> {
  const { config, database } = options;
  const logger = options.logger.child({ component: 'worker' });
  const tenants = options.tenants ?? config.tenants;
  const names = tenants.map((t) => t.name);
  // One agent for every run: keep-alive connections and TLS sessions survive from tick to tick.
  const agent: Agent = createHttpAgent(config.http);
  const alerting = createAlerting(config, logger, database);
  // After every run that stored entries, an anchor of the tenant's chain (GOVTRAIL_ANCHOR_DIR).
  const anchorer = createRunAnchorer(config, database, logger);

  const metrics = createWorkerMetrics({
    tenants: names,
    ...(options.processMetrics !== undefined ? { processMetrics: options.processMetrics } : {}),
    checkpointTimes: () =>
      readCheckpointTimes(database.db, names).catch((err: unknown) => {
        // A scrape must still answer when the database does not: the gauge is left out instead.
        logger.warn({ err }, 'could not read checkpoints for the metrics');
        return new Map<string, Date>();
      }),
  });

  // What every scheduled run of a tenant shares: the database, the agent, the outbox, the metrics.
  const runOptions = (tenant: TenantConfig, signal: AbortSignal): SyncTenantOptions => ({
    database,
    config,
    logger,
    tenant,
    trigger: 'schedule',
    dispatcher: agent,
    signal,
    alerting,
    onRetry: () => metrics.recordRetry(tenant.name),
  });
  const worker = createWorker({
    tenants,
    schedule: config.schedule,
    concurrency: config.workerConcurrency,
    logger,
    syncTenant: (tenant, signal) => syncTenant(runOptions(tenant, signal)),
    ...(config.reconcileSchedule !== undefined
      ? {
          reconcile: {
            schedule: config.reconcileSchedule,
            run: (tenant: TenantConfig, signal: AbortSignal) => reconcileTenant(runOptions(tenant, signal)),
          },
        }
      : {}),
    deliverAlerts: async (signal) => {
      const summary = await alerting.deliver(signal);
      metrics.recordDeliveries(summary);
      return summary;
    },
    onRun: (s) => {
      metrics.recordRun(s);
      anchorer.onRun(s);
    },
  });

  const health = async (): Promise<HealthReport> => {
    let timer: NodeJS.Timeout | undefined;
    try {
      const report = await Promise.race([
        pingDatabase(database.db).then(() => readTenantHealth(database.db, names)),
        new Promise<never>((_, reject) => {
          timer = setTimeout(
            () => reject(new Error(`database did not answer within ${HEALTH_QUERY_TIMEOUT_MS} ms`)),
            HEALTH_QUERY_TIMEOUT_MS,
          );
        }),
      ]);
      return { status: healthVerdict(report), database: 'ok', tenants: report };
    } catch (err) {
      logger.warn({ err }, 'health check: the database did not answer');
      return { status: 'unhealthy', database: 'unreachable', tenants: [] };
    } finally {
      clearTimeout(timer);
    }
  };

  let server: HealthServer;
  try {
    server = await startHealthServer({
      port: options.httpPort ?? config.httpPort,
      ...(options.httpHost !== undefined ? { host: options.httpHost } : {}),
      logger,
      health,
      metrics: async () => ({ body: await metrics.render(), contentType: metrics.contentType }),
    });
  } catch (err) {
    await alerting.close();
    await agent.close();
    throw err;
  }

  let stopping: Promise<{ aborted: boolean }> | undefined;
  return {
    worker,
    metrics,
    alerting,
    port: server.port,
    health,
    stop(graceMs = config.shutdownGraceMs) {
      stopping ??= (async () => {
        const result = await worker.stop(graceMs);
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
