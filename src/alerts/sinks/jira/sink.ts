/**
 * The Jira Cloud sink (REST API v3; wire facts in docs/design/alert-destinations.md, "Jira Cloud"):
 * one issue per alert dedupe key, a comment for each lifecycle event of the alert (a suppressed
 * repeat included), and on resolve a configurable workflow transition.
 *
 * - The issue: `POST /rest/api/3/issue` `{fields: {project: {key}, issuetype: {name}, summary,
 *   description: <ADF doc>, labels}}` → 201 `{id, key, self}`. Its labels carry `govtrail`, the rule
 *   id, the severity and `govtrail-<hash of the dedupe key>`, the label that finds the issue again.
 * - Finding it: `POST /rest/api/3/search/jql` `{jql: 'project = "SEC" AND labels = "govtrail-…"',
 *   fields: ["key"], maxResults: 1}` → 200 `{issues: [{id, key, …}], …}`. The alert's delivery
 *   looks first, so a retry after a lost 201 does not open a second issue (at least once becomes
 *   once); a follow-up whose issue is not found yet (search is eventually consistent) is retried.
 * - A comment: `POST /rest/api/3/issue/{key}/comment` `{body: <ADF doc>}` → 201.
 * - The transition: `POST /rest/api/3/issue/{key}/transitions` `{transition: {id}}` → 204.
 * - Authentication: basic, `email:api_token` in base64. 401/403/404/400 are permanent (bad token,
 *   no permission, no such project or transition, a field the project refuses); 429 after its
 *   Retry-After and 5xx are retried.
 */
import { createHash } from 'node:crypto';
import type { Dispatcher } from 'undici';
import type { AlertFollowUp, AlertMessage, Sink } from '../../../core/alert.js';
import { followUpLine } from '../../../core/follow-up.js';
import { formatValue, shortEnum, truncate } from '../../../core/format.js';
import { retryableFailure } from '../delivery-failure.js';
import { postJson } from '../http-post.js';
import type { SinkFactory } from '../sink-factory.js';
import type { JiraSettings } from './settings.js';

export interface JiraSinkOptions extends Omit<JiraSettings, 'timeoutMs'> {
  /** Sink name in alert_delivery and messages; `jira` by default. */
  readonly name?: string | undefined;
  readonly dispatcher?: Dispatcher | undefined;
  readonly timeoutMs?: number | undefined;
}

/** An Atlassian Document Format node (the subset this sink writes). */
export type AdfNode =
  | { readonly type: 'doc'; readonly version: 1; readonly content: readonly AdfNode[] }
  | { readonly type: 'paragraph'; readonly content: readonly AdfNode[] }
  | {
      readonly type: 'heading';
      readonly attrs: { readonly level: number };
      readonly content: readonly AdfNode[];
    }
  | { readonly type: 'bulletList'; readonly content: readonly AdfNode[] }
  | { readonly type: 'listItem'; readonly content: readonly AdfNode[] }
  | {
      readonly type: 'text';
      readonly text: string;
      readonly marks?: ReadonlyArray<{ readonly type: 'strong' | 'code' }>;
    };

/** Jira refuses an empty text node: absent text becomes a dash. */
const text = (s: string, marks?: ReadonlyArray<{ type: 'strong' | 'code' }>): AdfNode => ({
  type: 'text',
  text: s === '' ? '-' : truncate(s, 2000),
  ...(marks === undefined ? {} : { marks }),
});
const paragraph = (...content: AdfNode[]): AdfNode => ({ type: 'paragraph', content });
const bullets = (items: readonly AdfNode[][]): AdfNode => ({
  type: 'bulletList',
  content: items.map((c) => ({ type: 'listItem', content: [paragraph(...c)] })),
});

/** The label that finds an alert's issue again: `govtrail-` and 32 hex digits of the dedupe key's SHA-256. */
export function jiraDedupeLabel(dedupeKey: string): string {
  return `govtrail-${createHash('sha256').update(dedupeKey).digest('hex').slice(0, 32)}`;
}

/** The ADF description of an alert's issue. */
export function jiraDescription(alert: AlertMessage): AdfNode {
  const c = alert.context;
  const facts: AdfNode[][] = [
    [text('Severity: ', [{ type: 'strong' }]), text(alert.severity.toUpperCase())],
    [text('Rule: ', [{ type: 'strong' }]), text(`${alert.ruleId} v${alert.ruleVersion} (${c.ruleName})`)],
    [text('Tenant: ', [{ type: 'strong' }]), text(alert.tenantId)],
  ];
  if (c.changedAt !== null) facts.push([text('Changed at: ', [{ type: 'strong' }]), text(c.changedAt)]);
  if (c.actor.kind !== null || c.actor.userId !== null) {
    facts.push([
      text('Actor: ', [{ type: 'strong' }]),
      text(
        `${c.actor.kind === null ? 'unknown' : shortEnum(c.actor.kind)}${c.actor.userId === null ? '' : ` (user ${c.actor.userId})`}`,
      ),
    ]);
  }
  for (const t of c.tickets)
    facts.push([text('Ticket: ', [{ type: 'strong' }]), text(t.value ?? t.url ?? '')]);
  const changes = c.changes.map((ch) => [
    text(ch.label, [{ type: 'code' }]),
    text(`: ${formatValue(ch.field, ch.oldValue)} → ${formatValue(ch.field, ch.newValue)} (${ch.direction})`),
  ]);
  return {
    type: 'doc',
    version: 1,
    content: [
      paragraph(text(alert.summary)),
      bullets(facts),
      ...(changes.length > 0
        ? [paragraph(text('Changes', [{ type: 'strong' }])), bullets(changes.slice(0, 50))]
        : []),
      ...(c.runbook !== '' ? [paragraph(text('Runbook: ', [{ type: 'strong' }]), text(c.runbook))] : []),
      paragraph(
        text(`govtrail alert ${alert.alertId} · entry ${alert.entryId ?? '-'} · dedupe ${alert.dedupeKey}`, [
          { type: 'code' },
        ]),
      ),
    ],
  };
}

/** The body of `POST /rest/api/3/issue` for an alert. */
export function jiraIssue(
  alert: AlertMessage,
  o: Pick<JiraSettings, 'project' | 'issueType' | 'labels'>,
): Record<string, unknown> {
  const labels = [
    'govtrail',
    jiraDedupeLabel(alert.dedupeKey),
    alert.ruleId.replace(/\s/g, '_'),
    `govtrail-${alert.severity}`,
    ...o.labels,
  ];
  return {
    fields: {
      project: { key: o.project },
      issuetype: { name: o.issueType },
      // The summary is a single line of at most 255 characters.
      summary: truncate(
        `[${alert.severity.toUpperCase()}] ${alert.title} (tenant ${alert.tenantId})`.replace(
          /[\r\n]+/g,
          ' ',
        ),
        255,
      ),
      description: jiraDescription(alert),
      labels: [...new Set(labels)],
    },
  };
}

/** The body of `POST /rest/api/3/issue/{key}/comment` for a lifecycle event. */
export function jiraComment(alert: AlertMessage, e: AlertFollowUp): Record<string, unknown> {
  const details =
    e.kind === 'repeated' && e.details !== null
      ? [
          paragraph(
            text(
              `Repeat: entry ${String(e.details['entry_id'] ?? '-')} at ${String(e.details['changed_at'] ?? '-')}`,
            ),
          ),
        ]
      : [];
  return {
    body: {
      type: 'doc',
      version: 1,
      content: [
        paragraph(text(followUpLine(alert, e))),
        ...details,
        paragraph(text(`govtrail event ${e.eventId} at ${e.at.toISOString()}`, [{ type: 'code' }])),
      ],
    },
  };
}

/** Creates the Jira sink. */
export function createJiraSink(o: JiraSinkOptions): Sink {
  const name = o.name ?? 'jira';
  const auth = `Basic ${Buffer.from(`${o.email}:${o.apiToken}`, 'utf8').toString('base64')}`;
  const api = (path: string) => new URL(`rest/api/3/${path}`, o.url).href;
  const post = (path: string, body: unknown) =>
    postJson({
      sink: name,
      url: api(path),
      body: Buffer.from(JSON.stringify(body), 'utf8'),
      headers: { authorization: auth, accept: 'application/json' },
      dispatcher: o.dispatcher,
      timeoutMs: o.timeoutMs,
    });
  /** The key of the alert's issue, if Jira has one. */
  const findIssue = async (alert: AlertMessage): Promise<string | undefined> => {
    const found = await post('search/jql', {
      jql: `project = "${o.project}" AND labels = "${jiraDedupeLabel(alert.dedupeKey)}"`,
      fields: ['key'],
      maxResults: 1,
    });
    // The answer may be cut to its first bytes: read the first key rather than parse the whole.
    return /"key"\s*:\s*"([A-Z][A-Z0-9_]*-\d+)"/.exec(found.body)?.[1];
  };
  return {
    name,
    async deliver(alert) {
      if ((await findIssue(alert)) !== undefined) return;
      await post('issue', jiraIssue(alert, o));
    },
    async deliverEvent(alert, event) {
      const key = await findIssue(alert);
      if (key === undefined)
        throw retryableFailure(name, `no issue labelled ${jiraDedupeLabel(alert.dedupeKey)} yet`);
      await post(`issue/${encodeURIComponent(key)}/comment`, jiraComment(alert, event));
      if (event.kind === 'resolved' && o.resolveTransition !== undefined) {
        await post(`issue/${encodeURIComponent(key)}/transitions`, {
          transition: { id: o.resolveTransition },
        });
      }
    },
  };
}

/** Builds the sink from its configured settings (the registry's factory of this type). */
export const fromConfig: SinkFactory<JiraSettings> = (c, d) =>
  createJiraSink({ ...c, name: c.name, timeoutMs: c.timeoutMs, dispatcher: d.dispatcher });
