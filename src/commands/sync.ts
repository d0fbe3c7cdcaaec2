import { Command } from 'commander';
import { activeTenants } from '../app/active-tenants.js';
import { type Alerting, createAlerting } from '../app/alerting.js';
import { createContext } from '../app/context.js';
import { syncTenant } from '../app/tenant-run.js';
import type { Config, TenantConfig } from '../config/settings.js';
import { ConfigError } from '../core/errors.js';
import type { SyncRunSummary } from '../sync/run.js';
import { ExitCode } from './exit.js';
import { fleetProgress } from './progress.js';
import { syncFleet } from './sync-fleet.js';
import { formatTable } from './table.js';

export function syncCommand(): Command {
  return new Command('sync')
    .summary('one checkpointed sync per configured tenant, then alert delivery')
    .description(
      'Run one checkpointed sync for every configured tenant (or the one named), GOVTRAIL_WORKER_CONCURRENCY tenants at once, then deliver pending alerts. On a terminal, prints a line as each tenant finishes; then a summary per tenant; exits 1 when any tenant failed.\n\nA tenant comes from GOVTRAIL_CLIENT_ID / GOVTRAIL_CLIENT_SECRET (and GOVTRAIL_TENANT_DOMAIN or GOVTRAIL_BASE_URL), or from the tenants listed in the GOVTRAIL_CONFIG file.',
    )
    .option('-t, --tenant <name>', 'sync only this tenant (its name in the database)')
    .action(async (opts: { tenant?: string }) => {
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
        const d = await alerting.deliver();
        if (d.delivered + d.retried + d.failed > 0) {
          delivery = `alert deliveries: ${d.delivered} delivered, ${d.retried} to retry, ${d.failed} given up`;
        }
      } finally {
        // A TCP or TLS syslog sink (or a pooled SMTP transport) would keep the process alive.
        await alerting?.close();
        await database.close();
      }
      ctx.out.write(`${formatSummaries(summaries)}\n${delivery ? `${delivery}\n` : ''}`);
      if (summaries.some((s) => s.status === 'failed')) throw new ExitCode(1);
    });
}

/**
 * The configured tenants, or the one named; a usage error naming the setting when there is none.
 * @throws ConfigError
 */
export function selectTenants(config: Config, name: string | undefined): readonly TenantConfig[] {
  if (config.tenants.length === 0) {
    throw new ConfigError(
      'GOVTRAIL_CLIENT_ID',
      'no tenant is configured: set GOVTRAIL_CLIENT_ID and GOVTRAIL_CLIENT_SECRET, or list tenants in GOVTRAIL_CONFIG (try `govtrail demo` for the sandbox)',
    );
  }
  const tenants = name === undefined ? config.tenants : config.tenants.filter((t) => t.name === name);
  if (tenants.length === 0) {
    throw new ConfigError(
      '--tenant',
      `no configured tenant is named ${JSON.stringify(name)}; configured: ${config.tenants.map((t) => t.name).join(', ')}`,
    );
  }
  return tenants;
}

export function formatSummaries(summaries: readonly SyncRunSummary[]): string {
  return formatTable(
    ['tenant', 'status', 'new', 'fetched', 'pages', 'rejected', 'alerts', 'time', 'note'],
    summaries.map((s) => [
      s.tenantId,
      s.status,
      String(s.counters.entriesInserted),
      String(s.counters.entriesFetched),
      String(s.counters.pagesFetched),
      String(s.counters.entriesRejected),
      String(s.alerts),
      `${(s.durationMs / 1000).toFixed(1)}s`,
      s.error !== undefined
        ? `${s.error.code}: ${s.error.message}`
        : s.status === 'skipped'
          ? 'another process is syncing it'
          : s.isBackfill
            ? 'backfill'
            : (s.stopReason ?? ''),
    ]),
  );
}
