/**
 * At least once under SIGKILL: a `govtrail alerts deliver` process killed after the receiver got a
 * delivery but before the outbox recorded it leaves the row pending; the next process delivers it
 * again with the same ids (X-Govtrail-Delivery, webhook-id) and the same body, so the receiver can
 * drop the repeat.
 */
import type { ChildProcess } from 'node:child_process';
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { govtrailEnv, runGovtrail, type SandboxProcess } from '../../bench/lib.js';
import { deliveryRows, runScenario } from '../helpers/alerts.js';
import { NEEDS_SERVER, onServer } from '../helpers/database.js';
import type { Harness } from '../helpers/harness.js';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

interface Request {
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
}

/**
 * A webhook receiver that takes the first request in and never answers it (the sender is killed
 * while waiting), and answers every later one with 204.
 */
async function stallingReceiver() {
  const received: Request[] = [];
  const held: ServerResponse[] = [];
  let firstArrived: () => void = () => {};
  const first = new Promise<void>((resolve) => {
    firstArrived = resolve;
  });
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      if (received.length === 1) {
        held.push(res);
        firstArrived();
      } else {
        res.writeHead(204, { connection: 'close' }).end();
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  cleanups.push(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, received, first };
}

describe.skipIf(!onServer)(`SIGKILL between send and record (${NEEDS_SERVER})`, () => {
  it('the delivery stays pending and the next process repeats it with the same ids and body', async () => {
    const receiver = await stallingReceiver();
    const sinkEnv = {
      GOVTRAIL_WEBHOOK_URL: receiver.url,
      GOVTRAIL_WEBHOOK_SECRET: 'whsec_c2VjcmV0LWtleS0xMjM0NQ==',
    };
    // One tool-approval-off change after the backfill: the webhook is owed a backfill digest and AIGOV-002.
    const s = await runScenario({ after: [{ set: { requireToolApproval: false } }] }, sinkEnv);
    const h: Harness = s.h;
    cleanups.push(() => h.close());
    const env = govtrailEnv(
      {
        baseUrl: h.sandbox.baseUrl,
        clientId: h.sandbox.credentials.secret.clientId,
        clientSecret: h.sandbox.credentials.secret.clientSecret,
      } as SandboxProcess,
      h.testDb.url as string,
      sinkEnv,
    );
    const owed = (await deliveryRows(h.database.db)).filter((r) => r.sink === 'webhook');
    expect(owed).toHaveLength(2);

    let child: ChildProcess | undefined;
    const killedRun = runGovtrail(['alerts', 'deliver'], env, {
      onSpawn: (c) => {
        child = c;
      },
    });
    // The receiver has the first alert in hand; the sender has not heard back, so has recorded nothing.
    await receiver.first;
    child?.kill('SIGKILL');
    expect((await killedRun).signal).toBe('SIGKILL');
    const afterKill = (await deliveryRows(h.database.db)).filter((r) => r.sink === 'webhook');
    expect(afterKill.every((r) => r.status === 'pending' && r.attempts === 0)).toBe(true);

    const rerun = await runGovtrail(['alerts', 'deliver'], env);
    expect(rerun.code, rerun.stderr).toBe(0);
    const done = (await deliveryRows(h.database.db)).filter((r) => r.sink === 'webhook');
    expect(done.map((r) => [r.status, r.attempts])).toEqual([
      ['delivered', 1],
      ['delivered', 1],
    ]);

    // Three requests: the one that was cut off, its repeat, and the other alert.
    expect(receiver.received).toHaveLength(3);
    const [cut, ...rest] = receiver.received as [Request, ...Request[]];
    const repeat = rest.filter(
      (r) => r.headers['x-govtrail-delivery'] === cut.headers['x-govtrail-delivery'],
    );
    expect(repeat).toHaveLength(1);
    const again = repeat[0] as Request;
    expect(again.headers['webhook-id']).toBe(cut.headers['webhook-id']);
    expect(again.headers['webhook-id']).toBe(cut.headers['x-govtrail-delivery']);
    expect(again.body).toBe(cut.body);
    const ids = new Set(receiver.received.map((r) => r.headers['webhook-id']));
    expect(ids.size).toBe(2);
  });
});
