/**
 * How a run that failed is closed (sync.md "One run"; integrity.md, run ledger): its transaction
 * rolled back, so nothing it wrote remains; the failure is recorded in the ledger, on the run's own
 * session or, when that session was lost with the run (a terminated backend, a restarted server),
 * on a fresh one, so that no run is left `running`. And which errors are the database's.
 */
import { toGovtrailError } from '../core/errors.js';
import type { Session } from '../store/database.js';
import { discardRun, finishRun, type RunCounters, type RunKind } from '../store/write/runs.js';
import type { RunOptions, RunSummary } from './run-types.js';

/** A run as far as it got: filled in step by step, so that a failure records what is known. */
export interface RunState {
  readonly kind: RunKind;
  /** 0 until the ledger row exists. */
  runId: number;
  checkpointBefore: string | null;
  isBackfill: boolean;
  readonly counters: RunCounters;
}

/** A run's summary without what executeRun adds around it. */
export type PartialSummary = Omit<RunSummary, 'kind' | 'tenantId' | 'durationMs' | 'historyRequests'>;

/**
 * A failed run: the transaction rolled back, so nothing it wrote remains. The failure is recorded
 * on its own, or, for an engine attempt that will be retried, its ledger row is removed.
 */
export async function closeFailedRun(
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
  const close = (s: Session) =>
    finishRun(s, runId, {
      status: 'failed',
      counters: failed,
      checkpointAfter: checkpointBefore,
      stopReason: null,
      errorCode: error.code,
      errorMessage: error.message.slice(0, 2000),
    });
  if (runId !== 0 && options.engineAttempt?.retriesLeft === true) {
    // Only the session that opened the row may discard it (sql/0015); if that session is gone
    // (its backend terminated, the server restarted), the attempt is closed as failed instead.
    await discardRun(session, runId).catch(async (e: unknown) => {
      if (!connectionLost(e))
        return rootLogger.error({ err: e }, 'could not discard the attempt to be retried');
      await options.database
        .withSession(close)
        .catch((e2: unknown) => rootLogger.error({ err: e2 }, 'could not record the failed run'));
    });
  } else if (runId !== 0) {
    // On the run's own session, or, when that session was lost with the run, on a fresh one: the
    // run is closed now, not left `running` until the tenant's next run finds it.
    await close(session)
      .catch((e: unknown) => {
        if (!connectionLost(e)) throw e;
        return options.database.withSession(close);
      })
      .catch((e: unknown) => rootLogger.error({ err: e }, 'could not record the failed run'));
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
 * Errors raised by PostgreSQL (pg and PGlite both report a severity and an SQLSTATE code), and a
 * connection lost under the run.
 */
function isDatabaseError(err: unknown): boolean {
  const e = err as { severity?: unknown; code?: unknown } | null;
  return (
    (typeof e?.severity === 'string' && typeof e.code === 'string' && /^[0-9A-Z]{5}$/.test(e.code)) ||
    connectionLost(err)
  );
}

/**
 * Whether the session is gone: its backend terminated (57P01, 57P02, 57P03), the server restarted,
 * or pg's client refuses a session that had a connection error.
 */
export function connectionLost(err: unknown): boolean {
  const e = err as { code?: unknown; message?: unknown } | null;
  if (typeof e?.code === 'string' && /^57P0[123]$|^08/.test(e.code)) return true;
  return (
    typeof e?.message === 'string' &&
    /Connection terminated|not queryable|connection error|ECONNRESET|ECONNREFUSED|EPIPE/.test(e.message)
  );
}
