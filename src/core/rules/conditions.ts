/**
 * The condition language of alert rules (docs/design/alerts.md), one entry per condition key: how the key
 * decides whether an entry matches (`compile`, once per rule pack: a first run asks it of every
 * entry) and why it matched (`explain`: the field changes and details an alert shows). Both halves
 * of a key sit side by side, so a new condition is one entry here (and its YAML form in
 * pack-schema.ts). Combinations (any_of, all_of, not) recurse through the table.
 */
import { canonicalJson, type FieldChange } from '../diff.js';
import { parseDuration } from '../normalise/duration.js';
import { subtractMs } from '../normalise/time.js';
import type { AnnotationRow } from '../normalise/types.js';
import {
  type ConditionSpec,
  type FieldChangedSpec,
  parseWindowSeconds,
  type SourceDiscrepancyKind,
} from './pack-schema.js';
import { type EntryFacts, scanUnrecognised, unrecognisedValues } from './unrecognised.js';

/** Everything per-entry evaluation needs about one stored entry. */
export interface RuleContext extends EntryFacts {
  readonly tenantId: string;
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

/** Whether a condition matches one entry: what `explain` decides, without the outcome. */
export type Test = (ctx: RuleContext) => boolean;

/** Whether a condition matched one entry, and what the alert shows of why. */
export interface Outcome {
  readonly matched: boolean;
  /** Field changes that satisfied field_changed conditions on the matching path. */
  readonly changes: readonly FieldChange[];
  /** Whether a field_changed condition took part in the match (else every change is relevant). */
  readonly fieldScoped: boolean;
  readonly details: Readonly<Record<string, unknown>>;
}

const NO_MATCH: Outcome = { matched: false, changes: [], fieldScoped: false, details: {} };
const PLAIN_MATCH: Outcome = { matched: true, changes: [], fieldScoped: false, details: {} };

type ConditionKey = keyof ConditionSpec;
type Spec<K extends ConditionKey> = NonNullable<ConditionSpec[K]>;

/** One key of the condition language: its test and its explanation, which must agree on `matched`. */
interface Condition<K extends ConditionKey> {
  compile(spec: Spec<K>): Test;
  explain(spec: Spec<K>, ctx: RuleContext): Outcome;
}

/** Run-level conditions (backfill_digest, consecutive_failed_runs) never match a single entry. */
const RUN_LEVEL: Condition<'backfill_digest' | 'consecutive_failed_runs'> = {
  compile: () => () => false,
  explain: () => NO_MATCH,
};

/** Every condition key, in the order a condition's key is looked for (the schema allows one). */
const CONDITIONS: { readonly [K in ConditionKey]-?: Condition<K> } = {
  field_changed: {
    compile: (spec) => (ctx) => {
      for (const ch of ctx.changes) if (fieldChangeMatches(spec, ch)) return true;
      return false;
    },
    explain: (spec, ctx) => {
      // A loop rather than filter: this runs per rule per entry, and most entries match nothing.
      let hits: FieldChange[] | undefined;
      for (const ch of ctx.changes) {
        if (!fieldChangeMatches(spec, ch)) continue;
        if (hits === undefined) hits = [ch];
        else hits.push(ch);
      }
      return hits === undefined ? NO_MATCH : { matched: true, changes: hits, fieldScoped: true, details: {} };
    },
  },
  change_kind_in: {
    compile: (list) => (ctx) => isIn(ctx.entry.changeKind, list),
    explain: (list, ctx) => (isIn(ctx.entry.changeKind, list) ? PLAIN_MATCH : NO_MATCH),
  },
  actor_kind_in: {
    compile: (list) => (ctx) => isIn(ctx.entry.actorKind, list),
    explain: (list, ctx) => (isIn(ctx.entry.actorKind, list) ? PLAIN_MATCH : NO_MATCH),
  },
  annotation_missing: {
    compile: (spec) => (ctx) => annotationMissing(spec, ctx.annotations),
    explain: (spec, ctx) => (annotationMissing(spec, ctx.annotations) ? PLAIN_MATCH : NO_MATCH),
  },
  unrecognised_values: {
    compile: () => (ctx) => scanUnrecognised(ctx),
    explain: (_, ctx) => {
      const found = unrecognisedValues(ctx);
      return found.length === 0 ? NO_MATCH : { ...PLAIN_MATCH, details: { unrecognised: found } };
    },
  },
  source_discrepancy: {
    compile:
      ({ kinds }) =>
      (ctx) =>
        ctx.discrepancy !== undefined && kinds.includes(ctx.discrepancy.kind),
    explain: ({ kinds }, ctx) => {
      const d = ctx.discrepancy;
      return d !== undefined && kinds.includes(d.kind)
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
    },
  },
  entries_in_window: {
    compile: ({ count, window }) => {
      const seconds = parseWindowSeconds(window) ?? 0;
      return (ctx) => entriesInWindow(ctx, seconds, count + 1) === count;
    },
    explain: ({ count, window }, ctx) => {
      const inWindow = entriesInWindow(ctx, parseWindowSeconds(window) ?? 0, count + 1);
      // Fires on the entry that brings the count to the threshold: one alert per burst, not one per entry in it.
      return inWindow === count
        ? { ...PLAIN_MATCH, details: { burst: { count: inWindow, window } } }
        : NO_MATCH;
    },
  },
  any_of: {
    compile: (conditions) => {
      const subs = conditions.map(compileCondition);
      return (ctx) => {
        for (const sub of subs) if (sub(ctx)) return true;
        return false;
      };
    },
    explain: (conditions, ctx) => {
      let matched: Outcome[] | undefined;
      for (const sub of conditions) {
        const o = explainCondition(sub, ctx);
        if (!o.matched) continue;
        if (matched === undefined) matched = [o];
        else matched.push(o);
      }
      return matched === undefined ? NO_MATCH : combine(matched);
    },
  },
  all_of: {
    compile: (conditions) => {
      const subs = conditions.map(compileCondition);
      // combine([]) is no match: an empty all_of matches nothing.
      return (ctx) => {
        for (const sub of subs) if (!sub(ctx)) return false;
        return subs.length > 0;
      };
    },
    explain: (conditions, ctx) => {
      // Conditions have no side effects: the first one that fails decides.
      const outcomes: Outcome[] = [];
      for (const sub of conditions) {
        const o = explainCondition(sub, ctx);
        if (!o.matched) return NO_MATCH;
        outcomes.push(o);
      }
      return combine(outcomes);
    },
  },
  not: {
    compile: (condition) => {
      const sub = compileCondition(condition);
      return (ctx) => !sub(ctx);
    },
    explain: (condition, ctx) => (explainCondition(condition, ctx).matched ? NO_MATCH : PLAIN_MATCH),
  },
  backfill_digest: RUN_LEVEL,
  consecutive_failed_runs: RUN_LEVEL,
};

const KEYS = Object.keys(CONDITIONS) as ConditionKey[];

/** The key a condition has (the first in table order), undefined for an empty one. */
function keyOf(c: ConditionSpec): ConditionKey | undefined {
  for (const key of KEYS) if (c[key] !== undefined) return key;
  return undefined;
}

/** The {@link Test} of a condition: what {@link explainCondition} decides, without the outcome. */
export function compileCondition(c: ConditionSpec): Test {
  const key = keyOf(c);
  return key === undefined ? () => false : conditionOf(key).compile(c[key] as never);
}

/** Whether a condition matches one entry, with the changes and details its alert shows. */
export function explainCondition(c: ConditionSpec, ctx: RuleContext): Outcome {
  const key = keyOf(c);
  return key === undefined ? NO_MATCH : conditionOf(key).explain(c[key] as never, ctx);
}

function conditionOf<K extends ConditionKey>(key: K): Condition<K> {
  return CONDITIONS[key] as Condition<K>;
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
