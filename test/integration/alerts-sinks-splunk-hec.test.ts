/**
 * The Splunk HEC sink over real sockets, against a local receiver implementing HEC's contract
 * (docs/design/alert-destinations.md, "Splunk HTTP Event Collector"): `POST /services/collector/event` with
 * `Authorization: Splunk <token>`, one JSON envelope whose `event` is required; `{"text":"Success",
 * "code":0}` on 200, code 2/4 on 401/403 (token), 5/6/12 on 400 (bad data), 9 on 503 (busy).
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Agent } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { type DeliveryStore, type DueDelivery, deliverPending } from '../../src/alerts/deliver.js';
import { createSinks, createSplunkHecSink, DeliveryError } from '../../src/alerts/sinks/index.js';
import { loadConfig } from '../../src/config/settings.js';
import type { AlertMessage, Sink } from '../../src/core/alert.js';
import { silentLogger } from '../../src/runtime/logger.js';
import { sampleAlert } from '../helpers/alert-message.js';
import { validateOcsfEvent } from '../helpers/ocsf.js';

const TOKEN = '0c1f5a2e-6b7d-4e8f-9a0b-1c2d3e4f5a6b';
const T0 = new Date('2025-03-04T00:00:00.123Z');

const ALERT = sampleAlert(T0);

interface Received {
  readonly url: string;
  readonly headers: IncomingHttpHeaders;
  readonly text: string;
}

interface Answer {
  readonly status: number;
  readonly body: Record<string, unknown>;
}

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});

/** HEC's checks of one request, as Splunk answers them. */
function hecAnswer(r: Received, tokens: readonly string[]): Answer {
  if (r.url !== '/services/collector/event') return { status: 404, body: { text: 'Not found', code: 404 } };
  const auth = r.headers['authorization'];
  if (auth === undefined) return { status: 401, body: { text: 'Token is required', code: 2 } };
  const m = /^Splunk (.+)$/.exec(auth);
  if (m === null) return { status: 401, body: { text: 'Invalid authorization', code: 3 } };
  if (!tokens.includes(m[1] as string)) return { status: 403, body: { text: 'Invalid token', code: 4 } };
  if (r.text.trim() === '') return { status: 400, body: { text: 'No data', code: 5 } };
  let event: Record<string, unknown>;
  try {
    event = JSON.parse(r.text) as Record<string, unknown>;
  } catch {
    return { status: 400, body: { text: 'Invalid data format', code: 6, 'invalid-event-number': 0 } };
  }
  if (event['event'] === undefined || event['event'] === '') {
    return { status: 400, body: { text: 'Event field is required', code: 12, 'invalid-event-number': 0 } };
  }
  if (typeof event['time'] !== 'number') {
    return { status: 400, body: { text: 'Invalid data format', code: 6, 'invalid-event-number': 0 } };
  }
  return { status: 200, body: { text: 'Success', code: 0 } };
}

/** A HEC endpoint; `trouble(n)` can answer the n-th request before HEC's checks. */
async function hec(o: { tokens?: readonly string[]; trouble?: (n: number) => Answer | undefined } = {}) {
  const received: Received[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const r: Received = {
        url: req.url ?? '',
        headers: req.headers,
        text: Buffer.concat(chunks).toString('utf8'),
      };
      received.push(r);
      const a = o.trouble?.(received.length) ?? hecAnswer(r, o.tokens ?? [TOKEN]);
      res.writeHead(a.status, { 'content-type': 'application/json' }).end(JSON.stringify(a.body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/services/collector/event`,
    base: `http://127.0.0.1:${port}`,
    received,
  };
}

function dispatcher(): Agent {
  const agent = new Agent({ connectTimeout: 2000 });
  cleanups.push(() => agent.close());
  return agent;
}

async function failureOf(sink: Sink, alert: AlertMessage = ALERT): Promise<DeliveryError> {
  const err = await sink.deliver(alert, { deliveryId: 'x', attempt: 1 }).then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(err instanceof DeliveryError)) throw new Error(`expected a DeliveryError, got ${String(err)}`);
  return err;
}

describe('Splunk HEC sink against an HTTP Event Collector', () => {
  it('200: one envelope with time in seconds, source, sourcetype, index, host and a valid OCSF event', async () => {
    const r = await hec();
    const sink = createSplunkHecSink({
      url: r.url,
      token: TOKEN,
      index: 'security',
      host: 'govtrail-prod',
      dispatcher: dispatcher(),
      productVersion: '1.2.3',
    });
    await sink.deliver(ALERT, { deliveryId: 'x', attempt: 1 });
    expect(r.received).toHaveLength(1);
    const req = r.received[0] as Received;
    expect(req.headers['authorization']).toBe(`Splunk ${TOKEN}`);
    expect(req.headers['content-type']).toBe('application/json');
    const body = JSON.parse(req.text) as Record<string, unknown>;
    expect(Object.keys(body).sort()).toEqual(['event', 'host', 'index', 'source', 'sourcetype', 'time']);
    expect(body['time']).toBe(T0.getTime() / 1000);
    expect(body['time']).toBe(1741046400.123);
    expect(body['source']).toBe('govtrail');
    expect(body['sourcetype']).toBe('ocsf:govtrail');
    expect(body['index']).toBe('security');
    expect(body['host']).toBe('govtrail-prod');
    const event = body['event'] as Record<string, unknown>;
    expect(validateOcsfEvent(event)).toEqual([]);
    expect(event['class_uid']).toBe(2004);
    // OCSF's own time stays in milliseconds.
    expect(event['time']).toBe(T0.getTime());
    expect(JSON.stringify(event)).toContain(ALERT.dedupeKey);
  });

  it('leaves out host and index when not set, and keeps the envelope under the budget with huge details', async () => {
    const r = await hec();
    const huge: AlertMessage = {
      ...ALERT,
      summary: 'x'.repeat(50_000),
      context: {
        ...ALERT.context,
        details: { blob: 'y'.repeat(100_000), list: Array.from({ length: 500 }, (_, i) => i) },
      },
    };
    await createSplunkHecSink({ url: r.url, token: TOKEN, dispatcher: dispatcher() }).deliver(huge, {
      deliveryId: 'x',
      attempt: 1,
    });
    const req = r.received[0] as Received;
    expect(Buffer.byteLength(req.text)).toBeLessThanOrEqual(9_500);
    const body = JSON.parse(req.text) as Record<string, unknown>;
    expect(Object.keys(body).sort()).toEqual(['event', 'source', 'sourcetype', 'time']);
    expect(validateOcsfEvent(body['event'])).toEqual([]);
  });

  it('400 bad data is permanent, with HEC text and code', async () => {
    const r = await hec({
      trouble: () => ({ status: 400, body: { text: 'Incorrect index', code: 7, 'invalid-event-number': 0 } }),
    });
    const err = await failureOf(createSplunkHecSink({ url: r.url, token: TOKEN, dispatcher: dispatcher() }));
    expect(err.retryable).toBe(false);
    expect(err.message).toMatch(/^splunk_hec: HTTP 400: .*Incorrect index.*"code":7/);
  });

  it('403 invalid token is permanent; the token is not in the error', async () => {
    const r = await hec({ tokens: ['another-token'] });
    const err = await failureOf(createSplunkHecSink({ url: r.url, token: TOKEN, dispatcher: dispatcher() }));
    expect(err.retryable).toBe(false);
    expect(err.message).toContain('Invalid token');
    expect(err.message).not.toContain(TOKEN);
  });

  it('503 server busy (code 9) and 500 internal error (code 8) are retryable', async () => {
    const busy = await hec({ trouble: () => ({ status: 503, body: { text: 'Server is busy', code: 9 } }) });
    const e1 = await failureOf(
      createSplunkHecSink({ url: busy.url, token: TOKEN, dispatcher: dispatcher() }),
    );
    expect(e1.retryable).toBe(true);
    const broken = await hec({
      trouble: () => ({ status: 500, body: { text: 'Internal server error', code: 8 } }),
    });
    const e2 = await failureOf(
      createSplunkHecSink({ url: broken.url, token: TOKEN, dispatcher: dispatcher() }),
    );
    expect(e2.retryable).toBe(true);
  });

  it('a 200 whose body carries a non-zero HEC code is not delivered', async () => {
    const r = await hec({ trouble: () => ({ status: 200, body: { text: 'Server is busy', code: 9 } }) });
    const err = await failureOf(createSplunkHecSink({ url: r.url, token: TOKEN, dispatcher: dispatcher() }));
    expect(err.retryable).toBe(true);
    expect(err.message).toContain('HEC code 9');
  });

  it('through the outbox: a 503 is retried and the second attempt delivers', async () => {
    const r = await hec({
      trouble: (n) => (n === 1 ? { status: 503, body: { text: 'Server is busy', code: 9 } } : undefined),
    });
    const sink = createSplunkHecSink({ name: 'splunk', url: r.url, token: TOKEN, dispatcher: dispatcher() });
    const row = { status: 'pending', attempts: 0, next: new Date(0), lastError: null as string | null };
    const store: DeliveryStore = {
      async dueDeliveries(now): Promise<DueDelivery[]> {
        return row.status === 'pending' && row.next <= now
          ? [{ alert: ALERT, sink: 'splunk', attempts: row.attempts, firstAttemptAt: T0 }]
          : [];
      },
      async markDelivered(_id, _sink, attempts) {
        Object.assign(row, { status: 'delivered', attempts, lastError: null });
      },
      async markRetry(_id, _sink, attempts, next, lastError) {
        Object.assign(row, { attempts, next, lastError });
      },
      async markFailed(_id, _sink, attempts, lastError) {
        Object.assign(row, { status: 'failed', attempts, lastError });
      },
    };
    const now = new Date(T0.getTime() + 1000);
    await deliverPending({ store, sinks: [sink], logger: silentLogger, now: () => now });
    expect(row).toMatchObject({ status: 'pending', attempts: 1 });
    expect(row.lastError).toContain('Server is busy');
    row.next = new Date(0);
    await deliverPending({ store, sinks: [sink], logger: silentLogger, now: () => now });
    expect(row).toMatchObject({ status: 'delivered', attempts: 2 });
    expect(r.received).toHaveLength(2);
  });

  it('from the environment short form, the token from a _FILE, a bare base URL meaning the event endpoint', async () => {
    const r = await hec();
    const d = mkdtempSync(path.join(tmpdir(), 'govtrail-hec-'));
    writeFileSync(path.join(d, 'token'), `${TOKEN}\n`);
    const config = loadConfig(
      {
        GOVTRAIL_SPLUNK_HEC_URL: r.base,
        GOVTRAIL_SPLUNK_HEC_TOKEN_FILE: path.join(d, 'token'),
      },
      { dotenv: false, cwd: d },
    );
    const sinks = createSinks(
      config.sinks.filter((s) => s.type === 'splunk_hec'),
      { logger: silentLogger, dispatcher: dispatcher() },
    );
    expect(sinks.map((s) => s.name)).toEqual(['splunk_hec']);
    await (sinks[0] as Sink).deliver(ALERT, { deliveryId: 'x', attempt: 1 });
    expect(r.received[0]?.url).toBe('/services/collector/event');
    expect(r.received[0]?.headers['authorization']).toBe(`Splunk ${TOKEN}`);
  });
});
