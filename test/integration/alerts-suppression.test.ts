/**
 * Suppression windows and the early lift of a snooze (docs/design/alerts.md, "Suppression"), on
 * real PostgreSQL with a webhook receiver counting what is delivered: repeats inside the window
 * fold into the open alert as `repeated` events with a count and reach the receiver once; a repeat
 * outside the window, of another scope, or after a resolve is raised again; a more severe alert
 * is raised and lifts the snooze of the alert it outranks.
 */

import { readFileSync } from 'node:fs';
import { sql } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { deliverPending } from '../../src/alerts/deliver.js';
import { createWebhookSink } from '../../src/alerts/sinks/index.js';
import { defaultRulesPath } from '../../src/config/rule-pack.js';
import type { AlertDraft, Severity } from '../../src/core/alert.js';
import { parseRulePack } from '../../src/core/rules/pack-schema.js';
import { alertPolicy } from '../../src/core/rules/suppression.js';
import { silentLogger } from '../../src/runtime/logger.js';
import type { Session } from '../../src/store/database.js';
import { eventDeliveryStore, recordAlertEvents } from '../../src/store/write/alert-events.js';
import { deliveryStore, insertAlerts } from '../../src/store/write/outbox.js';
import { sampleAlert } from '../helpers/alert-message.js';
import { type Receiver, startReceiver } from '../helpers/alerts.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';

let t: TestDatabase;
let db: Session;
let hook: Receiver;
let n = 0;

const pack = parseRulePack(
  readFileSync(defaultRulesPath(), 'utf8'),
  'rules:\n  - id: AIGOV-002\n    suppress: { window: 1h, by: [tenant, field] }\n',
);
const policy = alertPolicy(pack);
const ROUTES = [{ name: 'hook', route: {} }];

beforeEach(async () => {
  t = await createTestDatabase();
  db = t.database.db;
  hook = await startReceiver(() => 204);
});
afterEach(async () => {
  await hook.close();
  await t.close();
});

/** An AIGOV-002 draft for a change at `minutes` past 09:00. */
function draft(
  minutes: number,
  o: { severity?: Severity; field?: string; ruleId?: string } = {},
): AlertDraft {
  const base = sampleAlert(new Date());
  n += 1;
  const ruleId = o.ruleId ?? 'AIGOV-002';
  const changedAt = new Date(Date.parse('2025-03-04T09:00:00Z') + minutes * 60_000).toISOString();
  return {
    ruleId,
    ruleVersion: 1,
    severity: o.severity ?? 'high',
    title: base.title,
    summary: base.summary,
    entryId: `e${n}`,
    dedupeKey: `${ruleId}:acme:e${n}`,
    context: {
      ...base.context,
      entryId: `e${n}`,
      changedAt,
      changes: [
        {
          ...(base.context.changes[0] as AlertDraft['context']['changes'][number]),
          field: o.field ?? 'require_tool_approval',
        },
      ],
    },
  };
}

async function deliverAll(): Promise<void> {
  const sinks = [createWebhookSink({ name: 'hook', url: hook.url })];
  await deliverPending({ store: deliveryStore(db), sinks, logger: silentLogger });
  await deliverPending({ store: eventDeliveryStore(db), sinks, logger: silentLogger });
}

async function alerts() {
  return (
    await sql<{ alert_id: string; state: string; repeats: number; severity: string }>`
      select alert_id::text, state, repeats, severity from govtrail.alert_state order by alert_id`.execute(db)
  ).rows;
}

describe('suppression windows', () => {
  it('five repeats inside the window: one alert with four repeated events (counts 1..4), one delivery', async () => {
    // In two calls, as a run's flushes would make them.
    await insertAlerts(db, 'acme', null, [draft(0), draft(10), draft(20)], ROUTES, policy);
    await insertAlerts(db, 'acme', null, [draft(40), draft(55)], ROUTES, policy);
    await deliverAll();
    expect(await alerts()).toEqual([
      { alert_id: expect.any(String), state: 'open', repeats: 4, severity: 'high' },
    ]);
    const { rows } = await sql<{ repeat_count: number; actor: string; automatic: boolean }>`
      select repeat_count, actor, automatic from govtrail.alert_event where kind = 'repeated' order by event_id`.execute(
      db,
    );
    expect(rows.map((r) => r.repeat_count)).toEqual([1, 2, 3, 4]);
    expect(rows.every((r) => r.actor === 'govtrail' && r.automatic)).toBe(true);
    expect(hook.received).toHaveLength(1);
  });

  it('the same entry seen again is not counted twice', async () => {
    const first = draft(0);
    const repeat = draft(5);
    await insertAlerts(db, 'acme', null, [first, repeat], ROUTES, policy);
    await insertAlerts(db, 'acme', null, [repeat], ROUTES, policy);
    expect((await alerts())[0]?.repeats).toBe(1);
  });

  it('outside the window, in another scope, after a resolve, or without the policy: raised and delivered again', async () => {
    await insertAlerts(db, 'acme', null, [draft(0), draft(61)], ROUTES, policy);
    await insertAlerts(db, 'acme', null, [draft(62, { field: 'audit_verbosity' })], ROUTES, policy);
    const [, second] = await alerts();
    await recordAlertEvents(db, [Number(second?.alert_id)], { kind: 'resolved', actor: 'alice' });
    await insertAlerts(db, 'acme', null, [draft(70)], ROUTES, policy);
    // A rule without suppress is never folded.
    await insertAlerts(
      db,
      'acme',
      null,
      [draft(71, { ruleId: 'AIGOV-003' }), draft(72, { ruleId: 'AIGOV-003' })],
      ROUTES,
      policy,
    );
    await deliverAll();
    expect((await alerts()).map((a) => a.repeats)).toEqual([0, 0, 0, 0, 0, 0]);
    expect(hook.received.filter((r) => r.headers['x-govtrail-event'] === 'alert')).toHaveLength(6);
  });

  it('a more severe repeat is raised, and lifts the snooze of the alert it outranks', async () => {
    await insertAlerts(db, 'acme', null, [draft(0, { severity: 'medium' })], ROUTES, policy);
    const [first] = await alerts();
    await recordAlertEvents(db, [Number(first?.alert_id)], {
      kind: 'snoozed',
      actor: 'alice',
      forSeconds: 86_400,
    });
    // Not more severe: folded, the snooze stays.
    await insertAlerts(db, 'acme', null, [draft(5, { severity: 'medium' })], ROUTES, policy);
    expect((await alerts()).map((a) => a.state)).toEqual(['snoozed']);
    await insertAlerts(db, 'acme', null, [draft(10, { severity: 'high' })], ROUTES, policy);
    expect((await alerts()).map((a) => [a.state, a.severity])).toEqual([
      ['open', 'medium'],
      ['open', 'high'],
    ]);
    const { rows } = await sql<{ actor: string; note: string; automatic: boolean }>`
      select actor, note, automatic from govtrail.alert_event where kind = 'reopened'`.execute(db);
    expect(rows).toEqual([
      {
        actor: 'govtrail',
        note: expect.stringMatching(/^snooze lifted: alert \d+ of the same rule and scope is high$/),
        automatic: true,
      },
    ]);
  });
});
