/**
 * How a sink reports a failed delivery. Every sink throws a {@link DeliveryError}: `retryable` sends
 * the row back to the outbox for a retry with backoff; not retryable (permanent) marks it `failed`
 * at once with the reason, because repeating the same request cannot succeed (a 400 from
 * PagerDuty, a bad token, a deleted Teams workflow).
 */
import { GovtrailError } from '../../core/errors.js';

export interface DeliveryErrorOptions {
  readonly retryable: boolean;
  /** HTTP status, for HTTP sinks. */
  readonly status?: number | undefined;
  /** The receiver asked to wait this long before the next attempt (Retry-After). */
  readonly retryAfterMs?: number | undefined;
  readonly cause?: unknown;
}

/** A failed delivery to one sink; the message starts with the sink's name. Code `DELIVERY_FAILED`. */
export class DeliveryError extends GovtrailError {
  override name = 'DeliveryError';
  readonly retryAfterMs: number | undefined;

  constructor(sink: string, reason: string, options: DeliveryErrorOptions) {
    super('DELIVERY_FAILED', `${sink}: ${reason}`, {
      retryable: options.retryable,
      ...(options.status === undefined ? {} : { status: options.status }),
      ...(options.cause === undefined ? {} : { cause: options.cause }),
    });
    this.retryAfterMs = options.retryAfterMs;
  }
}

/** A failure worth retrying: network errors, timeouts, 408, 429, 5xx. */
export function retryableFailure(
  sink: string,
  reason: string,
  options: Omit<DeliveryErrorOptions, 'retryable'> = {},
): DeliveryError {
  return new DeliveryError(sink, reason, { ...options, retryable: true });
}

/** A failure that repeating cannot fix: the row is marked `failed` with this reason at once. */
export function permanentFailure(
  sink: string,
  reason: string,
  options: Omit<DeliveryErrorOptions, 'retryable' | 'retryAfterMs'> = {},
): DeliveryError {
  return new DeliveryError(sink, reason, { ...options, retryable: false });
}

/**
 * True for a failure a sink classified as permanent. Only a `DELIVERY_FAILED` error says so: an
 * error a sink did not classify (a bug, an abort) is retried, so it cannot lose an alert.
 */
export function isPermanentFailure(err: unknown): boolean {
  return err instanceof GovtrailError && err.code === 'DELIVERY_FAILED' && !err.retryable;
}

/** The receiver's Retry-After of a retryable failure, if it gave one. */
export function retryAfterOf(err: unknown): number | undefined {
  return err instanceof DeliveryError && err.retryable ? err.retryAfterMs : undefined;
}
