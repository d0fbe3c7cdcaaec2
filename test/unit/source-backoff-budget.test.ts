/**
 * The run-level retry budget's error (docs/design/sync.md, "HTTP behaviour": a run-level budget of 10
 * minutes). The error carries a stable code, the last error as cause and the figures in details.
 */
import { describe, expect, it } from 'vitest';
import { RetryBudget } from '../../src/core/backoff.js';
import { GovtrailError } from '../../src/core/errors.js';

function exhaust(budget: RetryBudget, delayMs: number, last: GovtrailError): GovtrailError {
  try {
    budget.reserve(delayMs, last);
  } catch (err) {
    if (err instanceof GovtrailError) return err;
    throw err;
  }
  throw new Error('the budget did not refuse the wait');
}

describe('RetryBudget: the exhausted error', () => {
  it('says what was spent, what the next wait was and what the last error said', () => {
    const budget = new RetryBudget(1000);
    const last = new GovtrailError('RATE_LIMITED', 'throttled', { status: 429, retryable: true });
    budget.reserve(900, last);
    const err = exhaust(budget, 101, last);
    expect(err.code).toBe('RETRY_BUDGET_EXHAUSTED');
    expect(err.message).toBe(
      'the run-level retry budget of 1000 ms is spent (900 ms waited, next wait 101 ms); last error: throttled',
    );
    expect(err.details).toEqual({ lastCode: 'RATE_LIMITED', spentMs: 900, limitMs: 1000 });
    expect(err.retryable).toBe(true);
    expect(err.status).toBe(429);
    expect(err.cause).toBe(last);
  });

  it('has no HTTP status when the last error had none (a network error)', () => {
    const last = new GovtrailError('NETWORK', 'connection reset', { retryable: true });
    const err = exhaust(new RetryBudget(0), 1, last);
    expect(err.status).toBeUndefined();
    expect(err.details).toEqual({ lastCode: 'NETWORK', spentMs: 0, limitMs: 0 });
  });

  it('allows a wait that takes the total exactly to the limit', () => {
    const budget = new RetryBudget(1000);
    const last = new GovtrailError('RATE_LIMITED', 'throttled', { status: 429, retryable: true });
    budget.reserve(1000, last);
    expect(budget.spentMs).toBe(1000);
    expect(exhaust(budget, 1, last).code).toBe('RETRY_BUDGET_EXHAUSTED');
    expect(budget.spentMs).toBe(1000);
  });
});
