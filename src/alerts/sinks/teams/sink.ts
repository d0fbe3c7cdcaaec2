/**
 * The Microsoft Teams sink: a Workflows webhook ("When a Teams webhook request is received" →
 * "Post card in a chat or channel") receiving one Adaptive Card 1.4 per alert.
 *
 * Office 365 connector URLs (`*.webhook.office.com`) are retired and refused when the configuration
 * is read. The workflow answers 202 with an empty body once it has accepted the request; it posts
 * the card afterwards, so 202 is "accepted", not "seen". The card is kept under 20 KB of UTF-8
 * (Teams refuses about 28 KB, with reports of failures from 20 KB) by cutting long values. Wire
 * facts: docs/design/alert-destinations.md, "Microsoft Teams (Workflows webhook)".
 */
import type { Dispatcher } from 'undici';
import type { AlertMessage, Severity, Sink } from '../../../core/alert.js';
import { followUpLine, isAnnounced } from '../../../core/follow-up.js';
import { alertLinks, formatValue, shortEnum, truncate } from '../../../core/format.js';
import { postJson } from '../http-post.js';
import { clipList, clipText, type Detail, fitToBudget } from '../payload-budget.js';
import type { SinkFactory } from '../sink-factory.js';
import type { TeamsSettings } from './settings.js';

/** Budget of one message body, in bytes of UTF-8. */
export const TEAMS_BUDGET_BYTES = 20 * 1024;

/** Adaptive Card version: 1.5 is documented but does not render from workflows. */
export const TEAMS_CARD_VERSION = '1.4';

/** Container style of the card's heading, by severity. */
export const TEAMS_CONTAINER_STYLE: Readonly<Record<Severity, string>> = {
  critical: 'attention',
  high: 'attention',
  medium: 'warning',
  low: 'emphasis',
};

/** TextBlock colour of the severity line, by severity. */
export const TEAMS_TEXT_COLOUR: Readonly<Record<Severity, string>> = {
  critical: 'attention',
  high: 'attention',
  medium: 'warning',
  low: 'default',
};

export interface TeamsSinkOptions {
  /** Sink name in alert_delivery and messages; `teams` by default. */
  readonly name?: string | undefined;
  /** The workflow's URL, with its `sig=` parameter: the credential. */
  readonly url: string;
  /** Runbook link template (`{rule_id}`), see Config.runbookUrl. */
  readonly runbookUrl?: string | undefined;
  readonly dispatcher?: Dispatcher | undefined;
  readonly timeoutMs?: number | undefined;
}

/**
 * Escapes the characters that make text bold, italic or a link in a TextBlock or fact, so a value
 * from the tenant cannot format the card or plant a link in it.
 */
export function escapeCardMarkdown(text: string): string {
  return text.replace(/[\\*_[\]()`]/g, (ch) => `\\${ch}`);
}

type CardElement = Record<string, unknown>;

function textBlock(text: string, extra: Record<string, unknown> = {}): CardElement {
  return { type: 'TextBlock', text, wrap: true, ...extra };
}

function card(alert: AlertMessage, o: { runbookUrl?: string | undefined; deliveryId: string }, d: Detail) {
  const c = alert.context;
  const esc = (text: string) => escapeCardMarkdown(clipText(text, d));
  const actor =
    c.actor.kind === null
      ? '—'
      : `${esc(shortEnum(c.actor.kind))}${c.actor.userId === null ? '' : ` (user ${esc(c.actor.userId)})`}`;
  const tickets = clipList(c.tickets, d);
  const facts = [
    { title: 'Tenant', value: esc(alert.tenantId) },
    { title: c.changedAt === null ? 'Raised at' : 'Changed at', value: esc(c.changedAt ?? alert.createdAt) },
    { title: 'Actor', value: actor },
    {
      title: 'Ticket',
      value:
        c.tickets.length === 0
          ? 'none'
          : `${tickets.kept.map((t) => esc(t.value ?? 'ticket')).join(', ')}${tickets.omitted > 0 ? ` and ${tickets.omitted} more` : ''}`,
    },
  ];
  if (c.changeKind !== null) facts.push({ title: 'Change', value: esc(shortEnum(c.changeKind)) });
  if (c.reasons.length > 0) {
    const reasons = clipList(c.reasons, d);
    facts.push({ title: 'Reason', value: reasons.kept.map(esc).join('; ') });
  }

  const changes = clipList(c.changes, d);
  const body: CardElement[] = [
    {
      type: 'Container',
      style: TEAMS_CONTAINER_STYLE[alert.severity],
      bleed: true,
      items: [
        textBlock(`${alert.severity.toUpperCase()} · ${esc(alert.ruleId)}`, {
          weight: 'bolder',
          size: 'small',
          color: TEAMS_TEXT_COLOUR[alert.severity],
        }),
        textBlock(esc(alert.title), { weight: 'bolder', size: 'large' }),
      ],
    },
    { type: 'FactSet', facts },
  ];
  if (c.changes.length === 0) {
    body.push(textBlock(esc(alert.summary)));
  } else {
    body.push(textBlock('Changes', { weight: 'bolder', spacing: 'medium' }));
    for (const ch of changes.kept) {
      body.push(
        textBlock(
          `**${esc(ch.label)}**: ${esc(formatValue(ch.field, ch.oldValue))} → ${esc(formatValue(ch.field, ch.newValue))} (${ch.direction})`,
          { spacing: 'none' },
        ),
      );
    }
    if (changes.omitted > 0) {
      body.push(textBlock(`… and ${changes.omitted} more changes`, { spacing: 'none', isSubtle: true }));
    }
  }
  body.push(textBlock(`**Runbook**: ${esc(c.runbook)}`, { spacing: 'medium' }));
  const footer = [`${alert.ruleId} v${alert.ruleVersion}`];
  if (alert.entryId !== null) footer.push(`entry ${alert.entryId}`);
  footer.push(`dedupe ${alert.dedupeKey}`, `delivery ${o.deliveryId}`);
  body.push(textBlock(esc(footer.join(' · ')), { isSubtle: true, size: 'small' }));

  const actions = alertLinks(alert, o.runbookUrl)
    .slice(0, Math.min(d.items, 6))
    .map((l) => ({ type: 'Action.OpenUrl', title: clipText(l.text, d), url: l.href }));

  return {
    $schema: 'http://adaptivecards.io/schemas/adaptive-card.json',
    type: 'AdaptiveCard',
    version: TEAMS_CARD_VERSION,
    msteams: { width: 'Full' },
    body,
    ...(actions.length === 0 ? {} : { actions }),
  };
}

/** The message of an alert: the envelope a Workflows webhook expects, around one Adaptive Card. */
export function teamsMessage(
  alert: AlertMessage,
  o: { readonly runbookUrl?: string | undefined; readonly deliveryId: string },
): Record<string, unknown> {
  return fitToBudget(TEAMS_BUDGET_BYTES, (detail) => ({
    type: 'message',
    attachments: [
      {
        contentType: 'application/vnd.microsoft.card.adaptive',
        contentUrl: null,
        content: card(alert, o, detail),
      },
    ],
  })).value;
}

/** Creates the Teams sink. Any 2xx (the workflow answers 202) is success. */
export function createTeamsSink(o: TeamsSinkOptions): Sink {
  const name = o.name ?? 'teams';
  return {
    name,
    async deliver(alert, delivery) {
      const message = teamsMessage(alert, { runbookUrl: o.runbookUrl, deliveryId: delivery.deliveryId });
      await postJson({
        sink: name,
        url: o.url,
        body: Buffer.from(JSON.stringify(message), 'utf8'),
        headers: { 'x-govtrail-delivery': delivery.deliveryId },
        dispatcher: o.dispatcher,
        timeoutMs: o.timeoutMs,
      });
    },
    async deliverEvent(alert, event, delivery) {
      if (!isAnnounced(event.kind)) return;
      // A short follow-up: a card of one text block.
      const message = {
        type: 'message',
        attachments: [
          {
            contentType: 'application/vnd.microsoft.card.adaptive',
            contentUrl: null,
            content: {
              $schema: 'http://adaptivecards.io/schemas/adaptive-card.json',
              type: 'AdaptiveCard',
              version: TEAMS_CARD_VERSION,
              body: [
                {
                  type: 'TextBlock',
                  wrap: true,
                  text: escapeCardMarkdown(truncate(followUpLine(alert, event), 3000)),
                },
              ],
            },
          },
        ],
      };
      await postJson({
        sink: name,
        url: o.url,
        body: Buffer.from(JSON.stringify(message), 'utf8'),
        headers: { 'x-govtrail-delivery': delivery.deliveryId },
        dispatcher: o.dispatcher,
        timeoutMs: o.timeoutMs,
      });
    },
  };
}

/** Builds the sink from its configured settings (the registry's factory of this type). */
export const fromConfig: SinkFactory<TeamsSettings> = (c, d) =>
  createTeamsSink({
    name: c.name,
    url: c.url,
    runbookUrl: d.runbookUrl,
    timeoutMs: c.timeoutMs,
    dispatcher: d.dispatcher,
  });
