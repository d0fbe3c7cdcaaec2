/**
 * Groups and labels of tenants (govtrail.tenant_group, tenant_label; sql/0030). A configuration
 * load writes what the configuration declares, as `configuration`; an operator's change (`govtrail
 * tenants group | label`) is written with the operator's name and kept against later loads, as a
 * status is. Rows are never deleted: a removal is `member = false` / `value = NULL`, and a trigger
 * records every change in govtrail.tenant_change.
 */
import { type Selectable, sql } from 'kysely';
import type { TenantConfig } from '../../source/client-config.js';
import type { Session } from '../database.js';
import { groupsOfTenant, labelsOfTenant } from '../read/tenant-groups.js';
import type { TenantGroupTable, TenantLabelTable } from '../schema.js';

/** Who writes what a configuration declares (tenant-registry.ts's CONFIGURATION_ACTOR). */
const CONFIGURATION_ACTOR = 'configuration';

/** Runs `fn` in a transaction, or in the caller's when `db` already is one. */
function inTransaction<T>(db: Session, fn: (trx: Session) => Promise<T>): Promise<T> {
  return db.isTransaction ? fn(db) : db.transaction().execute(fn);
}

type GroupRow = Readonly<
  Pick<Selectable<TenantGroupTable>, 'tenant_id' | 'group_name' | 'member' | 'set_by'>
>;

type LabelRow = Readonly<Pick<Selectable<TenantLabelTable>, 'tenant_id' | 'key' | 'value' | 'set_by'>>;

async function upsertGroup(db: Session, tenant: string, group: string, member: boolean, by: string) {
  await sql`
    insert into govtrail.tenant_group (tenant_id, group_name, member, set_by)
    values (${tenant}, ${group}, ${member}, ${by})
    on conflict (tenant_id, group_name)
    do update set member = excluded.member, set_by = excluded.set_by, set_at = now()`.execute(db);
}

async function upsertLabel(db: Session, tenant: string, key: string, value: string | null, by: string) {
  await sql`
    insert into govtrail.tenant_label (tenant_id, key, value, set_by)
    values (${tenant}, ${key}, ${value}, ${by})
    on conflict (tenant_id, key)
    do update set value = excluded.value, set_by = excluded.set_by, set_at = now()`.execute(db);
}

/**
 * Writes the groups and labels the configuration declares for the configured (registered) tenants:
 * a declared group or label is added, or restored when a former load removed it; one a former load
 * added and the configuration no longer declares is removed. Whatever an operator set is left
 * alone. Only differences are written. Returns the number of changes.
 */
export async function applyConfiguredMembership(
  db: Session,
  tenants: readonly TenantConfig[],
): Promise<number> {
  if (tenants.length === 0) return 0;
  const names = tenants.map((t) => t.name);
  const { rows: groupRows } = await sql<GroupRow>`
    select tenant_id, group_name, member, set_by from govtrail.tenant_group
    where tenant_id = any(${names}::text[])`.execute(db);
  const { rows: labelRows } = await sql<LabelRow>`
    select tenant_id, key, value, set_by from govtrail.tenant_label
    where tenant_id = any(${names}::text[])`.execute(db);
  const groupsOf = new Map<string, Map<string, GroupRow>>();
  for (const r of groupRows) {
    const m = groupsOf.get(r.tenant_id) ?? new Map<string, GroupRow>();
    m.set(r.group_name, r);
    groupsOf.set(r.tenant_id, m);
  }
  const labelsOf = new Map<string, Map<string, LabelRow>>();
  for (const r of labelRows) {
    const m = labelsOf.get(r.tenant_id) ?? new Map<string, LabelRow>();
    m.set(r.key, r);
    labelsOf.set(r.tenant_id, m);
  }
  let changes = 0;
  for (const t of tenants) {
    const stored = groupsOf.get(t.name) ?? new Map<string, GroupRow>();
    const declared = new Set(t.groups ?? []);
    for (const g of declared) {
      const row = stored.get(g);
      if (row === undefined || (row.set_by === CONFIGURATION_ACTOR && !row.member)) {
        await upsertGroup(db, t.name, g, true, CONFIGURATION_ACTOR);
        changes++;
      }
    }
    for (const row of stored.values()) {
      if (row.set_by === CONFIGURATION_ACTOR && row.member && !declared.has(row.group_name)) {
        await upsertGroup(db, t.name, row.group_name, false, CONFIGURATION_ACTOR);
        changes++;
      }
    }
    const storedLabels = labelsOf.get(t.name) ?? new Map<string, LabelRow>();
    const labels = t.labels ?? {};
    for (const [k, v] of Object.entries(labels)) {
      const row = storedLabels.get(k);
      if (row === undefined || (row.set_by === CONFIGURATION_ACTOR && row.value !== v)) {
        await upsertLabel(db, t.name, k, v, CONFIGURATION_ACTOR);
        changes++;
      }
    }
    for (const row of storedLabels.values()) {
      if (row.set_by === CONFIGURATION_ACTOR && row.value !== null && !Object.hasOwn(labels, row.key)) {
        await upsertLabel(db, t.name, row.key, null, CONFIGURATION_ACTOR);
        changes++;
      }
    }
  }
  return changes;
}

/** The outcome of an operator's change of one tenant's groups or labels. */
export type MembershipChange =
  | { readonly outcome: 'unknown'; readonly tenant: string }
  | { readonly outcome: 'done'; readonly tenant: string; readonly changed: readonly string[] };

async function registered(db: Session, tenant: string): Promise<boolean> {
  const { rows } = await sql`select 1 from govtrail.tenant where tenant_id = ${tenant}`.execute(db);
  return rows.length > 0;
}

/** `govtrail tenants group NAME +G -H`: adds and removes groups as the operator `by`. */
export async function setTenantGroups(
  db: Session,
  tenant: string,
  change: { readonly add: readonly string[]; readonly remove: readonly string[]; readonly by: string },
): Promise<MembershipChange> {
  return inTransaction(db, async (trx) => {
    if (!(await registered(trx, tenant))) return { outcome: 'unknown', tenant };
    const current = new Set(await groupsOfTenant(trx, tenant));
    const changed: string[] = [];
    for (const g of change.add) {
      await upsertGroup(trx, tenant, g, true, change.by);
      if (!current.has(g)) changed.push(`+${g}`);
    }
    for (const g of change.remove) {
      await upsertGroup(trx, tenant, g, false, change.by);
      if (current.has(g)) changed.push(`-${g}`);
    }
    return { outcome: 'done', tenant, changed };
  });
}

/** `govtrail tenants label NAME k=v k2=`: sets labels (NULL value = remove) as the operator `by`. */
export async function setTenantLabels(
  db: Session,
  tenant: string,
  labels: ReadonlyMap<string, string | null>,
  by: string,
): Promise<MembershipChange> {
  return inTransaction(db, async (trx) => {
    if (!(await registered(trx, tenant))) return { outcome: 'unknown', tenant };
    const current = await labelsOfTenant(trx, tenant);
    const changed: string[] = [];
    for (const [k, v] of labels) {
      await upsertLabel(trx, tenant, k, v, by);
      if ((current[k] ?? null) !== v) changed.push(v === null ? `${k} removed` : `${k}=${v}`);
    }
    return { outcome: 'done', tenant, changed };
  });
}
