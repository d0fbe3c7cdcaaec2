/**
 * Which tenants a command works on: `--tenant NAME` or `--group G` (commands/options.ts's
 * tenantSelection). Runs (sync, reconcile) take configured tenants; outputs (report, exports,
 * evidence pack) take stored ones. A group's members are read from the registry when the command
 * runs (govtrail.tenant_group: the configuration's groups and the operators' changes).
 */
import type { Config, TenantConfig } from '../config/settings.js';
import { ConfigError, GovtrailError } from '../core/errors.js';
import type { Session } from '../store/database.js';
import { tenantsOfGroup } from '../store/read/tenant-groups.js';
import { registerTenants, selectSchedulable } from '../store/write/tenant-registry.js';
import type { RunSummary } from '../sync/run-types.js';
import { resolveTenant } from './resolve-tenant.js';

/** `--tenant NAME` / `--group G` as commander hands them over. */
export interface TenantSelection {
  readonly tenant?: string;
  readonly group?: string;
}

/** Refuses --tenant together with --group. */
function checkSelection(selection: TenantSelection): void {
  if (selection.tenant !== undefined && selection.group !== undefined) {
    throw new GovtrailError('USAGE', '--tenant and --group exclude each other: name a tenant or a group');
  }
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

/**
 * The tenants a one-shot run (`govtrail sync`, `reconcile`, and any run over configured tenants)
 * works on: the configured ones, or the one named, or the configured members of the group named;
 * of those the active ones, registering new tenants (with their configured groups) first. Writes
 * one line naming the selected tenants skipped as disabled or retired.
 */
export async function runnableTenants(
  db: Session,
  config: Config,
  selection: TenantSelection,
  out: NodeJS.WritableStream,
): Promise<readonly TenantConfig[]> {
  checkSelection(selection);
  const configured = selectTenants(config, selection.tenant);
  // Not registered here: a tenant is registered once its first run succeeded (registerSucceeded).
  let { schedulable, held } = await selectSchedulable(db, configured, { register: false });
  if (selection.group !== undefined) {
    const group = selection.group;
    // Members in the registry, and configured tenants not registered yet that the file puts in it.
    const members = new Set([
      ...(await tenantsOfGroup(db, group)),
      ...configured.filter((t) => t.groups?.includes(group) === true).map((t) => t.name),
    ]);
    if (!configured.some((t) => members.has(t.name))) {
      throw new GovtrailError(
        'USAGE',
        `--group: no configured tenant is in group ${JSON.stringify(group)} (govtrail tenants list --group ${group})`,
      );
    }
    schedulable = schedulable.filter((t) => members.has(t.name));
    held = held.filter((h) => members.has(h.tenant));
  }
  if (held.length > 0) {
    out.write(
      `skipped (not active in the tenant registry; govtrail tenants list): ${held.map((h) => `${h.tenant} (${h.status})`).join(', ')}\n`,
    );
  }
  return schedulable;
}

/**
 * The stored tenants an output (report, export, evidence pack) covers: the one named (or the only
 * one stored), or every member of the group named at this moment, in name order.
 */
export async function storedTenants(db: Session, selection: TenantSelection): Promise<readonly string[]> {
  checkSelection(selection);
  if (selection.group === undefined) return [await resolveTenant(db, selection.tenant)];
  const members = await tenantsOfGroup(db, selection.group);
  if (members.length === 0) {
    throw new GovtrailError(
      'USAGE',
      `--group: group ${JSON.stringify(selection.group)} has no member tenants (govtrail tenants list shows the groups)`,
    );
  }
  return members;
}

/**
 * Registers the tenants whose run succeeded and that were not registered yet. A tenant whose first
 * run failed (a mistyped base URL, a wrong secret) is not registered: it would otherwise stay in
 * `tenants list` as active until retired. Its failed run stays in the ledger.
 */
export async function registerSucceeded(
  db: Session,
  tenants: readonly TenantConfig[],
  summaries: readonly RunSummary[],
): Promise<void> {
  const succeeded = new Set(summaries.filter((s) => s.status === 'succeeded').map((s) => s.tenantId));
  await registerTenants(
    db,
    tenants.filter((t) => succeeded.has(t.name)),
  );
}
