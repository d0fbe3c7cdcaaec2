/**
 * The vocabulary of runs (sync.md "One run"): what every kind of run is given (RunOptions, the
 * tenant API as a HistorySource, the change step and its tracker), what it returns (RunSummary),
 * and what the entry writer tells a kind of run about each batch. Types, and the empty counters:
 * run.ts, reconcile.ts, execute-run.ts, the entry writer and the change step all speak it.
 */
import type { FieldChange } from '../core/diff.js';
import type { GovtrailError } from '../core/errors.js';
import type { EntryKey } from '../core/normalise/entry.js';
import type { AnnotationRow, EntryRow, NormalisedEntry } from '../core/normalise/types.js';
import type { HistoryPage, WireSettings } from '../core/wire.js';
import type { Logger } from '../runtime/logger.js';
import type { TableCopy } from '../store/copy.js';
import type { Database, Session } from '../store/database.js';
import type { RecordedDiscrepancy } from '../store/write/discrepancies.js';
import type { JudgedState } from '../store/write/run-frame.js';
import type { ReconcileLedger, RunCounters, RunKind, RunTrigger } from '../store/write/runs.js';

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
   * The step has work on every run, also one that stores nothing (the conformance step records
   * each judgement and alerts on expiries): such a run then opens its transaction as any other,
   * unless `quietClose` says the close can record what the step would. Unset: a run that stores
   * nothing may close without one (sync.md "A run with nothing new").
   */
  readonly everyRun?: boolean;
  /**
   * For a run of `tenantId` that stores nothing, judged before by `judged`: what the quiet close
   * records for the step (the judgement by an unchanged baseline), or undefined when the step has
   * more to do (another baseline, an exception boundary or expiry warning since the last judgement).
   */
  quietClose?(
    tenantId: string,
    judged: JudgedState,
    nowMs: number,
  ): { readonly judged: { readonly id: string; readonly sha256: string } } | undefined;
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
  /**
   * Rules whose alerts of the tenant a successful run resolves (the sync-failing ones): a run that
   * closes without a transaction tells in `RunSummary.openAlerts` whether any may be unresolved.
   */
  readonly resolveOnSuccess?: readonly string[];
  /**
   * Compare every re-served entry with the store by content hash, never by the served digest
   * stored beside it (docs/design/integrity.md, "The served digest"): `reconcile --deep`, for an
   * auditor who does not take the database owner's word for the digests, which the hash chain does
   * not cover.
   */
  readonly deep?: boolean;
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
  /**
   * Whether the tenant may have an unresolved alert of `RunOptions.resolveOnSuccess`: known (and
   * set) when a run closed without a transaction; undefined when not asked.
   */
  readonly openAlerts?: boolean;
  readonly error?: GovtrailError;
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
