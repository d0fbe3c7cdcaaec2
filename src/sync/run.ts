/**
 * A sync: one checkpointed run for one tenant (sync.md). In the shared frame of steps.ts — lock,
 * ledger, one transaction, change step, checkpoint — it pages newest first until the stop rule says
 * the page reaches `checkpoint − lookback`, writing each batch as it goes. Re-served entries of the
 * lookback window are compared with the store by the writer (S12).
 */
import type { HistoryPage } from '../wire.js';
import { executeRun, type RunOptions, type RunProgress, type RunSummary } from './steps.js';
import { pageReachesCheckpoint } from './stop-rule.js';

export type { ChangeStep, HistorySource, InsertTracker } from './steps.js';
export type SyncRunOptions = RunOptions;
export type SyncProgress = RunProgress;
export type SyncRunSummary = RunSummary;

/** Runs one sync for one tenant. Never throws for a failed run: the summary carries the error. */
export function runSync(options: SyncRunOptions): Promise<SyncRunSummary> {
  return executeRun('sync', options, async (ctx) => {
    const { trx, checkpoint, counters, writer } = ctx;
    const stopAfter = (page: HistoryPage): boolean =>
      checkpoint !== undefined && pageReachesCheckpoint(page.entries, checkpoint, options.lookbackMs);
    let stopReason: 'checkpoint' | 'end_of_history' = 'end_of_history';
    try {
      for await (const page of options.source.listHistory({
        pageSize: options.pageSize,
        maxPages: options.maxPages,
        stopAfter,
      })) {
        counters.pagesFetched++;
        counters.entriesFetched += page.entries.length;
        await writer.add(trx, page.entries);
        options.onProgress?.({
          pages: counters.pagesFetched,
          entries: counters.entriesFetched,
          inserted: counters.entriesInserted,
        });
        if (stopAfter(page)) {
          stopReason = 'checkpoint';
          break;
        }
      }
    } catch (err) {
      // Nothing may run after ROLLBACK: let a write in flight finish first.
      await writer.settle();
      throw err;
    }
    await writer.finish(trx);
    return { stopReason };
  });
}
