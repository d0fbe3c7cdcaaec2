import { Command } from 'commander';

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
      const { createContext } = await import('../app/context.js');
      const { runWorker } = await import('../app/worker-process.js');
      await runWorker(createContext(), opts);
    });
}
