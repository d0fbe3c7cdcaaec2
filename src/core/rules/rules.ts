/**
 * Alert rules: loading the YAML pack, and the pure evaluation of one stored entry (or one run)
 * against it. Evaluation takes everything it needs in its arguments — no clock, no I/O — so the
 * sync transaction can write the drafts to the outbox together with the entries that caused them.
 */

import type { AlertChange, AlertContext, AlertDraft, AlertTicket, Severity } from '../alert.js';
import { canonicalJson, type FieldChange, wireNameOf } from '../diff.js';
import { formatValue, shortEnum, truncate } from '../format.js';
import { parseDuration } from '../normalise/duration.js';
import { subtractMs } from '../normalise/time.js';
import type { AnnotationRow, EntryRow } from '../normalise/types.js';
import {
  KNOWN_ACTOR_KINDS,
  KNOWN_ANNOTATION_KINDS,
  KNOWN_AUDIT_VERBOSITIES,
  KNOWN_CHANGE_KINDS,
  KNOWN_CLIENT_TYPES,
  KNOWN_TOOL_CLASSIFICATIONS,
  type WireSettings,
} from '../wire.js';
import {
  type ConditionSpec,
  type FieldChangedSpec,
  parseWindowSeconds,
  type Rule,
  type RulePack,
  type SourceDiscrepancyKind,
} from './pack-schema.js';

export type { ConditionSpec, FieldChangedSpec, Rule, RulePack, SeverityOverride } from './pack-schema.js';
export { parseRulePack } from './pack-schema.js';

/** Everything per-entry evaluation needs about one stored entry. */
export interface RuleContext {
  readonly tenantId: string;
  readonly entry: EntryRow;
  readonly annotations: readonly AnnotationRow[];
  /** The new snapshot (null for a hard delete). */
  readonly snapshot: WireSettings | null;
  /** The entry's field_change rows. */
  readonly changes: readonly FieldChange[];
  /**
   * createdAtKey of the tenant's stored entries in the burst window ending at this entry, itself
   * included, in time order (oldest first). Keys after this entry are ignored.
   */
  readonly recentEntryKeys: readonly string[];
  /** Set only when a finding about this entry is evaluated (discrepancyAlerts). */
  readonly discrepancy?: DiscrepancyFacts | undefined;
}

/** A new finding of a sync or reconcile (docs/design/integrity.md), as rules see it. */
export interface DiscrepancyFacts {
  readonly kind: SourceDiscrepancyKind;
  readonly discrepancyId: number;
  readonly runId: number;
  /** Hex content hashes; null where that side is absent. */
  readonly storedSha256: string | null;
  readonly sourceSha256: string | null;
}

/** A value this version does not know, and where it was seen. */
export interface UnrecognisedValue {
  /** `changeKind`, `actor.kind`, `annotations[2].kind`, `snapshot.auditVerbosity`, … */
  readonly where: string;
  readonly value: unknown;
}

const TICKET = 'ANNOTATION_KIND_TICKET';
const REASON = 'ANNOTATION_KIND_REASON';
const MAX_SUMMARY_CHANGES = 10;

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
type Test = (ctx: RuleContext) => boolean;

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
      .map((r) => ({ id: r.id, test: compile(r.condition) }));
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
    const outcome = evaluate(rule.condition, ctx);
    if (!outcome.matched) continue;
    let severity: Severity = rule.severity;
    let title = rule.title ?? humanise(rule.name);
    for (const o of rule.severity_overrides ?? []) {
      if (evaluate(o.when, ctx).matched) {
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

/** Values in the entry that are not in this version's KNOWN_* lists (null and absent are not unknown). */
export function unrecognisedValues(
  ctx: Pick<RuleContext, 'entry' | 'annotations' | 'snapshot'>,
): UnrecognisedValue[] {
  const out: UnrecognisedValue[] = [];
  scanUnrecognised(ctx, out);
  return out;
}

/**
 * Finds the values unrecognisedValues lists: into `out`, or, without it, only whether there is
 * one (a first run asks that of every entry: no list, and no `where` text for known values).
 */
function scanUnrecognised(
  ctx: Pick<RuleContext, 'entry' | 'annotations' | 'snapshot'>,
  out?: UnrecognisedValue[],
): boolean {
  let found = false;
  // `where` is an annotation's ordinal for its kind: the text is written only for a value found.
  const check = (where: string | number, value: unknown, known: ReadonlySet<string>): void => {
    if (value === null || value === undefined) return;
    if (typeof value === 'string' && known.has(value)) return;
    found = true;
    out?.push({ where: typeof where === 'number' ? `annotations[${where}].kind` : where, value });
  };
  check('changeKind', ctx.entry.changeKind, KNOWN.changeKinds);
  check('actor.kind', ctx.entry.actorKind, KNOWN.actorKinds);
  for (const a of ctx.annotations) check(a.ordinal, a.kind, KNOWN.annotationKinds);
  const s = ctx.snapshot;
  if (s !== null && typeof s === 'object') {
    if (Array.isArray(s.allowedClientTypes)) {
      for (const item of s.allowedClientTypes) check('snapshot.allowedClientTypes', item, KNOWN.clientTypes);
    }
    check('snapshot.auditVerbosity', s.auditVerbosity, KNOWN.auditVerbosities);
    check('snapshot.defaultToolClassification', s.defaultToolClassification, KNOWN.toolClassifications);
  }
  return found;
}

/** This version's KNOWN_* lists as sets: looked up for every entry a first run walks. */
const KNOWN = {
  changeKinds: new Set<string>(KNOWN_CHANGE_KINDS),
  actorKinds: new Set<string>(KNOWN_ACTOR_KINDS),
  annotationKinds: new Set<string>(KNOWN_ANNOTATION_KINDS),
  clientTypes: new Set<string>(KNOWN_CLIENT_TYPES),
  auditVerbosities: new Set<string>(KNOWN_AUDIT_VERBOSITIES),
  toolClassifications: new Set<string>(KNOWN_TOOL_CLASSIFICATIONS),
};

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

interface Outcome {
  readonly matched: boolean;
  /** Field changes that satisfied field_changed conditions on the matching path. */
  readonly changes: readonly FieldChange[];
  /** Whether a field_changed condition took part in the match (else every change is relevant). */
  readonly fieldScoped: boolean;
  readonly details: Readonly<Record<string, unknown>>;
}

const NO_MATCH: Outcome = { matched: false, changes: [], fieldScoped: false, details: {} };
const PLAIN_MATCH: Outcome = { matched: true, changes: [], fieldScoped: false, details: {} };

function evaluate(c: ConditionSpec, ctx: RuleContext): Outcome {
  if (c.field_changed !== undefined) {
    const spec = c.field_changed;
    // A loop rather than filter: this runs per rule per entry, and most entries match nothing.
    let hits: FieldChange[] | undefined;
    for (const ch of ctx.changes) {
      if (!fieldChangeMatches(spec, ch)) continue;
      if (hits === undefined) hits = [ch];
      else hits.push(ch);
    }
    return hits === undefined ? NO_MATCH : { matched: true, changes: hits, fieldScoped: true, details: {} };
  }
  if (c.change_kind_in !== undefined) {
    return isIn(ctx.entry.changeKind, c.change_kind_in) ? PLAIN_MATCH : NO_MATCH;
  }
  if (c.actor_kind_in !== undefined) {
    return isIn(ctx.entry.actorKind, c.actor_kind_in) ? PLAIN_MATCH : NO_MATCH;
  }
  if (c.annotation_missing !== undefined) {
    return annotationMissing(c.annotation_missing, ctx.annotations) ? PLAIN_MATCH : NO_MATCH;
  }
  if (c.unrecognised_values !== undefined) {
    const found = unrecognisedValues(ctx);
    return found.length === 0 ? NO_MATCH : { ...PLAIN_MATCH, details: { unrecognised: found } };
  }
  if (c.source_discrepancy !== undefined) {
    const d = ctx.discrepancy;
    return d !== undefined && c.source_discrepancy.kinds.includes(d.kind)
      ? {
          ...PLAIN_MATCH,
          details: {
            discrepancy: {
              kind: d.kind,
              discrepancyId: d.discrepancyId,
              runId: d.runId,
              storedSha256: d.storedSha256,
              sourceSha256: d.sourceSha256,
            },
          },
        }
      : NO_MATCH;
  }
  if (c.entries_in_window !== undefined) {
    const { count, window } = c.entries_in_window;
    const inWindow = entriesInWindow(ctx, parseWindowSeconds(window) ?? 0, count + 1);
    // Fires on the entry that brings the count to the threshold: one alert per burst, not one per entry in it.
    return inWindow === count
      ? { ...PLAIN_MATCH, details: { burst: { count: inWindow, window } } }
      : NO_MATCH;
  }
  if (c.any_of !== undefined) {
    let matched: Outcome[] | undefined;
    for (const sub of c.any_of) {
      const o = evaluate(sub, ctx);
      if (!o.matched) continue;
      if (matched === undefined) matched = [o];
      else matched.push(o);
    }
    return matched === undefined ? NO_MATCH : combine(matched);
  }
  if (c.all_of !== undefined) {
    // Conditions have no side effects: the first one that fails decides.
    const outcomes: Outcome[] = [];
    for (const sub of c.all_of) {
      const o = evaluate(sub, ctx);
      if (!o.matched) return NO_MATCH;
      outcomes.push(o);
    }
    return combine(outcomes);
  }
  if (c.not !== undefined) return evaluate(c.not, ctx).matched ? NO_MATCH : PLAIN_MATCH;
  // Run-level conditions never match a single entry.
  return NO_MATCH;
}

/** The {@link Test} of a condition: what {@link evaluate} decides, key for key, in the same order. */
function compile(c: ConditionSpec): Test {
  if (c.field_changed !== undefined) {
    const spec = c.field_changed;
    return (ctx) => {
      for (const ch of ctx.changes) if (fieldChangeMatches(spec, ch)) return true;
      return false;
    };
  }
  if (c.change_kind_in !== undefined) {
    const list = c.change_kind_in;
    return (ctx) => isIn(ctx.entry.changeKind, list);
  }
  if (c.actor_kind_in !== undefined) {
    const list = c.actor_kind_in;
    return (ctx) => isIn(ctx.entry.actorKind, list);
  }
  if (c.annotation_missing !== undefined) {
    const spec = c.annotation_missing;
    return (ctx) => annotationMissing(spec, ctx.annotations);
  }
  if (c.unrecognised_values !== undefined) return (ctx) => scanUnrecognised(ctx);
  if (c.source_discrepancy !== undefined) {
    const kinds = c.source_discrepancy.kinds;
    return (ctx) => ctx.discrepancy !== undefined && kinds.includes(ctx.discrepancy.kind);
  }
  if (c.entries_in_window !== undefined) {
    const count = c.entries_in_window.count;
    const seconds = parseWindowSeconds(c.entries_in_window.window) ?? 0;
    return (ctx) => entriesInWindow(ctx, seconds, count + 1) === count;
  }
  return compileCombination(c);
}

function compileCombination(c: ConditionSpec): Test {
  if (c.any_of !== undefined) {
    const subs = c.any_of.map(compile);
    return (ctx) => {
      for (const sub of subs) if (sub(ctx)) return true;
      return false;
    };
  }
  if (c.all_of !== undefined) {
    const subs = c.all_of.map(compile);
    // combine([]) is no match: an empty all_of matches nothing.
    return (ctx) => {
      for (const sub of subs) if (!sub(ctx)) return false;
      return subs.length > 0;
    };
  }
  if (c.not !== undefined) {
    const sub = compile(c.not);
    return (ctx) => !sub(ctx);
  }
  return () => false;
}

function combine(matched: readonly Outcome[]): Outcome {
  if (matched.length === 0) return NO_MATCH;
  return {
    matched: true,
    changes: matched.flatMap((o) => o.changes),
    fieldScoped: matched.some((o) => o.fieldScoped),
    details: Object.assign({}, ...matched.map((o) => o.details)),
  };
}

function annotationMissing(
  spec: NonNullable<ConditionSpec['annotation_missing']>,
  annotations: readonly AnnotationRow[],
): boolean {
  const { kind, unless_any: unless } = spec;
  for (const a of annotations) {
    if (a.kind === kind || (a.kind !== null && unless?.includes(a.kind) === true)) return false;
  }
  return true;
}

function isIn(value: string | null, list: readonly string[]): boolean {
  return value !== null && list.includes(value);
}

function fieldChangeMatches(spec: FieldChangedSpec, ch: FieldChange): boolean {
  if (spec.field !== undefined && spec.field !== ch.field) return false;
  if (spec.direction !== undefined && !spec.direction.includes(ch.direction)) return false;
  if (spec.from !== undefined && !spec.from.some((v) => sameValue(v, ch.oldValue))) return false;
  if (spec.to !== undefined && !spec.to.some((v) => sameValue(v, ch.newValue))) return false;
  return true;
}

/** Equality for from/to filters: deep, with lists as sets, durations by seconds and UNSPECIFIED = null. */
function sameValue(expected: unknown, actual: unknown): boolean {
  const e = expected ?? null;
  const a = actual ?? null;
  if (e === null) return a === null || (typeof a === 'string' && a.endsWith('_UNSPECIFIED'));
  if (Array.isArray(e) && Array.isArray(a)) {
    const set = (l: unknown[]) => [...new Set(l.map((v) => canonicalJson(v)))].sort().join(',');
    return set(e) === set(a);
  }
  const de = parseDuration(e);
  const da = parseDuration(a);
  if (de !== undefined && da !== undefined) return de.seconds === da.seconds;
  return canonicalJson(e) === canonicalJson(a);
}

/** createdAtKey form: UTC, nine fractional digits, so that text order is time order. */
const KEY = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{9}Z$/;

/**
 * Entries in the window ending at this entry, counting at most `cap` (enough to decide the rule).
 * Walks `recentEntryKeys` from the newest end and stops at the first key before the window, so a
 * long list costs no more than the entries inside the window: the list must be in time order.
 * Keys compare as text (their form makes text order time order); this runs for every new entry.
 */
function entriesInWindow(ctx: RuleContext, windowSeconds: number, cap: number): number {
  const own = ctx.entry.createdAtKey;
  if (!KEY.test(own)) return 1;
  const start = subtractMs(own, windowSeconds * 1000);
  let n = 0;
  let sawOwn = false;
  const keys = ctx.recentEntryKeys;
  for (let i = keys.length - 1; i >= 0 && n < cap; i--) {
    const key = keys[i] as string;
    if (key > own || key.length !== own.length) continue;
    if (key < start) break;
    if (key === own) sawOwn = true;
    n += 1;
  }
  // The caller includes the entry itself; count it anyway if it did not.
  return sawOwn || n >= cap ? n : n + 1;
}

function unique(changes: readonly FieldChange[]): FieldChange[] {
  return [...new Set(changes)];
}

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

function entryContext(
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

function runContext(
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

function entrySummary(
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
function humanise(name: string): string {
  const words = name.replace(/[-_]+/g, ' ').trim();
  return words.charAt(0).toUpperCase() + words.slice(1);
}
