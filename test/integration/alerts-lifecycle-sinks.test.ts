/**
 * Sinks follow the lifecycle (docs/design/alerts.md): on real PostgreSQL and over real sockets,
 * an alert delivered to PagerDuty, a webhook, Slack and Splunk HEC, then acknowledged and
 * resolved, reaches PagerDuty as trigger, acknowledge, resolve on one dedup key (in that order,
 * the follow-ups waiting for the trigger), the webhook as Standard Webhooks types
 * alert.acknowledged / alert.resolved, Slack as short lines, and HEC as OCSF Detection Finding
 * updates with the matching status_id.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deliverPending } from '../../src/alerts/deliver.js';
import {
  createPagerDutySink,
  createSlackSink,
  createSplunkHecSink,
  createWebhookSink,
} from '../../src/alerts/sinks/index.js';
import type { AlertDraft, Sink } from '../../src/core/alert.js';
import { silentLogger } from '../../src/runtime/logger.js';
import type { Session } from '../../src/store/database.js';
import { eventDeliveryStore, recordAlertEvents } from '../../src/store/write/alert-events.js';
import { deliveryStore, insertAlerts } from '../../src/store/write/outbox.js';
import { sampleAlert } from '../helpers/alert-message.js';
import { type Receiver, startReceiver } from '../helpers/alerts.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { ocsfProblems } from '../helpers/ocsf.js';

const KEY = 'R0UT1NGKEY0123456789abcdefABCDEF';
let t: TestDatabase;
let db: Session;
const receivers: Record<string, Receiver> = {};
let sinks: Sink[];

beforeAll(async () => {
  t = await createTestDatabase();
  db = t.database.db;
  for (const name of ['pagerduty', 'hook', 'slack', 'hec']) {
    receivers[name] = await startReceiver(() => (name === 'pagerduty' ? 202 : 200));
  }
  sinks = [
    createPagerDutySink({ routingKey: KEY, url: receivers['pagerduty']?.url as string }),
    createWebhookSink({ name: 'hook', url: receivers['hook']?.url as string, secret: 'whsec_c2VjcmV0' }),
    createSlackSink({ url: receivers['slack']?.url as string }),
    createSplunkHecSink({ name: 'hec', url: receivers['hec']?.url as string, token: 'tok' }),
  ];
});
afterAll(async () => {
  for (const r of Object.values(receivers)) await r.close();
  await t?.close();
});

async function deliverAll(): Promise<void> {
  await deliverPending({ store: deliveryStore(db), sinks, logger: silentLogger });
  await deliverPending({ store: eventDeliveryStore(db), sinks, logger: silentLogger });
}

const bodies = (name: string) =>
  (receivers[name]?.received ?? []).map((r) => JSON.parse(r.body) as Record<string, unknown>);

describe('sinks follow the lifecycle', () => {
  it('trigger, acknowledge, resolve on one dedup key; webhook, Slack and HEC follow-ups; noted and snoozed skip PagerDuty', async () => {
    const base = sampleAlert(new Date());
    const draft: AlertDraft = {
      ruleId: base.ruleId,
      ruleVersion: 1,
      severity: 'high',
      title: base.title,
      summary: base.summary,
      entryId: base.entryId,
      dedupeKey: base.dedupeKey,
      context: base.context,
    };
    await insertAlerts(
      db,
      'acme',
      null,
      [draft],
      sinks.map((s) => ({ name: s.name, route: {} })),
    );
    const { rows } = await sql<{ alert_id: string }>`select alert_id::text from govtrail.alert`.execute(db);
    const id = Number(rows[0]?.alert_id);

    // Acknowledged before the trigger went out: the follow-up waits for it.
    await recordAlertEvents(db, [id], { kind: 'acknowledged', actor: 'alice' });
    await deliverPending({ store: eventDeliveryStore(db), sinks, logger: silentLogger });
    expect(receivers['pagerduty']?.received).toHaveLength(0);
    await deliverAll();
    await recordAlertEvents(db, [id], { kind: 'noted', actor: 'alice', note: 'asked the admin' });
    await recordAlertEvents(db, [id], { kind: 'snoozed', actor: 'alice', forSeconds: 3600 });
    await recordAlertEvents(db, [id], { kind: 'resolved', actor: 'bob', note: 'reverted' });
    await deliverAll();

    const pd = bodies('pagerduty');
    expect(pd.map((b) => b['event_action'])).toEqual(['trigger', 'acknowledge', 'resolve']);
    expect(new Set(pd.map((b) => b['dedup_key']))).toEqual(new Set([base.dedupeKey]));
    expect(pd[1]).toEqual({ routing_key: KEY, event_action: 'acknowledge', dedup_key: base.dedupeKey });
    expect(pd[2]).toEqual({ routing_key: KEY, event_action: 'resolve', dedup_key: base.dedupeKey });

    const hook = receivers['hook']?.received ?? [];
    expect(hook.map((r) => r.headers['x-govtrail-event'])).toEqual([
      'alert',
      'alert.acknowledged',
      'alert.noted',
      'alert.snoozed',
      'alert.resolved',
    ]);
    expect(bodies('hook').map((b) => b['type'])).toEqual([
      'govtrail.alert',
      'alert.acknowledged',
      'alert.noted',
      'alert.snoozed',
      'alert.resolved',
    ]);
    expect(bodies('hook')[4]?.['event']).toMatchObject({ kind: 'resolved', actor: 'bob', note: 'reverted' });
    // Each follow-up is signed with its own, stable webhook-id.
    expect(new Set(hook.map((r) => r.headers['webhook-id'])).size).toBe(5);

    expect(bodies('slack')[1]).toEqual({
      text: `Alert ${id} (AIGOV-002, tenant acme) acknowledged by alice`,
    });

    const hec = bodies('hec').map((b) => b['event'] as Record<string, unknown>);
    expect(hec.map((e) => [e['activity_id'], e['status_id']])).toEqual([
      [1, 1],
      [2, 2],
      [2, 2],
      [2, 99],
      [3, 4],
    ]);
    // Every update is a valid OCSF 1.8.0 Detection Finding (finding_info.modified_time included).
    expect(ocsfProblems(hec)).toEqual([]);
    expect(new Set(hec.map((e) => (e['finding_info'] as { uid: string }).uid))).toEqual(
      new Set([base.dedupeKey]),
    );

    const { rows: left } = await sql<{ n: number }>`
      select count(*)::int as n from govtrail.alert_event_delivery where status <> 'delivered'`.execute(db);
    expect(left[0]?.n).toBe(0);
  });
});
