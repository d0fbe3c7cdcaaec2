import fc from 'fast-check';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import {
  type DeliveryStore,
  type DueDelivery,
  deliverPending,
  deliveryIdFor,
  GIVE_UP_AFTER_MS,
  nextRetry,
  RETRY_MAX_DELAY_MS,
} from '../../src/alerts/deliver.js';
import { retryableFailure } from '../../src/alerts/sinks/delivery-failure.js';
import type { AlertMessage, BatchItem, DeliveryAttempt, Sink } from '../../src/core/alert.js';
import { GovtrailError } from '../../src/core/errors.js';
import { silentLogger } from '../../src/runtime/logger.js';

const T0 = new Date('2025-03-04T00:00:00.000Z');
const at = (ms: number) => new Date(T0.getTime() + ms);

function alert(id: string): AlertMessage {
  return {
    alertId: id,
    tenantId: 'acme',
    entryId: `E${id}`,
    ruleId: 'AIGOV-002',
    ruleVersion: 1,
    severity: 'high',
    title: 'Tool approval was turned off',
    summary: 'requireToolApproval: true → false.',
    dedupeKey: `AIGOV-002:acme:E${id}`,
    createdAt: T0.toISOString(),
    context: {
      tenantId: 'acme',
      entryId: `E${id}`,
      changedAt: T0.toISOString(),
      changeKind: 'CHANGE_KIND_PUT',
      actor: { kind: 'ACTOR_KIND_API', userId: null },
      tickets: [],
      reasons: [],
      changes: [],
      allChanges: [],
      syslogEventId: null,
      traceId: null,
      runbook: 'Check it.',
      ruleName: 'tool-approval-disabled',
      details: {},
    },
  };
}

interface Row {
  alert: AlertMessage;
  sink: string;
  status: 'pending' | 'delivered' | 'failed';
  attempts: number;
  nextAttemptAt: Date;
  firstAttemptAt: Date | null;
  lastError: string | null;
  deliveredAt: Date | null;
}

/** alert_delivery in memory, on the test's clock. */
class MemoryStore implements DeliveryStore {
  readonly rows: Row[] = [];
  readonly calls: string[] = [];
  constructor(private readonly clock: () => Date) {}

  add(a: AlertMessage, sink: string): Row {
    const row: Row = {
      alert: a,
      sink,
      status: 'pending',
      attempts: 0,
      nextAttemptAt: this.clock(),
      firstAttemptAt: null,
      lastError: null,
      deliveredAt: null,
    };
    this.rows.push(row);
    return row;
  }

  private find(alertId: string, sink: string): Row {
    const row = this.rows.find((r) => r.alert.alertId === alertId && r.sink === sink);
    if (row === undefined) throw new Error(`no row ${alertId}/${sink}`);
    row.firstAttemptAt ??= this.clock();
    return row;
  }

  async dueDeliveries(now: Date, limit: number): Promise<DueDelivery[]> {
    return this.rows
      .filter((r) => r.status === 'pending' && r.nextAttemptAt <= now)
      .slice(0, limit)
      .map((r) => ({ alert: r.alert, sink: r.sink, attempts: r.attempts, firstAttemptAt: r.firstAttemptAt }));
  }
  async markDelivered(alertId: string, sink: string, attempts: number, when: Date): Promise<void> {
    this.calls.push(`delivered ${alertId}/${sink}`);
    Object.assign(this.find(alertId, sink), {
      status: 'delivered',
      attempts,
      deliveredAt: when,
      lastError: null,
    });
  }
  async markRetry(
    alertId: string,
    sink: string,
    attempts: number,
    nextAttemptAt: Date,
    error: string,
  ): Promise<void> {
    this.calls.push(`retry ${alertId}/${sink}`);
    Object.assign(this.find(alertId, sink), { attempts, nextAttemptAt, lastError: error });
  }
  async markFailed(alertId: string, sink: string, attempts: number, error: string): Promise<void> {
    this.calls.push(`failed ${alertId}/${sink}`);
    Object.assign(this.find(alertId, sink), { status: 'failed', attempts, lastError: error });
  }
}

/** A sink that records its calls and answers from a script (default: succeed). */
function scriptedSink(name: string, outcome: (n: number) => Error | undefined = () => undefined) {
  const calls: Array<{ alertId: string; delivery: DeliveryAttempt }> = [];
  const sink: Sink = {
    name,
    async deliver(a, delivery) {
      calls.push({ alertId: a.alertId, delivery });
      const err = outcome(calls.length);
      if (err !== undefined) throw err;
    },
  };
  return { sink, calls };
}

/** A digest sink: records each batch it gets and answers from a script (default: succeed). */
function batchSink(name: string, outcome: (n: number) => Error | undefined = () => undefined) {
  const batches: BatchItem[][] = [];
  const sink: Sink = {
    name,
    async deliver() {
      throw new Error('a digest sink is called per batch');
    },
    async deliverBatch(items) {
      batches.push([...items]);
      const err = outcome(batches.length);
      if (err !== undefined) throw err;
    },
  };
  return { sink, batches };
}

function capturingLogger() {
  const lines: Array<Record<string, unknown>> = [];
  const logger = pino({ level: 'debug' }, { write: (s: string) => lines.push(JSON.parse(s)) });
  return { logger, lines };
}

const retryable = (status: number) =>
  new GovtrailError('DELIVERY_FAILED', `webhook: HTTP ${status}`, { retryable: status >= 500, status });

describe('nextRetry', () => {
  it('starts at 30 s with equal jitter: between 15 and 30 s', () => {
    expect(nextRetry({ attempts: 1, firstAttemptAt: T0, now: T0, random: () => 0 })).toEqual({
      giveUp: false,
      nextAttemptAt: at(15_000),
    });
    expect(nextRetry({ attempts: 1, firstAttemptAt: T0, now: T0, random: () => 1 })).toEqual({
      giveUp: false,
      nextAttemptAt: at(30_000),
    });
  });

  it('doubles with each attempt', () => {
    const now = at(60_000);
    expect(nextRetry({ attempts: 2, firstAttemptAt: T0, now, random: () => 1 })).toEqual({
      giveUp: false,
      nextAttemptAt: at(60_000 + 60_000),
    });
    expect(nextRetry({ attempts: 4, firstAttemptAt: T0, now, random: () => 1 })).toEqual({
      giveUp: false,
      nextAttemptAt: at(60_000 + 240_000),
    });
  });

  it('caps the delay at one hour', () => {
    const now = at(3_600_000);
    expect(nextRetry({ attempts: 30, firstAttemptAt: T0, now, random: () => 1 })).toEqual({
      giveUp: false,
      nextAttemptAt: at(3_600_000 + RETRY_MAX_DELAY_MS),
    });
    expect(nextRetry({ attempts: 1000, firstAttemptAt: T0, now, random: () => 0 })).toEqual({
      giveUp: false,
      nextAttemptAt: at(3_600_000 + RETRY_MAX_DELAY_MS / 2),
    });
  });

  it('gives up once 24 hours have passed since the first attempt', () => {
    expect(nextRetry({ attempts: 20, firstAttemptAt: T0, now: at(GIVE_UP_AFTER_MS) })).toEqual({
      giveUp: true,
    });
    expect(nextRetry({ attempts: 20, firstAttemptAt: T0, now: at(GIVE_UP_AFTER_MS + 1) })).toEqual({
      giveUp: true,
    });
  });

  it('pulls the last retry in to the 24-hour mark', () => {
    expect(
      nextRetry({ attempts: 20, firstAttemptAt: T0, now: at(GIVE_UP_AFTER_MS - 1000), random: () => 1 }),
    ).toEqual({
      giveUp: false,
      nextAttemptAt: at(GIVE_UP_AFTER_MS),
    });
  });

  it('always schedules after now, within an hour, and no later than the deadline', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 500 }),
        fc.integer({ min: 0, max: GIVE_UP_AFTER_MS - 1 }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        (attempts, elapsed, r) => {
          const now = at(elapsed);
          const d = nextRetry({ attempts, firstAttemptAt: T0, now, random: () => r });
          expect(d.giveUp).toBe(false);
          if (d.giveUp) return;
          expect(d.nextAttemptAt.getTime()).toBeGreaterThan(now.getTime());
          expect(d.nextAttemptAt.getTime() - now.getTime()).toBeLessThanOrEqual(RETRY_MAX_DELAY_MS);
          expect(d.nextAttemptAt.getTime()).toBeLessThanOrEqual(T0.getTime() + GIVE_UP_AFTER_MS);
        },
      ),
    );
  });

  it('a delivery that always fails is attempted until the 24-hour mark, then given up', () => {
    let now = T0;
    let attempts = 0;
    const times: number[] = [];
    for (;;) {
      attempts += 1;
      times.push(now.getTime() - T0.getTime());
      const d = nextRetry({ attempts, firstAttemptAt: T0, now, random: () => 1 });
      if (d.giveUp) break;
      now = d.nextAttemptAt;
    }
    expect(times.at(-1)).toBe(GIVE_UP_AFTER_MS);
    expect(times.slice(0, 4)).toEqual([0, 30_000, 90_000, 210_000]);
    expect(attempts).toBe(31);
  });
});

describe('deliveryIdFor', () => {
  it('is stable for an (alert, sink) and differs between sinks', () => {
    const a = alert('1');
    const sameKeyOtherRow: AlertMessage = { ...alert('1'), alertId: 'other' };
    expect(deliveryIdFor(a, 'webhook')).toBe(deliveryIdFor(sameKeyOtherRow, 'webhook'));
    expect(deliveryIdFor(a, 'webhook')).not.toBe(deliveryIdFor(alert('2'), 'webhook'));
    expect(deliveryIdFor(a, 'webhook')).not.toBe(deliveryIdFor(a, 'slack'));
    expect(deliveryIdFor(a, 'webhook')).toMatch(/^[0-9a-f]{32}$/);
  });
});

describe('deliverPending', () => {
  it('delivers each due row once and records the attempt count', async () => {
    const clock = () => T0;
    const store = new MemoryStore(clock);
    store.add(alert('1'), 'log');
    store.add(alert('1'), 'webhook');
    const log = scriptedSink('log');
    const hook = scriptedSink('webhook');
    const result = await deliverPending({
      store,
      sinks: [log.sink, hook.sink],
      logger: silentLogger,
      now: clock,
    });
    expect(result).toEqual({
      delivered: 2,
      retried: 0,
      failed: 0,
      bySink: {
        log: { delivered: 1, retried: 0, failed: 0 },
        webhook: { delivered: 1, retried: 0, failed: 0 },
      },
    });
    expect(store.rows.map((r) => [r.status, r.attempts, r.deliveredAt])).toEqual([
      ['delivered', 1, T0],
      ['delivered', 1, T0],
    ]);
    expect(hook.calls[0]?.delivery).toEqual({ deliveryId: deliveryIdFor(alert('1'), 'webhook'), attempt: 1 });
    expect(
      await deliverPending({ store, sinks: [log.sink, hook.sink], logger: silentLogger, now: clock }),
    ).toMatchObject({
      delivered: 0,
    });
  });

  it('schedules a retry for a failure and keeps delivering to the other sinks', async () => {
    const clock = () => T0;
    const store = new MemoryStore(clock);
    store.add(alert('1'), 'webhook');
    store.add(alert('1'), 'slack');
    store.add(alert('2'), 'webhook');
    const hook = scriptedSink('webhook', () => retryable(503));
    const slack = scriptedSink('slack');
    const result = await deliverPending({
      store,
      sinks: [hook.sink, slack.sink],
      logger: silentLogger,
      now: clock,
      random: () => 1,
    });
    expect(result.bySink).toEqual({
      webhook: { delivered: 0, retried: 2, failed: 0 },
      slack: { delivered: 1, retried: 0, failed: 0 },
    });
    const failed = store.rows.filter((r) => r.sink === 'webhook');
    expect(failed.map((r) => [r.status, r.attempts, r.nextAttemptAt.getTime() - T0.getTime()])).toEqual([
      ['pending', 1, 30_000],
      ['pending', 1, 30_000],
    ]);
    expect(failed[0]?.lastError).toBe('DELIVERY_FAILED: webhook: HTTP 503');
  });

  it('marks a permanent (4xx) failure failed at once, with the reason, and never attempts it again', async () => {
    let now = T0;
    const store = new MemoryStore(() => now);
    store.add(alert('1'), 'webhook');
    const hook = scriptedSink('webhook', () => retryable(404));
    const { logger, lines } = capturingLogger();
    const result = await deliverPending({ store, sinks: [hook.sink], logger, now: () => now });
    expect(result).toMatchObject({ delivered: 0, retried: 0, failed: 1 });
    expect(store.rows[0]).toMatchObject({
      status: 'failed',
      attempts: 1,
      lastError: 'permanent: DELIVERY_FAILED: webhook: HTTP 404',
    });
    const error = lines.find((l) => l['level'] === 50);
    expect(error).toMatchObject({
      alertId: '1',
      sink: 'webhook',
      dedupeKey: 'AIGOV-002:acme:E1',
      msg: 'alert delivery failed permanently; not retrying',
    });
    now = at(GIVE_UP_AFTER_MS * 2);
    await deliverPending({ store, sinks: [hook.sink], logger: silentLogger, now: () => now });
    expect(hook.calls).toHaveLength(1);
  });

  it('waits at least the Retry-After a sink reports, when it is longer than the backoff', async () => {
    const store = new MemoryStore(() => T0);
    store.add(alert('1'), 'pagerduty');
    store.add(alert('2'), 'pagerduty');
    const pd = scriptedSink('pagerduty', (n) =>
      retryableFailure('pagerduty', 'HTTP 429', { status: 429, retryAfterMs: n === 1 ? 600_000 : 1000 }),
    );
    await deliverPending({ store, sinks: [pd.sink], logger: silentLogger, now: () => T0, random: () => 1 });
    expect(store.rows.map((r) => [r.status, r.nextAttemptAt.getTime() - T0.getTime()])).toEqual([
      ['pending', 600_000],
      // A shorter Retry-After does not shorten the backoff.
      ['pending', 30_000],
    ]);
  });

  it('uses the first attempt time for the 24-hour limit, not the alert creation time', async () => {
    let now = at(GIVE_UP_AFTER_MS + 5000);
    const store = new MemoryStore(() => now);
    store.add(alert('1'), 'webhook');
    const hook = scriptedSink('webhook', () => retryable(500));
    const result = await deliverPending({ store, sinks: [hook.sink], logger: silentLogger, now: () => now });
    expect(result.retried).toBe(1);
    now = at(GIVE_UP_AFTER_MS * 2 + 5000);
    expect(
      (await deliverPending({ store, sinks: [hook.sink], logger: silentLogger, now: () => now })).failed,
    ).toBe(1);
  });

  it('retries a row whose sink is not configured, so re-adding the sink still delivers it', async () => {
    const store = new MemoryStore(() => T0);
    store.add(alert('1'), 'slack');
    const result = await deliverPending({ store, sinks: [], logger: silentLogger, now: () => T0 });
    expect(result.retried).toBe(1);
    expect(store.rows[0]).toMatchObject({
      status: 'pending',
      lastError: 'DELIVERY_FAILED: slack: this sink is not configured',
    });
  });

  it('wraps an error that is not a GovtrailError, and retries it: only a sink says permanent', async () => {
    const store = new MemoryStore(() => T0);
    store.add(alert('1'), 'webhook');
    const hook = scriptedSink('webhook', () => new TypeError('boom'));
    const result = await deliverPending({ store, sinks: [hook.sink], logger: silentLogger, now: () => T0 });
    expect(result.retried).toBe(1);
    expect(store.rows[0]).toMatchObject({ status: 'pending', lastError: 'DELIVERY_FAILED: boom' });
  });

  it('attempts nothing once the signal is aborted', async () => {
    const store = new MemoryStore(() => T0);
    store.add(alert('1'), 'log');
    const log = scriptedSink('log');
    const ac = new AbortController();
    ac.abort();
    const result = await deliverPending({
      store,
      sinks: [log.sink],
      logger: silentLogger,
      now: () => T0,
      signal: ac.signal,
    });
    expect(result.delivered).toBe(0);
    expect(log.calls).toEqual([]);
  });

  it('a slow sink does not hold up another one', async () => {
    const store = new MemoryStore(() => T0);
    store.add(alert('1'), 'webhook');
    store.add(alert('1'), 'log');
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const slow: Sink = { name: 'webhook', deliver: () => gate };
    const logDelivered = new Promise<void>((resolve) => {
      const markDelivered = store.markDelivered.bind(store);
      store.markDelivered = async (...args) => {
        await markDelivered(...args);
        if (args[1] === 'log') resolve();
      };
    });
    const done = deliverPending({
      store,
      sinks: [slow, scriptedSink('log').sink],
      logger: silentLogger,
      now: () => T0,
    });
    await logDelivered;
    expect(store.calls).toEqual(['delivered 1/log']);
    release();
    await done;
    expect(store.calls).toEqual(['delivered 1/log', 'delivered 1/webhook']);
  });

  it('rethrows a store failure after the other sinks have finished', async () => {
    const store = new MemoryStore(() => T0);
    store.add(alert('1'), 'webhook');
    store.add(alert('1'), 'log');
    const original = store.markRetry.bind(store);
    store.markRetry = async () => {
      throw new Error('database gone');
    };
    const hook = scriptedSink('webhook', () => retryable(500));
    const log = scriptedSink('log');
    await expect(
      deliverPending({ store, sinks: [hook.sink, log.sink], logger: silentLogger, now: () => T0 }),
    ).rejects.toMatchObject({ code: 'DATABASE', message: 'database gone' });
    expect(store.rows.find((r) => r.sink === 'log')?.status).toBe('delivered');
    store.markRetry = original;
  });

  it('passes the attempt number and the same delivery id on every retry', async () => {
    let now = T0;
    const store = new MemoryStore(() => now);
    store.add(alert('1'), 'webhook');
    const hook = scriptedSink('webhook', (n) => (n < 3 ? retryable(502) : undefined));
    for (let i = 0; i < 3; i++) {
      await deliverPending({ store, sinks: [hook.sink], logger: silentLogger, now: () => now });
      now = store.rows[0]?.nextAttemptAt ?? now;
    }
    expect(hook.calls.map((c) => c.delivery.attempt)).toEqual([1, 2, 3]);
    expect(new Set(hook.calls.map((c) => c.delivery.deliveryId)).size).toBe(1);
    expect(store.rows[0]).toMatchObject({ status: 'delivered', attempts: 3 });
  });

  describe('a digest sink (deliverBatch)', () => {
    it('gets all of its due rows in one call, each with its own delivery id, and all are recorded delivered', async () => {
      const clock = () => T0;
      const store = new MemoryStore(clock);
      for (const id of ['1', '2', '3']) store.add(alert(id), 'email');
      store.add(alert('1'), 'webhook');
      const email = batchSink('email');
      const hook = scriptedSink('webhook');
      const result = await deliverPending({
        store,
        sinks: [email.sink, hook.sink],
        logger: silentLogger,
        now: clock,
      });
      expect(email.batches).toHaveLength(1);
      expect(email.batches[0]?.map((i) => [i.alert.alertId, i.delivery])).toEqual(
        ['1', '2', '3'].map((id) => [id, { deliveryId: deliveryIdFor(alert(id), 'email'), attempt: 1 }]),
      );
      expect(result.bySink['email']).toEqual({ delivered: 3, retried: 0, failed: 0 });
      expect(hook.calls).toHaveLength(1);
      expect(store.rows.every((r) => r.status === 'delivered' && r.attempts === 1)).toBe(true);
    });

    it('a retryable failure schedules every row of the batch; the next pass resends them together', async () => {
      let now = T0;
      const store = new MemoryStore(() => now);
      store.add(alert('1'), 'email');
      store.add(alert('2'), 'email');
      const email = batchSink('email', (n) => (n === 1 ? retryableFailure('email', 'SMTP 451') : undefined));
      const pass = () =>
        deliverPending({ store, sinks: [email.sink], logger: silentLogger, now: () => now, random: () => 1 });
      expect((await pass()).bySink['email']).toEqual({ delivered: 0, retried: 2, failed: 0 });
      expect(store.rows.map((r) => [r.status, r.attempts, r.lastError])).toEqual([
        ['pending', 1, 'DELIVERY_FAILED: email: SMTP 451'],
        ['pending', 1, 'DELIVERY_FAILED: email: SMTP 451'],
      ]);
      now = at(30_000);
      expect((await pass()).bySink['email']).toEqual({ delivered: 2, retried: 0, failed: 0 });
      expect(email.batches.map((b) => b.map((i) => i.delivery.attempt))).toEqual([
        [1, 1],
        [2, 2],
      ]);
    });

    it('a permanent failure fails every row of the batch at once', async () => {
      const store = new MemoryStore(() => T0);
      store.add(alert('1'), 'email');
      store.add(alert('2'), 'email');
      const email = batchSink(
        'email',
        () => new GovtrailError('DELIVERY_FAILED', 'SMTP 535', { retryable: false }),
      );
      expect(
        (await deliverPending({ store, sinks: [email.sink], logger: silentLogger, now: () => T0 })).bySink[
          'email'
        ],
      ).toEqual({
        delivered: 0,
        retried: 0,
        failed: 2,
      });
      expect(store.rows.map((r) => r.lastError)).toEqual([
        'permanent: DELIVERY_FAILED: SMTP 535',
        'permanent: DELIVERY_FAILED: SMTP 535',
      ]);
    });
  });
});
