/**
 * The generic webhook with `format: ocsf`: the body is the alert's OCSF Detection Finding (valid
 * against the OCSF 1.8.0 export), the headers and the HMAC signature are those of the JSON format,
 * the signature verifies over the raw body; the setting comes from YAML or GOVTRAIL_WEBHOOK_FORMAT.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Agent } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { createSinks, createWebhookSink } from '../../src/alerts/sinks/index.js';
import { loadConfig } from '../../src/config/settings.js';
import type { Sink } from '../../src/core/alert.js';
import { ConfigError } from '../../src/core/errors.js';
import { silentLogger } from '../../src/runtime/logger.js';
import { sampleAlert } from '../helpers/alert-message.js';
import { validateOcsfEvent } from '../helpers/ocsf.js';

const SECRET = 'whsec-test-0123456789abcdef';
const T0 = new Date('2025-03-04T00:00:00.123Z');

const ALERT = sampleAlert(T0);

interface Received {
  readonly headers: IncomingHttpHeaders;
  readonly raw: Buffer;
}

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});

async function receiver() {
  const received: Received[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({ headers: req.headers, raw: Buffer.concat(chunks) });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/hook`, received };
}

function dispatcher(): Agent {
  const agent = new Agent({ connectTimeout: 2000 });
  cleanups.push(() => agent.close());
  return agent;
}

/** What a receiver does: verify the HMAC over the raw body, in constant time. */
function signatureValid(raw: Buffer, header: string | string[] | undefined): boolean {
  if (typeof header !== 'string' || !header.startsWith('sha256=')) return false;
  const expected = Buffer.from(createHmac('sha256', SECRET).update(raw).digest('hex'));
  const got = Buffer.from(header.slice('sha256='.length));
  return got.length === expected.length && timingSafeEqual(got, expected);
}

describe('webhook sink, format: ocsf', () => {
  it('POSTs a valid OCSF Detection Finding, signed, with the delivery headers', async () => {
    const r = await receiver();
    const sink = createWebhookSink({ url: r.url, secret: SECRET, format: 'ocsf', dispatcher: dispatcher() });
    await sink.deliver(ALERT, { deliveryId: 'd'.repeat(32), attempt: 2 });
    const req = r.received[0] as Received;
    expect(req.headers['content-type']).toBe('application/json');
    expect(req.headers['x-govtrail-event']).toBe('alert');
    expect(req.headers['x-govtrail-delivery']).toBe('d'.repeat(32));
    expect(req.headers['x-govtrail-attempt']).toBe('2');
    expect(signatureValid(req.raw, req.headers['x-govtrail-signature'])).toBe(true);
    const event = JSON.parse(req.raw.toString('utf8')) as Record<string, unknown>;
    expect(event['type']).not.toBe('govtrail.alert');
    expect(event['class_uid']).toBe(2004);
    expect(validateOcsfEvent(event)).toEqual([]);
    expect(JSON.stringify(event)).toContain(ALERT.dedupeKey);
  });

  it('format json (the default) still sends govtrail.alert', async () => {
    const r = await receiver();
    await createWebhookSink({ url: r.url, dispatcher: dispatcher() }).deliver(ALERT, {
      deliveryId: 'x',
      attempt: 1,
    });
    const body = JSON.parse((r.received[0] as Received).raw.toString('utf8')) as Record<string, unknown>;
    expect(body['type']).toBe('govtrail.alert');
  });

  it('GOVTRAIL_WEBHOOK_FORMAT=ocsf configures it; YAML format: ocsf too; anything else is refused', async () => {
    const r = await receiver();
    const env = loadConfig(
      { GOVTRAIL_WEBHOOK_URL: r.url, GOVTRAIL_WEBHOOK_FORMAT: 'OCSF', GOVTRAIL_WEBHOOK_SECRET: SECRET },
      { dotenv: false },
    );
    const [sink] = createSinks(
      env.sinks.filter((s) => s.type === 'webhook'),
      { logger: silentLogger, dispatcher: dispatcher() },
    );
    await (sink as Sink).deliver(ALERT, { deliveryId: 'x', attempt: 1 });
    const req = r.received[0] as Received;
    expect(signatureValid(req.raw, req.headers['x-govtrail-signature'])).toBe(true);
    expect(validateOcsfEvent(JSON.parse(req.raw.toString('utf8')))).toEqual([]);

    const d = mkdtempSync(path.join(tmpdir(), 'govtrail-webhook-'));
    writeFileSync(path.join(d, 'g.yaml'), `sinks:\n  - {type: webhook, url: '${r.url}', format: ocsf}\n`);
    const yaml = loadConfig({ GOVTRAIL_CONFIG: 'g.yaml' }, { dotenv: false, cwd: d });
    expect(yaml.sinks.find((s) => s.type === 'webhook')).toMatchObject({ format: 'ocsf' });
    expect(loadConfig({ GOVTRAIL_WEBHOOK_URL: r.url }, { dotenv: false }).sinks).toContainEqual(
      expect.objectContaining({ type: 'webhook', format: 'json' }),
    );

    let err: unknown;
    try {
      loadConfig({ GOVTRAIL_WEBHOOK_URL: r.url, GOVTRAIL_WEBHOOK_FORMAT: 'cef' }, { dotenv: false });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).setting).toBe('GOVTRAIL_WEBHOOK_FORMAT');
    expect((err as Error).message).toMatch(/must be json or ocsf, got "cef"/);
  });
});
