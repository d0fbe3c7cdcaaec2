/**
 * Pure retry arithmetic: `Retry-After` parsing, exponential backoff with full jitter, and the
 * run-level retry budget. No I/O and no clock of its own, so each piece is unit-tested directly.
 */
import { GovtrailError } from './errors.js';

/**
 * Reads a `Retry-After` header value (RFC 9110 §10.2.3): delay-seconds or an HTTP-date.
 * Returns the wait in milliseconds, capped at `capMs`; 0 for a date already past; `undefined` when
 * the value is absent or unparseable, so the caller falls back to its own backoff.
 */
export function parseRetryAfter(value: string | undefined, nowMs: number, capMs: number): number | undefined {
  if (value === undefined) return undefined;
  const text = value.trim();
  if (text === '') return undefined;
  let ms: number;
  if (/^\d+$/.test(text)) {
    ms = Number(text) * 1000;
  } else {
    // Only accept something that looks like a date: Date.parse also takes bare numbers such as "-1"
    // or "1.5", which are malformed delay-seconds, not dates.
    if (!/[a-z]/i.test(text)) return undefined;
    const at = Date.parse(text);
    if (Number.isNaN(at)) return undefined;
    ms = Math.max(0, at - nowMs);
  }
  return Math.min(ms, Math.max(0, capMs));
}

/**
 * Full-jitter backoff (the AWS architecture blog's "Exponential Backoff And Jitter"): a uniform
 * random wait in [0, min(maxMs, baseMs · 2^retryIndex)]. Full jitter spreads the retries of many
 * clients hit by the same outage instead of synchronising them.
 *
 * @param retryIndex 0 for the first retry, 1 for the second, …
 * @param random source of uniform numbers in [0, 1); injectable for tests
 */
export function backoffDelay(
  retryIndex: number,
  baseMs: number,
  maxMs: number,
  random: () => number = Math.random,
): number {
  // 2^retryIndex overflows to Infinity for large indexes; min() keeps the ceiling finite.
  const ceiling = Math.min(maxMs, baseMs * 2 ** Math.max(0, retryIndex));
  return Math.floor(random() * (Math.max(0, ceiling) + 1));
}

/**
 * The run-level retry budget (docs/design/sync.md, "HTTP behaviour"): the total time one client instance may
 * spend waiting between retries, across every request it makes. Shared by all requests of the
 * instance, including concurrent ones (a prefetched page and a token refresh).
 */
export class RetryBudget {
  #spentMs = 0;

  constructor(readonly limitMs: number) {}

  /** Waiting already reserved, in milliseconds. */
  get spentMs(): number {
    return this.#spentMs;
  }

  /**
   * Reserves `delayMs` of waiting before the next retry of a request that failed with `lastError`.
   * Throws RETRY_BUDGET_EXHAUSTED (cause: `lastError`) when that wait would take the total past
   * the limit; nothing is reserved then.
   */
  reserve(delayMs: number, lastError: GovtrailError): void {
    if (this.#spentMs + delayMs > this.limitMs) {
      throw new GovtrailError(
        'RETRY_BUDGET_EXHAUSTED',
        `the run-level retry budget of ${this.limitMs} ms is spent (${this.#spentMs} ms waited, next wait ` +
          `${delayMs} ms); last error: ${lastError.message}`,
        {
          cause: lastError,
          retryable: true,
          ...(lastError.status === undefined ? {} : { status: lastError.status }),
          details: { lastCode: lastError.code, spentMs: this.#spentMs, limitMs: this.limitMs },
        },
      );
    }
    this.#spentMs += delayMs;
  }
}
