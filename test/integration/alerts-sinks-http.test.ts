import { createHmac } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Agent } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import {
  type DeliveryStore,
  type DueDelivery,
  deliverPending,
  deliveryIdFor,
} from '../../src/alerts/deliver.js';
import { createSlackSink, createWebhookSink } from '../../src/alerts/sinks/index.js';
import type { AlertMessage } from '../../src/core/alert.js';
import { GovtrailError } from '../../src/core/errors.js';
import { silentLogger } from '../../src/runtime/logger.js';
import { sampleAlert } from '../helpers/alert-message.js';

const T0 = new Date('2025-03-04T00:00:00.000Z');
const SECRET = 'whsec-test-0123456789abcdef';

/** The shared sample alert, without its ticket. */
const SAMPLE = sampleAlert(T0);
const ALERT: AlertMessage = { ...SAMPLE, context: { ...SAMPLE.context, tickets: [] } };

interface Received {
  readonly method: string;
  readonly url: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: Buffer;
}

type Reply = { status: number; body?: string; headers?: Record<string, string> } | 'hang';

/** A real HTTP receiver on an ephemeral port that records requests and answers from a script. */
async function receiver(reply: (n: number, req: Received) => Reply = () => ({ status: 200, body: 'ok' })) {
  const received: Received[] = [];
  const hanging: ServerResponse[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const r: Received = {
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks),
      };
      received.push(r);
      const answer = reply(received.length, r);
      if (answer === 'hang') {
        hanging.push(res);
        return;
      }
      res.writeHead(answer.status, { 'content-type': 'text/plain', ...answer.headers });
      res.end(answer.body ?? '');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const close = async () => {
    for (const res of hanging) res.destroy();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  cleanups.push(close);
  return { url: `http://127.0.0.1:${port}/hook`, received, close };
}

/** A URL on which nothing listens: a port that was just released. */
async function deadUrl(): Promise<string> {
  const r = await receiver();
  await r.close();
  return r.url;
}

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});

/** A private undici agent per use, closed after the test so no socket outlives it. */
function dispatcher(): Agent {
  const agent = new Agent({ connectTimeout: 2000 });
  cleanups.push(() => agent.close());
  return agent;
}

interface Row {
  alert: AlertMessage;
  sink: string;
  status: 'pending' | 'delivered' | 'failed';
  attempts: number;
  nextAttemptAt: Date;
  firstAttemptAt: Date | null;
  lastError: string | null;
}

/** alert_delivery in memory, on the test's clock. */
function memoryStore(clock: () => Date, rows: Row[]): DeliveryStore {
  const find = (alertId: string, sink: string): Row => {
    const row = rows.find((r) => r.alert.alertId === alertId && r.sink === sink);
    if (row === undefined) throw new Error(`no row ${alertId}/${sink}`);
    row.firstAttemptAt ??= clock();
    return row;
  };
  return {
    async dueDeliveries(now, limit): Promise<DueDelivery[]> {
      return rows
        .filter((r) => r.status === 'pending' && r.nextAttemptAt <= now)
        .slice(0, limit)
        .map((r) => ({
          alert: r.alert,
          sink: r.sink,
          attempts: r.attempts,
          firstAttemptAt: r.firstAttemptAt,
        }));
    },
    async markDelivered(alertId, sink, attempts) {
      Object.assign(find(alertId, sink), { status: 'delivered', attempts, lastError: null });
    },
    async markRetry(alertId, sink, attempts, nextAttemptAt, error) {
      Object.assign(find(alertId, sink), { attempts, nextAttemptAt, lastError: error });
    },
    async markFailed(alertId, sink, attempts, error) {
      Object.assign(find(alertId, sink), { status: 'failed', attempts, lastError: error });
    },
  };
}

function pendingRow(sink: string): Row {
  return {
    alert: ALERT,
    sink,
    status: 'pending',
    attempts: 0,
    nextAttemptAt: T0,
    firstAttemptAt: null,
    lastError: null,
  };
}

describe('webhook sink over HTTP', () => {
  it('POSTs the alert as JSON with a signature that verifies over the raw body', async () => {
    const r = await receiver();
    const sink = createWebhookSink({ url: r.url, secret: SECRET, dispatcher: dispatcher() });
    await sink.deliver(ALERT, { deliveryId: 'abc123', attempt: 1 });

    expect(r.received).toHaveLength(1);
    const req = r.received[0] as Received;
    expect(req.method).toBe('POST');
    expect(req.url).toBe('/hook');
    expect(req.headers['content-type']).toBe('application/json');
    expect(req.headers['x-govtrail-event']).toBe('alert');
    expect(req.headers['x-govtrail-delivery']).toBe('abc123');
    expect(req.headers['x-govtrail-attempt']).toBe('1');
    const expected = `sha256=${createHmac('sha256', SECRET).update(req.body).digest('hex')}`;
    expect(req.headers['x-govtrail-signature']).toBe(expected);
    const wrong = `sha256=${createHmac('sha256', 'another-secret').update(req.body).digest('hex')}`;
    expect(req.headers['x-govtrail-signature']).not.toBe(wrong);

    const body = JSON.parse(req.body.toString('utf8'));
    expect(body).toMatchObject({
      type: 'govtrail.alert',
      alert: { id: '7', ruleId: 'AIGOV-002', severity: 'high', dedupeKey: ALERT.dedupeKey, tenantId: 'acme' },
    });
    expect(body.alert.context.changes[0]).toMatchObject({
      field: 'require_tool_approval',
      oldValue: true,
      newValue: false,
    });
  });

  it('sends no signature without a secret', async () => {
    const r = await receiver();
    await createWebhookSink({ url: r.url, dispatcher: dispatcher() }).deliver(ALERT, {
      deliveryId: 'x',
      attempt: 1,
    });
    expect(r.received[0]?.headers['x-govtrail-signature']).toBeUndefined();
  });

  it.each([
    [400, false],
    [404, false],
    [408, true],
    [429, true],
    [500, true],
    [503, true],
  ])('HTTP %i is DELIVERY_FAILED with retryable %s', async (status, retryable) => {
    const r = await receiver(() => ({ status, body: `{"error":"status ${status}"}` }));
    const err = await createWebhookSink({ url: r.url, dispatcher: dispatcher() })
      .deliver(ALERT, { deliveryId: 'x', attempt: 1 })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(GovtrailError);
    expect(err).toMatchObject({ code: 'DELIVERY_FAILED', retryable, status });
    expect((err as Error).message).toBe(`webhook: HTTP ${status}: {"error":"status ${status}"}`);
  });

  it('does not follow a redirect', async () => {
    const r = await receiver((n) =>
      n === 1 ? { status: 302, headers: { location: '/elsewhere' } } : { status: 200 },
    );
    const err = await createWebhookSink({ url: r.url, dispatcher: dispatcher() })
      .deliver(ALERT, { deliveryId: 'x', attempt: 1 })
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'DELIVERY_FAILED', status: 302, retryable: false });
    expect(r.received.map((q) => q.url)).toEqual(['/hook']);
  });

  it('reports a refused connection as retryable', async () => {
    const err = await createWebhookSink({ url: await deadUrl(), dispatcher: dispatcher() })
      .deliver(ALERT, { deliveryId: 'x', attempt: 1 })
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'DELIVERY_FAILED', retryable: true, status: undefined });
    expect((err as Error).message).toMatch(/^webhook: /);
  });

  it('gives up on a receiver that never answers after the timeout, as retryable', async () => {
    const r = await receiver(() => 'hang');
    const err = await createWebhookSink({ url: r.url, dispatcher: dispatcher(), timeoutMs: 150 })
      .deliver(ALERT, { deliveryId: 'x', attempt: 1 })
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'DELIVERY_FAILED', retryable: true });
    expect((err as Error).message).toBe('webhook: timed out after 150 ms');
  });
});

describe('deliverPending over HTTP', () => {
  it('a receiver that fails three times then succeeds gets the alert exactly once, after four attempts', async () => {
    const r = await receiver((n) => (n <= 3 ? { status: 503, body: 'busy' } : { status: 204 }));
    let now = T0;
    const rows = [pendingRow('webhook')];
    const store = memoryStore(() => now, rows);
    const sinks = [createWebhookSink({ url: r.url, secret: SECRET, dispatcher: dispatcher() })];

    for (let run = 1; run <= 4; run++) {
      // Not due yet: a run before next_attempt_at sends nothing.
      if (run > 1) {
        expect(await deliverPending({ store, sinks, logger: silentLogger, now: () => now })).toMatchObject({
          delivered: 0,
          retried: 0,
        });
        now = rows[0]?.nextAttemptAt as Date;
      }
      const result = await deliverPending({ store, sinks, logger: silentLogger, now: () => now });
      expect(result.bySink['webhook']).toEqual(
        run < 4 ? { delivered: 0, retried: 1, failed: 0 } : { delivered: 1, retried: 0, failed: 0 },
      );
    }
    expect(rows[0]).toMatchObject({ status: 'delivered', attempts: 4, lastError: null });
    expect(r.received).toHaveLength(4);
    expect(r.received.map((q) => q.headers['x-govtrail-attempt'])).toEqual(['1', '2', '3', '4']);
    const ids = new Set(r.received.map((q) => q.headers['x-govtrail-delivery']));
    expect([...ids]).toEqual([deliveryIdFor(ALERT, 'webhook')]);
    // The body, and so the signature, is the same on every retry.
    expect(new Set(r.received.map((q) => q.headers['x-govtrail-signature'])).size).toBe(1);

    now = new Date(now.getTime() + 86_400_000);
    await deliverPending({ store, sinks, logger: silentLogger, now: () => now });
    expect(r.received).toHaveLength(4);
  });

  it('one failing sink does not stop another', async () => {
    const slack = await receiver();
    const rows = [pendingRow('webhook'), pendingRow('slack')];
    const store = memoryStore(() => T0, rows);
    const d = dispatcher();
    const sinks = [
      createWebhookSink({ url: await deadUrl(), dispatcher: d }),
      createSlackSink({ url: slack.url, dispatcher: d }),
    ];
    const result = await deliverPending({ store, sinks, logger: silentLogger, now: () => T0 });
    expect(result.bySink).toEqual({
      webhook: { delivered: 0, retried: 1, failed: 0 },
      slack: { delivered: 1, retried: 0, failed: 0 },
    });
    expect(rows.map((row) => row.status)).toEqual(['pending', 'delivered']);
    expect(rows[0]?.lastError).toMatch(/^DELIVERY_FAILED: webhook: /);
    expect(slack.received).toHaveLength(1);
  });
});

describe('Slack sink over HTTP', () => {
  it('posts a valid Block Kit message', async () => {
    const r = await receiver();
    await createSlackSink({ url: r.url, dispatcher: dispatcher() }).deliver(ALERT, {
      deliveryId: 'x',
      attempt: 1,
    });
    const req = r.received[0] as Received;
    expect(req.headers['content-type']).toBe('application/json');
    const body = JSON.parse(req.body.toString('utf8')) as {
      text: string;
      attachments: Array<{ color: string; blocks: Array<{ type: string; text?: { text: string } }> }>;
    };
    expect(body.text).toBe('[HIGH] Tool approval was turned off (tenant acme)');
    expect(body.attachments).toHaveLength(1);
    expect(body.attachments[0]?.color).toBe('#d32f2f');
    expect(body.attachments[0]?.blocks.map((b) => b.type)).toEqual([
      'header',
      'section',
      'section',
      'section',
      'context',
    ]);
    expect(body.attachments[0]?.blocks[2]?.text?.text).toContain(
      '`requireToolApproval`: true → false _(loosened)_',
    );
  });

  it('a Slack error answer (404 no_service) is a failed delivery', async () => {
    const r = await receiver(() => ({ status: 404, body: 'no_service' }));
    const err = await createSlackSink({ url: r.url, dispatcher: dispatcher() })
      .deliver(ALERT, { deliveryId: 'x', attempt: 1 })
      .catch((e: unknown) => e);
    expect(err).toMatchObject({
      code: 'DELIVERY_FAILED',
      status: 404,
      message: 'slack: HTTP 404: no_service',
    });
  });
});
