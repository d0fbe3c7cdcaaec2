/**
 * The delivery loop over the alert outbox: attempt every due (alert, sink) row, record the
 * outcome, and schedule retries with exponential backoff for 24 hours, or stop at once when the
 * sink calls the failure permanent. Storage is behind
 * {@link DeliveryStore} so that this module stays free of SQL and can be tested with an in-memory
 * store and an injected clock.
 */
import { createHash } from 'node:crypto';
import type { AlertMessage, DeliveryStore, DueDelivery, Sink } from '../core/alert.js';
import { type GovtrailError, toGovtrailError } from '../core/errors.js';
import { type Logger, scrubSecrets } from '../runtime/logger.js';
import { isPermanentFailure, retryAfterOf, retryableFailure } from './sinks/delivery-failure.js';

/** First retry delay; doubles with each failed attempt. */
export const RETRY_BASE_MS = 30_000;
/** Longest delay between two attempts. */
export const RETRY_MAX_DELAY_MS = 3_600_000;
/** After this long since the first attempt, a failing delivery is marked `failed`. */
export const GIVE_UP_AFTER_MS = 24 * 3_600_000;
/** Due rows handled by one {@link deliverPending} call unless told otherwise. */
export const DEFAULT_DELIVERY_LIMIT = 100;

const MAX_ERROR_TEXT = 1000;

export type RetryDecision =
  | { readonly giveUp: false; readonly nextAttemptAt: Date }
  | { readonly giveUp: true };

/**
 * When to try a failed delivery again. `attempts` counts the attempts made so far, the failed one
 * included. The delay is 30 s · 2^(attempts−1), capped at 1 h, with equal jitter (a random point in
 * its upper half) so that many alerts failing together do not retry in lockstep; a longer
 * Retry-After of the receiver (`retryAfterMs`) wins. The last retry is pulled in to the 24-hour
 * mark; a failure at or after it gives up.
 */
export function nextRetry(o: {
  attempts: number;
  firstAttemptAt: Date;
  now: Date;
  random?: () => number;
  retryAfterMs?: number | undefined;
}): RetryDecision {
  const deadline = o.firstAttemptAt.getTime() + GIVE_UP_AFTER_MS;
  if (o.now.getTime() >= deadline) return { giveUp: true };
  const exponent = Math.max(0, o.attempts - 1);
  // 2^7 · 30 s already exceeds the cap; bounding the exponent keeps the arithmetic finite.
  const base = Math.min(RETRY_MAX_DELAY_MS, RETRY_BASE_MS * 2 ** Math.min(exponent, 20));
  const r = Math.min(1, Math.max(0, (o.random ?? Math.random)()));
  const delay = Math.max(Math.round(base / 2 + (base / 2) * r), o.retryAfterMs ?? 0);
  return { giveUp: false, nextAttemptAt: new Date(Math.min(o.now.getTime() + delay, deadline)) };
}

export type { DeliveryStore, DueDelivery } from '../core/alert.js';

export interface SinkTally {
  delivered: number;
  retried: number;
  failed: number;
}

export interface DeliverySummary {
  readonly delivered: number;
  readonly retried: number;
  readonly failed: number;
  readonly bySink: Record<string, SinkTally>;
}

export interface DeliverOptions {
  readonly store: DeliveryStore;
  readonly sinks: readonly Sink[];
  readonly logger: Logger;
  /** Clock; injected by tests. */
  readonly now?: (() => Date) | undefined;
  readonly limit?: number | undefined;
  /** Stops before the next attempt once aborted; an attempt in flight finishes. */
  readonly signal?: AbortSignal | undefined;
  /** Jitter source for {@link nextRetry}; injected by tests. */
  readonly random?: (() => number) | undefined;
}

/**
 * The `X-Govtrail-Delivery` id of an (alert, sink): derived from the dedupe key, so it is the same
 * on every retry and across processes. Hashed because entry ids come from the wire and need not be
 * valid header text.
 */
export function deliveryIdFor(alert: Pick<AlertMessage, 'dedupeKey'>, sink: string): string {
  return createHash('sha256').update(`${alert.dedupeKey}\u0000${sink}`).digest('hex').slice(0, 32);
}

/** The delivery id of a row: the alert's, or for a follow-up, one per (event, sink), as stable. */
export function rowDeliveryId(row: Pick<DueDelivery, 'alert' | 'event'>, sink: string): string {
  if (row.event === undefined) return deliveryIdFor(row.alert, sink);
  return deliveryIdFor({ dedupeKey: `${row.alert.dedupeKey}\u0000event-${row.event.eventId}` }, sink);
}

/** The id the store's mark* methods take: the alert id, or the event id of a follow-up row. */
function rowId(row: DueDelivery): string {
  return row.event?.eventId ?? row.alert.alertId;
}

/**
 * Attempts every due delivery once. Sinks run side by side, each working through its own rows in
 * order, so a slow or failing sink never holds up another. A failure the sink classifies as
 * permanent (a DeliveryError that is not retryable: PagerDuty's 400, a webhook's 404) marks the
 * row `failed` at once with the reason: repeating the request cannot succeed, and the operator
 * should hear so now rather than in 24 hours. Any other failure is retried with backoff until 24
 * hours have passed since the first attempt, then the row is marked `failed`. Both are logged at
 * error level. A row naming a sink that is not configured is retried, so that re-adding the sink
 * within the day still delivers it. A sink with `deliverBatch` (the email digest) gets its whole
 * lane in one call, and the outcome is recorded on every row of it. Errors from the store itself
 * are rethrown once every sink has finished.
 */
export async function deliverPending(o: DeliverOptions): Promise<DeliverySummary> {
  const now = o.now ?? (() => new Date());
  const due = await o.store.dueDeliveries(now(), o.limit ?? DEFAULT_DELIVERY_LIMIT);
  const { lanes, bySink } = lanesOf(due);
  const round: DeliveryRound = { o, now, bySink };
  const sinks = new Map(o.sinks.map((s) => [s.name, s]));
  const results = await Promise.allSettled(
    [...lanes].map(([name, rows]) => runLane(round, sinks.get(name), name, rows)),
  );
  const broken = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (broken !== undefined) throw toGovtrailError(broken.reason, 'DATABASE');

  const totals = Object.values(bySink).reduce(
    (acc, t) => ({
      delivered: acc.delivered + t.delivered,
      retried: acc.retried + t.retried,
      failed: acc.failed + t.failed,
    }),
    { delivered: 0, retried: 0, failed: 0 },
  );
  return { ...totals, bySink };
}

/** What one {@link deliverPending} call works with: its options, its clock and the tallies per sink. */
interface DeliveryRound {
  readonly o: DeliverOptions;
  readonly now: () => Date;
  readonly bySink: Record<string, SinkTally>;
}

/** What an attempt threw, classified; no failure when it succeeded. */
interface AttemptOutcome {
  readonly failure: GovtrailError | undefined;
  readonly permanent: boolean;
}

/** The due rows grouped by sink, in order (one lane per sink), and a zero tally for each sink. */
function lanesOf(due: readonly DueDelivery[]): {
  lanes: Map<string, DueDelivery[]>;
  bySink: Record<string, SinkTally>;
} {
  const bySink: Record<string, SinkTally> = {};
  const lanes = new Map<string, DueDelivery[]>();
  for (const row of due) {
    const lane = lanes.get(row.sink);
    if (lane === undefined) lanes.set(row.sink, [row]);
    else lane.push(row);
    bySink[row.sink] ??= { delivered: 0, retried: 0, failed: 0 };
  }
  return { lanes, bySink };
}

/** One sink's rows, one at a time (or all in one call for a digest sink), stopping once aborted. */
async function runLane(
  round: DeliveryRound,
  sink: Sink | undefined,
  sinkName: string,
  rows: readonly DueDelivery[],
): Promise<void> {
  const { o, now } = round;
  const batch = sink?.deliverBatch?.bind(sink);
  // Follow-ups are sent one by one, also by a digest sink.
  if (batch !== undefined && rows.every((r) => r.event === undefined)) {
    await runDigestLane(round, batch, sinkName, rows);
    return;
  }
  for (const row of rows) {
    if (o.signal?.aborted === true) return;
    const startedAt = now();
    const outcome = await attemptSend(async () => {
      if (sink === undefined) throw retryableFailure(sinkName, 'this sink is not configured');
      const delivery = { deliveryId: rowDeliveryId(row, sinkName), attempt: row.attempts + 1 };
      // A sink that sends no follow-ups has nothing to do for one: the row is done.
      if (row.event !== undefined) await sink.deliverEvent?.(row.alert, row.event, delivery);
      else await sink.deliver(row.alert, delivery);
    });
    await record(round, row, sinkName, startedAt, outcome);
  }
}

/** A digest sink: the whole lane is one message, and its outcome is every row's outcome. */
async function runDigestLane(
  round: DeliveryRound,
  batch: NonNullable<Sink['deliverBatch']>,
  sinkName: string,
  rows: readonly DueDelivery[],
): Promise<void> {
  if (round.o.signal?.aborted === true) return;
  const startedAt = round.now();
  const outcome = await attemptSend(() =>
    batch(
      rows.map((row) => ({
        alert: row.alert,
        delivery: { deliveryId: deliveryIdFor(row.alert, sinkName), attempt: row.attempts + 1 },
      })),
    ),
  );
  for (const row of rows) await record(round, row, sinkName, startedAt, outcome);
}

/** Runs one send and classifies what it threw, if anything. */
async function attemptSend(send: () => Promise<void>): Promise<AttemptOutcome> {
  try {
    await send();
    return { failure: undefined, permanent: false };
  } catch (err) {
    // Judged on what the sink threw: toGovtrailError would make an unclassified error look permanent.
    return { failure: toGovtrailError(err, 'DELIVERY_FAILED'), permanent: isPermanentFailure(err) };
  }
}

/** Records the outcome of the row's attempt (its attempts + 1): delivered, retry later, or failed. */
async function record(
  round: DeliveryRound,
  row: DueDelivery,
  sinkName: string,
  startedAt: Date,
  { failure, permanent }: AttemptOutcome,
): Promise<void> {
  const { o, now } = round;
  const attempt = row.attempts + 1;
  const tally = round.bySink[sinkName] as SinkTally;
  const log = o.logger.child({
    alertId: row.alert.alertId,
    sink: sinkName,
    attempt,
    deliveryId: rowDeliveryId(row, sinkName),
    ...(row.event === undefined ? {} : { eventId: row.event.eventId, event: row.event.kind }),
  });
  if (failure === undefined) {
    await o.store.markDelivered(rowId(row), sinkName, attempt, now());
    tally.delivered += 1;
    log.debug('alert delivered');
    return;
  }
  // Receivers may echo what they were sent; keys and secrets stay out of the table.
  const error = scrubSecrets(`${failure.code}: ${failure.message}`);
  if (permanent) {
    await o.store.markFailed(rowId(row), sinkName, attempt, `permanent: ${error}`.slice(0, MAX_ERROR_TEXT));
    tally.failed += 1;
    log.error(
      { err: failure, ruleId: row.alert.ruleId, dedupeKey: row.alert.dedupeKey },
      'alert delivery failed permanently; not retrying',
    );
    return;
  }
  await retryOrGiveUp(round, row, sinkName, startedAt, failure, error, log);
}

/** A retryable failure: scheduled again with backoff, or `failed` once 24 hours have passed since the first attempt. */
async function retryOrGiveUp(
  round: DeliveryRound,
  row: DueDelivery,
  sinkName: string,
  startedAt: Date,
  failure: GovtrailError,
  error: string,
  log: Logger,
): Promise<void> {
  const { o, now } = round;
  const attempt = row.attempts + 1;
  const tally = round.bySink[sinkName] as SinkTally;
  const decision = nextRetry({
    attempts: attempt,
    firstAttemptAt: row.firstAttemptAt ?? startedAt,
    now: now(),
    retryAfterMs: retryAfterOf(failure),
    ...(o.random === undefined ? {} : { random: o.random }),
  });
  if (decision.giveUp) {
    await o.store.markFailed(rowId(row), sinkName, attempt, error.slice(0, MAX_ERROR_TEXT));
    tally.failed += 1;
    log.error(
      { err: failure, ruleId: row.alert.ruleId, dedupeKey: row.alert.dedupeKey },
      'alert delivery failed for 24 hours; giving up',
    );
  } else {
    await o.store.markRetry(
      rowId(row),
      sinkName,
      attempt,
      decision.nextAttemptAt,
      error.slice(0, MAX_ERROR_TEXT),
    );
    tally.retried += 1;
    log.warn(
      { err: failure, retryable: failure.retryable, nextAttemptAt: decision.nextAttemptAt.toISOString() },
      'alert delivery failed; will retry',
    );
  }
}
