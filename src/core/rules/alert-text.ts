/**
 * The words of an alert: its context (who, what, which tickets) and its one-paragraph summary, for
 * a rule that fired on an entry or on a run.
 */
import type { AlertChange, AlertContext, AlertTicket } from '../alert.js';
import { canonicalJson, type FieldChange, wireNameOf } from '../diff.js';
import { formatValue, shortEnum, truncate } from '../format.js';
import type { AnnotationRow } from '../normalise/types.js';
import type { DiscrepancyFacts, RuleContext } from './conditions.js';
import type { Rule, SourceDiscrepancyKind } from './pack-schema.js';
import type { UnrecognisedValue } from './unrecognised.js';

const TICKET = 'ANNOTATION_KIND_TICKET';
const REASON = 'ANNOTATION_KIND_REASON';
const MAX_SUMMARY_CHANGES = 10;

function toAlertChange(c: FieldChange): AlertChange {
  return {
    field: c.field,
    label: wireNameOf(c.field),
    oldValue: c.oldValue,
    newValue: c.newValue,
    direction: c.direction,
  };
}

function tickets(annotations: readonly AnnotationRow[]): AlertTicket[] {
  return annotations
    .filter((a) => a.kind === TICKET)
    .map((a) => ({ value: nonEmpty(a.displayValue) ?? nonEmpty(a.rawValue), url: nonEmpty(a.displayUrl) }));
}

function reasons(annotations: readonly AnnotationRow[]): string[] {
  return annotations
    .filter((a) => a.kind === REASON)
    .map((a) => nonEmpty(a.displayValue) ?? nonEmpty(a.rawValue))
    .filter((v): v is string => v !== null);
}

function nonEmpty(v: string | null | undefined): string | null {
  return v === null || v === undefined || v === '' ? null : v;
}

export function entryContext(
  rule: Rule,
  ctx: RuleContext,
  relevant: readonly FieldChange[],
  details: Readonly<Record<string, unknown>>,
): AlertContext {
  return {
    tenantId: ctx.tenantId,
    entryId: ctx.entry.entryId,
    changedAt: ctx.entry.createdAtText,
    changeKind: ctx.entry.changeKind,
    actor: { kind: ctx.entry.actorKind, userId: ctx.entry.actorUserId },
    tickets: tickets(ctx.annotations),
    reasons: reasons(ctx.annotations),
    changes: relevant.map(toAlertChange),
    allChanges: ctx.changes.map(toAlertChange),
    syslogEventId: ctx.entry.syslogEventId,
    traceId: ctx.entry.traceId,
    runbook: rule.runbook,
    ruleName: rule.name,
    details,
  };
}

export function runContext(
  rule: Rule,
  tenantId: string,
  changedAt: string | null,
  details: Readonly<Record<string, unknown>>,
): AlertContext {
  return {
    tenantId,
    entryId: null,
    changedAt,
    changeKind: null,
    actor: { kind: null, userId: null },
    tickets: [],
    reasons: [],
    changes: [],
    allChanges: [],
    syslogEventId: null,
    traceId: null,
    runbook: rule.runbook,
    ruleName: rule.name,
    details,
  };
}

/** `1 change: requireToolApproval: true → false. PUT by API user 2x… at …, no ticket.` */
/** The first sentence of a finding's alert summary, by kind. */
const DISCREPANCY_SENTENCE: Readonly<Record<SourceDiscrepancyKind, string>> = {
  changed_at_source:
    'The source now serves this entry with different content; the stored original is kept. Stored → served:',
  missing_at_source: 'The source no longer serves this stored entry, while it still serves older ones.',
  expired_at_source:
    'This stored entry is older than anything the source still serves (its retention ran out).',
  backdated:
    'The source serves this entry, dated behind what any incremental run looks at; it is now stored.',
  conflicting_ids:
    'The source serves this id twice with different contents in one listing; both are kept. Held → other version:',
};

export function entrySummary(
  ctx: RuleContext,
  context: AlertContext,
  details: Readonly<Record<string, unknown>>,
): string {
  const parts: string[] = [];
  const found = details['discrepancy'] as DiscrepancyFacts | undefined;
  if (found !== undefined) parts.push(DISCREPANCY_SENTENCE[found.kind]);
  const shown = context.changes.slice(0, MAX_SUMMARY_CHANGES);
  if (shown.length > 0) {
    const more = context.changes.length - shown.length;
    parts.push(
      `${shown.map((c) => `${c.label}: ${formatValue(c.field, c.oldValue)} → ${formatValue(c.field, c.newValue)}`).join('; ')}${more > 0 ? `; and ${more} more` : ''}.`,
    );
  }
  const kind = ctx.entry.changeKind === null ? 'Change' : shortEnum(ctx.entry.changeKind);
  const actor = ctx.entry.actorKind === null ? 'an unknown actor' : shortEnum(ctx.entry.actorKind);
  const user = ctx.entry.actorUserId === null ? '' : ` user ${ctx.entry.actorUserId}`;
  const ticketText =
    context.tickets.length === 0
      ? 'no ticket'
      : `ticket ${context.tickets.map((t) => t.value ?? '?').join(', ')}`;
  parts.push(`${kind} by ${actor}${user} at ${ctx.entry.createdAtText}, ${ticketText}.`);
  const burst = details['burst'] as { count: number; window: string } | undefined;
  if (burst !== undefined) parts.push(`${burst.count} entries within ${burst.window}.`);
  const unknown = details['unrecognised'] as UnrecognisedValue[] | undefined;
  if (unknown !== undefined) {
    parts.push(
      `Unrecognised: ${unknown.map((u) => `${u.where} ${truncate(canonicalJson(u.value), 80)}`).join(', ')}.`,
    );
  }
  return truncate(parts.join(' '), 2000);
}

/** `tool-approval-disabled` → `Tool approval disabled`. */
export function humanise(name: string): string {
  const words = name.replace(/[-_]+/g, ' ').trim();
  return words.charAt(0).toUpperCase() + words.slice(1);
}
