/**
 * The Slack incoming-webhook sink (`GOVTRAIL_SLACK_WEBHOOK_URL`): one Block Kit message per alert,
 * in an attachment coloured by severity, with a plain `text` fallback for notifications.
 */
import type { Dispatcher } from 'undici';
import type { AlertMessage, Severity, Sink } from '../../../core/alert.js';
import { followUpLine, isAnnounced } from '../../../core/follow-up.js';
import { formatValue, shortEnum, truncate } from '../../../core/format.js';
import { postJson } from '../http-post.js';
import type { SinkFactory } from '../sink-factory.js';
import type { SlackSettings } from './settings.js';

export interface SlackSinkOptions {
  /** Sink name in alert_delivery and messages; `slack` by default. */
  readonly name?: string | undefined;
  readonly url: string;
  readonly dispatcher?: Dispatcher | undefined;
  readonly timeoutMs?: number | undefined;
}

/** Attachment colours: red for high and critical, orange for medium, grey for low. */
export const SEVERITY_COLOURS: Readonly<Record<Severity, string>> = {
  critical: '#b71c1c',
  high: '#d32f2f',
  medium: '#f57c00',
  low: '#9e9e9e',
};

// Block Kit limits: header text 150 characters, section text 3000, section field 2000.
const HEADER_MAX = 150;
const SECTION_MAX = 3000;
const FIELD_MAX = 2000;

/** Escapes the three characters mrkdwn treats as control characters in user-provided text. */
export function escapeMrkdwn(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** `<url|label>` for an http(s) URL; the escaped label alone for anything else. */
function link(url: string | null, label: string): string {
  const text = escapeMrkdwn(label);
  if (url === null) return text;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return text;
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') return text;
  // `|` and `>` would end the link early; the URL serialiser already encodes `<`, `>` and spaces.
  const href = parsed.href.replace(/\|/g, '%7C').replace(/>/g, '%3E');
  return `<${href}|${text}>`;
}

function field(label: string, value: string): { type: 'mrkdwn'; text: string } {
  return { type: 'mrkdwn', text: truncate(`*${label}*\n${value}`, FIELD_MAX) };
}

/** Builds the Slack message of an alert (exported for the README example and tests). */
export function slackPayload(alert: AlertMessage): Record<string, unknown> {
  const c = alert.context;
  const actor =
    c.actor.kind === null
      ? '—'
      : `${escapeMrkdwn(shortEnum(c.actor.kind))}${c.actor.userId === null ? '' : ` (user ${escapeMrkdwn(c.actor.userId)})`}`;
  const ticketText =
    c.tickets.length === 0 ? 'none' : c.tickets.map((t) => link(t.url, t.value ?? 'ticket')).join(', ');
  const fields = [
    field('Severity', alert.severity.toUpperCase()),
    field('Tenant', escapeMrkdwn(alert.tenantId)),
    field(c.changedAt === null ? 'Raised at' : 'Changed at', escapeMrkdwn(c.changedAt ?? alert.createdAt)),
    field('Actor', actor),
    field('Ticket', ticketText),
  ];
  if (c.changeKind !== null) fields.push(field('Change', escapeMrkdwn(shortEnum(c.changeKind))));
  if (c.reasons.length > 0) fields.push(field('Reason', c.reasons.map(escapeMrkdwn).join('\n')));

  const body =
    c.changes.length === 0
      ? escapeMrkdwn(alert.summary)
      : `*Changes*\n${c.changes
          .map(
            (ch) =>
              `• \`${escapeMrkdwn(ch.label)}\`: ${escapeMrkdwn(formatValue(ch.field, ch.oldValue))} → ${escapeMrkdwn(formatValue(ch.field, ch.newValue))} _(${ch.direction})_`,
          )
          .join('\n')}`;

  const context = [`${alert.ruleId} v${alert.ruleVersion}`];
  if (alert.entryId !== null) context.push(`entry ${alert.entryId}`);
  context.push(`dedupe ${alert.dedupeKey}`);

  return {
    text: `[${alert.severity.toUpperCase()}] ${escapeMrkdwn(alert.title)} (tenant ${escapeMrkdwn(alert.tenantId)})`,
    attachments: [
      {
        color: SEVERITY_COLOURS[alert.severity],
        blocks: [
          {
            type: 'header',
            text: { type: 'plain_text', text: truncate(alert.title, HEADER_MAX), emoji: false },
          },
          { type: 'section', fields },
          { type: 'section', text: { type: 'mrkdwn', text: truncate(body, SECTION_MAX) } },
          {
            type: 'section',
            text: { type: 'mrkdwn', text: truncate(`*Runbook*\n${escapeMrkdwn(c.runbook)}`, SECTION_MAX) },
          },
          { type: 'context', elements: [{ type: 'mrkdwn', text: escapeMrkdwn(context.join(' · ')) }] },
        ],
      },
    ],
  };
}

/**
 * Creates the Slack sink. Slack answers 200 `ok`; 429 and 5xx are retried, other errors
 * (`invalid_token` 403, `no_service` 404, `channel_is_archived` 410) are permanent.
 */
export function createSlackSink(o: SlackSinkOptions): Sink {
  const name = o.name ?? 'slack';
  return {
    name,
    async deliver(alert) {
      const body = Buffer.from(JSON.stringify(slackPayload(alert)), 'utf8');
      await postJson({
        sink: name,
        url: o.url,
        body,
        headers: {},
        dispatcher: o.dispatcher,
        timeoutMs: o.timeoutMs,
      });
    },
    async deliverEvent(alert, event) {
      if (!isAnnounced(event.kind)) return;
      // A short follow-up: one escaped line, no attachment.
      const body = Buffer.from(
        JSON.stringify({ text: escapeMrkdwn(truncate(followUpLine(alert, event), 3000)) }),
        'utf8',
      );
      await postJson({
        sink: name,
        url: o.url,
        body,
        headers: {},
        dispatcher: o.dispatcher,
        timeoutMs: o.timeoutMs,
      });
    },
  };
}

/** Builds the sink from its configured settings (the registry's factory of this type). */
export const fromConfig: SinkFactory<SlackSettings> = (c, d) =>
  createSlackSink({ name: c.name, url: c.url, timeoutMs: c.timeoutMs, dispatcher: d.dispatcher });
