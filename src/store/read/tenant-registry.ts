/** The tenant registry (table tenant) as `govtrail tenants list` shows it. */
import { sql } from 'kysely';
import type { Session } from '../database.js';
import type { TenantStatus } from '../write/tenant-registry.js';

/** A registered tenant as `govtrail tenants list` shows it. */
export interface RegisteredTenant {
  readonly tenant: string;
  readonly status: TenantStatus;
  readonly baseUrl: string | null;
  readonly statusChangedAt: Date;
  /** Who set the current status (`configuration` for a tenant registered active). */
  readonly statusChangedBy: string | null;
  readonly lastLoadedAt: Date | null;
  /** finished_at of the latest successful sync; null before the first. */
  readonly lastSuccessAt: Date | null;
  readonly entriesStored: number;
}

/** Every registered tenant with its latest successful sync and stored entries, by name. */
export async function listRegisteredTenants(db: Session): Promise<RegisteredTenant[]> {
  const { rows } = await sql<{
    tenant_id: string;
    status: TenantStatus;
    base_url: string | null;
    status_changed_at: Date;
    status_changed_by: string | null;
    last_loaded_at: Date | null;
    last_success_at: Date | null;
    entries_stored: number;
  }>`
    select t.tenant_id, t.status, t.base_url, t.status_changed_at, t.last_loaded_at,
           case t.status when 'active' then t.enabled_by when 'disabled' then t.disabled_by
                else t.retired_by end as status_changed_by,
           ok.finished_at as last_success_at,
           (select count(*) from govtrail.history_entry e where e.tenant_id = t.tenant_id) as entries_stored
    from govtrail.tenant t
    left join lateral (
      select r.finished_at from govtrail.sync_run r
      where r.tenant_id = t.tenant_id and r.kind = 'sync' and r.status = 'succeeded'
      order by r.finished_at desc nulls last, r.run_id desc limit 1) ok on true
    order by t.tenant_id`.execute(db);
  return rows.map((r) => ({
    tenant: r.tenant_id,
    status: r.status,
    baseUrl: r.base_url,
    statusChangedAt: r.status_changed_at,
    statusChangedBy: r.status_changed_by,
    lastLoadedAt: r.last_loaded_at,
    lastSuccessAt: r.last_success_at,
    entriesStored: Number(r.entries_stored),
  }));
}
