import { Command } from 'commander';
import { createContext } from '../app/context.js';
import { startWorkerService, type WorkerService } from '../app/worker.js';
import { type Config, loadConfig, sinkSecrets } from '../config/settings.js';
import { ConfigError } from '../core/errors.js';
import { type Logger, registerSecret } from '../runtime/logger.js';
import type { Session } from '../store/database.js';
import { requireWriterRole } from '../store/roles.js';
import { schedulableTenants, syncTenantRegistry } from '../store/write/tenant-registry.js';

/**
 * `govtrail worker`: the scheduled loop with /healthz and /metrics, until SIGTERM or SIGINT.
 * The first signal drains (grace period, then abort) and exits 0; a second one exits at once.
 */
export function workerCommand(): Command {
  return new Command('worker')
    .summary('scheduled sync of every configured tenant, with /healthz and /metrics')
    .description(
      'Sync every configured tenant on the GOVTRAIL_SCHEDULE cron schedule (UTC), and deliver pending alerts. ' +
        'Serves GET /healthz and GET /metrics (Prometheus) on GOVTRAIL_HTTP_PORT. Several replicas may run ' +
        'against one database: each schedule slot becomes one pg-boss job per tenant (schema govtrail_boss), ' +
        'so every tenant is synced once per slot by one of them.\n\n' +
        'SIGHUP re-reads the configuration (GOVTRAIL_CONFIG and the environment) and schedules its tenants ' +
        'from the next slot on.\n\n' +
        'SIGTERM or SIGINT stops scheduling and lets a run in flight finish within GOVTRAIL_SHUTDOWN_GRACE ' +
        '(default 30s), then aborts it (its transaction rolls back) and exits 0. A second signal exits at once.',
    )
    .option(
      '--no-initial-run',
      'wait for the next slot instead of planning the current one at start-up (a no-op when another replica did)',
    )
    .action(async (opts: { initialRun: boolean }) => {
      const ctx = createContext();
      const { config, logger } = ctx;
      if (config.tenants.length === 0) {
        throw new ConfigError(
          'GOVTRAIL_CLIENT_ID',
          'no tenant is configured: set GOVTRAIL_CLIENT_ID and GOVTRAIL_CLIENT_SECRET, or list tenants in GOVTRAIL_CONFIG (try `govtrail demo` for the sandbox)',
        );
      }
      const database = await ctx.openDatabase();
      let service: Awaited<ReturnType<typeof startWorkerService>>;
      try {
        await requireWriterRole(database.db, config.requireWriterRole);
        // The registry decides which configured tenants run: disabled and retired ones do not.
        await loadRegistry(database.db, config, logger);
        service = await startWorkerService({
          config,
          logger,
          database,
          listTenants: (configured) => schedulableTenants(database.db, configured),
        });
      } catch (err) {
        await database.close();
        throw err;
      }
      logger.info(
        {
          tenants: config.tenants.map((t) => t.name),
          schedule: config.schedule,
          concurrency: config.workerConcurrency,
          port: service.port,
        },
        'worker started',
      );

      await new Promise<void>((resolve) => {
        let signalled = false;
        const onSignal = (signal: NodeJS.Signals) => {
          if (signalled) {
            // The operator insists: no more waiting. Locks go with the connections.
            logger.warn({ signal }, 'second signal: exiting now');
            logger.flush();
            process.exit(130);
          }
          signalled = true;
          logger.info(
            { signal, graceMs: config.shutdownGraceMs },
            'shutting down: no new runs; a second signal exits at once',
          );
          service.stop(config.shutdownGraceMs).then(
            () => resolve(),
            (err: unknown) => {
              logger.error({ err }, 'error while shutting down');
              resolve();
            },
          );
        };
        process.on('SIGTERM', onSignal);
        process.on('SIGINT', onSignal);
        process.on('SIGHUP', () => {
          if (!signalled) void reloadTenants(service, database.db, logger);
        });
        service.worker.start({ initialRun: opts.initialRun }).catch((err: unknown) => {
          logger.error({ err }, 'the job engine did not start');
          process.exitCode = 1;
          onSignal('SIGTERM');
        });
      });
      await new Promise<void>((resolve) => logger.flush(() => resolve()));
    });
}

/** SIGHUP: the configuration is read again and its tenants replace the scheduled ones. */
async function reloadTenants(service: WorkerService, db: Session, logger: Logger): Promise<void> {
  let config: Config;
  try {
    config = loadConfig(process.env);
  } catch (err) {
    logger.error({ err }, 'SIGHUP: the configuration is not valid; the tenant list stays as it was');
    return;
  }
  for (const t of config.tenants) registerSecret(t.clientSecret);
  for (const secret of sinkSecrets(config)) registerSecret(secret);
  await loadRegistry(db, config, logger)
    .then(() => service.reload(config))
    .catch((err: unknown) => logger.error({ err }, 'SIGHUP: could not reload the tenant list'));
}

/** Loads the configured tenants into the registry (govtrail.tenant) and logs what changed. */
async function loadRegistry(db: Session, config: Config, logger: Logger): Promise<void> {
  const changes = await syncTenantRegistry(db, config.tenants);
  logger.info({ registry: changes }, 'tenant registry loaded from the configuration');
}
