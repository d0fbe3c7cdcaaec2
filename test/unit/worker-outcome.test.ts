/**
 * How a slot job ends once its run was attempted: completed, retried inside the slot, left as busy,
 * dead-lettered, or done by an earlier attempt. The retry budget is asked only when the attempt did
 * not succeed, so a succeeded run never computes it.
 */
import { describe, expect, it } from 'vitest';
import { GovtrailError } from '../../src/core/errors.js';
import type { SyncRunSummary } from '../../src/sync/run.js';
import { emptyCounters } from '../../src/sync/run-types.js';
import { decideJobOutcome } from '../../src/worker/job-outcome.js';

function summary(status: SyncRunSummary['status'], extra: Partial<SyncRunSummary> = {}): SyncRunSummary {
  return {
    kind: 'sync',
    tenantId: 'acme',
    runId: 42,
    status,
    isBackfill: false,
    counters: emptyCounters(),
    stopReason: null,
    checkpointBefore: null,
    checkpointAfter: null,
    alerts: 0,
    fieldChanges: 0,
    findings: 0,
    durationMs: 1,
    historyRequests: 1,
    ...extra,
  };
}

/** A retry budget that counts how often it was asked. */
function budget(left: boolean): { asked: number; ask: () => boolean } {
  const b = {
    asked: 0,
    ask: () => {
      b.asked += 1;
      return left;
    },
  };
  return b;
}

describe('decideJobOutcome', () => {
  it('completes a succeeded run without asking the retry budget', () => {
    const b = budget(false);
    expect(decideJobOutcome('sync', { summary: summary('succeeded') }, b.ask)).toEqual({
      outcome: 'completed',
      status: 'completed',
      output: { runId: 42 },
    });
    expect(b.asked).toBe(0);
  });

  it('completes a job whose slot an earlier attempt already did, without asking the budget', () => {
    const b = budget(true);
    const result = { summary: summary('skipped', { alreadyDone: true, runId: 7 }) };
    expect(decideJobOutcome('reconcile', result, b.ask)).toEqual({
      outcome: 'done',
      status: 'completed',
      output: { alreadyDone: 7 },
    });
    expect(b.asked).toBe(0);
  });

  it('retries a failed run while retries are left, and dead-letters the last attempt', () => {
    const failed = {
      summary: summary('failed', { error: new GovtrailError('RATE_LIMITED', 'still throttled') }),
    };
    expect(decideJobOutcome('sync', failed, budget(true).ask)).toEqual({
      outcome: 'retry',
      status: 'failed',
      output: { runId: 42, error: 'RATE_LIMITED' },
    });
    expect(decideJobOutcome('sync', failed, budget(false).ask)).toEqual({
      outcome: 'dead',
      status: 'deadletter',
      output: { runId: 42, error: 'RATE_LIMITED' },
    });
    const noError = decideJobOutcome('reconcile', { summary: summary('failed') }, budget(false).ask);
    expect(noError.output).toEqual({ runId: 42, error: null });
  });

  it('treats a run that threw like a failed one, with the error as its output', () => {
    const threw = { threw: new Error('boom') };
    expect(decideJobOutcome('sync', threw, budget(true).ask)).toEqual({
      outcome: 'retry',
      status: 'failed',
      output: { error: 'Error: boom' },
    });
    expect(decideJobOutcome('reconcile', threw, budget(false).ask)).toEqual({
      outcome: 'dead',
      status: 'deadletter',
      output: { error: 'Error: boom' },
    });
  });

  it('retries a locked-out run; at the end of its slot a sync is busy, a reconcile dead', () => {
    const skipped = { summary: summary('skipped') };
    expect(decideJobOutcome('sync', skipped, budget(true).ask)).toEqual({
      outcome: 'retry',
      status: 'failed',
      output: { busy: true },
    });
    expect(decideJobOutcome('reconcile', skipped, budget(true).ask).outcome).toBe('retry');
    expect(decideJobOutcome('sync', skipped, budget(false).ask)).toEqual({
      outcome: 'busy',
      status: 'completed',
      output: { busy: true },
    });
    expect(decideJobOutcome('reconcile', skipped, budget(false).ask)).toEqual({
      outcome: 'dead',
      status: 'deadletter',
      output: { busy: true },
    });
  });

  it('asks the retry budget at most once per decision', () => {
    for (const result of [{ threw: 'x' }, { summary: summary('skipped') }, { summary: summary('failed') }]) {
      const b = budget(true);
      decideJobOutcome('sync', result, b.ask);
      expect(b.asked).toBe(1);
    }
  });
});
