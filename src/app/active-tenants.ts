/**
 * The registry check of the one-shot commands (`govtrail sync`, `govtrail reconcile`): they run only
 * the configured tenants that are active in the tenant registry, and say which they skipped.
 */
import type { TenantConfig } from '../config/settings.js';
import type { Session } from '../store/database.js';
import { selectSchedulable } from '../store/write/tenant-registry.js';

/**
 * The tenants a one-shot command (`govtrail sync`, `reconcile`) runs: the active ones, registering
 * new ones first. Writes one line naming the tenants skipped as disabled or retired.
 */
export async function activeTenants(
  db: Session,
  tenants: readonly TenantConfig[],
  out: NodeJS.WritableStream,
): Promise<readonly TenantConfig[]> {
  const { schedulable, held } = await selectSchedulable(db, tenants);
  if (held.length > 0) {
    out.write(
      `skipped (not active in the tenant registry; govtrail tenants list): ${held.map((h) => `${h.tenant} (${h.status})`).join(', ')}\n`,
    );
  }
  return schedulable;
}
