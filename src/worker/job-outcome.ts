/**
 * How a slot job ends once its run was attempted: a pure decision from the run's summary (or what it
 * threw) and whether the attempt may be retried inside its slot.
 */
import type { JobResult } from 'pg-boss';
import type { RunKind } from '../store/write/runs.js';
import type { RunSummary } from '../sync/run-types.js';
import type { JobEvent } from './engine-setup.js';

/** How a job ends: the outcome reported to `onJob`, and the status and output handed to pg-boss. */
export interface JobDecision {
  readonly outcome: JobEvent['outcome'];
  readonly status: JobResult['status'];
  readonly output: object;
}

/** What one attempt of a tenant's run gave: its summary, or what it threw. */
export type AttemptResult = { readonly summary: RunSummary } | { readonly threw: unknown };

/**
 * How a job whose run was attempted ends. `retriesLeft` is asked only when the attempt did not
 * succeed (the attempt's own answer, decided once: the ledger and the job agree).
 */
export function decideJobOutcome(
  kind: RunKind,
  result: AttemptResult,
  retriesLeft: () => boolean,
): JobDecision {
  const failed = (output: object): JobDecision =>
    retriesLeft()
      ? { outcome: 'retry', status: 'failed', output }
      : { outcome: 'dead', status: 'deadletter', output };
  if ('threw' in result) return failed({ error: String(result.threw) });
  const { summary } = result;
  if (summary.alreadyDone === true) {
    // An earlier attempt's replica committed the run and died before closing the job.
    return { outcome: 'done', status: 'completed', output: { alreadyDone: summary.runId } };
  }
  if (summary.status === 'succeeded') {
    return { outcome: 'completed', status: 'completed', output: { runId: summary.runId } };
  }
  if (summary.status === 'skipped') {
    // Another process holds the tenant (a manual `govtrail sync`, a run of the other kind, the
    // retry of an earlier slot's job): try again later in the slot. A sync still locked out at the
    // end of its slot was covered by the holder; a reconcile that never got in is dead-lettered.
    if (retriesLeft()) return { outcome: 'retry', status: 'failed', output: { busy: true } };
    return kind === 'sync'
      ? { outcome: 'busy', status: 'completed', output: { busy: true } }
      : { outcome: 'dead', status: 'deadletter', output: { busy: true } };
  }
  // The ledger row of a failed attempt stays only when it is the last one (sync/execute-run.ts): the
  // failure is recorded once, and the job's last attempt goes to the dead-letter queue.
  return failed({ runId: summary.runId, error: summary.error?.code ?? null });
}
