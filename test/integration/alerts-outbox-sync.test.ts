/**
 * The alert outbox end to end (docs/design/alerts.md "Delivery", docs/design/sync.md S3/S4): alerts exist
 * only for committed entries, each alert gets one alert_delivery row per configured sink, and rerunning a
 * sync never duplicates an alert or sends it again.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createAlerting } from '../../src/app/alerting.js';
import type { SandboxEntry } from '../../src/sandbox/index.js';
import {
  alertRows,
  appendSteps,
  BASELINE,
  deliveryRows,
  fieldChanges,
  idOf,
  type Receiver,
  runScenario,
  type Step,
  startReceiver,
  ticket,
} from '../helpers/alerts.js';
import { createHarness, type Harness } from '../helpers/harness.js';

let h: Harness | undefined;
let receiver: Receiver | undefined;
afterEach(async () => {
  await h?.close();
  await receiver?.close();
  h = undefined;
  receiver = undefined;
});

/** n unticketed changes a day apart, neither looser nor tighter: each raises AIGOV-013 (low) alone. */
function unticketed(n: number): Step[] {
  return Array.from({ length: n }, (_, i) => ({
    annotations: [],
    set: { allowedClientTypes: [i % 2 === 0 ? 'MCP_CLIENT_TYPE_SHARED' : 'MCP_CLIENT_TYPE_PERSONAL'] },
  }));
}

describe('alerts exist only for committed entries', () => {
  it('a run that fails on a later page leaves no alert, delivery or field change; the next run raises them', async () => {
    h = await createHarness({ entries: 20, seed: 41 });
    appendSteps(h.sandbox, [{ annotations: [ticket('SEC-1')], set: { ...BASELINE } }]);
    expect((await h.sync()).status).toBe('succeeded');
    const before = await alertRows(h.database.db);
    const deliveriesBefore = await deliveryRows(h.database.db);
    expect(before.map((a) => a.rule_id)).toEqual(['AIGOV-016']);

    const added = appendSteps(h.sandbox, unticketed(120));
    // Pages 1 and 2 (of 50) succeed, page 3 fails for good.
    h.sandbox.faults.add({ kind: '500', afterRequests: 2, times: Number.POSITIVE_INFINITY });
    const failed = await h.sync({ tenant: { pageSize: 50 } });
    expect(failed.status).toBe('failed');
    expect(failed.counters.pagesFetched).toBe(2);
    expect(await alertRows(h.database.db)).toEqual(before);
    expect(await deliveryRows(h.database.db)).toEqual(deliveriesBefore);
    expect(await fieldChanges(h.database.db, added.map(idOf))).toEqual([]);

    h.sandbox.faults.clear();
    const ok = await h.sync({ tenant: { pageSize: 50 } });
    expect(ok.status).toBe('succeeded');
    const raised = await alertRows(h.database.db, ok.runId);
    expect(raised).toHaveLength(120);
    expect(raised.every((a) => a.rule_id === 'AIGOV-013' && a.severity === 'low')).toBe(true);
    expect(new Set(raised.map((a) => a.entry_id))).toEqual(new Set(added.map(idOf)));
  });
});

describe('one delivery row per alert and configured sink', () => {
  it.each([
    { sinks: ['log', 'notify'], env: {} as Record<string, string> },
    { sinks: ['log', 'notify', 'webhook'], env: { GOVTRAIL_WEBHOOK_URL: 'http://127.0.0.1:9/hook' } },
  ])('sinks $sinks', async ({ sinks, env }) => {
    const s = await runScenario({ after: [{ annotations: [], set: { requireToolApproval: false } }] }, env);
    h = s.h;
    expect(s.alerts.map((a) => a.rule_id).sort()).toEqual(['AIGOV-002', 'AIGOV-013']);
    const alerts = await alertRows(h.database.db);
    expect(alerts).toHaveLength(3); // with the backfill digest
    const deliveries = await deliveryRows(h.database.db);
    for (const a of alerts) {
      const mine = deliveries.filter((d) => d.alert_id === a.alert_id);
      expect(mine.map((d) => d.sink).sort()).toEqual(sinks);
      expect(mine.every((d) => d.status === 'pending' && d.attempts === 0 && d.last_error === null)).toBe(
        true,
      );
    }
    expect(deliveries).toHaveLength(alerts.length * sinks.length);
  });
});

describe('rerunning a sync', () => {
  it('never duplicates an alert or sends it again', async () => {
    receiver = await startReceiver();
    const env = { GOVTRAIL_WEBHOOK_URL: receiver.url };
    const s = await runScenario(
      {
        after: [
          { set: { requireToolApproval: false } },
          { set: { auditVerbosity: 'AUDIT_VERBOSITY_MINIMAL' } },
        ],
      },
      env,
    );
    h = s.h;
    const alerting = createAlerting(h.config, h.logger, h.database);
    const alerts = await alertRows(h.database.db);
    expect(alerts.map((a) => a.rule_id)).toEqual(['AIGOV-016', 'AIGOV-002', 'AIGOV-003']);
    const first = await alerting.deliver();
    expect(first.bySink['webhook']).toEqual({ delivered: 3, retried: 0, failed: 0 });
    expect(receiver.received).toHaveLength(3);

    // Runs with nothing new: the first page reaches back into the lookback window, so the newest
    // entries are served (and inserted with ON CONFLICT DO NOTHING) again.
    for (let i = 0; i < 2; i++) {
      const again = await h.sync();
      expect(again.status).toBe('succeeded');
      expect(again.counters.entriesFetched).toBeGreaterThan(0);
      expect(again.counters.entriesInserted).toBe(0);
      expect(again.alerts).toBe(0);
      expect(await alerting.deliver()).toMatchObject({ delivered: 0, retried: 0, failed: 0 });
    }
    expect(await alertRows(h.database.db)).toEqual(alerts);
    expect(receiver.received).toHaveLength(3);
    const keys = receiver.received.map(
      (r) => (JSON.parse(r.body) as { alert: { dedupeKey: string } }).alert.dedupeKey,
    );
    expect(keys.sort()).toEqual(alerts.map((a) => a.dedupe_key).sort());

    // A new entry afterwards raises and sends only its own alert.
    const [next] = appendSteps(h.sandbox, [{ set: { autoDiscoveryEnabled: true } }]) as [SandboxEntry];
    const third = await h.sync();
    expect(third.alerts).toBe(1);
    await alerting.deliver();
    expect(receiver.received).toHaveLength(4);
    expect(JSON.parse(receiver.received[3]?.body as string)).toMatchObject({
      alert: { ruleId: 'AIGOV-006', entryId: idOf(next) },
    });
  });
});
