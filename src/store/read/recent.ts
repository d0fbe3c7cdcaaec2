/**
 * Read-side queries for the commands that print what is stored (demo, settings, changes).
 */
import { sql } from 'kysely';
import type { Session } from '../database.js';
import { andBound } from '../predicates.js';

export interface CurrentSettings {
  readonly entryId: string;
  readonly changedAt: string;
  readonly changeKind: string | null;
  readonly settings: Record<string, unknown> | null;
  /** The snapshot exactly as received (null when the entry had none). */
  readonly wire: Record<string, unknown> | null;
}

/** The snapshot of the tenant's newest entry (by created_at, entry_id). */
export async function findCurrentSettings(
  db: Session,
  tenantId: string,
): Promise<CurrentSettings | undefined> {
  const { rows } = await sql<{
    entry_id: string;
    created_at_text: string | null;
    created_at: Date;
    change_kind: string | null;
    snapshot: Record<string, unknown> | null;
    wire: Record<string, unknown> | null;
  }>`
    select e.entry_id, e.created_at_text, e.created_at, e.change_kind,
           case when jsonb_typeof(e.raw->'snapshot') = 'object' then e.raw->'snapshot' end as wire,
           case when s.entry_id is null then null else to_jsonb(s) - 'tenant_id' - 'entry_id' end as snapshot
    from govtrail.history_entry e
    left join govtrail.settings_snapshot s on s.tenant_id = e.tenant_id and s.entry_id = e.entry_id
    where e.tenant_id = ${tenantId}
    order by e.created_at desc, e.entry_id desc
    limit 1`.execute(db);
  const r = rows[0];
  if (r === undefined) return undefined;
  return {
    entryId: r.entry_id,
    changedAt: r.created_at_text ?? r.created_at.toISOString(),
    changeKind: r.change_kind,
    settings: r.snapshot,
    wire: r.wire,
  };
}

export interface RecentEntry {
  readonly entryId: string;
  readonly changedAt: string;
  readonly changeKind: string | null;
  readonly actorKind: string | null;
  readonly actorUserId: string | null;
  readonly tickets: string[];
}

export async function findRecentEntries(
  db: Session,
  tenantId: string,
  limit: number,
): Promise<RecentEntry[]> {
  const { rows } = await sql<{
    entry_id: string;
    created_at_text: string | null;
    created_at: Date;
    change_kind: string | null;
    actor_kind: string | null;
    actor_user_id: string | null;
    tickets: string[] | null;
  }>`
    select e.entry_id, e.created_at_text, e.created_at, e.change_kind, e.actor_kind, e.actor_user_id,
           (select array_agg(coalesce(a.display_value, a.raw_value) order by a.ordinal)
              from govtrail.history_annotation a
             where a.tenant_id = e.tenant_id and a.entry_id = e.entry_id and a.kind = 'ANNOTATION_KIND_TICKET') as tickets
    from govtrail.history_entry e
    where e.tenant_id = ${tenantId}
    order by e.created_at desc, e.entry_id desc
    limit ${limit}`.execute(db);
  return rows.map((r) => ({
    entryId: r.entry_id,
    changedAt: r.created_at_text ?? r.created_at.toISOString(),
    changeKind: r.change_kind,
    actorKind: r.actor_kind,
    actorUserId: r.actor_user_id,
    tickets: r.tickets ?? [],
  }));
}

export interface RecentChange {
  readonly entryId: string;
  readonly changedAt: string;
  readonly field: string;
  readonly oldValue: unknown;
  readonly newValue: unknown;
  readonly direction: string;
  readonly actorKind: string | null;
  readonly actorUserId: string | null;
  readonly tickets: string[];
}

export async function findRecentChanges(
  db: Session,
  tenantId: string,
  limit: number,
): Promise<RecentChange[]> {
  const { rows } = await sql<{
    entry_id: string;
    created_at_text: string | null;
    created_at: Date;
    field: string;
    old_value: unknown;
    new_value: unknown;
    direction: string;
    actor_kind: string | null;
    actor_user_id: string | null;
    tickets: string[] | null;
  }>`
    select e.entry_id, e.created_at_text, e.created_at, f.field, f.old_value, f.new_value, f.direction,
           e.actor_kind, e.actor_user_id,
           (select array_agg(coalesce(a.display_value, a.raw_value) order by a.ordinal)
              from govtrail.history_annotation a
             where a.tenant_id = e.tenant_id and a.entry_id = e.entry_id and a.kind = 'ANNOTATION_KIND_TICKET') as tickets
    from govtrail.field_change f
    join govtrail.history_entry e on e.tenant_id = f.tenant_id and e.entry_id = f.entry_id
    where f.tenant_id = ${tenantId}
    order by e.created_at desc, e.entry_id desc, f.field
    limit ${limit}`.execute(db);
  return rows.map((r) => ({
    entryId: r.entry_id,
    changedAt: r.created_at_text ?? r.created_at.toISOString(),
    field: r.field,
    oldValue: r.old_value,
    newValue: r.new_value,
    direction: r.direction,
    actorKind: r.actor_kind,
    actorUserId: r.actor_user_id,
    tickets: r.tickets ?? [],
  }));
}

export interface AlertSummary {
  readonly alertId: number;
  readonly createdAt: Date;
  readonly tenantId: string;
  readonly entryId: string | null;
  readonly ruleId: string;
  readonly severity: string;
  readonly title: string;
  readonly summary: string;
  readonly deliveredTo: string[];
  readonly pendingTo: string[];
  readonly failedTo: string[];
}

export async function findRecentAlerts(
  db: Session,
  tenantId: string | undefined,
  limit: number,
  filter: { since?: Date; severities?: readonly string[] } = {},
): Promise<AlertSummary[]> {
  const { rows } = await sql<{
    alert_id: number;
    created_at: Date;
    tenant_id: string;
    entry_id: string | null;
    rule_id: string;
    severity: string;
    title: string;
    summary: string;
    delivered: string[] | null;
    pending: string[] | null;
    failed: string[] | null;
  }>`
    select a.alert_id, a.created_at, a.tenant_id, a.entry_id, a.rule_id, a.severity, a.title, a.summary,
           array(select d.sink from govtrail.alert_delivery d where d.alert_id = a.alert_id and d.status = 'delivered' order by d.sink) as delivered,
           array(select d.sink from govtrail.alert_delivery d where d.alert_id = a.alert_id and d.status = 'pending' order by d.sink) as pending,
           array(select d.sink from govtrail.alert_delivery d where d.alert_id = a.alert_id and d.status = 'failed' order by d.sink) as failed
    from govtrail.alert a
    where true
      ${andBound('a.tenant_id', '=', tenantId, 'text')}
      ${andBound('a.created_at', '>=', filter.since)}
      ${filter.severities === undefined ? sql`` : sql`and a.severity = any(${[...filter.severities]}::text[])`}
    order by a.alert_id desc
    limit ${limit}`.execute(db);
  return rows.map((r) => ({
    alertId: r.alert_id,
    createdAt: r.created_at,
    tenantId: r.tenant_id,
    entryId: r.entry_id,
    ruleId: r.rule_id,
    severity: r.severity,
    title: r.title,
    summary: r.summary,
    deliveredTo: r.delivered ?? [],
    pendingTo: r.pending ?? [],
    failedTo: r.failed ?? [],
  }));
}

/** How many alerts a tenant has stored. */
export async function countAlerts(db: Session, tenantId: string): Promise<number> {
  const { rows } = await sql<{ n: number }>`
    select count(*)::int as n from govtrail.alert where tenant_id = ${tenantId}`.execute(db);
  return rows[0]?.n ?? 0;
}
