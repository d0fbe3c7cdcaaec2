/**
 * The life of one run (sync.md "One run"; integrity.md): the tenant lock and the ledger row around
 * one transaction, in which the kind's sequence pages the source through the entry writer
 * (`pageAndWrite`), then the change step, the findings' alerts, the checkpoint and the ledger's
 * close. run.ts (sync) and reconcile.ts are sequences handed to `executeRun`; a new kind of run is
 * one more short sequence.
 */
import { servedOf } from '../core/served-entry.js';
import { lookbackBound, storedKey } from '../core/stop-rule.js';
import type { HistoryPage } from '../core/wire.js';
import type { Logger } from '../runtime/logger.js';
import type { Database, Session } from '../store/database.js';
import type { Checkpoint } from '../store/read/checkpoint.js';
import { findLastRowHash, findNewestEntry, type StoredVersion } from '../store/read/stored-entries.js';
import { type AnalyzedTable, analyzeTables, staleTables } from '../store/statistics.js';
import { closeQuietRun, type JudgedState, type OpenedRecent, openRun } from '../store/write/run-frame.js';
import {
  finishRun,
  type ReconcileLedger,
  type RunCounters,
  type RunKind,
  unlockTenant,
  writeCheckpoint,
} from '../store/write/runs.js';
import { closeFailedRun, type PartialSummary, type RunState } from './close-failed-run.js';
import { EntryWriter } from './entry-writer.js';
import { FindingRecorder } from './finding-recorder.js';
import { isQuietPage, type PeekedListing, peekListing } from './quiet-run.js';
import {
  emptyCounters,
  type InsertTracker,
  type IntegrityCounts,
  type RunOptions,
  type RunSummary,
} from './run-types.js';

/** The state of one run inside its transaction, handed to the sequence of a kind of run. */
export interface RunContext {
  readonly trx: Session;
  readonly options: RunOptions;
  readonly tenantId: string;
  readonly runId: number;
  readonly checkpoint: Checkpoint | undefined;
  readonly isBackfill: boolean;
  readonly logger: Logger;
  readonly counters: RunCounters;
  readonly writer: EntryWriter;
  readonly findings: FindingRecorder;
}

/** What the sequence of a kind of run returns to the shared tail. */
export interface SequenceResult {
  readonly stopReason: 'checkpoint' | 'end_of_history';
  readonly reconcile?: ReconcileLedger;
}

/**
 * ANALYZE, once the run committed, of the tables whose statistics its changes made stale
 * (store/statistics.ts decides which, from the size of the change relative to the table: a
 * backfill into empty tables always, a small tenant's backfill into a large store not). Best
 * effort: a failure is logged, the run stands.
 */
async function refreshStatistics(
  database: Database,
  session: Session,
  tables: readonly AnalyzedTable[],
  logger: Logger,
): Promise<void> {
  if (tables.length === 0) return;
  const started = Date.now();
  try {
    // A server analyzes the slowest table on a second connection meanwhile; the embedded
    // database has one session.
    const alongside =
      database.kind === 'postgres'
        ? (work: (other: Session) => Promise<void>) => database.withSession(work)
        : undefined;
    await analyzeTables(session, tables, alongside);
    logger.debug({ ms: Date.now() - started, tables }, 'table statistics refreshed');
  } catch (err) {
    logger.warn(
      { err },
      'could not refresh table statistics (ANALYZE); queries may plan badly until autovacuum does',
    );
  }
}

/**
 * Runs one run of a kind for one tenant: takes the tenant's advisory lock (busy → a `skipped`
 * ledger row), opens the ledger row, and in one transaction runs `sequence`, then the change step,
 * the findings' alerts, the checkpoint (the newest stored entry by (created_at, entry_id)) and the
 * ledger's close. Never throws for a failed run: the summary carries the error, and the ledger row
 * records it (the transaction rolled back, so nothing the run wrote remains).
 */
export async function executeRun(
  kind: RunKind,
  options: RunOptions,
  sequence: (ctx: RunContext) => Promise<SequenceResult>,
  quiet?: QuietPlan,
): Promise<RunSummary> {
  const { database, tenantId } = options;
  const started = Date.now();
  const summary = (s: PartialSummary): RunSummary => ({
    kind,
    tenantId,
    ...s,
    durationMs: Date.now() - started,
    historyRequests: options.source.stats.historyRequests,
  });

  return database.withSession(async (session) => {
    const attempt = options.engineAttempt;
    const opened = await openRun(session, {
      tenantId,
      trigger: options.trigger,
      kind,
      slot: attempt?.slot,
      doneSlot: attempt?.retry === true && attempt.slot !== undefined,
      recordSkip: attempt === undefined,
      recent: options.pageSize,
    });
    if (!opened.locked) return summary(skipped(kind, options, opened.runId));
    const run: RunState = {
      kind,
      runId: opened.runId,
      checkpointBefore: opened.checkpoint?.entryId ?? null,
      isBackfill: opened.checkpoint === undefined && !opened.succeededBefore,
      counters: emptyCounters(),
    };
    let locked = true;
    try {
      if (opened.doneRunId !== undefined) return summary(doneInSlot(kind, options, opened.doneRunId));
      const { checkpoint } = opened;
      const logger = runStarted(options, run, opened.orphans, checkpoint);
      let runOptions = options;
      if (
        quiet !== undefined &&
        checkpoint !== undefined &&
        opened.recent[0]?.entryId === checkpoint.entryId
      ) {
        const listing = await peekListing(options.source, {
          pageSize: options.pageSize,
          maxPages: options.maxPages,
          stopAfter: quiet.stopAfter(checkpoint),
        });
        const outcome = await closeIfQuiet(session, options, run, checkpoint, opened, listing, quiet);
        if (outcome !== undefined) {
          locked = false;
          logger.info(
            { ...run.counters, stopReason: 'checkpoint', alerts: 0, quiet: true, ms: Date.now() - started },
            `${kind} succeeded`,
          );
          return summary(outcome);
        }
        runOptions = { ...options, source: listing.source };
      }
      const result = await session
        .transaction()
        .execute((trx) => runInTransaction(trx, runOptions, run, checkpoint, logger, sequence));

      await refreshStatistics(database, session, result.stale, logger);
      logger.info(
        { ...run.counters, stopReason: result.stopReason, alerts: result.alerts, ms: Date.now() - started },
        `${kind} succeeded`,
      );
      return summary({
        runId: run.runId,
        status: 'succeeded',
        isBackfill: run.isBackfill,
        counters: run.counters,
        stopReason: result.stopReason,
        checkpointBefore: run.checkpointBefore,
        checkpointAfter: result.checkpointAfter,
        alerts: result.alerts,
        fieldChanges: result.fieldChanges,
        findings: result.findings,
        ...(result.integrity !== undefined ? { integrity: result.integrity } : {}),
      });
    } catch (err) {
      return summary(await closeFailedRun(session, options, run, err));
    } finally {
      if (locked) await unlockTenant(session, tenantId).catch(() => {});
    }
  });
}

/** What the run's transaction gives the summary. */
interface TransactionResult {
  readonly stale: readonly AnalyzedTable[];
  readonly stopReason: 'checkpoint' | 'end_of_history';
  readonly checkpointAfter: string | null;
  readonly alerts: number;
  readonly fieldChanges: number;
  readonly findings: number;
  readonly integrity?: IntegrityCounts;
}

/**
 * Another process holds the tenant's lock: a `skipped` ledger row was recorded (none for an engine
 * attempt, which is tried again later).
 */
function skipped(kind: RunKind, options: RunOptions, runId: number): PartialSummary {
  options.logger.info(
    { tenant: options.tenantId, runId, kind },
    `another process is working on this tenant; ${kind} skipped`,
  );
  return notRun(runId);
}

/** The summary of a run that did not run: nothing read, nothing written. */
function notRun(runId: number): PartialSummary {
  return {
    runId,
    status: 'skipped',
    isBackfill: false,
    counters: emptyCounters(),
    stopReason: null,
    checkpointBefore: null,
    checkpointAfter: null,
    alerts: 0,
    fieldChanges: 0,
    findings: 0,
  };
}

/**
 * A retried job attempt whose slot already has a successful run of its kind (an earlier attempt
 * committed and lost its replica before the job was closed): nothing to run again. Found under the
 * tenant lock, so no run of the slot can be committing meanwhile.
 */
function doneInSlot(kind: RunKind, options: RunOptions, runId: number): PartialSummary {
  options.logger.info(
    { tenant: options.tenantId, kind, slot: options.engineAttempt?.slot?.toISOString(), runId },
    `${kind} of this slot already succeeded (its job was not closed); not run again`,
  );
  return { ...notRun(runId), alreadyDone: true };
}

/** Logs what opening the run found (orphans closed, the run started); the run's logger. */
function runStarted(
  options: RunOptions,
  run: RunState,
  orphans: number,
  checkpoint: Checkpoint | undefined,
): Logger {
  const { tenantId, logger: rootLogger } = options;
  if (orphans > 0)
    rootLogger.warn({ tenant: tenantId, orphans }, 'closed runs left unfinished by a dead process');
  const logger = rootLogger.child({ tenant: tenantId, runId: run.runId });
  logger.info(
    {
      kind: run.kind,
      checkpoint: run.checkpointBefore,
      backfill: checkpoint === undefined,
      lookbackMs: options.lookbackMs,
    },
    `${run.kind} started`,
  );
  return logger;
}

/** What lets a kind of run close without a transaction when its first page is quiet (quiet-run.ts). */
export interface QuietPlan {
  /** The kind's stop rule for a checkpoint: the quiet page must end the paging. */
  readonly stopAfter: (checkpoint: Checkpoint) => (page: HistoryPage) => boolean;
}

/**
 * The run's first page, fetched ahead: when it is quiet and ends the paging, and the change step
 * has nothing to do on a run that stores nothing, the run is closed here in one statement (lock
 * released) and its summary returned. Otherwise undefined: the run goes on with the listing.
 */
async function closeIfQuiet(
  session: Session,
  options: RunOptions,
  run: RunState,
  checkpoint: Checkpoint,
  opened: { readonly recent: OpenedRecent; readonly judged: JudgedState },
  listing: PeekedListing,
  quiet: QuietPlan,
): Promise<PartialSummary | undefined> {
  const { recent, judged } = opened;
  const page = listing.first;
  if (page === undefined) return undefined;
  const steps = options.changes;
  // A step with work on every run says whether the close can record it (an unchanged baseline's judgement).
  const mark = steps?.everyRun === true ? steps.quietClose?.(options.tenantId, judged, Date.now()) : null;
  if (mark === undefined) return undefined;
  const versions = new Map<string, StoredVersion>();
  for (const e of recent) if (e.version !== undefined) versions.set(e.entryId, e.version);
  const served = servedOf(page);
  if (!quiet.stopAfter(checkpoint)(page) || !isQuietPage(served, versions)) return undefined;
  await listing.close();
  const { counters } = run;
  counters.pagesFetched = 1;
  counters.entriesFetched = served.length;
  counters.entriesMatched = served.length;
  counters.httpRetries = options.source.stats.retries;
  options.onProgress?.({ pages: 1, entries: served.length, inserted: 0 });
  const { openAlerts } = await closeQuietRun(session, options.tenantId, run.runId, {
    pagesFetched: 1,
    entriesFetched: served.length,
    httpRetries: counters.httpRetries,
    checkpointEntryId: checkpoint.entryId,
    alertRules: options.resolveOnSuccess ?? [],
    ...(mark !== null ? { judged: mark.judged } : {}),
  });
  return {
    runId: run.runId,
    status: 'succeeded',
    isBackfill: false,
    counters,
    stopReason: 'checkpoint',
    checkpointBefore: checkpoint.entryId,
    checkpointAfter: checkpoint.entryId,
    alerts: 0,
    fieldChanges: 0,
    findings: 0,
    openAlerts,
  };
}

/**
 * Everything the run stores, in its one transaction: the kind's sequence (which writes the
 * entries), the change step, the checkpoint and the ledger's close.
 */
async function runInTransaction(
  trx: Session,
  options: RunOptions,
  run: RunState,
  checkpoint: Checkpoint | undefined,
  logger: Logger,
  sequence: (ctx: RunContext) => Promise<SequenceResult>,
): Promise<TransactionResult> {
  const { tenantId } = options;
  const { runId, counters, checkpointBefore } = run;
  const { ctx, tracker } = await startWriting(trx, options, run, checkpoint, logger);
  const { writer, findings } = ctx;
  const { stopReason, reconcile } = await sequence(ctx);
  counters.warnings += counters.entriesRejected;
  counters.httpRetries = options.source.stats.retries;

  const after = await changeStep(trx, options, run, writer, tracker, logger);
  const checkpointAfter = (await advanceCheckpoint(trx, tenantId, runId)) ?? checkpointBefore;
  await finishRun(trx, runId, {
    status: 'succeeded',
    counters,
    checkpointAfter,
    stopReason,
    reconcile,
  });
  // Decided here, where this transaction's own changes are still countable.
  const stale = counters.entriesInserted > 0 ? await staleTables(trx, logger) : [];
  return {
    stale,
    stopReason,
    checkpointAfter,
    alerts: after.alerts + findings.alerts,
    fieldChanges: after.fieldChanges,
    findings: findings.recorded,
    ...(reconcile !== undefined ? { integrity: reconcile } : {}),
  };
}

/** The run's writer, finding recorder and change tracker, inside the transaction: the context the sequence runs in. */
async function startWriting(
  trx: Session,
  options: RunOptions,
  run: RunState,
  checkpoint: Checkpoint | undefined,
  logger: Logger,
): Promise<{ ctx: RunContext; tracker: InsertTracker | undefined }> {
  const { tenantId } = options;
  const { runId, isBackfill, counters } = run;
  const lastHash = await findLastRowHash(trx, tenantId);
  const tracker = options.changes?.track?.({
    tenantId,
    runId,
    isBackfill,
    tenantWasEmpty: lastHash === null,
    logger,
  });
  const findings = new FindingRecorder(tenantId, runId, options.changes);
  const writer = new EntryWriter({
    tenantId,
    runId,
    counters,
    logger,
    findings,
    lastHash,
    // Served-not-stored entries older than this no incremental run was meant to pick up.
    backdatedBefore: checkpoint === undefined ? undefined : lookbackBound(checkpoint, options.lookbackMs),
    // 1 000: a batch's COPY payloads are held until written (up to three batches in flight);
    // against 2 000, a backfill peaks 7 MiB lower for the same CPU (bench/RESULTS.md (s)).
    batchSize: options.batchSize ?? 1000,
    useDigest: options.deep !== true,
    ...(tracker !== undefined ? { tracker } : {}),
  });
  const ctx: RunContext = {
    trx,
    options,
    tenantId,
    runId,
    checkpoint,
    isBackfill,
    logger,
    counters,
    writer,
    findings,
  };
  return { ctx, tracker };
}

/** The change step (field changes, alerts) over the run's new entries, in the run's transaction. */
async function changeStep(
  trx: Session,
  options: RunOptions,
  run: RunState,
  writer: EntryWriter,
  tracker: InsertTracker | undefined,
  logger: Logger,
): Promise<{ alerts: number; fieldChanges: number }> {
  if (options.changes === undefined) return { alerts: 0, fieldChanges: 0 };
  return options.changes.after(trx, {
    tenantId: options.tenantId,
    runId: run.runId,
    isBackfill: run.isBackfill,
    inserted: run.counters.entriesInserted,
    oldestNew: writer.oldestNew,
    tracker,
    logger,
  });
}

/**
 * Pages the history newest first and writes every page through the run's writer, until the
 * listing ends or `stopAfter` says a page is the last one needed. Returns why paging stopped.
 */
export async function pageAndWrite(
  ctx: RunContext,
  stopAfter?: (page: HistoryPage) => boolean,
): Promise<'checkpoint' | 'end_of_history'> {
  const { options, counters, writer, trx } = ctx;
  try {
    for await (const page of options.source.listHistory({
      pageSize: options.pageSize,
      maxPages: options.maxPages,
      ...(stopAfter !== undefined ? { stopAfter } : {}),
    })) {
      counters.pagesFetched++;
      const served = servedOf(page);
      counters.entriesFetched += served.length;
      await writer.add(trx, served);
      options.onProgress?.({
        pages: counters.pagesFetched,
        entries: counters.entriesFetched,
        inserted: counters.entriesInserted,
      });
      if (stopAfter?.(page) === true) {
        await writer.finish(trx);
        return 'checkpoint';
      }
    }
  } catch (err) {
    // Nothing may run after ROLLBACK: let a write in flight finish first.
    await writer.settle();
    throw err;
  }
  await writer.finish(trx);
  return 'end_of_history';
}

/**
 * Moves the checkpoint to the newest stored entry — by (created_at, entry_id), never "the last one
 * seen" — and returns its id (undefined while the tenant has no entries).
 */
async function advanceCheckpoint(trx: Session, tenantId: string, runId: number): Promise<string | undefined> {
  const newest = await findNewestEntry(trx, tenantId);
  if (newest === undefined) return undefined;
  await writeCheckpoint(trx, tenantId, {
    entryId: newest.entryId,
    createdAt: newest.createdAt,
    createdAtKey: storedKey(newest),
    runId,
  });
  return newest.entryId;
}
