/**
 * A reconcile: the whole source history against the store (docs/design/integrity.md). In the shared frame of
 * execute-run.ts — lock, ledger, one transaction, change step, checkpoint — it pages the history to its
 * end, writes each batch as a sync would (storing what is not stored; the writer compares every
 * re-served entry by content hash), sorts what it stored into new and `backdated`, and at the end
 * finds the stored entries the source no longer serves: `missing_at_source` while older entries are
 * still served, `expired_at_source` past the oldest one. Memory stays flat: served ids go to a
 * temporary table, and what is gone is read back in batches.
 */

import type { Session } from '../store/database.js';
import { type ChronoEntry, findChronoEntries } from '../store/read/chrono-entries.js';
import { findStoredContent } from '../store/read/stored-entries.js';
import type { ReconcileLedger } from '../store/write/runs.js';
import {
  countGone,
  createServedTable,
  findGone,
  type GoneRow,
  loadGone,
  recordServed,
} from '../store/write/served-ids.js';
import { entryRow } from './change-step.js';
import { executeRun, pageAndWrite } from './execute-run.js';
import type { RunOptions, RunSummary } from './run-types.js';

/** Stored entries the source no longer serves, classified per batch of this many. */
const GONE_BATCH = 2000;

/** Runs one reconcile for one tenant. Never throws for a failed run: the summary carries the error. */
export function runReconcile(options: RunOptions): Promise<RunSummary> {
  return executeRun('reconcile', options, async (ctx) => {
    const { trx, writer, findings, tenantId } = ctx;
    const coverage = new Coverage();
    let entriesNew = 0;
    let entriesBackdated = 0;

    await createServedTable(trx);
    // The writer records what it stored dated behind checkpoint − lookback as backdated, as in a sync.
    writer.onBatch = async (batchTrx, { served, fresh, backdated }) => {
      for (const e of served) coverage.see(e.createdAtKey, e.createdAtText ?? e.createdAtKey);
      await recordServed(
        batchTrx,
        served.map((e) => e.entryId),
      );
      entriesBackdated += backdated;
      entriesNew += fresh.length - backdated;
    };

    await pageAndWrite(ctx);

    const gone = await classifyGone(trx, tenantId, coverage.oldest?.key, async (rows) => {
      const ids = rows.map((r) => r.entryId);
      // One statement at a time: they share the transaction's connection.
      const hashes = await findStoredContent(trx, tenantId, ids);
      const stored = await findChronoEntries(trx, tenantId, ids);
      await findings.gone(
        trx,
        rows.map((r) => ({
          stored: stored.get(r.entryId) as ChronoEntry,
          storedHash: hashes.get(r.entryId) as Buffer,
          kind: r.expired ? 'expired_at_source' : 'missing_at_source',
        })),
        (e) => entryRow(tenantId, e),
      );
    });
    const reconcile: ReconcileLedger = {
      entriesNew,
      entriesMissing: gone.missing,
      entriesExpired: gone.expired,
      entriesBackdated,
      entriesConflicting: writer.conflicting,
      coveredFrom: coverage.oldest ?? null,
      coveredTo: coverage.newest ?? null,
    };
    return { stopReason: 'end_of_history', reconcile };
  });
}

/**
 * Finds the stored entries not served (a set-based anti-join into a temporary table), counts them
 * by kind, and hands them to `each` in batches, oldest first. With nothing served at all, every
 * stored entry is `missing_at_source`: an emptied source is a finding, not retention.
 */
async function classifyGone(
  trx: Session,
  tenantId: string,
  oldestServedKey: string | undefined,
  each: (rows: readonly GoneRow[]) => Promise<void>,
): Promise<{ missing: number; expired: number }> {
  await findGone(trx, tenantId, oldestServedKey);
  const counts = await countGone(trx);
  let after: GoneRow | undefined;
  for (;;) {
    const rows = await loadGone(trx, after, GONE_BATCH);
    if (rows.length === 0) break;
    await each(rows);
    after = rows[rows.length - 1];
    if (rows.length < GONE_BATCH) break;
  }
  return counts;
}

/** Oldest and newest createdAt served, by key. */
class Coverage {
  oldest: { key: string; text: string } | undefined;
  newest: { key: string; text: string } | undefined;

  see(key: string, text: string): void {
    if (this.oldest === undefined || key < this.oldest.key) this.oldest = { key, text };
    if (this.newest === undefined || key > this.newest.key) this.newest = { key, text };
  }
}
