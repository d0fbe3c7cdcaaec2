/**
 * Repository of the remediation audit trail (`govtrail.owner_removal`): for each
 * DeleteEntitlementOwner call a `sending` row before it is sent and a row with its outcome after
 * (a dry run: one `dry_run` row). Never holds a secret: the ids, the outcome, the
 * HTTP status and the (already scrubbed) error message only.
 */
import type { Session } from '../database.js';

/**
 * `sending` is recorded before the request goes out; the outcome follows as a row of its own. A
 * `sending` row with no later row for the same owner is a call interrupted in flight.
 */
export type OwnerRemovalOutcome = 'sending' | 'deleted' | 'absent' | 'failed' | 'dry_run';

export interface OwnerRemovalRecord {
  readonly tenantId: string;
  readonly appId: string;
  readonly resourceTypeId: string;
  readonly resourceId: string;
  readonly roleSlug: string;
  readonly entitlementAppId: string;
  readonly entitlementId: string;
  readonly dryRun: boolean;
  readonly outcome: OwnerRemovalOutcome;
  readonly httpStatus: number | null;
  readonly error: string | null;
}

export async function recordOwnerRemoval(db: Session, r: OwnerRemovalRecord): Promise<number> {
  const row = await db
    .insertInto('govtrail.owner_removal')
    .values({
      tenant_id: r.tenantId,
      app_id: r.appId,
      resource_type_id: r.resourceTypeId,
      resource_id: r.resourceId,
      role_slug: r.roleSlug,
      entitlement_app_id: r.entitlementAppId,
      entitlement_id: r.entitlementId,
      dry_run: r.dryRun,
      outcome: r.outcome,
      http_status: r.httpStatus,
      error: r.error,
    })
    .returning('removal_id')
    .executeTakeFirstOrThrow();
  return row.removal_id;
}
