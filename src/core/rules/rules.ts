/**
 * Alert rules: the pure evaluation of one stored entry, one finding or one run against a parsed
 * rule pack (the YAML file is read and validated by config/rule-pack.ts with pack-schema.ts).
 * Evaluation takes everything it needs in its arguments — no clock, no I/O — so the sync
 * transaction can write the drafts to the outbox together with the entries that caused them. What
 * each condition means is the table of conditions.ts; the alert's words are alert-text.ts.
 */
import type { AlertDraft, Severity } from '../alert.js';
import type { FieldChange } from '../diff.js';
import { truncate } from '../format.js';
import { entryContext, entrySummary, humanise, runContext } from './alert-text.js';
import {
  compileCondition,
  type DiscrepancyFacts,
  explainCondition,
  type RuleContext,
  type Test,
} from './conditions.js';
import type { ConditionSpec, Rule, RulePack } from './pack-schema.js';

export type { DiscrepancyFacts, RuleContext } from './conditions.js';
export type { ConditionSpec, FieldChangedSpec, Rule, RulePack, SeverityOverride } from './pack-schema.js';
export { parseRulePack } from './pack-schema.js';
export type { UnrecognisedValue } from './unrecognised.js';
export { unrecognisedValues } from './unrecognised.js';

/**
 * Ids of the enabled per-entry rules that fire on one entry: what {@link evaluateRules} would
 * raise, without building the alerts (a first run only counts them for its digest).
 */
export function firingRuleIds(pack: RulePack, ctx: RuleContext): string[] {
  const ids: string[] = [];
  for (const rule of entryTestsOf(pack)) if (rule.test(ctx)) ids.push(rule.id);
  return ids;
}

/** Whether a condition matches one entry: `evaluate(c, ctx).matched`, without the outcome. */

/**
 * The enabled per-entry rules of each pack seen, each condition compiled to a {@link Test}: a first
 * run asks them of every entry, and reading which key a condition has, condition after condition
 * of different shapes, cost more than the tests themselves.
 */
const entryTests = new WeakMap<readonly Rule[], readonly { id: string; test: Test }[]>();

function entryTestsOf(pack: RulePack): readonly { id: string; test: Test }[] {
  let tests = entryTests.get(pack.rules);
  if (tests === undefined) {
    tests = pack.rules
      .filter((r) => r.enabled && !isRunLevel(r) && !isDiscrepancyLevel(r))
      .map((r) => ({ id: r.id, test: compileCondition(r.condition) }));
    entryTests.set(pack.rules, tests);
  }
  return tests;
}

/** Evaluates every enabled per-entry rule against one entry; one draft per rule that fires. */
export function evaluateRules(pack: RulePack, ctx: RuleContext): AlertDraft[] {
  return evaluateEntryRules(pack, ctx, (rule) => !isRunLevel(rule) && !isDiscrepancyLevel(rule));
}

/**
 * Evaluates the rules about findings (a `source_discrepancy` condition) against one new finding:
 * one draft per rule that fires, deduplicated per finding — rule, tenant, entry, kind and source
 * hash — so the same finding seen again raises nothing and a further rewrite raises again.
 * `ctx` describes the entry as served (as stored, for a missing or expired one), its changes are
 * the diff from the stored snapshot to the served one, and `ctx.discrepancy` is set.
 */
export function discrepancyAlerts(
  pack: RulePack,
  ctx: RuleContext & { discrepancy: DiscrepancyFacts },
): AlertDraft[] {
  const d = ctx.discrepancy;
  return evaluateEntryRules(pack, ctx, isDiscrepancyLevel).map((draft) => ({
    ...draft,
    dedupeKey: `${draft.dedupeKey}:${d.kind}:${d.sourceSha256 ?? 'none'}`,
  }));
}

function evaluateEntryRules(
  pack: RulePack,
  ctx: RuleContext,
  applies: (rule: Rule) => boolean,
): AlertDraft[] {
  const drafts: AlertDraft[] = [];
  for (const rule of pack.rules) {
    if (!rule.enabled || !applies(rule)) continue;
    const outcome = explainCondition(rule.condition, ctx);
    if (!outcome.matched) continue;
    let severity: Severity = rule.severity;
    let title = rule.title ?? humanise(rule.name);
    for (const o of rule.severity_overrides ?? []) {
      if (explainCondition(o.when, ctx).matched) {
        severity = o.severity;
        title = o.title ?? title;
        break;
      }
    }
    const relevant = outcome.fieldScoped ? unique(outcome.changes) : ctx.changes;
    const context = entryContext(rule, ctx, relevant, outcome.details);
    drafts.push({
      ruleId: rule.id,
      ruleVersion: rule.version,
      severity,
      title,
      summary: entrySummary(ctx, context, outcome.details),
      entryId: ctx.entry.entryId,
      dedupeKey: `${rule.id}:${ctx.tenantId}:${ctx.entry.entryId}`,
      context,
    });
  }
  return drafts;
}

/** Input of {@link backfillDigest}: facts about a tenant's first run. */
export interface BackfillDigestInput {
  readonly tenantId: string;
  readonly runId: number | string;
  readonly entriesStored: number;
  readonly firstEntry?: { readonly entryId: string; readonly createdAtText: string } | undefined;
  readonly lastEntry?: { readonly entryId: string; readonly createdAtText: string } | undefined;
  /** Alerts per rule id that per-entry evaluation would have raised for the backfilled entries. */
  readonly perRuleCounts: Readonly<Record<string, number>>;
}

/**
 * The one summary alert that replaces per-entry alerts for a tenant's first run (docs/design/sync.md S9).
 * Null when no enabled rule has a `backfill_digest` condition or too few entries were stored.
 */
export function backfillDigest(pack: RulePack, input: BackfillDigestInput): AlertDraft | null {
  for (const rule of pack.rules) {
    const spec = rule.condition.backfill_digest;
    if (!rule.enabled || spec === undefined || input.entriesStored < spec.min_entries) continue;
    const counts = Object.entries(input.perRuleCounts)
      .filter(([, n]) => n > 0)
      .sort(([a, x], [b, y]) => y - x || a.localeCompare(b));
    const span =
      input.firstEntry !== undefined && input.lastEntry !== undefined
        ? ` from ${input.firstEntry.createdAtText} to ${input.lastEntry.createdAtText}`
        : '';
    const would =
      counts.length === 0
        ? 'Per-entry rules would have raised no alerts.'
        : `Per-entry rules would have raised: ${counts.map(([id, n]) => `${id} ×${n}`).join(', ')}.`;
    const details = {
      runId: input.runId,
      entriesStored: input.entriesStored,
      firstEntry: input.firstEntry ?? null,
      lastEntry: input.lastEntry ?? null,
      perRuleCounts: Object.fromEntries(counts),
    };
    return {
      ruleId: rule.id,
      ruleVersion: rule.version,
      severity: rule.severity,
      title: rule.title ?? humanise(rule.name),
      summary: `The first run of tenant ${input.tenantId} stored ${input.entriesStored} history entries${span}. ${would}`,
      entryId: null,
      dedupeKey: `${rule.id}:${input.tenantId}:run-${input.runId}`,
      context: runContext(rule, input.tenantId, input.lastEntry?.createdAtText ?? null, details),
    };
  }
  return null;
}

/** Input of {@link syncFailingAlert}: the tenant's current streak of failed runs. */
export interface SyncFailingInput {
  readonly tenantId: string;
  /** Failed runs in a row, the latest included. */
  readonly consecutiveFailures: number;
  readonly lastRunId: number | string;
  readonly lastErrorCode: string | null;
  readonly lastErrorMessage: string | null;
}

/**
 * Raised when a tenant's streak of failed runs reaches a `consecutive_failed_runs` threshold:
 * exactly at the threshold, so a long outage raises one alert rather than one per schedule tick.
 */
export function syncFailingAlert(pack: RulePack, input: SyncFailingInput): AlertDraft | null {
  for (const rule of pack.rules) {
    const threshold = rule.condition.consecutive_failed_runs;
    if (!rule.enabled || threshold === undefined || input.consecutiveFailures !== threshold) continue;
    const error =
      input.lastErrorCode === null && input.lastErrorMessage === null
        ? 'no error recorded'
        : `${input.lastErrorCode ?? 'error'}: ${truncate(input.lastErrorMessage ?? '', 300)}`;
    return {
      ruleId: rule.id,
      ruleVersion: rule.version,
      severity: rule.severity,
      title: rule.title ?? humanise(rule.name),
      summary: `The last ${input.consecutiveFailures} runs for tenant ${input.tenantId} failed (last run ${input.lastRunId}: ${error}). Alerts for new changes are delayed until a run succeeds.`,
      entryId: null,
      dedupeKey: `${rule.id}:${input.tenantId}:run-${input.lastRunId}`,
      context: runContext(rule, input.tenantId, null, {
        consecutiveFailures: input.consecutiveFailures,
        lastRunId: input.lastRunId,
        lastErrorCode: input.lastErrorCode,
        lastErrorMessage: input.lastErrorMessage,
      }),
    };
  }
  return null;
}

/** isDiscrepancyLevel of each rule seen: a parsed rule is never changed, and this is asked per entry. */
const discrepancyLevel = new WeakMap<Rule, boolean>();

/** Whether a rule is about findings against the source (a `source_discrepancy` condition anywhere in it). */
export function isDiscrepancyLevel(rule: Rule): boolean {
  let known = discrepancyLevel.get(rule);
  if (known === undefined) {
    const visit = (c: ConditionSpec | undefined): boolean =>
      c !== undefined &&
      (c.source_discrepancy !== undefined ||
        (c.any_of ?? []).some(visit) ||
        (c.all_of ?? []).some(visit) ||
        visit(c.not));
    known = visit(rule.condition);
    discrepancyLevel.set(rule, known);
  }
  return known;
}

/** Whether a rule is evaluated per run (digest, sync failing) rather than per entry. */
export function isRunLevel(rule: Rule): boolean {
  return rule.condition.backfill_digest !== undefined || rule.condition.consecutive_failed_runs !== undefined;
}

function unique(changes: readonly FieldChange[]): FieldChange[] {
  return [...new Set(changes)];
}
