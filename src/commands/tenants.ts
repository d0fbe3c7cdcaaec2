/**
 * `govtrail tenants list [--group G] | disable NAME | enable NAME | retire NAME | sync |
 * group NAME +G -H | label NAME k=v k2=`: the tenant registry
 * (govtrail.tenant). Configuration loads register tenants; these commands record the operator's
 * decision, which no reload undoes. Exit codes: 0 done (or nothing to do), 2 an unknown tenant or
 * a refused change.
 */
import { hostname, userInfo } from 'node:os';
import { Command } from 'commander';
import { groupNameProblem, labelProblem } from '../config/tenants.js';
import { GovtrailError } from '../core/errors.js';
import type { RegisteredTenant } from '../store/read/tenant-registry.js';
import type { MembershipChange } from '../store/write/tenant-groups.js';
import type { RegistryChanges, TenantStatus } from '../store/write/tenant-registry.js';
import { formatTable } from './table.js';

/** A tenant's groups and labels as `tenants list` shows them. */
export interface Membership {
  readonly groups: readonly string[];
  readonly labels: Readonly<Record<string, string>>;
}

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

Groups and labels: a tenant entry of GOVTRAIL_CONFIG may carry groups: [..] and labels: {k: v};
a configuration load writes them. govtrail tenants group NAME +G -H and tenants label NAME k=v k2=
change them as an operator, and no configuration load undoes that. Every change is recorded with
who made it and when (govtrail.tenant_change). --group G selects a group's tenants in sync,
reconcile, report and the exports; govtrail readers grant LOGIN --group G scopes a login to it.

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
export function formatRegistry(
  rows: readonly RegisteredTenant[],
  configured: ReadonlySet<string>,
  membership: ReadonlyMap<string, Membership> = new Map(),
): string {
  return formatTable(
    ['tenant', 'status', 'configured', 'last success', 'entries', 'status since', 'by', 'groups', 'labels'],
    rows.map((r) => [
      r.tenant,
      r.status,
      configured.has(r.tenant) ? 'yes' : 'no',
      isoSeconds(r.lastSuccessAt),
      String(r.entriesStored),
      isoSeconds(r.statusChangedAt),
      r.statusChangedBy ?? '',
      (membership.get(r.tenant)?.groups ?? []).join(','),
      Object.entries(membership.get(r.tenant)?.labels ?? {})
        .map(([k, v]) => `${k}=${v}`)
        .join(','),
    ]),
  );
}

/** `+G` / `-H` arguments of `tenants group`: the groups to add and to remove. */
export function parseGroupChanges(args: readonly string[]): { add: string[]; remove: string[] } {
  const add: string[] = [];
  const remove: string[] = [];
  for (const a of args) {
    const sign = a[0];
    const name = a.slice(1);
    if ((sign !== '+' && sign !== '-') || name === '')
      throw new GovtrailError('USAGE', `expected +GROUP or -GROUP, got ${JSON.stringify(a)}`);
    const problem = groupNameProblem(name);
    if (problem !== undefined) throw new GovtrailError('USAGE', problem);
    (sign === '+' ? add : remove).push(name);
  }
  const both = add.filter((g) => remove.includes(g));
  if (both.length > 0) throw new GovtrailError('USAGE', `both added and removed: ${both.join(', ')}`);
  return { add, remove };
}

/** `k=v` / `k=` arguments of `tenants label`: the labels to set, NULL for those to remove. */
export function parseLabelChanges(args: readonly string[]): Map<string, string | null> {
  const out = new Map<string, string | null>();
  for (const a of args) {
    const eq = a.indexOf('=');
    if (eq <= 0)
      throw new GovtrailError('USAGE', `expected KEY=VALUE (or KEY= to remove), got ${JSON.stringify(a)}`);
    const key = a.slice(0, eq);
    const value = a.slice(eq + 1);
    const problem = labelProblem(key, value);
    if (problem !== undefined) throw new GovtrailError('USAGE', problem);
    out.set(key, value === '' ? null : value);
  }
  return out;
}

/** Runs one operator change of a tenant's groups or labels and prints what changed. */
async function changeMembership(
  name: string,
  apply: (db: import('../store/database.js').Session) => Promise<MembershipChange>,
): Promise<void> {
  const { createContext } = await import('../app/context.js');
  const { selectSchedulable } = await import('../store/write/tenant-registry.js');
  const ctx = createContext();
  const database = await ctx.openDatabase();
  let change: MembershipChange;
  try {
    await selectSchedulable(database.db, ctx.config.tenants);
    change = await apply(database.db);
  } finally {
    await database.close();
  }
  if (change.outcome === 'unknown')
    throw new GovtrailError(
      'USAGE',
      `no tenant named ${JSON.stringify(name)} is registered (govtrail tenants list shows them)`,
    );
  ctx.out.write(`${name}: ${change.changed.length === 0 ? 'no change' : change.changed.join(', ')}\n`);
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
    .summary('the tenant registry: list, disable, enable, retire, sync, group, label')
    .description(
      'The tenant registry (govtrail.tenant): every tenant govtrail knows, its status and the non-secret settings of the configuration that last listed it.',
    )
    .addHelpText('after', HELP);

  tenants
    .command('list')
    .description(
      'List registered tenants (configured ones are registered first): status, whether this configuration lists it, last successful sync, entries stored, who set the status when, groups and labels.',
    )
    .option('-g, --group <name>', 'only the tenants of this group')
    .action(async (opts: { group?: string }) => {
      const { createContext } = await import('../app/context.js');
      const { selectSchedulable } = await import('../store/write/tenant-registry.js');
      const { listRegisteredTenants } = await import('../store/read/tenant-registry.js');
      const { membershipOfAll } = await import('../store/read/tenant-groups.js');
      const ctx = createContext();
      const database = await ctx.openDatabase({ existing: true });
      let rows: RegisteredTenant[];
      let membership: Map<string, Membership>;
      try {
        await selectSchedulable(database.db, ctx.config.tenants);
        rows = await listRegisteredTenants(database.db);
        membership = await membershipOfAll(database.db);
      } finally {
        await database.close();
      }
      const group = opts.group;
      if (group !== undefined) rows = rows.filter((r) => membership.get(r.tenant)?.groups.includes(group));
      const configured = new Set(ctx.config.tenants.map((t) => t.name));
      const none = group === undefined ? 'no tenants registered' : `no tenant is in group ${group}`;
      ctx.out.write(`${rows.length === 0 ? none : formatRegistry(rows, configured, membership)}\n`);
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

  addMembershipCommands(tenants);

  return tenants;
}

/** `tenants group` and `tenants label`: an operator's change of a tenant's groups and labels. */
function addMembershipCommands(tenants: Command): void {
  tenants
    .command('group')
    .argument('<name>', 'tenant name (tenant_id)')
    .argument('<changes...>', '+GROUP to add the tenant to a group, -GROUP to remove it')
    .allowUnknownOption()
    .description(
      'Add a tenant to groups and remove it from others, as an operator: no configuration load undoes it. Readers scoped to a group see its new members at once.',
    )
    .action(async (name: string, changes: string[]) => {
      const parsed = parseGroupChanges(changes);
      const { setTenantGroups } = await import('../store/write/tenant-groups.js');
      await changeMembership(name, (db) => setTenantGroups(db, name, { ...parsed, by: operatorName() }));
    });

  tenants
    .command('label')
    .argument('<name>', 'tenant name (tenant_id)')
    .argument('<labels...>', 'KEY=VALUE to set a label, KEY= to remove it')
    .description('Set or remove labels of a tenant, as an operator: no configuration load undoes it.')
    .action(async (name: string, labels: string[]) => {
      const parsed = parseLabelChanges(labels);
      const { setTenantLabels } = await import('../store/write/tenant-groups.js');
      await changeMembership(name, (db) => setTenantLabels(db, name, parsed, operatorName()));
    });
}
