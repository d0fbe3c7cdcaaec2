/** Tenant groups and labels (tables tenant_group, tenant_label): who is in a group, what a tenant carries. */
import { sql } from 'kysely';
import type { Session } from '../database.js';

/** The groups a tenant is a member of now, by name. */
export async function groupsOfTenant(db: Session, tenant: string): Promise<string[]> {
  const { rows } = await sql<{ group_name: string }>`
    select group_name from govtrail.tenant_group where tenant_id = ${tenant} and member
    order by group_name`.execute(db);
  return rows.map((r) => r.group_name);
}

/** A tenant's labels now (removed ones left out). */
export async function labelsOfTenant(db: Session, tenant: string): Promise<Record<string, string>> {
  const { rows } = await sql<{ key: string; value: string }>`
    select key, value from govtrail.tenant_label where tenant_id = ${tenant} and value is not null
    order by key`.execute(db);
  return Object.fromEntries(rows.map((r) => [r.key, r.value]));
}

/** The members of a group now, by name (every status: a retired tenant's history is still its). */
export async function tenantsOfGroup(db: Session, group: string): Promise<string[]> {
  const { rows } = await sql<{ tenant_id: string }>`
    select tenant_id from govtrail.tenant_group where group_name = ${group} and member
    order by tenant_id`.execute(db);
  return rows.map((r) => r.tenant_id);
}

/** Every tenant's groups and labels now, for `tenants list`. */
export async function membershipOfAll(
  db: Session,
): Promise<Map<string, { groups: string[]; labels: Record<string, string> }>> {
  const out = new Map<string, { groups: string[]; labels: Record<string, string> }>();
  const entry = (t: string) => {
    let e = out.get(t);
    if (e === undefined) {
      e = { groups: [], labels: {} };
      out.set(t, e);
    }
    return e;
  };
  const { rows: g } = await sql<{ tenant_id: string; group_name: string }>`
    select tenant_id, group_name from govtrail.tenant_group where member order by tenant_id, group_name`.execute(
    db,
  );
  for (const r of g) entry(r.tenant_id).groups.push(r.group_name);
  const { rows: l } = await sql<{ tenant_id: string; key: string; value: string }>`
    select tenant_id, key, value from govtrail.tenant_label where value is not null
    order by tenant_id, key`.execute(db);
  for (const r of l) entry(r.tenant_id).labels[r.key] = r.value;
  return out;
}
