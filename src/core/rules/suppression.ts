/**
 * Suppression windows and the scope of an alert (docs/design/alerts.md, "Suppression"): a rule's
 * `suppress: { window, by }` makes a repeat — an alert of the same rule whose `by` values equal an
 * open alert's, within the window of it — fold into that alert instead of being raised again.
 * The same scope (the rule and tenant when the rule has no `suppress`) decides which snoozed alerts
 * a more severe alert lifts early. Pure.
 */
import type { AlertContext, AlertDraft, Severity } from '../alert.js';
import { SEVERITIES } from '../alert.js';
import { parseWindowSeconds, type RulePack, type SuppressScopeKey } from './pack-schema.js';

/** What the outbox needs to know of the pack when it stores alerts. */
export interface AlertPolicy {
  /** The scope of an alert of `ruleId`: alerts with equal scopes are "the same" alert repeated. */
  scopeOf(ruleId: string, context: AlertContext): string;
  /** The suppression window of the rule, in seconds; undefined when it has none. */
  windowOf(ruleId: string): number | undefined;
}

/** The value of one scope key in an alert's context. */
function scopeValue(key: SuppressScopeKey, c: AlertContext): string {
  switch (key) {
    case 'tenant':
      return c.tenantId;
    case 'field':
      return [...new Set((c.changes ?? []).map((ch) => ch.field))].sort().join(',');
    case 'actor':
      return `${c.actor?.kind ?? ''}/${c.actor?.userId ?? ''}`;
  }
}

/** `AIGOV-002|tenant=acme|field=require_tool_approval`. */
export function scopeKey(ruleId: string, by: readonly SuppressScopeKey[], context: AlertContext): string {
  return [ruleId, ...[...by].sort().map((k) => `${k}=${scopeValue(k, context)}`)].join('|');
}

/** The policy of a pack. */
export function alertPolicy(pack: RulePack): AlertPolicy {
  const rules = new Map(pack.rules.map((r) => [r.id, r]));
  return {
    scopeOf(ruleId, context) {
      return scopeKey(ruleId, rules.get(ruleId)?.suppress?.by ?? ['tenant'], context);
    },
    windowOf(ruleId) {
      const w = rules.get(ruleId)?.suppress?.window;
      return w === undefined ? undefined : parseWindowSeconds(w);
    },
  };
}

/** Whether `a` is more severe than `b`. */
export function moreSevere(a: Severity, b: Severity): boolean {
  return SEVERITIES.indexOf(a) > SEVERITIES.indexOf(b);
}

/** The time a repeat is measured by: the change's time, else when the alert was stored. */
export function alertTime(context: AlertContext, createdAt: Date): number {
  const t = context.changedAt === null ? Number.NaN : Date.parse(context.changedAt);
  return Number.isFinite(t) ? t : createdAt.getTime();
}

/** A stored alert as the fold decision sees it. */
export interface OpenAlertFacts {
  readonly alertId: string;
  readonly severity: Severity;
  readonly context: AlertContext;
  readonly createdAt: Date;
  readonly resolved: boolean;
}

/**
 * The open alert `draft` folds into, if any: same scope, not resolved, at least as severe (a more
 * severe repeat is raised, so that an escalation is never hidden), and within the window of it.
 * Candidates are the stored alerts of the draft's rule and tenant.
 */
export function foldTarget(
  policy: AlertPolicy,
  draft: AlertDraft,
  now: Date,
  candidates: readonly OpenAlertFacts[],
): OpenAlertFacts | undefined {
  const window = policy.windowOf(draft.ruleId);
  if (window === undefined) return undefined;
  const scope = policy.scopeOf(draft.ruleId, draft.context);
  const at = alertTime(draft.context, now);
  return candidates.find(
    (c) =>
      !c.resolved &&
      !moreSevere(draft.severity, c.severity) &&
      policy.scopeOf(draft.ruleId, c.context) === scope &&
      Math.abs(at - alertTime(c.context, c.createdAt)) <= window * 1000,
  );
}
