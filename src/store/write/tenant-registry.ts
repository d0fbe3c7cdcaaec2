/**
 * Repository of the tenant registry (govtrail.tenant, sql/0007): which tenants govtrail knows, the
 * non-secret settings of the configuration that last listed each, and the operator's decision about
 * it. A configuration load adds tenants (as active) and refreshes their settings but never writes a
 * status: a tenant an operator disabled or retired stays so however often the configuration is
 * reloaded. The client secret is never written here.
 */
import { sql } from 'kysely';
import type { TenantConfig } from '../../source/client-config.js';
import type { Session } from '../database.js';
import { applyConfiguredMembership } from './tenant-groups.js';

/** Statuses of a registered tenant; only `active` tenants are synced. */
export const TENANT_STATUSES = ['active', 'disabled', 'retired'] as const;
export type TenantStatus = (typeof TENANT_STATUSES)[number];

/** A configured tenant that is not synced because of its status. */
export interface HeldTenant {
  readonly tenant: string;
  readonly status: Exclude<TenantStatus, 'active'>;
}

/** What a configuration load changed in the registry. */
export interface RegistryChanges {
  /** Configured tenants registered by this load, as active. */
  readonly added: readonly string[];
  /** Registered tenants whose non-secret settings this load changed, with the settings' column names. */
  readonly updated: readonly { readonly tenant: string; readonly settings: readonly string[] }[];
  /** Configured tenants an operator disabled or retired: they stay so. */
  readonly held: readonly HeldTenant[];
  /** Registered, not retired tenants the configuration no longer lists: left as they are. */
  readonly unconfigured: readonly { readonly tenant: string; readonly status: TenantStatus }[];
}

/** Rows written at once (a parameter per column and row stays far below PostgreSQL's 65 535). */
const INSERT_CHUNK = 1000;

/** Who registers a tenant that a configuration lists (`enabled_by`). */
export const CONFIGURATION_ACTOR = 'configuration';

/** The registry's copy of a tenant's settings: never the secret. */
interface StoredSettings {
  readonly base_url: string | null;
  readonly client_id: string | null;
  readonly page_size: number | null;
  readonly lookback_ms: number | null;
}

interface StoredTenant extends StoredSettings {
  readonly tenant_id: string;
  readonly status: TenantStatus;
}

/** The columns of a tenant's non-secret settings, as the registry stores them. */
function settingsOf(t: TenantConfig): StoredSettings {
  return { base_url: t.baseUrl, client_id: t.clientId, page_size: t.pageSize, lookback_ms: t.lookbackMs };
}

/** Column names whose stored value differs from the configured one. */
function changedSettings(stored: StoredSettings, configured: StoredSettings): string[] {
  const changed: string[] = [];
  if (stored.base_url !== configured.base_url) changed.push('base_url');
  if (stored.client_id !== configured.client_id) changed.push('client_id');
  if (stored.page_size !== configured.page_size) changed.push('page_size');
  if (stored.lookback_ms !== configured.lookback_ms) changed.push('lookback');
  return changed;
}

/** An interval literal of a whole number of milliseconds. */
function lookbackInterval(ms: number | null): string | null {
  return ms === null ? null : `${ms} milliseconds`;
}

async function readRegistry(db: Session): Promise<StoredTenant[]> {
  const { rows } = await sql<StoredTenant>`
    select tenant_id, status, base_url, client_id, page_size,
           (extract(epoch from lookback) * 1000)::float8 as lookback_ms
    from govtrail.tenant order by tenant_id`.execute(db);
  return rows;
}

/** Registers tenants as active (skipping any registered meanwhile); the names inserted. */
async function insertTenants(db: Session, tenants: readonly TenantConfig[]): Promise<string[]> {
  const added: string[] = [];
  for (let i = 0; i < tenants.length; i += INSERT_CHUNK) {
    const rows = await db
      .insertInto('govtrail.tenant')
      .values(
        tenants.slice(i, i + INSERT_CHUNK).map((t) => ({
          tenant_id: t.name,
          base_url: t.baseUrl,
          client_id: t.clientId,
          page_size: t.pageSize,
          lookback: lookbackInterval(t.lookbackMs),
          last_loaded_at: sql<Date>`now()`,
          enabled_at: sql<Date>`now()`,
          enabled_by: CONFIGURATION_ACTOR,
        })),
      )
      .onConflict((oc) => oc.column('tenant_id').doNothing())
      .returning('tenant_id')
      .execute();
    added.push(...rows.map((r) => r.tenant_id));
  }
  return added;
}

/** Registers as active those of `tenants` not registered yet (their first run succeeded); returns their names. */
export async function registerTenants(db: Session, tenants: readonly TenantConfig[]): Promise<string[]> {
  if (tenants.length === 0) return [];
  const added = await insertTenants(db, tenants);
  await applyConfiguredMembership(db, tenants);
  return added;
}

/** Runs `fn` in a transaction, or in the caller's when `db` already is one. */
function inTransaction<T>(db: Session, fn: (trx: Session) => Promise<T>): Promise<T> {
  return db.isTransaction ? fn(db) : db.transaction().execute(fn);
}

/**
 * Loads the configured tenants into the registry (`govtrail tenants sync`, the worker's start and
 * reload): a new tenant is registered as active; a registered one gets the configuration's
 * non-secret settings; no status is written, so a disabled or retired tenant stays so. A registered
 * tenant the configuration no longer lists is left as it is and reported.
 */
export async function syncTenantRegistry(
  db: Session,
  tenants: readonly TenantConfig[],
): Promise<RegistryChanges> {
  return inTransaction(db, async (trx) => {
    const stored = new Map((await readRegistry(trx)).map((r) => [r.tenant_id, r]));
    const added = await insertTenants(
      trx,
      tenants.filter((t) => !stored.has(t.name)),
    );
    const updated: { tenant: string; settings: string[] }[] = [];
    const held: HeldTenant[] = [];
    for (const t of tenants) {
      const prior = stored.get(t.name);
      if (prior === undefined) continue;
      if (prior.status !== 'active') held.push({ tenant: t.name, status: prior.status });
      const settings = changedSettings(prior, settingsOf(t));
      if (settings.length === 0) continue;
      await trx
        .updateTable('govtrail.tenant')
        .set({
          base_url: t.baseUrl,
          client_id: t.clientId,
          page_size: t.pageSize,
          lookback: lookbackInterval(t.lookbackMs),
        })
        .where('tenant_id', '=', t.name)
        .execute();
      updated.push({ tenant: t.name, settings });
    }
    const names = tenants.map((t) => t.name);
    if (names.length > 0) {
      await sql`update govtrail.tenant set last_loaded_at = now()
                where tenant_id = any(${names}::text[])`.execute(trx);
    }
    await applyConfiguredMembership(trx, tenants);
    const listed = new Set(names);
    const unconfigured = [...stored.values()]
      .filter((r) => !listed.has(r.tenant_id) && r.status !== 'retired')
      .map((r) => ({ tenant: r.tenant_id, status: r.status }));
    return { added, updated, held, unconfigured };
  });
}

/** The configured tenants split by their registry status. */
export interface TenantSelection {
  /** Active: to be synced, in the configuration's order. */
  readonly schedulable: TenantConfig[];
  /** Disabled or retired: not synced. */
  readonly held: HeldTenant[];
}

/**
 * Splits the configured tenants into those to sync (active) and those held (disabled or retired),
 * registering as active any not registered yet. Settings of registered tenants are left alone (that
 * is {@link syncTenantRegistry}'s job).
 */
export async function selectSchedulable(
  db: Session,
  configured: readonly TenantConfig[],
  options: {
    /**
     * false: a tenant not registered yet is selected (as active) but not registered; the one-shot
     * commands register it once its first run succeeded ({@link registerTenants}), so that a
     * mistyped base URL leaves no tenant behind.
     */
    register?: boolean;
  } = {},
): Promise<TenantSelection> {
  let status = new Map((await readRegistry(db)).map((r) => [r.tenant_id, r.status]));
  const missing = configured.filter((t) => !status.has(t.name));
  if (missing.length > 0 && options.register !== false) {
    await insertTenants(db, missing);
    // Another process may have registered (and even disabled) one meanwhile: read again.
    status = new Map((await readRegistry(db)).map((r) => [r.tenant_id, r.status]));
  }
  // The configuration's groups and labels, so that --group selects by them without a
  // `govtrail tenants sync` first (of registered tenants: the others get theirs when registered).
  await applyConfiguredMembership(
    db,
    configured.filter((t) => status.has(t.name)),
  );
  const schedulable: TenantConfig[] = [];
  const held: HeldTenant[] = [];
  for (const t of configured) {
    const s = status.get(t.name) ?? 'active';
    if (s === 'active') schedulable.push(t);
    else held.push({ tenant: t.name, status: s });
  }
  return { schedulable, held };
}

/**
 * The configured tenants that are active in the registry, in the configuration's order; any not
 * registered yet is registered as active first. Disabled and retired tenants are left out.
 */
export async function schedulableTenants(
  db: Session,
  configured: readonly TenantConfig[],
): Promise<TenantConfig[]> {
  return (await selectSchedulable(db, configured)).schedulable;
}

/** The outcome of {@link setTenantStatus}. */
export type StatusChange =
  | { readonly outcome: 'unknown'; readonly tenant: string }
  | { readonly outcome: 'unchanged'; readonly tenant: string; readonly status: TenantStatus }
  /** A retired tenant is brought back only with `force`: the operator closed its history. */
  | {
      readonly outcome: 'refused';
      readonly tenant: string;
      readonly from: 'retired';
      readonly to: TenantStatus;
    }
  | {
      readonly outcome: 'changed';
      readonly tenant: string;
      readonly from: TenantStatus;
      readonly to: TenantStatus;
    };

/** Who registered a tenant found only in the run ledger (synced by a path that does not register). */
export const LEDGER_ACTOR = 'run ledger';

/**
 * Registers, as active, a tenant the registry lacks but the run ledger knows, as migration 0007 did
 * for the tenants stored before it; nothing when the ledger does not know it either.
 */
async function registerFromLedger(db: Session, tenant: string): Promise<void> {
  await sql`
    insert into govtrail.tenant (tenant_id, first_seen_at, status_changed_at, enabled_at, enabled_by)
    select r.tenant_id, min(r.started_at), min(r.started_at), min(r.started_at), ${LEDGER_ACTOR}
    from govtrail.sync_run r where r.tenant_id = ${tenant}
    group by r.tenant_id
    on conflict (tenant_id) do nothing`.execute(db);
}

/**
 * Sets a tenant's status (`govtrail tenants enable | disable | retire`), recording when and by
 * whom; a tenant only the run ledger knows is registered first. Leaving `retired` needs `force`.
 * Nothing else of the tenant changes: its history, checkpoint and ledger stay as they are.
 */
export async function setTenantStatus(
  db: Session,
  tenant: string,
  to: TenantStatus,
  options: { readonly by: string; readonly force?: boolean },
): Promise<StatusChange> {
  return inTransaction(db, async (trx) => {
    const lock = () =>
      trx
        .selectFrom('govtrail.tenant')
        .select('status')
        .where('tenant_id', '=', tenant)
        .forUpdate()
        .executeTakeFirst();
    let row = await lock();
    if (row === undefined) {
      await registerFromLedger(trx, tenant);
      row = await lock();
    }
    if (row === undefined) return { outcome: 'unknown', tenant };
    const from = row.status as TenantStatus;
    if (from === to) return { outcome: 'unchanged', tenant, status: from };
    if (from === 'retired' && options.force !== true) return { outcome: 'refused', tenant, from, to };
    // A decision is a row appended to govtrail.tenant_decision (sql/0016): the database stamps it
    // (previous status, session_user, time) and applies it to the registry; nothing else may.
    await trx
      .insertInto('govtrail.tenant_decision')
      .values({ tenant_id: tenant, status: to, forced: from === 'retired', decided_by: options.by })
      .execute();
    return { outcome: 'changed', tenant, from, to };
  });
}
