/**
 * A sync: one checkpointed run for one tenant (docs/design/sync.md). In the shared frame of execute-run.ts —
 * lock, ledger, one transaction, change step, checkpoint — it pages newest first until the stop rule says
 * the page reaches `checkpoint − lookback`, writing each batch as it goes. Re-served entries of the
 * lookback window are compared with the store by the writer (S12).
 */

import { servedOf } from '../core/served-entry.js';
import { pageReachesCheckpoint } from '../core/stop-rule.js';
import type { HistoryPage } from '../core/wire.js';
import type { Checkpoint } from '../store/read/checkpoint.js';
import { executeRun, pageAndWrite } from './execute-run.js';
import type { RunOptions, RunSummary } from './run-types.js';

/** Runs one sync for one tenant. Never throws for a failed run: the summary carries the error. */
export function runSync(options: RunOptions): Promise<RunSummary> {
  const stopRule =
    (checkpoint: Checkpoint | undefined) =>
    (page: HistoryPage): boolean =>
      checkpoint !== undefined && pageReachesCheckpoint(servedOf(page), checkpoint, options.lookbackMs);
  return executeRun(
    'sync',
    options,
    async (ctx) => ({ stopReason: await pageAndWrite(ctx, stopRule(ctx.checkpoint)) }),
    // A sync with nothing new is closed without a transaction (quiet-run.ts).
    { stopAfter: stopRule },
  );
}
