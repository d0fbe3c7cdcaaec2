/**
 * The PagerDuty Events API v2 sink: one `trigger` event per alert, POSTed to
 * `https://events.pagerduty.com/v2/enqueue` (EU accounts: `events.eu.pagerduty.com`).
 *
 * The alert's dedupe key is the `dedup_key`, so a repeated delivery updates the open PagerDuty alert
 * instead of opening another. 202 means accepted (queued, not yet an incident); 400 is an invalid
 * event and permanent, its body (PagerDuty's list of errors) kept in `last_error`; 429 and 5xx are
 * retried, after the Retry-After when PagerDuty sends one. Wire facts: docs/design/alert-destinations.md,
 * "PagerDuty Events API v2" (in the shared design reference).
 */
import { createHash } from 'node:crypto';
import type { Dispatcher } from 'undici';
import type { AlertMessage, Severity, Sink } from '../../../core/alert.js';
import type { AlertEventKind } from '../../../core/alert-lifecycle.js';
import { alertLinks, formatValue, shortEnum, truncate } from '../../../core/format.js';
import { postJson } from '../http-post.js';
import { clipList, clipText, clipValue, fitToBudget } from '../payload-budget.js';
import type { SinkFactory } from '../sink-factory.js';
import { PAGERDUTY_EVENTS_URL, type PagerDutySettings } from './settings.js';

export type PagerDutySeverity = 'critical' | 'error' | 'warning' | 'info';

/** govtrail severity → PagerDuty severity (the only four PagerDuty takes). */
export const PAGERDUTY_SEVERITY: Readonly<Record<Severity, PagerDutySeverity>> = {
  critical: 'critical',
  high: 'error',
  medium: 'warning',
  low: 'info',
};

/** PagerDuty refuses events over 512 KB; keep clear of it. */
export const PAGERDUTY_BUDGET_BYTES = 500 * 1024;
const SUMMARY_MAX = 1024;
const DEDUP_KEY_MAX = 255;

/** The `component` of every event: what part of the tenant changed. */
export const PAGERDUTY_COMPONENT = 'ai-governance-settings';

export interface PagerDutySinkOptions {
  /** Sink name in alert_delivery and messages; `pagerduty` by default. */
  readonly name?: string | undefined;
  /** The integration's 32-character routing key: the credential. */
  readonly routingKey: string;
  /** Events endpoint; {@link PAGERDUTY_EVENTS_URL} by default. */
  readonly url?: string | undefined;
  /** Runbook link template (`{rule_id}`), see Config.runbookUrl. */
  readonly runbookUrl?: string | undefined;
  readonly dispatcher?: Dispatcher | undefined;
  readonly timeoutMs?: number | undefined;
}

/** An Events API v2 `trigger` event. */
export interface PagerDutyEvent {
  readonly routing_key: string;
  readonly event_action: 'trigger';
  readonly dedup_key: string;
  readonly client: string;
  readonly payload: {
    readonly summary: string;
    readonly source: string;
    readonly severity: PagerDutySeverity;
    readonly timestamp: string;
    readonly component: string;
    readonly group: string;
    readonly class: string;
    readonly custom_details: Record<string, unknown>;
  };
  readonly links: ReadonlyArray<{ readonly href: string; readonly text: string }>;
}

/**
 * The `dedup_key` of an alert: its dedupe key, or — past PagerDuty's 255 characters, possible with
 * long tenant names — a prefix of it and the SHA-256 of the whole, still stable across retries.
 */
export function pagerDutyDedupKey(dedupeKey: string): string {
  if (dedupeKey.length <= DEDUP_KEY_MAX) return dedupeKey;
  const hash = createHash('sha256').update(dedupeKey).digest('hex');
  return `${dedupeKey.slice(0, DEDUP_KEY_MAX - hash.length - 1)}#${hash}`;
}

/** Builds the event of an alert, cut to {@link PAGERDUTY_BUDGET_BYTES} (exported for tests and the README). */
export function pagerDutyEvent(
  alert: AlertMessage,
  o: { readonly routingKey: string; readonly runbookUrl?: string | undefined },
): PagerDutyEvent {
  const c = alert.context;
  return fitToBudget(PAGERDUTY_BUDGET_BYTES, (detail) => {
    const changes = clipList(c.changes, detail);
    const customDetails: Record<string, unknown> = {
      rule: `${alert.ruleId} v${alert.ruleVersion} (${c.ruleName})`,
      severity: alert.severity,
      tenant: alert.tenantId,
      summary: clipText(alert.summary, detail),
      changed_at: c.changedAt,
      change_kind: c.changeKind === null ? null : shortEnum(c.changeKind),
      actor: { kind: c.actor.kind === null ? null : shortEnum(c.actor.kind), user_id: c.actor.userId },
      tickets: clipValue(c.tickets, detail),
      reasons: clipValue(c.reasons, detail),
      changes: changes.kept.map((ch) => ({
        field: ch.label,
        before: clipText(formatValue(ch.field, ch.oldValue), detail),
        after: clipText(formatValue(ch.field, ch.newValue), detail),
        direction: ch.direction,
      })),
      runbook: clipText(c.runbook, detail),
      details: clipValue(c.details, detail),
      entry_id: alert.entryId,
      alert_id: alert.alertId,
      dedupe_key: alert.dedupeKey,
      syslog_event_id: c.syslogEventId,
      trace_id: c.traceId,
    };
    if (changes.omitted > 0) customDetails['changes_omitted'] = changes.omitted;
    return {
      routing_key: o.routingKey,
      event_action: 'trigger' as const,
      dedup_key: pagerDutyDedupKey(alert.dedupeKey),
      client: 'govtrail',
      payload: {
        summary: truncate(
          `[${alert.severity.toUpperCase()}] ${alert.title} (tenant ${alert.tenantId})`,
          SUMMARY_MAX,
        ),
        source: alert.tenantId,
        severity: PAGERDUTY_SEVERITY[alert.severity],
        timestamp: alert.createdAt,
        component: PAGERDUTY_COMPONENT,
        group: 'govtrail',
        class: alert.ruleId,
        custom_details: customDetails,
      },
      links: alertLinks(alert, o.runbookUrl)
        .slice(0, detail.items)
        .map((l) => ({ href: l.href, text: clipText(l.text, detail) })),
    };
  }).value;
}

/**
 * The alert another alert resolves, when it is a resolution (a conformance CONF-002 names the
 * CONF-001 it ends in `details.resolves`, docs/design/alerts.md): undefined for any other alert.
 */
export function resolvedDedupeKey(alert: AlertMessage): string | undefined {
  const r = alert.context.details['resolves'];
  return typeof r === 'string' && r !== '' ? r : undefined;
}

/** An Events API v2 `resolve` event: closes the open PagerDuty alert of the same `dedup_key`. */
export function pagerDutyResolveEvent(
  resolves: string,
  o: { readonly routingKey: string },
): { routing_key: string; event_action: 'resolve'; dedup_key: string; client: string } {
  return {
    routing_key: o.routingKey,
    event_action: 'resolve',
    dedup_key: pagerDutyDedupKey(resolves),
    client: 'govtrail',
  };
}

/** An Events API v2 `acknowledge` or `resolve` event: only the routing key, the action and the dedup key. */
export interface PagerDutyFollowUp {
  readonly routing_key: string;
  readonly event_action: 'acknowledge' | 'resolve';
  readonly dedup_key: string;
}

/**
 * PagerDuty's answer to a lifecycle event: `acknowledge` for an acknowledged alert, `resolve` for a
 * resolved one, the `trigger` again for a reopened one (PagerDuty opens a new incident on the same
 * dedup key), nothing for the others.
 */
export function pagerDutyFollowUp(
  alert: AlertMessage,
  kind: AlertEventKind,
  o: { readonly routingKey: string; readonly runbookUrl?: string | undefined },
): PagerDutyFollowUp | PagerDutyEvent | undefined {
  const dedupKey = pagerDutyDedupKey(alert.dedupeKey);
  if (kind === 'acknowledged')
    return { routing_key: o.routingKey, event_action: 'acknowledge', dedup_key: dedupKey };
  if (kind === 'resolved') return { routing_key: o.routingKey, event_action: 'resolve', dedup_key: dedupKey };
  if (kind === 'reopened') return pagerDutyEvent(alert, o);
  return undefined;
}

/** Creates the PagerDuty sink. */
export function createPagerDutySink(o: PagerDutySinkOptions): Sink {
  const name = o.name ?? 'pagerduty';
  const send = async (event: PagerDutyEvent | PagerDutyFollowUp): Promise<void> => {
    await postJson({
      sink: name,
      url: o.url ?? PAGERDUTY_EVENTS_URL,
      body: Buffer.from(JSON.stringify(event), 'utf8'),
      headers: {},
      dispatcher: o.dispatcher,
      timeoutMs: o.timeoutMs,
    });
  };
  return {
    name,
    async deliver(alert) {
      // A resolution resolves the alert it names, on that alert's dedup_key, instead of opening one.
      const resolves = resolvedDedupeKey(alert);
      await send(
        resolves === undefined
          ? pagerDutyEvent(alert, { routingKey: o.routingKey, runbookUrl: o.runbookUrl })
          : pagerDutyResolveEvent(resolves, { routingKey: o.routingKey }),
      );
    },
    async deliverEvent(alert, event) {
      const followUp = pagerDutyFollowUp(alert, event.kind, {
        routingKey: o.routingKey,
        runbookUrl: o.runbookUrl,
      });
      if (followUp !== undefined) await send(followUp);
    },
  };
}

/** Builds the sink from its configured settings (the registry's factory of this type). */
export const fromConfig: SinkFactory<PagerDutySettings> = (c, d) =>
  createPagerDutySink({
    name: c.name,
    routingKey: c.routingKey,
    url: c.url,
    runbookUrl: d.runbookUrl,
    timeoutMs: c.timeoutMs,
    dispatcher: d.dispatcher,
  });
