/**
 * Read-side queries for the commands that print what is stored (demo, settings, changes).
 */
import { sql } from 'kysely';
import type { Session } from './database.js';

export interface CurrentSettings {
  readonly entryId: string;
  readonly changedAt: string;
  readonly changeKind: string | null;
  readonly settings: Record<string, unknown> | null;
}

/** The snapshot of the tenant's newest entry (by created_at, entry_id). */
export async function findCurrentSettings(db: Session, tenantId: string): Promise<CurrentSettings | undefined> {
  const { rows } = await sql<{
    entry_id: string;
    created_at_text: string | null;
    created_at: Date;
    change_kind: string | null;
    snapshot: Record<string, unknown> | null;
  }>`
    select e.entry_id, e.created_at_text, e.created_at, e.change_kind,
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

export async function findRecentEntries(db: Session, tenantId: string, limit: number): Promise<RecentEntry[]> {
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
