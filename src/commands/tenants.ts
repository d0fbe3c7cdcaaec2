/**
 * `govtrail tenants list | disable NAME | enable NAME | retire NAME | sync`: the tenant registry
 * (govtrail.tenant). Configuration loads register tenants; these commands record the operator's
 * decision, which no reload undoes. Exit codes: 0 done (or nothing to do), 2 an unknown tenant or
 * a refused change.
 */
import { hostname, userInfo } from 'node:os';
import { Command } from 'commander';
import { GovtrailError } from '../core/errors.js';
import type { RegisteredTenant, RegistryChanges, TenantStatus } from '../store/write/tenant-registry.js';
import { formatTable } from './table.js';

const HELP = `
Statuses:

  active    synced by the worker and by govtrail sync / reconcile.
  disabled  not synced until enabled; still listed in exporter_health and the dashboards.
  retired   not synced; its history stays in every table and view, but it leaves exporter_health
            and the dashboards' tenant list. Enabling (or disabling) a retired tenant needs
            --force: it would resume its history or bring it back on the dashboards.

A configuration load (govtrail tenants sync, the worker's start and reload) registers new tenants
as active and refreshes their non-secret settings; it never changes a status set here. Secrets are
never stored in the registry.

Exit codes: 0 done or nothing to change; 2 unknown tenant, a refused change, or a usage error.`;

/** Who runs the command, for enabled_by / disabled_by / retired_by: user@host. */
export function operatorName(): string {
  let user: string;
  try {
    user = userInfo().username;
  } catch {
    // No passwd entry (a container running as an arbitrary uid).
    user = process.env['USER'] ?? `uid ${process.getuid?.() ?? '?'}`;
  }
  return `${user}@${hostname()}`;
}

function isoSeconds(d: Date | null): string {
  return d === null ? '' : new Date(d).toISOString().replace(/\.\d+Z$/, 'Z');
}

/** The table of `tenants list`. */
export function formatRegistry(rows: readonly RegisteredTenant[], configured: ReadonlySet<string>): string {
  return formatTable(
    ['tenant', 'status', 'configured', 'last success', 'entries', 'status since', 'by'],
    rows.map((r) => [
      r.tenant,
      r.status,
      configured.has(r.tenant) ? 'yes' : 'no',
      isoSeconds(r.lastSuccessAt),
      String(r.entriesStored),
      isoSeconds(r.statusChangedAt),
      r.statusChangedBy ?? '',
    ]),
  );
}

/** The table of `tenants sync`: one line per tenant the load added, updated, held or did not list. */
export function formatRegistryChanges(changes: RegistryChanges): string {
  const rows: string[][] = [
    ...changes.added.map((t) => [t, 'added (active)']),
    ...changes.updated.map((u) => [u.tenant, `settings updated: ${u.settings.join(', ')}`]),
    ...changes.held.map((h) => [h.tenant, `stays ${h.status} (set by an operator)`]),
    ...changes.unconfigured.map((u) => [
      u.tenant,
      `not in the configuration: left ${u.status} (govtrail tenants retire ${u.tenant} to drop it from health)`,
    ]),
  ];
  return rows.length === 0 ? 'no change' : formatTable(['tenant', 'change'], rows);
}

/** What each status change tells the operator. */
const AFTER: Record<TenantStatus, string> = {
  active: 'synced again from its checkpoint',
  disabled: 'no new run starts for it; its history stays',
  retired: 'no new run starts for it; its history stays; it leaves exporter_health and the dashboards',
};

/** Runs one status change: registers the configured tenants, then sets NAME's status. */
async function changeStatus(name: string, to: TenantStatus, force: boolean): Promise<void> {
  const { createContext } = await import('../app/context.js');
  const { selectSchedulable, setTenantStatus } = await import('../store/write/tenant-registry.js');
  const ctx = createContext();
  const database = await ctx.openDatabase();
  let line: string;
  try {
    await selectSchedulable(database.db, ctx.config.tenants);
    const change = await setTenantStatus(database.db, name, to, { by: operatorName(), force });
    switch (change.outcome) {
      case 'unknown':
        throw new GovtrailError(
          'USAGE',
          `no tenant named ${JSON.stringify(name)} is registered, configured or in the run ledger (govtrail tenants list shows them)`,
        );
      case 'refused':
        throw new GovtrailError(
          'USAGE',
          `${name} is retired: making it ${to} would ${to === 'active' ? 'resume syncing it and ' : ''}bring it back into exporter_health and the dashboards; run again with --force if that is intended`,
        );
      case 'unchanged':
        line = `${name}: already ${change.status}`;
        break;
      case 'changed':
        line = `${name}: ${change.from} -> ${change.to}: ${AFTER[change.to]}`;
        break;
    }
  } finally {
    await database.close();
  }
  ctx.out.write(`${line}\n`);
}

export function tenantsCommand(): Command {
  const tenants = new Command('tenants')
    .summary('the tenant registry: list, disable, enable, retire, sync')
    .description(
      'The tenant registry (govtrail.tenant): every tenant govtrail knows, its status and the non-secret settings of the configuration that last listed it.',
    )
    .addHelpText('after', HELP);

  tenants
    .command('list')
    .description(
      'List registered tenants (configured ones are registered first): status, whether this configuration lists it, last successful sync, entries stored, and who set the status when.',
    )
    .action(async () => {
      const { createContext } = await import('../app/context.js');
      const { listRegisteredTenants, selectSchedulable } = await import('../store/write/tenant-registry.js');
      const ctx = createContext();
      const database = await ctx.openDatabase({ existing: true });
      let rows: RegisteredTenant[];
      try {
        await selectSchedulable(database.db, ctx.config.tenants);
        rows = await listRegisteredTenants(database.db);
      } finally {
        await database.close();
      }
      const configured = new Set(ctx.config.tenants.map((t) => t.name));
      ctx.out.write(`${rows.length === 0 ? 'no tenants registered' : formatRegistry(rows, configured)}\n`);
    });

  tenants
    .command('disable')
    .argument('<name>', 'tenant name (tenant_id)')
    .description('Stop syncing a tenant until it is enabled; no configuration reload re-enables it.')
    .option('--force', 'also disable a retired tenant (it comes back into exporter_health)')
    .action((name: string, opts: { force?: boolean }) => changeStatus(name, 'disabled', opts.force === true));

  tenants
    .command('enable')
    .argument('<name>', 'tenant name (tenant_id)')
    .description('Sync a disabled tenant again. A retired tenant needs --force.')
    .option('--force', 'also enable a retired tenant (its syncs resume, and it comes back on the dashboards)')
    .action((name: string, opts: { force?: boolean }) => changeStatus(name, 'active', opts.force === true));

  tenants
    .command('retire')
    .argument('<name>', 'tenant name (tenant_id)')
    .description(
      'Stop syncing a tenant for good: its history stays, it leaves exporter_health and the dashboards. Undo with enable --force.',
    )
    .action((name: string) => changeStatus(name, 'retired', false));

  tenants
    .command('sync')
    .description(
      'Load the configured tenants (GOVTRAIL_CONFIG or the environment) into the registry and print what changed. Never changes a status.',
    )
    .action(async () => {
      const { createContext } = await import('../app/context.js');
      const { selectTenants } = await import('../app/select-tenants.js');
      const { syncTenantRegistry } = await import('../store/write/tenant-registry.js');
      const ctx = createContext();
      const configured = selectTenants(ctx.config, undefined);
      const database = await ctx.openDatabase();
      let changes: RegistryChanges;
      try {
        changes = await syncTenantRegistry(database.db, configured);
      } finally {
        await database.close();
      }
      ctx.out.write(`${formatRegistryChanges(changes)}\n`);
    });

  return tenants;
}
