/**
 * The registry check of the one-shot commands (`govtrail sync`, `govtrail reconcile`): they run only
 * the configured tenants that are active in the tenant registry, and say which they skipped.
 */
import type { TenantConfig } from '../config/settings.js';
import type { Session } from '../store/database.js';
import { registerTenants, selectSchedulable } from '../store/write/tenant-registry.js';
import type { SyncRunSummary } from '../sync/run.js';

/**
 * The tenants a one-shot command (`govtrail sync`, `reconcile`) runs: the active ones, and those
 * not registered yet (registered by {@link registerSucceeded} once their run succeeds). Writes one
 * line naming the tenants skipped as disabled or retired.
 */
export async function activeTenants(
  db: Session,
  tenants: readonly TenantConfig[],
  out: NodeJS.WritableStream,
): Promise<readonly TenantConfig[]> {
  const { schedulable, held } = await selectSchedulable(db, tenants, { register: false });
  if (held.length > 0) {
    out.write(
      `skipped (not active in the tenant registry; govtrail tenants list): ${held.map((h) => `${h.tenant} (${h.status})`).join(', ')}\n`,
    );
  }
  return schedulable;
}

/**
 * Registers the tenants whose run succeeded and that were not registered yet. A tenant whose first
 * run failed (a mistyped base URL, a wrong secret) is not registered: it would otherwise stay in
 * `tenants list` as active until retired. Its failed run stays in the ledger.
 */
export async function registerSucceeded(
  db: Session,
  tenants: readonly TenantConfig[],
  summaries: readonly SyncRunSummary[],
): Promise<void> {
  const succeeded = new Set(summaries.filter((s) => s.status === 'succeeded').map((s) => s.tenantId));
  await registerTenants(
    db,
    tenants.filter((t) => succeeded.has(t.name)),
  );
}
