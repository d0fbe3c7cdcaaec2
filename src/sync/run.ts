/**
 * One checkpointed run for one tenant — the only place that sequences the steps of sync.md:
 * lock → checkpoint → page (with the lookback stop rule) → insert → changes and alerts →
 * checkpoint and ledger, all of the data in one transaction, and the lock released at the end.
 */
import { type GovtrailError, toGovtrailError } from '../errors.js';
import type { Logger } from '../logger.js';
import { normaliseEntry } from '../normalise/entry.js';
import type { NormalisedEntry } from '../normalise/types.js';
import type { Database, Session } from '../store/database.js';
import {
  findLastRowHash,
  findNewestEntry,
  findStoredEntryIds,
  insertEntries,
  insertRejected,
  type RejectedInput,
} from '../store/history.js';
import {
  failOrphanedRuns,
  finishRun,
  hasSucceededBefore,
  type RunCounters,
  type RunTrigger,
  readCheckpoint,
  recordSkippedRun,
  startRun,
  tryLockTenant,
  unlockTenant,
  writeCheckpoint,
} from '../store/runs.js';
import type { HistoryPage } from '../wire.js';
import { pageReachesCheckpoint, storedKey } from './stop-rule.js';

/** What the run needs of the tenant API: a pager that can be told to stop before fetching more. */
export interface HistorySource {
  listHistory(options: {
    pageSize: number;
    maxPages: number;
    /** Called on each page before the next one is requested; true ends the listing there. */
    stopAfter?: (page: HistoryPage) => boolean;
  }): AsyncIterable<HistoryPage>;
  readonly stats: { readonly retries: number; readonly historyRequests: number };
}

/** Follows the entries a run inserts, batch by batch, inside the run's transaction. */
export interface InsertTracker {
  /** The entries one batch inserted, in insertion order (batches come newest first). */
  inserted(trx: Session, entries: readonly NormalisedEntry[]): Promise<void>;
}

/** Work on the new entries inside the run's transaction (field changes, alerts). */
export interface ChangeStep {
  /**
   * Called once the run's transaction has started; may return a tracker to be fed every inserted
   * batch (so the work can be done while the history is still being fetched).
   */
  track?(context: {
    tenantId: string;
    runId: number;
    isBackfill: boolean;
    /** The tenant had no stored entries when the run began. */
    tenantWasEmpty: boolean;
    logger: Logger;
  }): InsertTracker | undefined;
  /** After the last batch is inserted. */
  after(
    trx: Session,
    context: {
      tenantId: string;
      runId: number;
      isBackfill: boolean;
      inserted: number;
      /** Oldest (created_at key, entry_id) among this run's new entries, when there are any. */
      oldestNew: { key: string; entryId: string } | undefined;
      /** What track() returned. */
      tracker: InsertTracker | undefined;
      logger: Logger;
    },
  ): Promise<{ alerts: number; fieldChanges: number }>;
}

export interface SyncProgress {
  readonly pages: number;
  readonly entries: number;
  readonly inserted: number;
}

export interface SyncRunOptions {
  readonly database: Database;
  readonly source: HistorySource;
  readonly logger: Logger;
  readonly tenantId: string;
  readonly trigger: RunTrigger;
  readonly pageSize: number;
  readonly lookbackMs: number;
  readonly maxPages: number;
  /** Entries written per batch (one COPY per table). */
  readonly batchSize?: number;
  readonly changes?: ChangeStep;
  readonly onProgress?: (p: SyncProgress) => void;
}

export interface SyncRunSummary {
  readonly tenantId: string;
  readonly runId: number;
  readonly status: 'succeeded' | 'failed' | 'skipped';
  readonly isBackfill: boolean;
  readonly counters: RunCounters;
  readonly stopReason: 'checkpoint' | 'end_of_history' | null;
  readonly checkpointBefore: string | null;
  readonly checkpointAfter: string | null;
  readonly alerts: number;
  readonly fieldChanges: number;
  readonly durationMs: number;
  readonly historyRequests: number;
  readonly error?: GovtrailError;
}

/** Runs one sync for one tenant. Never throws for a failed run: the summary carries the error. */
export async function runSync(options: SyncRunOptions): Promise<SyncRunSummary> {
  const { database, tenantId, logger: rootLogger } = options;
  const started = Date.now();
  const batchSize = options.batchSize ?? 2000;

  return database.withSession(async (session) => {
    if (!(await tryLockTenant(session, tenantId))) {
      const runId = await recordSkippedRun(session, tenantId, options.trigger);
      rootLogger.info({ tenant: tenantId, runId }, 'another process is syncing this tenant; skipped');
      return {
        tenantId,
        runId,
        status: 'skipped',
        isBackfill: false,
        counters: emptyCounters(),
        stopReason: null,
        checkpointBefore: null,
        checkpointAfter: null,
        alerts: 0,
        fieldChanges: 0,
        durationMs: Date.now() - started,
        historyRequests: 0,
      };
    }
    const counters = emptyCounters();
    let runId = 0;
    let checkpointBefore: string | null = null;
    let isBackfill = false;
    try {
      const orphans = await failOrphanedRuns(session, tenantId);
      if (orphans > 0)
        rootLogger.warn({ tenant: tenantId, orphans }, 'closed runs left unfinished by a dead process');
      const checkpoint = await readCheckpoint(session, tenantId);
      checkpointBefore = checkpoint?.entryId ?? null;
      isBackfill = checkpoint === undefined && !(await hasSucceededBefore(session, tenantId));
      runId = await startRun(session, tenantId, options.trigger, checkpointBefore);
      const logger = rootLogger.child({ tenant: tenantId, runId });
      logger.info(
        { checkpoint: checkpointBefore, backfill: checkpoint === undefined, lookbackMs: options.lookbackMs },
        checkpoint === undefined ? 'backfill started' : 'incremental sync started',
      );

      const result = await session.transaction().execute(async (trx) => {
        let lastHash = await findLastRowHash(trx, tenantId);
        const tracker = options.changes?.track?.({
          tenantId,
          runId,
          isBackfill,
          tenantWasEmpty: lastHash === null,
          logger,
        });
        let batch: NormalisedEntry[] = [];
        let rejected: RejectedInput[] = [];
        let oldestNew: { key: string; entryId: string } | undefined;
        let stopReason: 'checkpoint' | 'end_of_history' = 'end_of_history';

        const flush = async () => {
          if (batch.length === 0 && rejected.length === 0) return;
          // Take the batch now: the pager keeps filling the next one while this one is written.
          const entries = batch;
          const rejects = rejected;
          batch = [];
          rejected = [];
          // The same entry may be served twice (on two pages, or twice in one page): keep the first.
          const unique = new Map<string, NormalisedEntry>();
          for (const e of entries) if (!unique.has(e.entry.entryId)) unique.set(e.entry.entryId, e);
          const stored = await findStoredEntryIds(trx, tenantId, [...unique.keys()]);
          const fresh = [...unique.values()].filter((e) => !stored.has(e.entry.entryId));
          const res = await insertEntries(trx, runId, fresh, lastHash);
          lastHash = res.lastHash;
          counters.entriesInserted += res.inserted;
          if (tracker !== undefined) await tracker.inserted(trx, fresh);
          for (const e of fresh) {
            counters.warnings += e.warnings.length;
            if (e.warnings.length > 0)
              logger.warn({ entryId: e.entry.entryId, warnings: e.warnings }, 'entry stored with warnings');
            const k = { key: e.entry.createdAtKey, entryId: e.entry.entryId };
            if (
              oldestNew === undefined ||
              k.key < oldestNew.key ||
              (k.key === oldestNew.key && k.entryId < oldestNew.entryId)
            ) {
              oldestNew = k;
            }
          }
          counters.entriesRejected += await insertRejected(trx, tenantId, runId, rejects);
        };
        // One batch is written while the next is fetched and normalised; at most one write in flight.
        let writing: Promise<void> | undefined;
        const startFlush = async () => {
          if (writing !== undefined) await writing;
          const w = flush();
          w.catch(() => {}); // awaited below; this only keeps an early failure from going unhandled
          writing = w;
        };

        const stopAfter = (page: HistoryPage): boolean =>
          checkpoint !== undefined && pageReachesCheckpoint(page.entries, checkpoint, options.lookbackMs);

        try {
          for await (const page of options.source.listHistory({
            pageSize: options.pageSize,
            maxPages: options.maxPages,
            stopAfter,
          })) {
            counters.pagesFetched++;
            counters.entriesFetched += page.entries.length;
            for (const raw of page.entries) {
              const n = normaliseEntry(tenantId, raw);
              if (n.ok) batch.push(n.value);
              else {
                rejected.push({ reason: n.reason, raw: n.raw });
                logger.warn({ reason: n.reason }, 'entry rejected: kept in govtrail.rejected_entry');
              }
            }
            if (batch.length + rejected.length >= batchSize) await startFlush();
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
          // Let a write in flight finish before the transaction rolls back: nothing may run after ROLLBACK.
          if (writing !== undefined) await writing.catch(() => {});
          throw err;
        }
        if (writing !== undefined) await writing;
        await flush();
        counters.warnings += counters.entriesRejected;
        counters.httpRetries = options.source.stats.retries;

        const after = options.changes
          ? await options.changes.after(trx, {
              tenantId,
              runId,
              isBackfill,
              inserted: counters.entriesInserted,
              oldestNew,
              tracker,
              logger,
            })
          : { alerts: 0, fieldChanges: 0 };

        // The checkpoint is the newest entry stored, by (created_at, entry_id) — never "the last one seen".
        const newest = await findNewestEntry(trx, tenantId);
        let checkpointAfter = checkpointBefore;
        if (newest !== undefined) {
          const key = storedKey(newest);
          await writeCheckpoint(trx, tenantId, {
            entryId: newest.entryId,
            createdAt: newest.createdAt,
            createdAtKey: key,
            runId,
          });
          checkpointAfter = newest.entryId;
        }
        await finishRun(trx, runId, {
          status: 'succeeded',
          counters,
          checkpointAfter,
          stopReason,
        });
        return { stopReason, checkpointAfter, ...after };
      });

      logger.info(
        { ...counters, stopReason: result.stopReason, alerts: result.alerts, ms: Date.now() - started },
        'sync succeeded',
      );
      return {
        tenantId,
        runId,
        status: 'succeeded',
        isBackfill,
        counters,
        stopReason: result.stopReason,
        checkpointBefore,
        checkpointAfter: result.checkpointAfter,
        alerts: result.alerts,
        fieldChanges: result.fieldChanges,
        durationMs: Date.now() - started,
        historyRequests: options.source.stats.historyRequests,
      };
    } catch (err) {
      const error = toGovtrailError(err, isDatabaseError(err) ? 'DATABASE' : 'INTERNAL');
      counters.httpRetries = options.source.stats.retries;
      rootLogger.error({ tenant: tenantId, runId, err: error, code: error.code }, 'sync failed');
      if (runId !== 0) {
        // The transaction rolled back: nothing it inserted remains. Record the failure on its own.
        const failed = { ...counters, entriesInserted: 0 };
        await finishRun(session, runId, {
          status: 'failed',
          counters: failed,
          checkpointAfter: checkpointBefore,
          stopReason: null,
          errorCode: error.code,
          errorMessage: error.message.slice(0, 2000),
        }).catch((e: unknown) => rootLogger.error({ err: e }, 'could not record the failed run'));
      }
      return {
        tenantId,
        runId,
        status: 'failed',
        isBackfill,
        counters: { ...counters, entriesInserted: 0 },
        stopReason: null,
        checkpointBefore,
        checkpointAfter: checkpointBefore,
        alerts: 0,
        fieldChanges: 0,
        durationMs: Date.now() - started,
        historyRequests: options.source.stats.historyRequests,
        error,
      };
    } finally {
      await unlockTenant(session, tenantId).catch(() => {});
    }
  });
}

function emptyCounters(): RunCounters {
  return {
    pagesFetched: 0,
    entriesFetched: 0,
    entriesInserted: 0,
    entriesRejected: 0,
    warnings: 0,
    httpRetries: 0,
  };
}

/** Errors raised by PostgreSQL (pg and PGlite both report a severity and an SQLSTATE code). */
function isDatabaseError(err: unknown): boolean {
  const e = err as { severity?: unknown; code?: unknown } | null;
  return typeof e?.severity === 'string' && typeof e.code === 'string' && /^[0-9A-Z]{5}$/.test(e.code);
}
