/**
 * Delivery of alerts raised by a real sync to a real local webhook receiver, configured the way
 * operators configure it (GOVTRAIL_WEBHOOK_URL / GOVTRAIL_WEBHOOK_SECRET), over the real outbox
 * (deliveryStore on PostgreSQL). The sink's HTTP details are covered by alerts-sinks-http.test.ts.
 */
import { createHmac } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { afterEach, describe, expect, it } from 'vitest';
import { deliverPending, deliveryIdFor } from '../../src/alerts/deliver.js';
import { type Alerting, createAlerting } from '../../src/app/alerting.js';
import { silentLogger } from '../../src/runtime/logger.js';
import { deliveryStore } from '../../src/store/write/outbox.js';
import {
  type AlertRow,
  alertRows,
  type DeliveryRow,
  deliveryRows,
  type Receiver,
  runScenario,
  startReceiver,
} from '../helpers/alerts.js';
import type { Harness } from '../helpers/harness.js';

const SECRET = 'whsec-e2e-5f1c0a9d7b3e4f21';

let h: Harness | undefined;
let receiver: Receiver | undefined;
afterEach(async () => {
  await h?.close();
  await receiver?.close();
  h = undefined;
  receiver = undefined;
});

/** Backfill (digest) + one tool-approval-off entry: two alerts, each for log, webhook and notify. */
async function scenario(url: string): Promise<{ h: Harness; alerting: Alerting; alerts: AlertRow[] }> {
  const s = await runScenario(
    { after: [{ set: { requireToolApproval: false } }] },
    { GOVTRAIL_WEBHOOK_URL: url, GOVTRAIL_WEBHOOK_SECRET: SECRET },
  );
  const alerts = await alertRows(s.h.database.db);
  expect(alerts.map((a) => a.rule_id)).toEqual(['AIGOV-016', 'AIGOV-002']);
  return { h: s.h, alerting: createAlerting(s.h.config, s.h.logger, s.h.database), alerts };
}

function webhookRows(rows: readonly DeliveryRow[]): DeliveryRow[] {
  return rows.filter((r) => r.sink === 'webhook');
}

/** The latest next_attempt_at of the pending rows: a clock at it makes all of them due. */
function whenAllDue(rows: readonly DeliveryRow[]): Date {
  const pending = rows.filter((r) => r.status === 'pending');
  return new Date(Math.max(...pending.map((r) => r.next_attempt_at.getTime())));
}

describe('webhook delivery after a sync', () => {
  it('signs every POST over the raw body and names the delivery', async () => {
    receiver = await startReceiver();
    const s = await scenario(receiver.url);
    h = s.h;
    const summary = await s.alerting.deliver();
    expect(summary.bySink['webhook']).toEqual({ delivered: 2, retried: 0, failed: 0 });
    expect(receiver.received).toHaveLength(2);
    for (const r of receiver.received) {
      const expected = `sha256=${createHmac('sha256', SECRET).update(r.body, 'utf8').digest('hex')}`;
      expect(r.headers['x-govtrail-signature']).toBe(expected);
      // The Standard Webhooks headers verify with the scheme's own library (a non-whsec_ secret is raw).
      const verified = new Webhook(SECRET, { format: 'raw' }).verify(
        r.body,
        r.headers as Record<string, string>,
      );
      expect(verified).toEqual(JSON.parse(r.body));
      const body = JSON.parse(r.body) as { type: string; alert: { id: string; dedupeKey: string } };
      expect(body.type).toBe('govtrail.alert');
      const row = s.alerts.find((a) => String(a.alert_id) === body.alert.id);
      expect(row?.dedupe_key).toBe(body.alert.dedupeKey);
      expect(r.headers['x-govtrail-delivery']).toBe(
        deliveryIdFor({ dedupeKey: body.alert.dedupeKey }, 'webhook'),
      );
    }
    // A tampered body does not verify.
    const r0 = receiver.received[0] as { body: string; headers: Record<string, unknown> };
    const forged = `sha256=${createHmac('sha256', SECRET).update(`${r0.body} `, 'utf8').digest('hex')}`;
    expect(r0.headers['x-govtrail-signature']).not.toBe(forged);
    expect(
      (await deliveryRows(h.database.db)).every((d) => d.status === 'delivered' && d.attempts === 1),
    ).toBe(true);
  });

  it('a receiver that fails three times then succeeds gets each alert exactly once, after four attempts', async () => {
    // 503 for the first three attempts of every delivery id, then 204.
    receiver = await startReceiver((_req, attempt) => (attempt <= 3 ? 503 : 204));
    const s = await scenario(receiver.url);
    h = s.h;
    const store = deliveryStore(h.database.db);
    let now = new Date(Date.now() + 1000);
    const deliver = () =>
      deliverPending({
        store,
        sinks: s.alerting.sinks,
        logger: silentLogger,
        now: () => now,
        random: () => 0,
      });

    for (let attempt = 1; attempt <= 4; attempt++) {
      if (attempt > 1) {
        // Before next_attempt_at nothing is due.
        expect((await deliver()).bySink['webhook']).toBeUndefined();
        now = whenAllDue(webhookRows(await deliveryRows(h.database.db)));
      }
      const result = await deliver();
      expect(result.bySink['webhook']).toEqual(
        attempt < 4 ? { delivered: 0, retried: 2, failed: 0 } : { delivered: 2, retried: 0, failed: 0 },
      );
      const rows = webhookRows(await deliveryRows(h.database.db));
      for (const row of rows) {
        expect(row.attempts).toBe(attempt);
        if (attempt < 4) {
          expect(row.status).toBe('pending');
          expect(row.last_error).toMatch(/503/);
          expect(row.next_attempt_at.getTime()).toBeGreaterThan(now.getTime());
        }
      }
    }
    const rows = await deliveryRows(h.database.db);
    expect(webhookRows(rows)).toEqual(
      s.alerts.map((a) =>
        expect.objectContaining({ alert_id: a.alert_id, status: 'delivered', attempts: 4, last_error: null }),
      ),
    );
    // The other sinks delivered on the first pass.
    expect(
      rows.filter((r) => r.sink !== 'webhook').every((r) => r.status === 'delivered' && r.attempts === 1),
    ).toBe(true);
    expect(receiver.received).toHaveLength(8);
    const ids = receiver.received.map((r) => r.headers['x-govtrail-delivery'] as string);
    expect(new Set(ids).size).toBe(2);
    // webhook-id is the receiver's idempotency key: the same on every retry of one delivery.
    expect(receiver.received.map((r) => r.headers['webhook-id'])).toEqual(ids);

    // Much later: nothing left to send.
    now = new Date(now.getTime() + 2 * 86_400_000);
    expect(await deliver()).toMatchObject({ delivered: 0, retried: 0, failed: 0 });
    expect(receiver.received).toHaveLength(8);
  });

  it('a stopped receiver leaves deliveries pending with the error; after a restart each is delivered exactly once', async () => {
    receiver = await startReceiver();
    const s = await scenario(receiver.url);
    h = s.h;
    await receiver.stop();

    const down = await s.alerting.deliver();
    expect(down.bySink['webhook']).toEqual({ delivered: 0, retried: 2, failed: 0 });
    expect(down.bySink['log']).toEqual({ delivered: 2, retried: 0, failed: 0 });
    let rows = webhookRows(await deliveryRows(h.database.db));
    expect(rows).toHaveLength(2);
    for (const row of rows) {
      expect(row).toMatchObject({ status: 'pending', attempts: 1 });
      expect(row.last_error).toMatch(/^DELIVERY_FAILED: /);
    }
    expect(receiver.received).toHaveLength(0);

    await receiver.restart();
    const store = deliveryStore(h.database.db);
    const now = whenAllDue(rows);
    const up = await deliverPending({ store, sinks: s.alerting.sinks, logger: silentLogger, now: () => now });
    expect(up.bySink['webhook']).toEqual({ delivered: 2, retried: 0, failed: 0 });
    rows = webhookRows(await deliveryRows(h.database.db));
    expect(rows.every((r) => r.status === 'delivered' && r.attempts === 2 && r.last_error === null)).toBe(
      true,
    );
    expect(receiver.received).toHaveLength(2);
    const keys = receiver.received.map(
      (r) => (JSON.parse(r.body) as { alert: { dedupeKey: string } }).alert.dedupeKey,
    );
    expect(keys.sort()).toEqual(s.alerts.map((a) => a.dedupe_key).sort());

    // Delivering again sends nothing more.
    await deliverPending({ store, sinks: s.alerting.sinks, logger: silentLogger, now: () => now });
    await s.alerting.deliver();
    expect(receiver.received).toHaveLength(2);
  });
  it('a receiver that keeps failing for 24 hours: the delivery is marked failed and logged at error level', async () => {
    receiver = await startReceiver(() => 500);
    const s = await scenario(receiver.url);
    h = s.h;
    const store = deliveryStore(h.database.db);
    const start = new Date(Date.now() + 1000);
    let now = start;
    const deliver = () =>
      deliverPending({
        store,
        sinks: s.alerting.sinks,
        logger: h?.logger ?? silentLogger,
        now: () => now,
        random: () => 1,
      });
    let rows = webhookRows(await deliveryRows(h.database.db));
    for (let i = 0; i < 100 && rows.some((r) => r.status === 'pending'); i++) {
      await deliver();
      rows = webhookRows(await deliveryRows(h.database.db));
      if (rows.some((r) => r.status === 'pending')) now = whenAllDue(rows);
    }
    expect(rows.map((r) => r.status)).toEqual(['failed', 'failed']);
    // 30 s, 1, 2, 4 … 32 min, then hourly: about 30 attempts fit in 24 hours, none after it.
    for (const r of rows) {
      expect(r.attempts).toBeGreaterThan(20);
      expect(r.attempts).toBeLessThan(40);
      expect(r.last_error).toMatch(/500/);
    }
    expect(now.getTime() - start.getTime()).toBeGreaterThanOrEqual(24 * 3_600_000 - 60_000);
    const count = receiver.received.length;
    expect(count).toBe(rows[0]!.attempts + rows[1]!.attempts);
    const gaveUp = h.logs
      .filter((l) => l.includes('giving up'))
      .map((l) => JSON.parse(l) as { level: number });
    expect(gaveUp).toHaveLength(2);
    expect(gaveUp.every((l) => l.level === 50)).toBe(true);
    now = new Date(now.getTime() + 86_400_000);
    await deliver();
    expect(receiver.received).toHaveLength(count);
  });
});
