/** The owner removals recorded (table owner_removal), for the CLI and reports. */
import type { Session } from '../database.js';
import type { OwnerRemovalOutcome, OwnerRemovalRecord } from '../write/owners.js';

export interface StoredOwnerRemoval extends OwnerRemovalRecord {
  readonly removalId: number;
  readonly requestedAt: Date;
}

/** Every recorded call, oldest first. */
export async function listOwnerRemovals(db: Session, tenantId?: string): Promise<StoredOwnerRemoval[]> {
  let q = db.selectFrom('govtrail.owner_removal').selectAll().orderBy('removal_id');
  if (tenantId !== undefined) q = q.where('tenant_id', '=', tenantId);
  const rows = await q.execute();
  return rows.map((r) => ({
    removalId: r.removal_id,
    requestedAt: new Date(r.requested_at),
    tenantId: r.tenant_id,
    appId: r.app_id,
    resourceTypeId: r.resource_type_id,
    resourceId: r.resource_id,
    roleSlug: r.role_slug,
    entitlementAppId: r.entitlement_app_id,
    entitlementId: r.entitlement_id,
    dryRun: r.dry_run,
    outcome: r.outcome as OwnerRemovalOutcome,
    httpStatus: r.http_status,
    error: r.error,
  }));
}
