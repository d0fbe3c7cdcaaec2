import pino from 'pino';
import { describe, expect, it } from 'vitest';
import {
  ALERT_CHANNEL,
  createLogSink,
  createNotifySink,
  createSinks,
  escapeMrkdwn,
  SEVERITY_COLOURS,
  signBody,
  slackPayload,
  webhookPayload,
} from '../../src/alerts/sinks/index.js';
import { loadConfig } from '../../src/config/settings.js';
import type { AlertMessage } from '../../src/core/alert.js';
import { GovtrailError } from '../../src/core/errors.js';
import { silentLogger } from '../../src/runtime/logger.js';

const ALERT: AlertMessage = {
  alertId: '42',
  tenantId: 'acme',
  entryId: '2vYJmWBbS0sLCn3sYc6l1jOQ2bX',
  ruleId: 'AIGOV-004',
  ruleVersion: 1,
  severity: 'high',
  title: 'Client types widened to all types',
  summary: 'allowedClientTypes: [PERSONAL] → all types. PUT by API at 2025-03-04T05:06:07Z, ticket SEC-1.',
  dedupeKey: 'AIGOV-004:acme:2vYJmWBbS0sLCn3sYc6l1jOQ2bX',
  createdAt: '2025-03-04T05:06:09.000Z',
  context: {
    tenantId: 'acme',
    entryId: '2vYJmWBbS0sLCn3sYc6l1jOQ2bX',
    changedAt: '2025-03-04T05:06:07.123456789Z',
    changeKind: 'CHANGE_KIND_PUT',
    actor: { kind: 'ACTOR_KIND_API', userId: '2vYJmQ0pXgV7Ik8iKc0uXhKxA9P' },
    tickets: [{ value: 'SEC-1', url: 'https://jira.example/browse/SEC-1?a=1&b=2' }],
    reasons: ['widen for <pilot> & test'],
    changes: [
      {
        field: 'allowed_client_types',
        label: 'allowedClientTypes',
        oldValue: ['MCP_CLIENT_TYPE_PERSONAL'],
        newValue: [],
        direction: 'loosened',
      },
    ],
    allChanges: [],
    syslogEventId: null,
    traceId: null,
    runbook: 'Confirm the new list with the actor.',
    ruleName: 'client-types-widened',
    details: {},
  },
};

type Block = {
  type: string;
  text?: { type: string; text: string };
  fields?: Array<{ text: string }>;
  elements?: Array<{ text: string }>;
};

function blocks(p: Record<string, unknown>): Block[] {
  const attachments = p['attachments'] as Array<{ color: string; blocks: Block[] }>;
  return attachments[0]?.blocks ?? [];
}

describe('slackPayload', () => {
  it('builds a Block Kit attachment coloured by severity with a text fallback', () => {
    const p = slackPayload(ALERT);
    expect(p['text']).toBe('[HIGH] Client types widened to all types (tenant acme)');
    const attachments = p['attachments'] as Array<{ color: string }>;
    expect(attachments[0]?.color).toBe(SEVERITY_COLOURS.high);
    const b = blocks(p);
    expect(b.map((x) => x.type)).toEqual(['header', 'section', 'section', 'section', 'context']);
    expect(b[0]?.text).toEqual({
      type: 'plain_text',
      text: 'Client types widened to all types',
      emoji: false,
    });
    const fields = b[1]?.fields?.map((f) => f.text) ?? [];
    expect(fields).toContain('*Severity*\nHIGH');
    expect(fields).toContain('*Tenant*\nacme');
    expect(fields).toContain('*Changed at*\n2025-03-04T05:06:07.123456789Z');
    expect(fields).toContain('*Actor*\nAPI (user 2vYJmQ0pXgV7Ik8iKc0uXhKxA9P)');
    expect(fields).toContain('*Ticket*\n<https://jira.example/browse/SEC-1?a=1&b=2|SEC-1>');
    expect(fields).toContain('*Reason*\nwiden for &lt;pilot&gt; &amp; test');
    expect(b[2]?.text?.text).toBe(
      '*Changes*\n• `allowedClientTypes`: [PERSONAL] → all client types _(loosened)_',
    );
    expect(b[4]?.elements?.[0]?.text).toBe(
      'AIGOV-004 v1 · entry 2vYJmWBbS0sLCn3sYc6l1jOQ2bX · dedupe AIGOV-004:acme:2vYJmWBbS0sLCn3sYc6l1jOQ2bX',
    );
  });

  it('colours medium orange and low grey', () => {
    const colour = (severity: AlertMessage['severity']) =>
      (slackPayload({ ...ALERT, severity })['attachments'] as Array<{ color: string }>)[0]?.color;
    expect(colour('medium')).toBe('#f57c00');
    expect(colour('low')).toBe('#9e9e9e');
    expect(colour('critical')).toBe(colour('critical'));
    expect(colour('high')).not.toBe(colour('medium'));
  });

  it('escapes user-provided text and refuses non-http links', () => {
    const p = slackPayload({
      ...ALERT,
      title: 'a <b> & c',
      context: {
        ...ALERT.context,
        actor: { kind: 'ACTOR_KIND_<x>', userId: null },
        tickets: [
          { value: '<!channel>', url: 'javascript:alert(1)' },
          { value: 'T|2', url: 'https://x.example/a|b>c' },
        ],
      },
    });
    expect(p['text']).toBe('[HIGH] a &lt;b&gt; &amp; c (tenant acme)');
    const fields = blocks(p)[1]?.fields?.map((f) => f.text) ?? [];
    expect(fields).toContain('*Actor*\n&lt;x&gt;');
    expect(fields).toContain('*Ticket*\n&lt;!channel&gt;, <https://x.example/a%7Cb%3Ec|T|2>');
  });

  it('shows the summary when the alert is about no field (run-level, hard delete)', () => {
    const p = slackPayload({
      ...ALERT,
      entryId: null,
      summary: 'The last 3 runs for tenant acme failed.',
      context: {
        ...ALERT.context,
        entryId: null,
        changedAt: null,
        changeKind: null,
        changes: [],
        actor: { kind: null, userId: null },
        tickets: [],
        reasons: [],
      },
    });
    const b = blocks(p);
    expect(b[2]?.text?.text).toBe('The last 3 runs for tenant acme failed.');
    expect(b[1]?.fields?.map((f) => f.text)).toContain('*Raised at*\n2025-03-04T05:06:09.000Z');
    expect(b[4]?.elements?.[0]?.text).not.toContain('entry');
  });

  it('keeps the header within the Block Kit limit', () => {
    const header = blocks(slackPayload({ ...ALERT, title: 'x'.repeat(400) }))[0]?.text?.text ?? '';
    expect(header.length).toBe(150);
  });

  it('escapeMrkdwn escapes &, < and >', () => {
    expect(escapeMrkdwn('<a & b>')).toBe('&lt;a &amp; b&gt;');
  });
});

describe('webhookPayload and signBody', () => {
  it('wraps the alert as a govtrail.alert event', () => {
    expect(webhookPayload(ALERT)).toEqual({
      type: 'govtrail.alert',
      alert: {
        id: '42',
        ruleId: 'AIGOV-004',
        ruleVersion: 1,
        severity: 'high',
        title: ALERT.title,
        summary: ALERT.summary,
        tenantId: 'acme',
        entryId: ALERT.entryId,
        dedupeKey: ALERT.dedupeKey,
        createdAt: ALERT.createdAt,
        context: ALERT.context,
      },
    });
  });

  it('signs with HMAC-SHA256 in hex', () => {
    // RFC 4231-style known answer (the classic "quick brown fox" vector).
    expect(signBody('key', 'The quick brown fox jumps over the lazy dog')).toBe(
      'sha256=f7bc83f430538424b13298e6aa6fb143ef4d59a14946175997479dbc2d1a3cd8',
    );
  });
});

describe('log sink', () => {
  function capture() {
    const lines: Array<Record<string, unknown>> = [];
    return { lines, logger: pino({ level: 'info' }, { write: (s: string) => lines.push(JSON.parse(s)) }) };
  }

  it('logs a high alert at warn with its identifiers', async () => {
    const { lines, logger } = capture();
    await createLogSink(logger).deliver(ALERT, { deliveryId: 'd1', attempt: 1 });
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({
      level: 40,
      deliveryId: 'd1',
      alert: { alertId: '42', ruleId: 'AIGOV-004', dedupeKey: ALERT.dedupeKey, severity: 'high' },
    });
  });

  it('logs a low alert at info', async () => {
    const { lines, logger } = capture();
    await createLogSink(logger).deliver({ ...ALERT, severity: 'low' }, { deliveryId: 'd1', attempt: 1 });
    expect(lines[0]?.['level']).toBe(30);
  });
});

describe('notify sink', () => {
  it('notifies govtrail_alerts with the alert id', async () => {
    const sent: Array<[string, string]> = [];
    await createNotifySink(async (c, p) => {
      sent.push([c, p]);
    }).deliver(ALERT, { deliveryId: 'd', attempt: 1 });
    expect(sent).toEqual([['govtrail_alerts', '42']]);
    expect(ALERT_CHANNEL).toBe('govtrail_alerts');
  });

  it('reports a failed NOTIFY as a retryable DELIVERY_FAILED', async () => {
    const sink = createNotifySink(async () => {
      throw new Error('connection terminated');
    });
    const err = await sink.deliver(ALERT, { deliveryId: 'd', attempt: 1 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(GovtrailError);
    expect(err).toMatchObject({
      code: 'DELIVERY_FAILED',
      retryable: true,
      message: 'notify: connection terminated',
    });
  });
});

const testConfig = (env: Record<string, string> = {}) => loadConfig(env, { dotenv: false });

describe('createSinks', () => {
  it('builds the sinks of the configuration, in its order, under their names', () => {
    const config = testConfig({
      GOVTRAIL_WEBHOOK_URL: 'https://hooks.example/x',
      GOVTRAIL_WEBHOOK_SECRET: 's3cret-s3cret',
      GOVTRAIL_SLACK_WEBHOOK_URL: 'https://hooks.slack.com/services/T/B/X',
    });
    const sinks = createSinks(config.sinks, { logger: silentLogger, notify: async () => undefined });
    expect(sinks.map((s) => s.name)).toEqual(['log', 'webhook', 'slack', 'notify']);
  });

  it('with nothing configured: the log sink and NOTIFY', () => {
    const sinks = createSinks(testConfig().sinks, { logger: silentLogger, notify: async () => undefined });
    expect(sinks.map((s) => s.name)).toEqual(['log', 'notify']);
  });

  it('refuses a NOTIFY sink without a database', () => {
    expect(() => createSinks(testConfig().sinks, { logger: silentLogger })).toThrow(
      /NOTIFY needs the database/,
    );
  });
});
