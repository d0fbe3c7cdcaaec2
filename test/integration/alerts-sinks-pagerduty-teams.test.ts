/**
 * The PagerDuty and Teams sinks over real sockets, against local receivers that implement the
 * documented contracts (docs/design/alert-destinations.md): PagerDuty's Events API v2 answers 202 to a valid
 * event, 400 with its list of errors to an invalid one, 429 with Retry-After when rate limited and
 * 5xx when broken; a Teams Workflows webhook answers 202 with an empty body.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Agent } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import {
  type DeliveryStore,
  type DueDelivery,
  deliverPending,
  deliveryIdFor,
} from '../../src/alerts/deliver.js';
import { createPagerDutySink, createTeamsSink, DeliveryError } from '../../src/alerts/sinks/index.js';
import type { AlertMessage, Sink } from '../../src/core/alert.js';
import { silentLogger } from '../../src/runtime/logger.js';
import { sampleAlert } from '../helpers/alert-message.js';

const KEY = 'R0UT1NGKEY0123456789abcdefABCDEF';
const T0 = new Date('2025-03-04T00:00:00.000Z');

const ALERT = sampleAlert(T0);

interface Received {
  readonly url: string;
  readonly headers: IncomingHttpHeaders;
  readonly text: string;
  readonly json: Record<string, unknown>;
}

interface Answer {
  readonly status: number;
  readonly body?: string;
  readonly headers?: Record<string, string>;
}

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});

async function listen(
  answer: (r: Received, n: number) => Answer,
): Promise<{ url: string; received: Received[] }> {
  const received: Received[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      let json: Record<string, unknown> = {};
      try {
        json = JSON.parse(text) as Record<string, unknown>;
      } catch {
        // The contract checks below answer 400 to a body that is not JSON.
      }
      const r: Received = { url: req.url ?? '', headers: req.headers, text, json };
      received.push(r);
      const a = answer(r, received.length);
      res.writeHead(a.status, { 'content-type': 'application/json', ...a.headers }).end(a.body ?? '');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, received };
}

function dispatcher(): Agent {
  const agent = new Agent({ connectTimeout: 2000 });
  cleanups.push(() => agent.close());
  return agent;
}

/** What PagerDuty's Events API v2 says about an event (its 400 list of errors), empty when valid. */
function pagerDutyErrors(event: Record<string, unknown>, knownKeys: readonly string[]): string[] {
  const errors: string[] = [];
  const payload = event['payload'] as Record<string, unknown> | undefined;
  if (typeof event['routing_key'] !== 'string' || event['routing_key'].length !== 32) {
    errors.push("Length of 'routing_key' is incorrect (should be 32 characters)");
  } else if (!knownKeys.includes(event['routing_key'])) errors.push('Invalid routing key');
  if (!['trigger', 'acknowledge', 'resolve'].includes(String(event['event_action']))) {
    errors.push("'event_action' is invalid");
  }
  const dedup = event['dedup_key'];
  if (dedup !== undefined && (typeof dedup !== 'string' || dedup.length > 255)) {
    errors.push("'dedup_key' is too long");
  }
  if (payload === undefined) errors.push("'payload' is missing or blank");
  else {
    const summary = payload['summary'];
    if (typeof summary !== 'string' || summary === '' || summary.length > 1024) {
      errors.push("'payload.summary' is missing, blank or too long");
    }
    if (typeof payload['source'] !== 'string' || payload['source'] === '') {
      errors.push("'payload.source' is missing or blank");
    }
    if (!['critical', 'error', 'warning', 'info'].includes(String(payload['severity']))) {
      errors.push("'payload.severity' is invalid (must be one of critical, error, warning, info)");
    }
  }
  return errors;
}

/**
 * A PagerDuty Events API v2 endpoint at /v2/enqueue. `trouble(n)` can make the n-th request
 * rate-limited or failing before the event is looked at.
 */
async function pagerDuty(
  o: { knownKeys?: readonly string[]; trouble?: (n: number) => Answer | undefined } = {},
) {
  const r = await listen((req, n) => {
    const trouble = o.trouble?.(n);
    if (trouble !== undefined) return trouble;
    if (req.url !== '/v2/enqueue') return { status: 404, body: '{"status":"not found"}' };
    const errors = pagerDutyErrors(req.json, o.knownKeys ?? [KEY]);
    if (errors.length > 0) {
      return {
        status: 400,
        body: JSON.stringify({ status: 'invalid event', message: 'Event object is invalid', errors }),
      };
    }
    return {
      status: 202,
      body: JSON.stringify({
        status: 'success',
        message: 'Event processed',
        dedup_key: req.json['dedup_key'],
      }),
    };
  });
  return { ...r, url: `${r.url}/v2/enqueue` };
}

const THROTTLED: Answer = {
  status: 429,
  headers: { 'retry-after': '7' },
  body: '{"status":"throttle event","message":"Requests for this service are arriving too quickly. Please retry later."}',
};

async function failureOf(sink: Sink, alert: AlertMessage = ALERT): Promise<DeliveryError> {
  const err = await sink.deliver(alert, { deliveryId: 'x', attempt: 1 }).then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(err instanceof DeliveryError)) throw new Error(`expected a DeliveryError, got ${String(err)}`);
  return err;
}

/** alert_delivery in memory, for the outbox over these receivers. */
function memoryStore(
  rows: Array<{ sink: string; status: string; attempts: number; next: Date; lastError: string | null }>,
) {
  const store: DeliveryStore = {
    async dueDeliveries(now): Promise<DueDelivery[]> {
      return rows
        .filter((r) => r.status === 'pending' && r.next <= now)
        .map((r) => ({ alert: ALERT, sink: r.sink, attempts: r.attempts, firstAttemptAt: T0 }));
    },
    async markDelivered(_id, sink, attempts) {
      Object.assign(rows.find((r) => r.sink === sink) ?? {}, {
        status: 'delivered',
        attempts,
        lastError: null,
      });
    },
    async markRetry(_id, sink, attempts, next, lastError) {
      Object.assign(rows.find((r) => r.sink === sink) ?? {}, { attempts, next, lastError });
    },
    async markFailed(_id, sink, attempts, lastError) {
      Object.assign(rows.find((r) => r.sink === sink) ?? {}, { status: 'failed', attempts, lastError });
    },
  };
  return store;
}

describe('PagerDuty sink against an Events API v2 receiver', () => {
  it('202: a trigger event keyed by the dedupe key, with the mapped severity, no auth header', async () => {
    const pd = await pagerDuty();
    await createPagerDutySink({ routingKey: KEY, url: pd.url, dispatcher: dispatcher() }).deliver(ALERT, {
      deliveryId: 'x',
      attempt: 1,
    });
    expect(pd.received).toHaveLength(1);
    const req = pd.received[0] as Received;
    expect(req.headers['content-type']).toBe('application/json');
    expect(req.headers['authorization']).toBeUndefined();
    const payload = req.json['payload'] as Record<string, unknown>;
    expect(req.json['routing_key']).toBe(KEY);
    expect(req.json['event_action']).toBe('trigger');
    expect(req.json['dedup_key']).toBe(ALERT.dedupeKey);
    expect(payload['severity']).toBe('error');
    expect(payload['summary']).toBe('[HIGH] Tool approval was turned off (tenant acme)');
    expect(payload['source']).toBe('acme');
    expect(payload['component']).toBe('ai-governance-settings');
    expect((payload['custom_details'] as Record<string, unknown>)['changes']).toEqual([
      { field: 'requireToolApproval', before: 'true', after: 'false', direction: 'loosened' },
    ]);
    expect(req.json['links']).toEqual([{ href: 'https://jira.example/browse/SEC-9', text: 'Ticket SEC-9' }]);
  });

  it('400: permanent, with PagerDuty’s list of errors in the message', async () => {
    const pd = await pagerDuty({ knownKeys: ['another-key-0123456789abcdefABCD'] });
    const err = await failureOf(
      createPagerDutySink({ routingKey: KEY, url: pd.url, dispatcher: dispatcher() }),
    );
    expect(err).toMatchObject({ code: 'DELIVERY_FAILED', retryable: false, status: 400 });
    expect(err.message).toBe(
      'pagerduty: HTTP 400: {"status":"invalid event","message":"Event object is invalid","errors":["Invalid routing key"]}',
    );
  });

  it('429: retryable, carrying the Retry-After', async () => {
    const pd = await pagerDuty({ trouble: () => THROTTLED });
    const err = await failureOf(
      createPagerDutySink({ name: 'pd-oncall', routingKey: KEY, url: pd.url, dispatcher: dispatcher() }),
    );
    expect(err).toMatchObject({ retryable: true, status: 429, retryAfterMs: 7000 });
    expect(err.message).toMatch(/^pd-oncall: HTTP 429: .*throttle event/);
  });

  it.each([500, 502, 503])('%i: retryable', async (status) => {
    const pd = await pagerDuty({ trouble: () => ({ status, body: '{"status":"unavailable"}' }) });
    const err = await failureOf(
      createPagerDutySink({ routingKey: KEY, url: pd.url, dispatcher: dispatcher() }),
    );
    expect(err).toMatchObject({ retryable: true, status });
  });

  it('through the outbox: a 429 waits out its Retry-After, then the repeat carries the same dedup_key', async () => {
    const pd = await pagerDuty({
      trouble: (n) => (n === 1 ? { ...THROTTLED, headers: { 'retry-after': '120' } } : undefined),
    });
    const rows = [
      { sink: 'pagerduty', status: 'pending', attempts: 0, next: T0, lastError: null as string | null },
    ];
    const store = memoryStore(rows);
    const sinks = [createPagerDutySink({ routingKey: KEY, url: pd.url, dispatcher: dispatcher() })];
    const first = await deliverPending({
      store,
      sinks,
      logger: silentLogger,
      now: () => T0,
      random: () => 0,
    });
    expect(first.retried).toBe(1);
    // Backoff alone would retry after 15 s; PagerDuty asked for 120.
    expect(rows[0]?.next.getTime()).toBe(T0.getTime() + 120_000);
    const later = rows[0]?.next as Date;
    expect(await deliverPending({ store, sinks, logger: silentLogger, now: () => later })).toMatchObject({
      delivered: 1,
    });
    expect(rows[0]).toMatchObject({ status: 'delivered', attempts: 2 });
    const keys = pd.received.map((r) => r.json['dedup_key']);
    expect(keys).toEqual([ALERT.dedupeKey, ALERT.dedupeKey]);
    expect(pd.received[0]?.text).toBe(pd.received[1]?.text);
  });

  it('through the outbox: a 400 is marked failed at once with the reason, never sent again', async () => {
    const pd = await pagerDuty({ knownKeys: [] });
    const rows = [
      { sink: 'pagerduty', status: 'pending', attempts: 0, next: T0, lastError: null as string | null },
    ];
    const store = memoryStore(rows);
    const sinks = [createPagerDutySink({ routingKey: KEY, url: pd.url, dispatcher: dispatcher() })];
    expect(await deliverPending({ store, sinks, logger: silentLogger, now: () => T0 })).toMatchObject({
      failed: 1,
    });
    expect(rows[0]).toMatchObject({ status: 'failed', attempts: 1 });
    expect(rows[0]?.lastError).toMatch(
      /^permanent: DELIVERY_FAILED: pagerduty: HTTP 400: .*Invalid routing key/,
    );
    await deliverPending({
      store,
      sinks,
      logger: silentLogger,
      now: () => new Date(T0.getTime() + 86_400_000),
    });
    expect(pd.received).toHaveLength(1);
  });
});

describe('Teams sink against a Workflows webhook', () => {
  /** A workflow trigger: 202 and an empty body for anything it can read (even without attachments). */
  const workflow = (status = 202) => listen(() => ({ status, body: '' }));

  it.each([202, 200])('%i: delivered, as one Adaptive Card 1.4 in a message envelope', async (status) => {
    const teams = await workflow(status);
    const sink = createTeamsSink({
      url: `${teams.url}/workflows/1/invoke?sig=abc`,
      dispatcher: dispatcher(),
    });
    await sink.deliver(ALERT, { deliveryId: deliveryIdFor(ALERT, 'teams'), attempt: 1 });
    const req = teams.received[0] as Received;
    expect(req.url).toBe('/workflows/1/invoke?sig=abc');
    expect(req.headers['content-type']).toBe('application/json');
    expect(req.json['type']).toBe('message');
    const attachments = req.json['attachments'] as Array<Record<string, unknown>>;
    expect(attachments).toHaveLength(1);
    expect(attachments[0]?.['contentType']).toBe('application/vnd.microsoft.card.adaptive');
    const card = attachments[0]?.['content'] as Record<string, unknown>;
    expect(card['type']).toBe('AdaptiveCard');
    expect(card['version']).toBe('1.4');
    expect((card['body'] as Array<Record<string, unknown>>)[0]).toMatchObject({
      type: 'Container',
      style: 'attention',
    });
    expect(card['actions']).toEqual([
      { type: 'Action.OpenUrl', title: 'Ticket SEC-9', url: 'https://jira.example/browse/SEC-9' },
    ]);
    expect(Buffer.byteLength(req.text)).toBeLessThanOrEqual(20 * 1024);
  });

  it('400 and 404 (a deleted workflow) are permanent; 429 and 502 are retried', async () => {
    for (const [status, retryable] of [
      [400, false],
      [404, false],
      [429, true],
      [502, true],
    ] as const) {
      const teams = await listen(() => ({ status, body: '{"error":{"code":"x","message":"refused"}}' }));
      const err = await failureOf(createTeamsSink({ url: teams.url, dispatcher: dispatcher() }));
      expect(err).toMatchObject({ status, retryable });
      expect(err.message).toMatch(new RegExp(`^teams: HTTP ${status}: .*refused`));
    }
  });

  it('a repeat delivery after a 503 carries the same delivery id and the same card', async () => {
    const teams = await listen((_r, n) => ({ status: n === 1 ? 503 : 202 }));
    const rows = [
      { sink: 'teams', status: 'pending', attempts: 0, next: T0, lastError: null as string | null },
    ];
    const store = memoryStore(rows);
    const sinks = [createTeamsSink({ url: teams.url, dispatcher: dispatcher() })];
    await deliverPending({ store, sinks, logger: silentLogger, now: () => T0 });
    const later = rows[0]?.next as Date;
    await deliverPending({ store, sinks, logger: silentLogger, now: () => later });
    expect(rows[0]).toMatchObject({ status: 'delivered', attempts: 2 });
    expect(teams.received).toHaveLength(2);
    const ids = teams.received.map((r) => r.headers['x-govtrail-delivery']);
    expect(ids).toEqual([deliveryIdFor(ALERT, 'teams'), deliveryIdFor(ALERT, 'teams')]);
    expect(teams.received[0]?.text).toBe(teams.received[1]?.text);
    expect(teams.received[0]?.text).toContain(`delivery ${deliveryIdFor(ALERT, 'teams')}`);
  });
});
