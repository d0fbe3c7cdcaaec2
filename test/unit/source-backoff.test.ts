import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { backoffDelay, parseRetryAfter, RetryBudget } from '../../src/core/backoff.js';
import { GovtrailError } from '../../src/core/errors.js';

const NOW = Date.parse('2025-06-01T12:00:00Z');
const CAP = 300_000;

describe('parseRetryAfter', () => {
  it('reads delay-seconds', () => {
    expect(parseRetryAfter('7', NOW, CAP)).toBe(7000);
    expect(parseRetryAfter(' 0 ', NOW, CAP)).toBe(0);
  });

  it('reads an HTTP-date relative to now', () => {
    expect(parseRetryAfter('Sun, 01 Jun 2025 12:00:42 GMT', NOW, CAP)).toBe(42_000);
  });

  it('treats a date in the past as no wait', () => {
    expect(parseRetryAfter('Sun, 01 Jun 2025 11:00:00 GMT', NOW, CAP)).toBe(0);
  });

  it('ignores garbage, negative, fractional and empty values', () => {
    for (const v of ['soon', '-1', '1.5', '', '   ', '12abc', '0x10']) {
      expect(parseRetryAfter(v, NOW, CAP), v).toBeUndefined();
    }
    expect(parseRetryAfter(undefined, NOW, CAP)).toBeUndefined();
  });

  it('caps both forms', () => {
    expect(parseRetryAfter('3600', NOW, CAP)).toBe(CAP);
    expect(parseRetryAfter('Mon, 02 Jun 2025 12:00:00 GMT', NOW, CAP)).toBe(CAP);
    expect(parseRetryAfter('2', NOW, 500)).toBe(500);
  });
});

describe('backoffDelay (full jitter)', () => {
  it('spans 0 to min(max, base·2^n) inclusive', () => {
    expect(backoffDelay(0, 500, 30_000, () => 0)).toBe(0);
    expect(backoffDelay(0, 500, 30_000, () => 0.999_999_9)).toBe(500);
    expect(backoffDelay(3, 500, 30_000, () => 0.999_999_9)).toBe(4000);
    expect(backoffDelay(10, 500, 30_000, () => 0.999_999_9)).toBe(30_000);
    expect(backoffDelay(2000, 500, 30_000, () => 0.999_999_9)).toBe(30_000);
  });

  it('stays within bounds for any attempt and random draw', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 64 }),
        fc.integer({ min: 0, max: 10_000 }),
        fc.integer({ min: 0, max: 120_000 }),
        fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
        (n, base, max, r) => {
          const d = backoffDelay(n, base, max, () => r);
          expect(Number.isInteger(d)).toBe(true);
          expect(d).toBeGreaterThanOrEqual(0);
          expect(d).toBeLessThanOrEqual(Math.min(max, base * 2 ** n));
        },
      ),
    );
  });

  it('draws different delays (jitter, not a fixed schedule)', () => {
    const seen = new Set(Array.from({ length: 50 }, () => backoffDelay(4, 500, 30_000)));
    expect(seen.size).toBeGreaterThan(10);
  });
});

describe('RetryBudget', () => {
  const last = new GovtrailError('RATE_LIMITED', 'throttled', { status: 429, retryable: true });

  it('accumulates waits up to the limit', () => {
    const budget = new RetryBudget(1000);
    budget.reserve(600, last);
    budget.reserve(400, last);
    expect(budget.spentMs).toBe(1000);
  });

  it('fails with RETRY_BUDGET_EXHAUSTED and the last error as cause when a wait would exceed it', () => {
    const budget = new RetryBudget(1000);
    budget.reserve(900, last);
    let caught: unknown;
    try {
      budget.reserve(101, last);
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(GovtrailError);
    expect((caught as GovtrailError).code).toBe('RETRY_BUDGET_EXHAUSTED');
    expect((caught as GovtrailError).cause).toBe(last);
    expect((caught as GovtrailError).status).toBe(429);
    expect(budget.spentMs).toBe(900);
  });
});
