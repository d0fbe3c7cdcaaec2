/**
 * Routing end to end: a real sync raises a high alert (AIGOV-002), a low one (AIGOV-013) and the
 * backfill digest (AIGOV-016, low); the YAML `sinks:` list decides, when each alert is stored,
 * which sinks get an alert_delivery row; delivery then reaches only those receivers.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createAlerting } from '../../src/app/alerting.js';
import {
  type AlertRow,
  alertRows,
  deliveryRows,
  type Receiver,
  runScenario,
  startReceiver,
} from '../helpers/alerts.js';
import type { Harness } from '../helpers/harness.js';

const KEY = 'R0UT1NGKEY0123456789abcdefABCDEF';

let h: Harness | undefined;
const receivers: Receiver[] = [];
afterEach(async () => {
  await h?.close();
  h = undefined;
  for (const r of receivers.splice(0)) await r.close();
});

async function receiver(status: () => number = () => 202): Promise<Receiver> {
  const r = await startReceiver(status);
  receivers.push(r);
  return r;
}

function configFile(yaml: string): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'govtrail-routing-'));
  writeFileSync(path.join(dir, 'govtrail.yaml'), yaml);
  return path.join(dir, 'govtrail.yaml');
}

/** One high alert (ticketed tool-approval off) and one low (a change that loosens nothing, without a ticket). */
const AFTER = [
  { set: { requireToolApproval: false } },
  { annotations: [], set: { surfaceRequestableTools: false } },
];

function byRule(alerts: readonly AlertRow[]): Record<string, AlertRow> {
  return Object.fromEntries(alerts.map((a) => [a.rule_id, a]));
}

/** alert rule id → the sinks it has a delivery row for, sorted. */
async function routed(alerts: readonly AlertRow[]): Promise<Record<string, string[]>> {
  const rows = await deliveryRows((h as Harness).database.db);
  return Object.fromEntries(
    alerts.map((a) => [
      a.rule_id,
      rows
        .filter((d) => d.alert_id === a.alert_id)
        .map((d) => d.sink)
        .sort(),
    ]),
  );
}

describe('routing by severity, rule and tenant', () => {
  it('writes delivery rows only where the route allows, and only those receivers hear of the alert', async () => {
    const pd = await receiver();
    const teams = await receiver();
    const acme = await receiver();
    const globex = await receiver();
    const file = configFile(`sinks:
  - type: pagerduty
    routing_key: ${KEY}
    url: ${pd.url}
    min_severity: high
  - type: teams
    url: ${teams.url}
    rules: {exclude: [AIGOV-013]}
  - {type: webhook, name: acme-hook, url: "${acme.url}", tenants: [acme], rules: {exclude: [AIGOV-013]}}
  - {type: webhook, name: globex-hook, url: "${globex.url}", tenants: [globex]}
  - {type: log, rules: {exclude: [AIGOV-013]}}
  - {type: notify, rules: {exclude: [AIGOV-013]}}
`);
    const s = await runScenario({ after: AFTER }, { GOVTRAIL_CONFIG: file });
    h = s.h;
    const alerts = await alertRows(h.database.db);
    const rule = byRule(alerts);
    expect(Object.keys(rule).sort()).toEqual(['AIGOV-002', 'AIGOV-013', 'AIGOV-016']);
    expect([rule['AIGOV-002']?.severity, rule['AIGOV-013']?.severity, rule['AIGOV-016']?.severity]).toEqual([
      'high',
      'low',
      'low',
    ]);

    expect(await routed(alerts)).toEqual({
      'AIGOV-002': ['acme-hook', 'log', 'notify', 'pagerduty', 'teams'],
      // Excluded by every sink that would take it: stored, sent nowhere.
      'AIGOV-013': [],
      'AIGOV-016': ['acme-hook', 'log', 'notify', 'teams'],
    });

    const summary = await createAlerting(h.config, h.logger, h.database).deliver();
    expect(summary).toMatchObject({ delivered: 9, retried: 0, failed: 0 });
    // The high alert reached PagerDuty; the low ones did not.
    expect(pd.received).toHaveLength(1);
    const event = JSON.parse(pd.received[0]?.body ?? '{}') as {
      dedup_key: string;
      payload: { severity: string };
    };
    expect(event.dedup_key).toBe(rule['AIGOV-002']?.dedupe_key);
    expect(event.payload.severity).toBe('error');
    expect(teams.received).toHaveLength(2);
    expect(acme.received).toHaveLength(2);
    expect(globex.received).toHaveLength(0);
    const acmeRules = acme.received.map(
      (r) => (JSON.parse(r.body) as { alert: { ruleId: string } }).alert.ruleId,
    );
    expect(acmeRules.sort()).toEqual(['AIGOV-002', 'AIGOV-016']);
    expect(teams.received.map((r) => /"text":"(LOW|HIGH) · (AIGOV-\d+)"/.exec(r.body)?.[2]).sort()).toEqual([
      'AIGOV-002',
      'AIGOV-016',
    ]);
  });

  it('routes the environment short form by GOVTRAIL_PAGERDUTY_MIN_SEVERITY', async () => {
    const pd = await receiver();
    const s = await runScenario(
      { after: AFTER },
      {
        GOVTRAIL_PAGERDUTY_ROUTING_KEY: KEY,
        GOVTRAIL_PAGERDUTY_URL: pd.url,
        GOVTRAIL_PAGERDUTY_MIN_SEVERITY: 'high',
      },
    );
    h = s.h;
    const alerts = await alertRows(h.database.db);
    const routes = await routed(alerts);
    expect(routes['AIGOV-002']).toEqual(['log', 'notify', 'pagerduty']);
    expect(routes['AIGOV-013']).toEqual(['log', 'notify']);
    await createAlerting(h.config, h.logger, h.database).deliver();
    expect(pd.received.map((r) => (JSON.parse(r.body) as { dedup_key: string }).dedup_key)).toEqual([
      byRule(alerts)['AIGOV-002']?.dedupe_key,
    ]);
  });

  it('a permanent failure is marked failed at once with the reason; the other sinks deliver', async () => {
    const pd = await receiver(() => 400);
    const s = await runScenario(
      { after: [AFTER[0] as (typeof AFTER)[0]] },
      {
        GOVTRAIL_PAGERDUTY_ROUTING_KEY: KEY,
        GOVTRAIL_PAGERDUTY_URL: pd.url,
        GOVTRAIL_PAGERDUTY_MIN_SEVERITY: 'high',
      },
    );
    h = s.h;
    const alerting = createAlerting(h.config, h.logger, h.database);
    expect((await alerting.deliver()).bySink['pagerduty']).toEqual({ delivered: 0, retried: 0, failed: 1 });
    const rows = await deliveryRows(h.database.db);
    const failed = rows.filter((r) => r.sink === 'pagerduty');
    expect(failed).toEqual([
      expect.objectContaining({
        status: 'failed',
        attempts: 1,
        last_error: 'permanent: DELIVERY_FAILED: pagerduty: HTTP 400',
      }),
    ]);
    expect(rows.filter((r) => r.sink !== 'pagerduty').every((r) => r.status === 'delivered')).toBe(true);
    // Not picked up again, by the worker's tick or by hand.
    await alerting.deliver();
    expect(pd.received).toHaveLength(1);
    expect(h.logs.some((l) => l.includes('alert delivery failed permanently'))).toBe(true);
  });
});
