/**
 * A conformance resolution (CONF-002, docs/design/alerts.md) on PagerDuty: a `resolve` event on the
 * dedup_key of the CONF-001 alert it names, over a real socket; any other alert still triggers.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Agent } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { createPagerDutySink } from '../../src/alerts/sinks/index.js';
import type { AlertMessage } from '../../src/core/alert.js';
import { sampleAlert } from '../helpers/alert-message.js';

const KEY = 'R0UT1NGKEY0123456789abcdefABCDEF';
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});

async function receiver(): Promise<{ url: string; bodies: Record<string, unknown>[] }> {
  const bodies: Record<string, unknown>[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      bodies.push(JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>);
      res.writeHead(202, { 'content-type': 'application/json' }).end('{"status":"success"}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, bodies };
}

describe('PagerDuty and conformance resolutions', () => {
  it('CONF-002 resolves the CONF-001 alert on its dedup_key; a failing control triggers', async () => {
    const pd = await receiver();
    const agent = new Agent();
    cleanups.push(() => agent.close());
    const sink = createPagerDutySink({ routingKey: KEY, url: pd.url, dispatcher: agent });
    const base = sampleAlert(new Date('2026-03-02T00:00:00Z'));
    const failing: AlertMessage = {
      ...base,
      ruleId: 'CONF-001',
      dedupeKey: 'CONF-001:acme:b:AIG-01:2026-03-02T01:00:00.000000000Z',
      context: { ...base.context, details: { control: 'AIG-01' } },
    };
    const resolved: AlertMessage = {
      ...base,
      ruleId: 'CONF-002',
      dedupeKey: `CONF-002:${failing.dedupeKey}`,
      context: { ...base.context, details: { control: 'AIG-01', resolves: failing.dedupeKey } },
    };
    await sink.deliver(failing, { deliveryId: 'a', attempt: 1 });
    await sink.deliver(resolved, { deliveryId: 'b', attempt: 1 });
    expect(pd.bodies.map((b) => [b['event_action'], b['dedup_key']])).toEqual([
      ['trigger', failing.dedupeKey],
      ['resolve', failing.dedupeKey],
    ]);
    expect(pd.bodies[1]).toEqual({
      routing_key: KEY,
      event_action: 'resolve',
      dedup_key: failing.dedupeKey,
      client: 'govtrail',
    });
  });
});
