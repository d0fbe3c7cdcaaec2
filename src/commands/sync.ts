import { Command } from 'commander';
import type { Alerting } from '../app/alerting.js';
import type { TenantSelection } from '../app/select-tenants.js';
import type { TenantConfig } from '../config/settings.js';
import type { RunSummary } from '../sync/run-types.js';
import { ExitCode } from './exit.js';
import { formatSummaries } from './format-sync.js';
import { onInterrupt, signalExitCode } from './interrupt.js';
import { tenantSelection } from './options.js';
import { fleetProgress } from './progress.js';
import { syncFleet } from './sync-fleet.js';

export function syncCommand(): Command {
  return tenantSelection(
    new Command('sync')
      .summary('one checkpointed sync per configured tenant, then alert delivery')
      .description(
        'Run one checkpointed sync for every configured tenant (or the one named), GOVTRAIL_WORKER_CONCURRENCY tenants at once, then deliver pending alerts. On a terminal, prints a line as each tenant finishes; then a summary per tenant; exits 1 when any tenant failed.\n\nA tenant comes from GOVTRAIL_CLIENT_ID / GOVTRAIL_CLIENT_SECRET (and GOVTRAIL_TENANT_DOMAIN or GOVTRAIL_BASE_URL), or from the tenants listed in the GOVTRAIL_CONFIG file.',
      ),
    'sync',
  ).action(syncTenants);
}

/** The action: syncs the tenants, delivers pending alerts, prints one row per tenant. */
async function syncTenants(opts: TenantSelection): Promise<void> {
  const { createAlerting } = await import('../app/alerting.js');
  const { createContext } = await import('../app/context.js');
  const { registerSucceeded, runnableTenants, selectTenants } = await import('../app/select-tenants.js');
  const { syncTenant } = await import('../app/tenant-run.js');
  const ctx = createContext();
  const { config } = ctx;
  // A configuration without the tenant named is refused before the store is opened.
  selectTenants(config, opts.tenant);
  const database = await ctx.openDatabase();
  const interrupt = onInterrupt();
  const summaries: RunSummary[] = [];
  let active: readonly TenantConfig[] | undefined;
  let delivery = '';
  let alerting: Alerting | undefined;
  try {
    const opened = createAlerting(config, ctx.logger, database);
    alerting = opened;
    active = await runnableTenants(database.db, config, opts, ctx.out);
    summaries.push(
      ...(await syncFleet({
        tenants: active,
        concurrency: config.workerConcurrency,
        progress: fleetProgress(active.length, ctx.logger),
        signal: interrupt.signal,
        run: (tenant, onProgress) =>
          syncTenant({
            database,
            config,
            logger: ctx.logger,
            tenant,
            trigger: 'cli',
            alerting: opened,
            onProgress,
            signal: interrupt.signal,
          }),
      })),
    );
    await registerSucceeded(database.db, active, summaries);
    // Interrupted: the alerts stay in the outbox for the next sync, worker or `alerts deliver`.
    const d = interrupt.signal.aborted ? undefined : await alerting.deliver();
    if (d !== undefined && d.delivered + d.retried + d.failed > 0) {
      delivery = `alert deliveries: ${d.delivered} delivered, ${d.retried} to retry, ${d.failed} given up`;
    }
  } finally {
    interrupt.dispose();
    // A TCP or TLS syslog sink (or a pooled SMTP transport) would keep the process alive.
    await alerting?.close();
    await database.close();
  }
  // Every tenant disabled or retired: the line naming them has said it, no empty table follows.
  const table = summaries.length === 0 ? 'no tenant synced\n' : `${formatSummaries(summaries)}\n`;
  ctx.out.write(`${table}${delivery ? `${delivery}\n` : ''}`);
  const signal = interrupt.received();
  if (signal !== undefined) {
    ctx.out.write(`${interruptedLine(signal, active ?? [], summaries)}\n`);
    throw new ExitCode(signalExitCode(signal));
  }
  if (summaries.some((s) => s.status === 'failed')) throw new ExitCode(1);
}

/** One line: what an interrupted sync kept, what it rolled back, what it never started. */
export function interruptedLine(
  signal: NodeJS.Signals,
  tenants: readonly { name: string }[],
  summaries: readonly RunSummary[],
): string {
  const kept = summaries.filter((s) => s.status === 'succeeded').map((s) => s.tenantId);
  const rolledBack = summaries.filter((s) => s.status === 'failed').map((s) => s.tenantId);
  const ran = new Set(summaries.map((s) => s.tenantId));
  const notStarted = tenants.filter((t) => !ran.has(t.name)).map((t) => t.name);
  const one = rolledBack.length === 1;
  const parts = [
    ...(kept.length > 0 ? [`kept ${kept.join(', ')} (committed before the signal)`] : []),
    ...(rolledBack.length > 0
      ? [
          `rolled back ${rolledBack.join(', ')} (nothing of ${one ? 'its run' : 'their runs'} stored; ` +
            `${one ? 'its ledger row' : 'their ledger rows'} closed as failed, ABORTED)`,
        ]
      : []),
    ...(notStarted.length > 0 ? [`not started ${notStarted.join(', ')}`] : []),
    'pending alerts stay in the outbox',
  ];
  return `interrupted (${signal}): ${parts.join('; ')}`;
}
