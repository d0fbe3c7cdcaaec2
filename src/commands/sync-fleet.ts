/**
 * `govtrail sync` over several tenants: up to `concurrency` runs at once (GOVTRAIL_WORKER_CONCURRENCY,
 * as the worker), each reported to the fleet's progress as it ends. The summaries come back in the
 * tenants' order whatever order the runs ended in.
 */
import type { TenantConfig } from '../config/settings.js';
import { runBounded } from '../core/pool.js';
import type { RunProgress, RunSummary } from '../sync/run-types.js';
import type { FleetProgress } from './progress.js';

export interface SyncFleetOptions {
  readonly tenants: readonly TenantConfig[];
  /** Runs in flight at once (at least 1). */
  readonly concurrency: number;
  /** One run of one tenant; a failed run is a summary, a throw is a bug or a lost database. */
  readonly run: (tenant: TenantConfig, onProgress: (p: RunProgress) => void) => Promise<RunSummary>;
  readonly progress: FleetProgress;
  /** Once aborted, no further tenant is started (the runs in flight end, aborted by the same signal). */
  readonly signal?: AbortSignal;
}

/**
 * Runs every tenant, `concurrency` at once, and returns their summaries in the tenants' order.
 * When a run throws, no further tenant is started; the runs in flight end, then the first error is
 * rethrown (as a sequential loop would have stopped at it).
 * @throws what the first throwing run threw
 */
export async function syncFleet(options: SyncFleetOptions): Promise<RunSummary[]> {
  let thrown: { error: unknown } | undefined;
  const results = await runBounded(
    options.tenants,
    options.concurrency,
    async (tenant) => {
      const progress = options.progress.tenant(tenant.name);
      try {
        const summary = await options.run(tenant, progress.update);
        progress.finished(summary);
        return summary;
      } catch (error) {
        thrown ??= { error };
        throw error;
      }
    },
    () => thrown === undefined && options.signal?.aborted !== true,
  );
  options.progress.close();
  if (thrown !== undefined) throw thrown.error;
  return results.flatMap((r) => (r?.status === 'fulfilled' ? [r.value] : []));
}
