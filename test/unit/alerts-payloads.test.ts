/**
 * The PagerDuty event and the Teams message of an alert, field by field, and the size budgets that
 * cut long values instead of failing the delivery.
 */
import { describe, expect, it } from 'vitest';
import {
  escapeCardMarkdown,
  PAGERDUTY_SEVERITY,
  pagerDutyDedupKey,
  pagerDutyEvent,
  TEAMS_CARD_VERSION,
  teamsMessage,
} from '../../src/alerts/sinks/index.js';
import { jsonBytes } from '../../src/alerts/sinks/payload-budget.js';
import { TEAMS_BUDGET_BYTES } from '../../src/alerts/sinks/teams/sink.js';
import type { AlertChange, AlertMessage } from '../../src/core/alert.js';

const KEY = 'R0UT1NGKEY0123456789abcdefABCDEF';

const ALERT: AlertMessage = {
  alertId: '42',
  tenantId: 'acme',
  entryId: '2vYJmWBbS0sLCn3sYc6l1jOQ2bX',
  ruleId: 'AIGOV-002',
  ruleVersion: 1,
  severity: 'high',
  title: 'Tool approval was turned off',
  summary: 'requireToolApproval: true → false. PUT by API at 2025-03-04T05:06:07Z, ticket SEC-1.',
  dedupeKey: 'AIGOV-002:acme:2vYJmWBbS0sLCn3sYc6l1jOQ2bX',
  createdAt: '2025-03-04T05:06:09.000Z',
  context: {
    tenantId: 'acme',
    entryId: '2vYJmWBbS0sLCn3sYc6l1jOQ2bX',
    changedAt: '2025-03-04T05:06:07.123456789Z',
    changeKind: 'CHANGE_KIND_PUT',
    actor: { kind: 'ACTOR_KIND_API', userId: '2vYJmQ0pXgV7Ik8iKc0uXhKxA9P' },
    tickets: [
      { value: 'SEC-1', url: 'https://jira.example/browse/SEC-1' },
      { value: 'EVIL', url: 'javascript:alert(1)' },
    ],
    reasons: ['pilot rollout'],
    changes: [
      {
        field: 'require_tool_approval',
        label: 'requireToolApproval',
        oldValue: true,
        newValue: false,
        direction: 'loosened',
      },
    ],
    allChanges: [],
    syslogEventId: '2vYJmWZ0f1tOa8b6Gm8o0Vp7kXc',
    traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
    runbook: 'Confirm with the actor, otherwise turn approval back on.',
    ruleName: 'tool-approval-disabled',
    details: {},
  },
};

/** An alert whose values are far too large for any chat message. */
function hugeAlert(): AlertMessage {
  const changes: AlertChange[] = Array.from({ length: 300 }, (_, i) => ({
    field: `field_${i}`,
    label: `field${i}`,
    oldValue: 'x'.repeat(5000),
    newValue: 'ü'.repeat(5000),
    direction: 'changed',
  }));
  return {
    ...ALERT,
    title: 'T'.repeat(3000),
    summary: 'S'.repeat(600_000),
    context: {
      ...ALERT.context,
      changes,
      reasons: ['r'.repeat(100_000)],
      details: { values: Array.from({ length: 5000 }, (_, i) => `value-${i}-${'v'.repeat(200)}`) },
    },
  };
}

describe('pagerDutyEvent', () => {
  it('triggers an event keyed by the dedupe key, with the mapped severity and the alert in custom_details', () => {
    const e = pagerDutyEvent(ALERT, {
      routingKey: KEY,
      runbookUrl: 'https://wiki.example/govtrail#{rule_id}',
    });
    expect(e).toMatchObject({
      routing_key: KEY,
      event_action: 'trigger',
      dedup_key: ALERT.dedupeKey,
      client: 'govtrail',
      payload: {
        summary: '[HIGH] Tool approval was turned off (tenant acme)',
        source: 'acme',
        severity: 'error',
        timestamp: '2025-03-04T05:06:09.000Z',
        component: 'ai-governance-settings',
        class: 'AIGOV-002',
      },
    });
    expect(e.payload.custom_details).toMatchObject({
      rule: 'AIGOV-002 v1 (tool-approval-disabled)',
      tenant: 'acme',
      changed_at: '2025-03-04T05:06:07.123456789Z',
      change_kind: 'PUT',
      actor: { kind: 'API', user_id: '2vYJmQ0pXgV7Ik8iKc0uXhKxA9P' },
      reasons: ['pilot rollout'],
      changes: [{ field: 'requireToolApproval', before: 'true', after: 'false', direction: 'loosened' }],
      runbook: ALERT.context.runbook,
      dedupe_key: ALERT.dedupeKey,
      trace_id: '4bf92f3577b34da6a3ce929d0e0e4736',
    });
    // The javascript: ticket is no link.
    expect(e.links).toEqual([
      { href: 'https://jira.example/browse/SEC-1', text: 'Ticket SEC-1' },
      { href: 'https://wiki.example/govtrail#AIGOV-002', text: 'Runbook AIGOV-002' },
    ]);
  });

  it('maps low→info, medium→warning, high→error, critical→critical', () => {
    expect(PAGERDUTY_SEVERITY).toEqual({
      low: 'info',
      medium: 'warning',
      high: 'error',
      critical: 'critical',
    });
    for (const s of ['low', 'medium', 'high', 'critical'] as const) {
      expect(pagerDutyEvent({ ...ALERT, severity: s }, { routingKey: KEY }).payload.severity).toBe(
        PAGERDUTY_SEVERITY[s],
      );
    }
  });

  it('keeps summary within 1024 characters and dedup_key within 255, stable for one alert', () => {
    const long = { ...ALERT, title: 'x'.repeat(5000), dedupeKey: `AIGOV-002:${'t'.repeat(300)}:E1` };
    const e = pagerDutyEvent(long, { routingKey: KEY });
    expect(e.payload.summary).toHaveLength(1024);
    expect(e.dedup_key.length).toBeLessThanOrEqual(255);
    expect(e.dedup_key).toBe(pagerDutyDedupKey(long.dedupeKey));
    expect(pagerDutyDedupKey(`${long.dedupeKey}2`)).not.toBe(e.dedup_key);
    expect(pagerDutyDedupKey(ALERT.dedupeKey)).toBe(ALERT.dedupeKey);
  });

  it('cuts long values to stay under 512 KB rather than failing', () => {
    const e = pagerDutyEvent(hugeAlert(), { routingKey: KEY });
    expect(jsonBytes(e)).toBeLessThanOrEqual(512 * 1024);
    const details = e.payload.custom_details;
    expect(details['changes_omitted']).toBeGreaterThan(0);
    expect((details['changes'] as unknown[]).length).toBeGreaterThan(0);
    expect(String(details['summary']).endsWith('…')).toBe(true);
    expect(e.dedup_key).toBe(ALERT.dedupeKey);
  });
});

interface Card {
  type: string;
  version: string;
  body: Array<Record<string, unknown> & { items?: Array<Record<string, unknown>> }>;
  actions?: Array<{ type: string; title: string; url: string }>;
}

function cardOf(message: Record<string, unknown>): Card {
  const attachments = message['attachments'] as Array<{ contentType: string; content: Card }>;
  return (attachments[0] as { content: Card }).content;
}

const texts = (card: Card): string[] =>
  card.body.flatMap((b) => [
    ...(typeof b['text'] === 'string' ? [b['text']] : []),
    ...(b.items ?? []).map((i) => String(i['text'])),
  ]);

describe('teamsMessage', () => {
  it('wraps one Adaptive Card 1.4 in the envelope a Workflows webhook expects', () => {
    const m = teamsMessage(ALERT, { deliveryId: 'd-1' });
    expect(m['type']).toBe('message');
    const attachments = m['attachments'] as Array<Record<string, unknown>>;
    expect(attachments).toHaveLength(1);
    expect(attachments[0]).toMatchObject({
      contentType: 'application/vnd.microsoft.card.adaptive',
      contentUrl: null,
    });
    const card = cardOf(m);
    expect(card.type).toBe('AdaptiveCard');
    expect(card.version).toBe('1.4');
    expect(TEAMS_CARD_VERSION).toBe('1.4');
  });

  it('colours the heading by severity, lists the facts and one line per field change', () => {
    const card = cardOf(
      teamsMessage(ALERT, { deliveryId: 'd-1', runbookUrl: 'https://wiki.example/rb/{rule_id}' }),
    );
    const heading = card.body[0] as { type: string; style: string; items: Array<Record<string, unknown>> };
    expect(heading).toMatchObject({ type: 'Container', style: 'attention' });
    expect(heading.items[0]).toMatchObject({ text: 'HIGH · AIGOV-002', color: 'attention' });
    expect(heading.items[1]).toMatchObject({ text: 'Tool approval was turned off', size: 'large' });
    const facts = (card.body.find((b) => b['type'] === 'FactSet') as { facts: unknown[] }).facts;
    expect(facts).toEqual([
      { title: 'Tenant', value: 'acme' },
      { title: 'Changed at', value: '2025-03-04T05:06:07.123456789Z' },
      { title: 'Actor', value: 'API (user 2vYJmQ0pXgV7Ik8iKc0uXhKxA9P)' },
      { title: 'Ticket', value: 'SEC-1, EVIL' },
      { title: 'Change', value: 'PUT' },
      { title: 'Reason', value: 'pilot rollout' },
    ]);
    expect(texts(card)).toContain('**requireToolApproval**: true → false (loosened)');
    expect(texts(card).some((t) => t.includes('delivery d-1'))).toBe(true);
    expect(card.actions).toEqual([
      { type: 'Action.OpenUrl', title: 'Ticket SEC-1', url: 'https://jira.example/browse/SEC-1' },
      { type: 'Action.OpenUrl', title: 'Runbook AIGOV-002', url: 'https://wiki.example/rb/AIGOV-002' },
    ]);
    const style = (severity: AlertMessage['severity']) =>
      (cardOf(teamsMessage({ ...ALERT, severity }, { deliveryId: 'd' })).body[0] as { style: string }).style;
    expect([style('critical'), style('high'), style('medium'), style('low')]).toEqual([
      'attention',
      'attention',
      'warning',
      'emphasis',
    ]);
  });

  it('escapes markdown in values from the tenant, so they cannot plant a link', () => {
    const card = cardOf(
      teamsMessage(
        { ...ALERT, context: { ...ALERT.context, reasons: ['see [here](https://evil.example) *now*'] } },
        { deliveryId: 'd' },
      ),
    );
    const facts = (card.body.find((b) => b['type'] === 'FactSet') as { facts: Array<{ value: string }> })
      .facts;
    expect(facts.at(-1)?.value).toBe('see \\[here\\]\\(https://evil.example\\) \\*now\\*');
    expect(escapeCardMarkdown('a_b')).toBe('a\\_b');
  });

  it('cuts long values to stay within 20 KB rather than failing', () => {
    const m = teamsMessage(hugeAlert(), { deliveryId: 'd' });
    expect(jsonBytes(m)).toBeLessThanOrEqual(TEAMS_BUDGET_BYTES);
    const card = cardOf(m);
    expect(card.version).toBe('1.4');
    expect(texts(card).some((t) => /… and \d+ more changes/.test(t))).toBe(true);
  });
});
