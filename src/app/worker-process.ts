/**
 * The worker process of `govtrail worker`: the registry loaded, the service started, and the
 * signals that stop it (SIGTERM, SIGINT: drain, then a second one exits at once) or reload its
 * tenants (SIGHUP). Resolves when the service has stopped.
 */
import type { Config } from '../config/settings.js';
import { loadConfig, sinkSecrets } from '../config/settings.js';
import { ConfigError } from '../core/errors.js';
import { type Logger, registerSecret } from '../runtime/logger.js';
import type { Session } from '../store/database.js';
import { requireWriterRole } from '../store/roles.js';
import { schedulableTenants, syncTenantRegistry } from '../store/write/tenant-registry.js';
import type { CommandContext } from './context.js';
import { startWorkerService, type WorkerService } from './worker.js';

/** A signal repeated within this window is the same interruption delivered twice, not a second one. */
export const REPEAT_WINDOW_MS = 250;

/** The worker needs a tenant to run: refused before anything starts. */
function requireTenants(config: CommandContext['config']): void {
  if (config.tenants.length === 0) {
    throw new ConfigError(
      'GOVTRAIL_CLIENT_ID',
      'no tenant is configured: set GOVTRAIL_CLIENT_ID and GOVTRAIL_CLIENT_SECRET, or list tenants in GOVTRAIL_CONFIG (try `govtrail demo` for the sandbox)',
    );
  }
}

export async function runWorker(ctx: CommandContext, opts: { initialRun: boolean }): Promise<void> {
  const { config, logger } = ctx;
  requireTenants(config);
  // SIGHUP is handled from the first moment (Node's default for it is to exit): a HUP during
  // start-up is kept and served once the service runs; HUPs that come while a reload runs are
  // folded into one more reload.
  let serviceReady: WorkerService | undefined;
  let hupDatabase: Session | undefined;
  let stopping = false;
  const reloader = createReloader(async () => {
    if (serviceReady === undefined || hupDatabase === undefined || stopping) return;
    await reloadTenants(serviceReady, hupDatabase, logger);
  });
  let hupDuringStart = false;
  const onHup = () => {
    if (serviceReady === undefined) hupDuringStart = true;
    else reloader.request();
  };
  process.on('SIGHUP', onHup);
  const database = await ctx.openDatabase().catch((err: unknown) => {
    process.off('SIGHUP', onHup);
    throw err;
  });
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
    process.off('SIGHUP', onHup);
    await database.close();
    throw err;
  }
  serviceReady = service;
  hupDatabase = database.db;
  // A HUP that came during start-up.
  if (hupDuringStart) reloader.request();
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
    let firstAt = 0;
    const onSignal = (signal: NodeJS.Signals) => {
      // One interruption often arrives twice within milliseconds: to the whole process group (a
      // terminal's Ctrl-C, `timeout -s INT`) and forwarded by a parent that got it too (npm
      // start). Only a signal sent again later is the operator insisting.
      if (signalled && Date.now() - firstAt < REPEAT_WINDOW_MS) return;
      if (signalled) {
        // The operator insists: no more waiting. Locks go with the connections.
        logger.warn({ signal }, 'second signal: exiting now');
        logger.flush();
        process.exit(130);
      }
      signalled = true;
      stopping = true;
      firstAt = Date.now();
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
    service.engine.start({ initialRun: opts.initialRun }).catch((err: unknown) => {
      logger.error({ err }, 'the job engine did not start');
      process.exitCode = 1;
      onSignal('SIGTERM');
    });
  });
  process.off('SIGHUP', onHup);
  await reloader.idle();
  await new Promise<void>((resolve) => logger.flush(() => resolve()));
}

/** Reloads requested by signals: never two at once, and any number of requests during one make one more. */
export interface Reloader {
  request(): void;
  /** Resolves when no reload runs. */
  idle(): Promise<void>;
}

/**
 * Coalesces reload requests: 20 quick SIGHUPs make at most two reloads (the one running and one
 * after it), one after the other, so the registry is never written by two reloads at once.
 */
export function createReloader(reload: () => Promise<void>): Reloader {
  let requested = false;
  let running: Promise<void> | undefined;
  const loop = async () => {
    while (requested) {
      requested = false;
      await reload().catch(() => {});
    }
    running = undefined;
  };
  return {
    request() {
      requested = true;
      if (running === undefined) running = loop();
    },
    idle: async () => {
      await running;
    },
  };
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
  // Idempotent, so a reload that lost a deadlock or a serialisation conflict to another replica's
  // reload is simply run again.
  for (let attempt = 1; ; attempt++) {
    try {
      await loadRegistry(db, config, logger);
      await service.reload(config);
      return;
    } catch (err) {
      const code = (err as { code?: unknown }).code;
      if ((code === '40P01' || code === '40001') && attempt < 3) continue;
      logger.error({ err }, 'SIGHUP: could not reload the tenant list');
      return;
    }
  }
}

/** Loads the configured tenants into the registry (govtrail.tenant) and logs what changed. */
async function loadRegistry(db: Session, config: Config, logger: Logger): Promise<void> {
  const changes = await syncTenantRegistry(db, config.tenants);
  logger.info({ registry: changes }, 'tenant registry loaded from the configuration');
}
