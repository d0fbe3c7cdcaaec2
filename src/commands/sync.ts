import { Command } from 'commander';
import type { Alerting } from '../app/alerting.js';
import type { SyncRunSummary } from '../sync/run.js';
import { ExitCode } from './exit.js';
import { formatSummaries } from './format-sync.js';
import { fleetProgress } from './progress.js';
import { syncFleet } from './sync-fleet.js';

export function syncCommand(): Command {
  return new Command('sync')
    .summary('one checkpointed sync per configured tenant, then alert delivery')
    .description(
      'Run one checkpointed sync for every configured tenant (or the one named), GOVTRAIL_WORKER_CONCURRENCY tenants at once, then deliver pending alerts. On a terminal, prints a line as each tenant finishes; then a summary per tenant; exits 1 when any tenant failed.\n\nA tenant comes from GOVTRAIL_CLIENT_ID / GOVTRAIL_CLIENT_SECRET (and GOVTRAIL_TENANT_DOMAIN or GOVTRAIL_BASE_URL), or from the tenants listed in the GOVTRAIL_CONFIG file.',
    )
    .option('-t, --tenant <name>', 'sync only this tenant (its name in the database)')
    .action(syncTenants);
}

/** The action: syncs the tenants, delivers pending alerts, prints one row per tenant. */
async function syncTenants(opts: { tenant?: string }): Promise<void> {
  const { activeTenants, registerSucceeded } = await import('../app/active-tenants.js');
  const { createAlerting } = await import('../app/alerting.js');
  const { createContext } = await import('../app/context.js');
  const { selectTenants } = await import('../app/select-tenants.js');
  const { syncTenant } = await import('../app/tenant-run.js');
  const ctx = createContext();
  const { config } = ctx;
  const tenants = selectTenants(config, opts.tenant);
  const database = await ctx.openDatabase();
  const summaries: SyncRunSummary[] = [];
  let delivery = '';
  let alerting: Alerting | undefined;
  try {
    const opened = createAlerting(config, ctx.logger, database);
    alerting = opened;
    const active = await activeTenants(database.db, tenants, ctx.out);
    summaries.push(
      ...(await syncFleet({
        tenants: active,
        concurrency: config.workerConcurrency,
        progress: fleetProgress(active.length, ctx.logger),
        run: (tenant, onProgress) =>
          syncTenant({
            database,
            config,
            logger: ctx.logger,
            tenant,
            trigger: 'cli',
            alerting: opened,
            onProgress,
          }),
      })),
    );
    await registerSucceeded(database.db, active, summaries);
    const d = await alerting.deliver();
    if (d.delivered + d.retried + d.failed > 0) {
      delivery = `alert deliveries: ${d.delivered} delivered, ${d.retried} to retry, ${d.failed} given up`;
    }
  } finally {
    // A TCP or TLS syslog sink (or a pooled SMTP transport) would keep the process alive.
    await alerting?.close();
    await database.close();
  }
  // Every tenant disabled or retired: the line naming them has said it, no empty table follows.
  const table = summaries.length === 0 ? 'no tenant synced\n' : `${formatSummaries(summaries)}\n`;
  ctx.out.write(`${table}${delivery ? `${delivery}\n` : ''}`);
  if (summaries.some((s) => s.status === 'failed')) throw new ExitCode(1);
}
