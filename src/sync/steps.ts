/**
 * The steps every kind of run is made of (sync.md "One run"; integrity.md): the tenant lock and
 * the ledger row around one transaction, the batched write of what the source served, the
 * comparison of re-served entries with what is stored, the change step, the checkpoint. run.ts
 * (sync) and reconcile.ts sequence them; a new kind of run is one more short sequence.
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import { diffSnapshots, type FieldChange } from '../core/diff.js';
import { type GovtrailError, toGovtrailError } from '../core/errors.js';
import { IdFilter } from '../core/id-filter.js';
import { contentHash } from '../core/normalise/canonical.js';
import { MAX_ENTRY_DEPTH, nestsDeeperThan, pruneDeeperThan, tooDeepReason } from '../core/normalise/depth.js';
import { type EntryKey, entryKeyOf, normaliseEntry } from '../core/normalise/entry.js';
import type { AnnotationRow, EntryRow, NormalisedEntry } from '../core/normalise/types.js';
import { lookbackBound, storedKey } from '../core/stop-rule.js';
import type { HistoryPage, WireSettings } from '../core/wire.js';
import type { Logger } from '../runtime/logger.js';
import type { TableCopy } from '../store/copy.js';
import type { Database, Session } from '../store/database.js';
import { type AnalyzedTable, analyzeTables, staleTables } from '../store/statistics.js';
import {
  type Discrepancy,
  type RecordedDiscrepancy,
  recordDiscrepancies,
} from '../store/write/discrepancies.js';
import {
  type EncodedEntries,
  encodeEntries,
  findLastRowHash,
  findNewestEntry,
  findStoredVersions,
  insertRejected,
  joinEncodedEntries,
  type RejectedInput,
  type StoredVersion,
  writeEncodedEntries,
} from '../store/write/entries.js';
import { type ChronoEntry, findChronoEntries } from '../store/write/field-changes.js';
import {
  type Checkpoint,
  discardRun,
  failOrphanedRuns,
  findSucceededInSlot,
  finishRun,
  hasSucceededBefore,
  type ReconcileLedger,
  type RunCounters,
  type RunKind,
  type RunTrigger,
  readCheckpoint,
  recordSkippedRun,
  startRun,
  tryLockTenant,
  unlockTenant,
  writeCheckpoint,
} from '../store/write/runs.js';
import { groupServed, type ServedGroups } from './served.js';

/** What a run needs of the tenant API: a pager that can be told to stop before fetching more. */
export interface HistorySource {
  listHistory(options: {
    pageSize: number;
    maxPages: number;
    /** Called on each page before the next one is requested; true ends the listing there. */
    stopAfter?: (page: HistoryPage) => boolean;
  }): AsyncIterable<HistoryPage>;
  readonly stats: { readonly retries: number; readonly historyRequests: number };
}

/** Follows the entries a run inserts, batch by batch. */
export interface InsertTracker {
  /**
   * Entries one batch inserts, in insertion order (batches come newest first), a slice at a time as
   * the batch is prepared — while the batch before it is being written.
   */
  inserted(entries: readonly NormalisedEntry[]): void;
  /**
   * Once a batch is prepared: what it adds to the batch's write (what `inserted` found since the
   * last call); undefined: nothing.
   */
  takeWrite(): TrackedWrite | undefined;
}

/** Rows a tracker writes with a batch, after the batch's own, in the same query. */
export interface TrackedWrite {
  /** Tables and their rows, encoded: they may refer to the batch's entries. */
  readonly copies: readonly TableCopy[];
  /** Called once they are written. */
  written(): void;
}

/** A finding against the source with what its alert tells about the entry. */
export interface Finding {
  readonly recorded: RecordedDiscrepancy;
  /** The entry as served (as stored, for a missing or expired one). */
  readonly entry: EntryRow;
  readonly annotations: readonly AnnotationRow[];
  readonly snapshot: WireSettings | null;
  /** For a rewrite: the diff from the stored snapshot to the served one. */
  readonly changes: readonly FieldChange[];
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
  /** New findings against the source, as they are recorded: returns how many alerts it wrote. */
  findings?(
    trx: Session,
    context: { tenantId: string; runId: number },
    found: readonly Finding[],
  ): Promise<number>;
}

export interface RunProgress {
  readonly pages: number;
  readonly entries: number;
  readonly inserted: number;
}

/** What every kind of run is given. */
export interface RunOptions {
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
  readonly onProgress?: (p: RunProgress) => void;
  /**
   * Set by the job engine for a scheduled job's attempt: a busy tenant lock writes no `skipped` row
   * (the job is tried again later), and a failed attempt with `retriesLeft` removes its own ledger
   * row instead of closing it as failed, so a failure retried inside its slot is recorded once, by
   * the last attempt. `slot` goes into the ledger row.
   */
  readonly engineAttempt?: EngineAttempt;
}

/** What the job engine tells a run about the attempt it is (see RunOptions.engineAttempt). */
export interface EngineAttempt {
  readonly retriesLeft: boolean;
  readonly slot?: Date;
  /**
   * Not the job's first attempt: an earlier one may have committed its run and lost its replica
   * before the job was closed. The run then looks for a success in its slot first (under the
   * tenant lock) and, finding one, does not run again.
   */
  readonly retry?: boolean;
}

/** What a reconcile found, beside the counters every run keeps (changed and matched are there). */
export type IntegrityCounts = ReconcileLedger;

export interface RunSummary {
  readonly kind: RunKind;
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
  /** New findings against the source recorded (source_discrepancy rows). */
  readonly findings: number;
  readonly durationMs: number;
  readonly historyRequests: number;
  /** A reconcile's counts and coverage (undefined for a sync). */
  readonly integrity?: IntegrityCounts;
  /**
   * Set when a retried job attempt found its slot already done (`runId` is that run's): nothing
   * ran, and no ledger row was written. The status is then `skipped`.
   */
  readonly alreadyDone?: true;
  readonly error?: GovtrailError;
}

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

export function emptyCounters(): RunCounters {
  return {
    pagesFetched: 0,
    entriesFetched: 0,
    entriesInserted: 0,
    entriesRejected: 0,
    warnings: 0,
    httpRetries: 0,
    entriesMatched: 0,
    entriesChanged: 0,
  };
}

/**
 * ANALYZE, once the run committed, of the tables whose statistics its changes made stale
 * (store/statistics.ts decides which, from the size of the change relative to the table: a
 * backfill into empty tables always, a small tenant's backfill into a large store not). Best
 * effort: a failure is logged, the run stands.
 */
async function refreshStatistics(
  session: Session,
  tables: readonly AnalyzedTable[],
  logger: Logger,
): Promise<void> {
  if (tables.length === 0) return;
  const started = Date.now();
  try {
    await analyzeTables(session, tables);
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
    if (!(await tryLockTenant(session, tenantId))) return summary(await skipRun(session, kind, options));
    const run: RunState = {
      kind,
      runId: 0,
      checkpointBefore: null,
      isBackfill: false,
      counters: emptyCounters(),
    };
    try {
      const done = await findDoneInSlot(session, kind, options);
      if (done !== undefined) return summary(done);
      const { checkpoint, logger } = await openRun(session, options, run);
      const result = await session
        .transaction()
        .execute((trx) => runInTransaction(trx, options, run, checkpoint, logger, sequence));

      await refreshStatistics(session, result.stale, logger);
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
      await unlockTenant(session, tenantId).catch(() => {});
    }
  });
}

/** A run as far as it got: filled in step by step, so that a failure records what is known. */
interface RunState {
  readonly kind: RunKind;
  /** 0 until the ledger row exists. */
  runId: number;
  checkpointBefore: string | null;
  isBackfill: boolean;
  readonly counters: RunCounters;
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

type PartialSummary = Omit<RunSummary, 'kind' | 'tenantId' | 'durationMs' | 'historyRequests'>;

/**
 * Another process holds the tenant's lock: a `skipped` ledger row (none for an engine attempt,
 * which is tried again later).
 */
async function skipRun(session: Session, kind: RunKind, options: RunOptions): Promise<PartialSummary> {
  const { tenantId } = options;
  const runId =
    options.engineAttempt !== undefined
      ? 0
      : await recordSkippedRun(session, tenantId, options.trigger, kind);
  options.logger.info(
    { tenant: tenantId, runId, kind },
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
 * committed and lost its replica before the job was closed): nothing to run again. Looked up under
 * the tenant lock, so no run of the slot can be committing meanwhile.
 */
async function findDoneInSlot(
  session: Session,
  kind: RunKind,
  options: RunOptions,
): Promise<PartialSummary | undefined> {
  const attempt = options.engineAttempt;
  if (attempt?.retry === true && attempt.slot !== undefined) {
    const done = await findSucceededInSlot(session, options.tenantId, kind, attempt.slot);
    if (done !== undefined) {
      options.logger.info(
        { tenant: options.tenantId, kind, slot: attempt.slot.toISOString(), runId: done },
        `${kind} of this slot already succeeded (its job was not closed); not run again`,
      );
      return { ...notRun(done), alreadyDone: true };
    }
  }
  return undefined;
}

/**
 * Opens the ledger row, outside the run's transaction so that a failure can still close it: runs a
 * dead process left unfinished are closed first, then the checkpoint is read and the run started.
 */
async function openRun(
  session: Session,
  options: RunOptions,
  run: RunState,
): Promise<{ checkpoint: Checkpoint | undefined; logger: Logger }> {
  const { tenantId, logger: rootLogger } = options;
  const orphans = await failOrphanedRuns(session, tenantId);
  if (orphans > 0)
    rootLogger.warn({ tenant: tenantId, orphans }, 'closed runs left unfinished by a dead process');
  const checkpoint = await readCheckpoint(session, tenantId);
  run.checkpointBefore = checkpoint?.entryId ?? null;
  run.isBackfill = checkpoint === undefined && !(await hasSucceededBefore(session, tenantId));
  run.runId = await startRun(
    session,
    tenantId,
    options.trigger,
    run.checkpointBefore,
    run.kind,
    options.engineAttempt?.slot,
  );
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
  return { checkpoint, logger };
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
    batchSize: options.batchSize ?? 2000,
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
 * A failed run: the transaction rolled back, so nothing it wrote remains. The failure is recorded
 * on its own, or, for an engine attempt that will be retried, its ledger row is removed.
 */
async function closeFailedRun(
  session: Session,
  options: RunOptions,
  run: RunState,
  err: unknown,
): Promise<PartialSummary> {
  const { tenantId, logger: rootLogger } = options;
  const { kind, runId, counters, checkpointBefore } = run;
  const error = toGovtrailError(err, isDatabaseError(err) ? 'DATABASE' : 'INTERNAL');
  counters.httpRetries = options.source.stats.retries;
  rootLogger.error({ tenant: tenantId, runId, err: error, code: error.code }, `${kind} failed`);
  // The transaction rolled back: nothing it wrote remains. Record the failure on its own.
  const failed = { ...counters, entriesInserted: 0, entriesChanged: 0, entriesMatched: 0 };
  if (runId !== 0 && options.engineAttempt?.retriesLeft === true) {
    await discardRun(session, runId).catch((e: unknown) =>
      rootLogger.error({ err: e }, 'could not discard the attempt to be retried'),
    );
  } else if (runId !== 0) {
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
    runId,
    status: 'failed',
    isBackfill: run.isBackfill,
    counters: failed,
    stopReason: null,
    checkpointBefore,
    checkpointAfter: checkpointBefore,
    alerts: 0,
    fieldChanges: 0,
    findings: 0,
    error,
  };
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
      counters.entriesFetched += page.entries.length;
      await writer.add(trx, page.entries);
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

/** What the writer tells the sequence about one written batch. */
export interface WrittenBatch {
  /** The key of every entry of the batch with an id, once each (the first served copy of a repeated id). */
  readonly served: readonly EntryKey[];
  /** Those that were not stored, now inserted. */
  readonly fresh: readonly NormalisedEntry[];
  /** How many of `fresh` are dated behind `checkpoint − lookback`, recorded as `backdated`. */
  readonly backdated: number;
}

/** A served version of an entry govtrail holds with other content. */
export interface ServedVersion {
  readonly served: NormalisedEntry;
  /** Content hash of the version govtrail holds. */
  readonly storedHash: Buffer;
  readonly servedHash: Buffer;
}

/** A served entry that can be keyed, waiting in a batch. */
interface Served {
  readonly raw: unknown;
  readonly key: EntryKey;
}

/** A batch taken from the pager: its served entries grouped by id, its rejects, its lookup queued. */
interface SealedBatch {
  readonly groups: ServedGroups<Served>;
  readonly rejects: RejectedInput[];
  /** What the database holds of the batch's ids, as of every batch but the previous one written. */
  readonly stored: Promise<Map<string, StoredVersion>>;
}

/** A batch classified and encoded, ready to be written. */
interface PreparedBatch {
  readonly sealed: SealedBatch;
  /** The entries to insert, by id (insertion order). */
  readonly fresh: Map<string, NormalisedEntry>;
  readonly encoded: EncodedEntries;
  readonly rewritten: ServedVersion[];
  readonly conflicting: ServedVersion[];
  /** What the tracker writes with the batch's entries. */
  readonly tracked: TrackedWrite | undefined;
}

/**
 * Writes what the source serves, in batches: normalises each entry (keeping rejects), drops an id
 * served twice with the same content, inserts what is not stored (one COPY per table, the hash
 * chain continued), and compares each re-served stored entry with the store by content hash — a
 * difference is recorded as `changed_at_source` (sync.md S12), the stored original untouched. What
 * any run finds besides (integrity.md): a stored entry dated behind `checkpoint − lookback` is
 * recorded as `backdated`, and an id served with another content in the same listing as
 * `conflicting_ids` (the first copy stored, the other in the discrepancy row).
 *
 * A pipeline, so that govtrail and the database work at the same time instead of taking turns:
 * while batch N is written (the database's work), batch N+1 is classified, hashed and encoded
 * (govtrail's) and batch N+2 is fetched. The connection does one thing at a time, in the order of
 * the `lane`: lookup(N+1) goes before write(N), so batch N+1's stored versions are known before
 * write(N) starts; what that lookup cannot see yet — batch N's own entries — comes from batch N
 * in memory. At most three batches are held: one filling, one prepared, one being written. A run
 * on a tenant with no entries yet (a backfill) keeps the ids it stores in a fixed-size filter and
 * asks the database only about those the filter cannot rule out: usually none, so no lookup.
 */
export class EntryWriter {
  /** Oldest (created_at key, entry_id) among the inserted entries. */
  oldestNew: { key: string; entryId: string } | undefined;
  /** Ids found served with more than one content (once per batch they appear in). */
  conflicting = 0;
  private batch: Served[] = [];
  private rejected: RejectedInput[] = [];
  /** Batches sealed so far. */
  private sealedBatches = 0;
  /** The connection's work in order, chained: a failure ends it (every later step rejects). */
  private lane: Promise<void> = Promise.resolve();
  /** The batch sealed last, being prepared: its write is queued once the next batch's lookup is. */
  private pending: Promise<PreparedBatch> | undefined;
  /** The write queued last. */
  private lastWrite: Promise<void> | undefined;
  /** row_hash the next prepared batch chains from. */
  private lastHash: Buffer | null;
  /**
   * For a tenant that had no entries when the run began: the ids this run prepared for storing, so
   * that a batch asks the database only about those it might hold. Undefined: every id is asked.
   */
  private readonly storedByRun: IdFilter | undefined;

  constructor(
    private readonly o: {
      readonly tenantId: string;
      readonly runId: number;
      readonly counters: RunCounters;
      readonly logger: Logger;
      readonly findings: FindingRecorder;
      readonly lastHash: Buffer | null;
      /** createdAt key behind which a newly stored entry is `backdated`; undefined: none is. */
      readonly backdatedBefore: string | undefined;
      readonly batchSize: number;
      readonly tracker?: InsertTracker;
    },
  ) {
    this.lastHash = o.lastHash;
    // No row hash: the tenant has no rows, so what is stored is what this run stores.
    this.storedByRun = o.lastHash === null ? new IdFilter() : undefined;
  }

  /**
   * Called with each written batch, inside the transaction, before the next is written: what a
   * kind of run adds to the write (reconcile classifies new entries and records the served ids).
   */
  onBatch: ((trx: Session, batch: WrittenBatch) => Promise<void>) | undefined;

  /** Takes one page's raw entries; seals a batch once enough are waiting. */
  async add(trx: Session, raws: readonly unknown[]): Promise<void> {
    for (const raw of raws) {
      // Hashing and storing recurse: an entry nested too deep for them is rejected, not a failed run.
      if (nestsDeeperThan(raw, MAX_ENTRY_DEPTH)) {
        this.rejectTooDeep(raw);
        continue;
      }
      // Only the key now: most served entries of a reconcile (and of a sync's lookback window) are
      // stored already, and need no more than a content hash.
      const key = entryKeyOf(raw);
      if (key !== undefined) this.batch.push({ raw, key });
      else this.reject(raw);
    }
    if (this.batch.length + this.rejected.length >= this.nextBatchSize()) await this.seal(trx);
  }

  /**
   * The size of the batch filling now: the first batches are smaller (FIRST_BATCH, then doubling up
   * to batchSize), so that the database gets its first rows to write while the listing has barely
   * begun instead of a full batch later (a batch is written once the next one is sealed).
   */
  private nextBatchSize(): number {
    return Math.min(this.o.batchSize, FIRST_BATCH * 2 ** Math.min(this.sealedBatches, 16));
  }

  /** Writes what is left; call once the source is exhausted (or the stop rule ended paging). */
  async finish(trx: Session): Promise<void> {
    if (this.batch.length > 0 || this.rejected.length > 0) await this.seal(trx);
    if (this.pending !== undefined) this.queueWrite(trx, this.pending);
    this.pending = undefined;
    await this.lane;
  }

  /** After a paging failure: let the connection's work in flight end before the transaction rolls back. */
  async settle(): Promise<void> {
    await this.pending?.catch(() => {});
    await this.lane.catch(() => {});
  }

  private reject(raw: unknown): void {
    this.rejected.push(this.rejection(raw));
  }

  /** A raw entry that cannot be stored as rows, logged, with the reason it is kept aside. */
  private rejection(raw: unknown): RejectedInput {
    const n = normaliseEntry(this.o.tenantId, raw);
    const reason = n.ok ? 'entry could not be keyed' : n.reason;
    this.o.logger.warn({ reason }, 'entry rejected: kept in govtrail.rejected_entry');
    return { reason, raw };
  }

  private rejectTooDeep(raw: unknown): void {
    const reason = tooDeepReason();
    this.rejected.push({ reason, raw: pruneDeeperThan(raw) });
    this.o.logger.warn({ reason }, 'entry rejected: kept in govtrail.rejected_entry');
  }

  /** Runs `step` on the connection after everything queued before it; a failure ends the lane. */
  private queue<T>(step: () => Promise<T>): Promise<T> {
    const done = this.lane.then(step);
    this.lane = done.then(() => {});
    // Awaited later (by the step's consumer, by finish or settle): not unhandled meanwhile.
    done.catch(() => {});
    this.lane.catch(() => {});
    return done;
  }

  /**
   * Takes the waiting batch: queues its lookup, then the write of the batch before it, and starts
   * preparing it. Waits first for the write before that one, so that memory stays bounded.
   */
  private async seal(trx: Session): Promise<void> {
    this.sealedBatches++;
    if (this.lastWrite !== undefined) await this.lastWrite;
    const entries = this.batch;
    const rejects = this.rejected;
    this.batch = [];
    this.rejected = [];
    // The same entry may be served twice (on two pages, or twice in one page): the first copy is
    // stored or compared; another copy with other content is a conflicting version, kept.
    const groups = groupServed(entries);
    const ids = this.idsToLookUp(groups);
    const stored =
      ids.length === 0
        ? Promise.resolve(new Map())
        : this.queue(() => findStoredVersions(trx, this.o.tenantId, ids));
    const previous = this.pending;
    if (previous !== undefined) this.queueWrite(trx, previous);
    const prepared = this.prepare({ groups, rejects, stored }, previous);
    prepared.catch(() => {});
    this.pending = prepared;
  }

  /**
   * The batch's ids the database may hold: all of them, or, for a tenant that began the run empty,
   * those the run's filter cannot rule out. The filter holds every batch prepared before the
   * previous one (sealing waited for that one's write, hence for its preparation); the previous
   * batch is looked up in memory.
   */
  private idsToLookUp(groups: ServedGroups<Served>): string[] {
    const filter = this.storedByRun;
    const ids = [...groups.first.keys()];
    return filter === undefined ? ids : ids.filter((id) => filter.mightHold(id));
  }

  private queueWrite(trx: Session, prepared: Promise<PreparedBatch>): void {
    this.lastWrite = this.queue(async () => this.write(trx, await prepared));
  }

  /**
   * Classifies a sealed batch against what is stored (the database's answer, and the previous
   * batch, which that answer cannot hold yet), normalises and encodes what is new, chained on the
   * previous batch's last row hash.
   */
  private async prepare(
    sealed: SealedBatch,
    previous: Promise<PreparedBatch> | undefined,
  ): Promise<PreparedBatch> {
    const before = previous === undefined ? undefined : await previous;
    const inDatabase = await sealed.stored;
    const { tenantId, runId } = this.o;
    const heldVersion = (id: string): StoredVersion | undefined => {
      const held = inDatabase.get(id);
      if (held !== undefined) return held;
      const written = before?.fresh.get(id);
      return written === undefined ? undefined : { contentHash: contentHash(written.entry.raw), runId };
    };
    // In slices, as encoding is: the write in flight must not wait for a whole batch's classifying
    // (normalising each new entry, hashing each held one) to read the database's replies.
    const classified: ClassifiedBatch = { fresh: [], rewritten: [], conflicting: [], rejected: [] };
    await inSlices([...sealed.groups.first.values()], (slice) =>
      classifyServed(tenantId, runId, slice, sealed.groups, heldVersion, this.o.counters, classified),
    );
    // Kept with this batch: the batch filling now may already be the last one sealed.
    for (const raw of classified.rejected) sealed.rejects.push(this.rejection(raw));
    const fresh = new Map<string, NormalisedEntry>();
    for (const e of classified.fresh) {
      fresh.set(e.entry.entryId, e);
      this.storedByRun?.add(e.entry.entryId);
    }
    const { encoded, tracked } = await this.encodeInSlices(classified.fresh);
    return {
      sealed,
      fresh,
      encoded,
      rewritten: classified.rewritten,
      conflicting: classified.conflicting,
      tracked,
    };
  }

  /**
   * Encodes new entries (hash chain continued) and hands them to the tracker, a slice at a time
   * with a turn of the event loop between slices: a whole batch at once would hold the loop for
   * tens of milliseconds, during which the write in flight sends nothing more (the database idles
   * once it has read what the socket holds) and the pager's next request waits.
   */
  private async encodeInSlices(
    entries: readonly NormalisedEntry[],
  ): Promise<{ encoded: EncodedEntries; tracked: PreparedBatch['tracked'] }> {
    const parts: EncodedEntries[] = [];
    const tracker = this.o.tracker;
    await inSlices(entries, (slice) => {
      const part = encodeEntries(this.o.runId, slice, this.lastHash);
      this.lastHash = part.lastHash;
      parts.push(part);
      if (slice.length > 0) tracker?.inserted(slice);
    });
    return { encoded: joinEncodedEntries(parts), tracked: tracker?.takeWrite() };
  }

  /** Stores a prepared batch and what it found, on the connection, in the lane's turn. */
  private async write(trx: Session, batch: PreparedBatch): Promise<void> {
    const { tenantId, runId, counters } = this.o;
    const fresh = [...batch.fresh.values()];
    counters.entriesInserted += await writeEncodedEntries(trx, batch.encoded, batch.tracked?.copies);
    batch.tracked?.written();
    this.noteFresh(fresh);
    counters.entriesRejected += await insertRejected(trx, tenantId, runId, batch.sealed.rejects);
    const backdated = await this.recordFindings(trx, batch, fresh);
    await this.onBatch?.(trx, {
      served: [...batch.sealed.groups.first.values()].map((e) => e.key),
      fresh,
      backdated,
    });
  }

  /** Counts and logs the warnings of entries just stored, and keeps the oldest of them. */
  private noteFresh(fresh: readonly NormalisedEntry[]): void {
    const { counters, logger } = this.o;
    for (const e of fresh) {
      counters.warnings += e.warnings.length;
      if (e.warnings.length > 0)
        logger.warn({ entryId: e.entry.entryId, warnings: e.warnings }, 'entry stored with warnings');
      const k = { key: e.entry.createdAtKey, entryId: e.entry.entryId };
      const o = this.oldestNew;
      if (o === undefined || k.key < o.key || (k.key === o.key && k.entryId < o.entryId)) this.oldestNew = k;
    }
  }

  /** Records a written batch's rewritten, backdated and conflicting entries; returns how many were backdated. */
  private async recordFindings(
    trx: Session,
    batch: PreparedBatch,
    fresh: readonly NormalisedEntry[],
  ): Promise<number> {
    const { counters, logger } = this.o;
    const { rewritten, conflicting } = batch;
    if (rewritten.length > 0) {
      counters.entriesChanged += rewritten.length;
      logger.warn(
        { entries: rewritten.map((r) => r.served.entry.entryId).slice(0, 20), count: rewritten.length },
        'the source serves stored entries with different content: recorded as changed_at_source',
      );
      await this.o.findings.rewritten(trx, rewritten);
    }
    const backdated = this.findBackdated(fresh);
    if (backdated.length > 0) {
      logger.warn(
        { entries: backdated.map((e) => e.entry.entryId).slice(0, 20), count: backdated.length },
        'the source serves entries dated behind checkpoint - lookback: stored, and recorded as backdated',
      );
      await this.o.findings.backdated(trx, backdated);
    }
    if (conflicting.length > 0) {
      const ids = new Set(conflicting.map((c) => c.served.entry.entryId));
      this.conflicting += ids.size;
      logger.warn(
        { entries: [...ids].slice(0, 20), count: ids.size },
        'the source serves one id with different contents: both kept, recorded as conflicting_ids',
      );
      await this.o.findings.conflicting(trx, conflicting);
    }
    return backdated.length;
  }

  /** The entries just stored that are dated behind `checkpoint − lookback`. */
  private findBackdated(fresh: readonly NormalisedEntry[]): NormalisedEntry[] {
    const before = this.o.backdatedBefore;
    return before === undefined ? [] : fresh.filter((e) => e.entry.createdAtKey < before);
  }
}

/** Entries of a run's first batch; each next one is twice as large, up to the batch size. */
const FIRST_BATCH = 250;

/** Entries classified or encoded between two turns of the event loop (about 10 ms of work). */
const PREPARE_SLICE = 250;

/**
 * `each` over `items` a slice of PREPARE_SLICE at a time (once with none when there are none), a
 * turn of the event loop before each: pending I/O callbacks (the write's replies) run between them.
 */
async function inSlices<T>(items: readonly T[], each: (slice: readonly T[]) => void): Promise<void> {
  for (let i = 0; i === 0 || i < items.length; i += PREPARE_SLICE) {
    await nextTurn();
    each(items.slice(i, i + PREPARE_SLICE));
  }
}

/** A batch's served entries sorted out against what govtrail holds. */
interface ClassifiedBatch {
  /** Not held: to insert, normalised. */
  readonly fresh: NormalisedEntry[];
  /** Held with another content, stored by an earlier run and not served beside it: the source rewrote them. */
  readonly rewritten: ServedVersion[];
  /** Another version of an id held or stored now: served twice with different contents. */
  readonly conflicting: ServedVersion[];
  /** Raw entries that do not normalise. */
  readonly rejected: unknown[];
}

/**
 * Sorts served entries (first copies of their ids, from `groups`) by what is held of each id (see
 * EntryWriter) into `out`; counts the matched ones.
 */
function classifyServed(
  tenantId: string,
  runId: number,
  unique: readonly Served[],
  { firstHashes, others }: ServedGroups<Served>,
  heldVersion: (id: string) => StoredVersion | undefined,
  counters: RunCounters,
  out: ClassifiedBatch,
): void {
  /** Another version of an id govtrail holds (or stores now) with `storedHash`. */
  const conflict = (raw: unknown, storedHash: Buffer, servedHash: Buffer): void => {
    const n = normaliseEntry(tenantId, raw);
    if (n.ok) out.conflicting.push({ served: n.value, storedHash, servedHash });
    else out.rejected.push(raw);
  };
  for (const e of unique) {
    const id = e.key.entryId;
    const held = heldVersion(id);
    const more = others.get(id) ?? [];
    if (held === undefined) {
      const n = normaliseEntry(tenantId, e.raw);
      if (n.ok) out.fresh.push(n.value);
      else out.rejected.push(e.raw);
      for (const o of more) conflict(o.served.raw, firstHashes.get(id) as Buffer, o.hash);
      continue;
    }
    const servedHash = firstHashes.get(id) ?? contentHash(e.raw);
    const heldServed =
      servedHash.equals(held.contentHash) || more.some((o) => o.hash.equals(held.contentHash));
    if (heldServed) counters.entriesMatched++;
    if (!servedHash.equals(held.contentHash)) {
      // Stored by this very run from an earlier batch, or served beside the held version: the
      // listing serves the id twice. Otherwise the source rewrote it.
      if (held.runId === runId || heldServed) conflict(e.raw, held.contentHash, servedHash);
      else {
        const n = normaliseEntry(tenantId, e.raw);
        if (n.ok) out.rewritten.push({ served: n.value, storedHash: held.contentHash, servedHash });
      }
    }
    for (const o of more)
      if (!o.hash.equals(held.contentHash)) conflict(o.served.raw, held.contentHash, o.hash);
  }
}

/**
 * Records findings against the source (source_discrepancy) and, for the new ones, hands them to
 * the change step for alerts — in the run's transaction.
 */
export class FindingRecorder {
  /** New findings recorded so far. */
  recorded = 0;
  /** Alerts written for them. */
  alerts = 0;

  constructor(
    private readonly tenantId: string,
    private readonly runId: number,
    private readonly changes: ChangeStep | undefined,
  ) {}

  /** Re-served entries whose content differs from the stored one. */
  async rewritten(trx: Session, items: readonly ServedVersion[]): Promise<void> {
    await this.versions(trx, 'changed_at_source', items);
  }

  /** Other contents served under an id the same listing serves (and govtrail holds) otherwise. */
  async conflicting(trx: Session, items: readonly ServedVersion[]): Promise<void> {
    await this.versions(trx, 'conflicting_ids', items);
  }

  /** Served versions that differ from the one held, recorded under `kind` and alerted with the diff. */
  private async versions(
    trx: Session,
    kind: 'changed_at_source' | 'conflicting_ids',
    items: readonly ServedVersion[],
  ): Promise<void> {
    const found = items.map(({ served, storedHash, servedHash }) => ({
      served,
      discrepancy: {
        entryId: served.entry.entryId,
        kind,
        entryCreatedAt: served.entry.createdAtKey,
        storedSha256: storedHash.toString('hex'),
        sourceSha256: servedHash.toString('hex'),
        sourceRaw: served.entry.raw,
      },
    }));
    const recorded = await this.record(
      trx,
      found.map((f) => f.discrepancy),
    );
    if (recorded.length === 0 || this.changes?.findings === undefined) return;
    const storedEntries = await findChronoEntries(
      trx,
      this.tenantId,
      recorded.map((r) => r.entryId),
    );
    const servedByVersion = new Map(
      found.map((f) => [`${f.discrepancy.entryId}:${f.discrepancy.sourceSha256}`, f.served]),
    );
    await this.alert(
      trx,
      recorded.map((r) => {
        const served = servedByVersion.get(`${r.entryId}:${r.sourceSha256}`) as NormalisedEntry;
        return {
          recorded: r,
          entry: served.entry,
          annotations: served.annotations,
          snapshot: served.snapshotWire,
          changes: diffSnapshots(storedEntries.get(r.entryId)?.snapshot ?? null, served.snapshotWire),
        };
      }),
    );
  }

  /** Entries served now and stored by this run, dated behind what incremental runs look at. */
  async backdated(trx: Session, entries: readonly NormalisedEntry[]): Promise<void> {
    const recorded = await this.record(
      trx,
      entries.map((e) => ({
        entryId: e.entry.entryId,
        kind: 'backdated',
        entryCreatedAt: e.entry.createdAtKey,
        storedSha256: null,
        sourceSha256: contentHash(e.entry.raw).toString('hex'),
        sourceRaw: e.entry.raw,
      })),
    );
    const byId = new Map(entries.map((e) => [e.entry.entryId, e]));
    await this.alert(
      trx,
      recorded.map((r) => {
        const e = byId.get(r.entryId) as NormalisedEntry;
        return {
          recorded: r,
          entry: e.entry,
          annotations: e.annotations,
          snapshot: e.snapshotWire,
          changes: [],
        };
      }),
    );
  }

  /** Stored entries the source no longer serves (missing_at_source or expired_at_source). */
  async gone(
    trx: Session,
    items: ReadonlyArray<{
      stored: ChronoEntry;
      storedHash: Buffer;
      kind: 'missing_at_source' | 'expired_at_source';
    }>,
    toEntryRow: (e: ChronoEntry) => EntryRow,
  ): Promise<void> {
    const recorded = await this.record(
      trx,
      items.map(({ stored, storedHash, kind }) => ({
        entryId: stored.entryId,
        kind,
        entryCreatedAt: stored.posAt,
        storedSha256: storedHash.toString('hex'),
        sourceSha256: null,
        sourceRaw: null,
      })),
    );
    const byId = new Map(items.map((i) => [i.stored.entryId, i.stored]));
    await this.alert(
      trx,
      recorded.map((r) => {
        const e = byId.get(r.entryId) as ChronoEntry;
        return {
          recorded: r,
          entry: toEntryRow(e),
          annotations: e.annotations,
          snapshot: e.snapshot,
          changes: [],
        };
      }),
    );
  }

  private async record(trx: Session, found: readonly Discrepancy[]): Promise<RecordedDiscrepancy[]> {
    const recorded = await recordDiscrepancies(trx, this.tenantId, this.runId, found);
    this.recorded += recorded.length;
    return recorded;
  }

  private async alert(trx: Session, found: readonly Finding[]): Promise<void> {
    if (found.length === 0 || this.changes?.findings === undefined) return;
    this.alerts += await this.changes.findings(trx, { tenantId: this.tenantId, runId: this.runId }, found);
  }
}

/** Errors raised by PostgreSQL (pg and PGlite both report a severity and an SQLSTATE code). */
function isDatabaseError(err: unknown): boolean {
  const e = err as { severity?: unknown; code?: unknown } | null;
  return typeof e?.severity === 'string' && typeof e.code === 'string' && /^[0-9A-Z]{5}$/.test(e.code);
}
