/**
 * What a sink says when an alert it delivered is handled (docs/design/alerts.md, "Sinks follow
 * the lifecycle"): which events each kind of receiver hears of, and the short follow-up line the
 * chat and mail sinks send. Pure; the sinks escape the line for their own markup.
 */
import type { AlertFollowUp, AlertMessage } from './alert.js';
import type { AlertEventKind } from './alert-lifecycle.js';

/**
 * The events people are told of (chat, mail, webhooks, SIEMs): every one but `repeated`, which is
 * a suppressed repeat — not delivered again, by definition. The ticket sink (Jira) hears repeats too.
 */
export function isAnnounced(kind: AlertEventKind): boolean {
  return kind !== 'repeated';
}

/** `alert.acknowledged`, …: the Standard Webhooks `type` of a follow-up. */
export function followUpType(kind: AlertEventKind): string {
  return `alert.${kind}`;
}

/** One line: `Alert 12 (AIGOV-002, tenant acme) acknowledged by alice: looking into it`. */
export function followUpLine(alert: AlertMessage, e: AlertFollowUp): string {
  const what =
    e.kind === 'assigned'
      ? `assigned to ${e.assignee ?? '?'}`
      : e.kind === 'snoozed'
        ? `snoozed until ${e.until?.toISOString() ?? '?'}`
        : e.kind === 'repeated'
          ? `repeated (${e.repeatCount ?? '?'} so far)`
          : e.kind;
  const by = e.automatic ? 'automatically' : `by ${e.actor}`;
  const note = e.note === undefined || e.note === null || e.note === '' ? '' : `: ${e.note}`;
  return `Alert ${alert.alertId} (${alert.ruleId}, tenant ${alert.tenantId}) ${what} ${by}${note}`;
}

/** The subject-sized title of a follow-up: `Resolved: Tool approval was turned off`. */
export function followUpTitle(alert: AlertMessage, e: AlertFollowUp): string {
  return `${e.kind.charAt(0).toUpperCase()}${e.kind.slice(1)}: ${alert.title}`;
}
