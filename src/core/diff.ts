/**
 * Field-level diff of two settings snapshots, with the direction of each change (loosened =
 * governance weaker). Pure: no clock, no I/O.
 *
 * proto3 JSON omits default values, so an absent field is not "unknown": the diff compares
 * *effective* values — absent boolean = false, absent list = [] (= all client types), absent enum
 * = null (equal to its `…_UNSPECIFIED` value), absent duration = null (unset).
 */

import { canonicalJson } from './normalise/canonical.js';
import { parseDuration } from './normalise/duration.js';
import type { SnapshotField } from './normalise/fields.js';
import {
  MAPPED_LIFECYCLE_KEYS,
  MAPPED_TOP_LEVEL_KEYS,
  readWireField,
  SNAPSHOT_FIELDS,
} from './normalise/fields.js';
import type { WireSettings } from './wire.js';

/** `loosened` = governance weaker, `tightened` = stronger, `changed` = neither can be said. */
export type Direction = 'loosened' | 'tightened' | 'changed';

/** The directions, for validation and iteration. */
export const DIRECTIONS: readonly Direction[] = ['loosened', 'tightened', 'changed'];

/** One row of field_change. */
export interface FieldChange {
  /** settings_snapshot column name, or `extra_fields.<wireName>`. */
  readonly field: string;
  /** Effective value before (JSON-serialisable); null for a tenant's first snapshot. */
  readonly oldValue: unknown;
  /** Effective value after (JSON-serialisable). */
  readonly newValue: unknown;
  readonly direction: Direction;
}

/** Orderings of the ranked enums, lowest (weakest governance) first. Values not listed have no rank. */
export interface Ranks {
  readonly auditVerbosity: readonly string[];
  readonly defaultToolClassification: readonly string[];
}

/** The ranks of docs/design/alerts.md; the rule file can replace them. */
export const DEFAULT_RANKS: Ranks = {
  auditVerbosity: ['AUDIT_VERBOSITY_MINIMAL', 'AUDIT_VERBOSITY_STANDARD', 'AUDIT_VERBOSITY_FULL'],
  defaultToolClassification: [
    'TOOL_CLASSIFICATION_READ',
    'TOOL_CLASSIFICATION_WRITE',
    'TOOL_CLASSIFICATION_DESTRUCTIVE',
    'TOOL_CLASSIFICATION_SENSITIVE',
    'TOOL_CLASSIFICATION_DANGEROUS',
  ],
};

/** Prefix of field names for snapshot keys this version does not map. */
export const EXTRA_FIELD_PREFIX = 'extra_fields.';

/** Every field name the diff can produce for mapped fields (settings_snapshot columns). */
export const DIFFED_FIELDS: readonly string[] = SNAPSHOT_FIELDS.filter((f) => f.diffed).map((f) => f.column);

/** The wire name of a diff field, for humans: `requireToolApproval`, `defaultClientLifecycle.inactivityCloseAfter`. */
export function wireNameOf(field: string): string {
  if (field.startsWith(EXTRA_FIELD_PREFIX)) return field.slice(EXTRA_FIELD_PREFIX.length);
  const mapped = SNAPSHOT_FIELDS.find((f) => f.column === field);
  return mapped === undefined ? field : mapped.path.join('.');
}

/** Whether a field name is one the diff can produce (a diffed column or an `extra_fields.` name). */
export function isDiffFieldName(field: string): boolean {
  return (
    DIFFED_FIELDS.includes(field) ||
    (field.startsWith(EXTRA_FIELD_PREFIX) && field.length > EXTRA_FIELD_PREFIX.length)
  );
}

/** Which value of a boolean weakens governance; fields not listed are `changed` either way. */
const LOOSER_BOOLEAN: Readonly<Record<string, boolean>> = {
  auto_discovery_enabled: true,
  require_tool_approval: false,
  surface_requestable_tools: true,
  // The untrusted-content judge screens tool output for prompt injection; turning it off removes
  // a guard, so it is treated as a known boolean even though this version does not map it.
  'extra_fields.untrustedJudgeDisable': true,
};

/** Extra fields whose meaning is known well enough to give them boolean semantics (absent = false). */
const KNOWN_EXTRA_BOOLEANS: ReadonlySet<string> = new Set(['extra_fields.untrustedJudgeDisable']);

const LIFECYCLE_LONGER_IS_LOOSER: ReadonlySet<string> = new Set([
  'inactivity_close_after',
  'inactivity_hide_after',
]);
const RETENTION_FIELD = 'retention_delete_after';

/**
 * Diffs two snapshots. `prev` null or undefined (a tenant's first entry, or the entry after a hard
 * delete) lists every field with a non-default value, oldValue null, direction `changed`. `next`
 * null (a hard delete) yields nothing: the delete itself is alerted by AIGOV-001.
 * Rows come in SNAPSHOT_FIELDS order, then extra fields by name.
 */
export function diffSnapshots(
  prev: WireSettings | null | undefined,
  next: WireSettings | null | undefined,
  ranks: Ranks = DEFAULT_RANKS,
): FieldChange[] {
  if (next === null || next === undefined || !isObject(next)) return [];
  const first = prev === null || prev === undefined || !isObject(prev);
  const before: Record<string, unknown> = first ? {} : (prev as Record<string, unknown>);
  const after = next as Record<string, unknown>;
  const out: FieldChange[] = [];
  const effBefore = first ? EMPTY_EFFECTS : effectsOf(before);
  const effAfter = effectsOf(after);

  for (let i = 0; i < DIFFED.length; i++) {
    const f = DIFFED[i] as SnapshotField;
    const a = effBefore.mapped[i] as Effective;
    const b = effAfter.mapped[i] as Effective;
    if (a.key === b.key) continue;
    out.push({
      field: f.column,
      oldValue: first ? null : a.value,
      newValue: b.value,
      direction: first ? 'changed' : mappedDirection(f, a, b, ranks),
    });
  }
  diffExtras(before, effBefore, after, effAfter, first, out);
  return out;
}

/**
 * The extra fields' rows, by name: a merge of the two snapshots' sorted names, so a name both
 * have is read from each snapshot's cached values and only a name one side lacks is read again.
 */
function diffExtras(
  before: Record<string, unknown>,
  effBefore: Effects,
  after: Record<string, unknown>,
  effAfter: Effects,
  first: boolean,
  out: FieldChange[],
): void {
  const na = effBefore.extraNames;
  const nb = effAfter.extraNames;
  let i = 0;
  let j = 0;
  while (i < na.length || j < nb.length) {
    const x = na[i];
    const y = nb[j];
    let name: string;
    let a: Effective;
    let b: Effective;
    if (y === undefined || (x !== undefined && x < y)) {
      name = x as string;
      a = effBefore.extras[i++] as Effective;
      b = effectiveExtra(name, readExtra(after, name));
    } else if (x === undefined || y < x) {
      name = y;
      a = effectiveExtra(name, readExtra(before, name));
      b = effAfter.extras[j++] as Effective;
    } else {
      name = x;
      a = effBefore.extras[i++] as Effective;
      b = effAfter.extras[j++] as Effective;
    }
    if (a.key === b.key) continue;
    out.push({
      field: name,
      oldValue: first ? null : a.value,
      newValue: b.value,
      direction: first ? 'changed' : booleanDirection(name, a, b),
    });
  }
}

const DIFFED: readonly SnapshotField[] = SNAPSHOT_FIELDS.filter((f) => f.diffed);

/** What the diff reads of one snapshot: computed once per snapshot object. */
interface Effects {
  /** Effective values of the diffed fields, in DIFFED order. */
  readonly mapped: readonly Effective[];
  /**
   * Extra field names, sorted, without repeats (a top-level `defaultClientLifecycle.x` and
   * lifecycle key `x` give one name).
   */
  readonly extraNames: readonly string[];
  /** Effective value of each extra field name, same order. */
  readonly extras: readonly Effective[];
}

/**
 * Each snapshot is the "after" of one diff and the "before" of the next: its effects are kept by
 * snapshot object (snapshots are never mutated once received).
 */
const effectsCache = new WeakMap<object, Effects>();

function effectsOf(snapshot: Record<string, unknown>): Effects {
  let eff = effectsCache.get(snapshot);
  if (eff === undefined) {
    const names = extraFieldNames(snapshot);
    names.sort();
    const extraNames = names.length < 2 ? names : names.filter((n, i) => i === 0 || n !== names[i - 1]);
    eff = {
      mapped: DIFFED.map((f) => effectiveMapped(f, readWireField(snapshot, f))),
      extraNames,
      extras: extraNames.map((name) => effectiveExtra(name, readExtra(snapshot, name))),
    };
    effectsCache.set(snapshot, eff);
  }
  return eff;
}

/** An effective value: `value` is what is stored, `key` decides equality. */
interface Effective {
  readonly value: unknown;
  readonly key: string;
  /** Set when the value has the field's expected type. */
  readonly typed: boolean;
}

// Effective values are immutable and depend on the wire value alone, and a history repeats a
// few values of each field: they are made once and shared (no allocation per field and snapshot).
const NULL_TYPED: Effective = { value: null, key: 'null', typed: true };
const EMPTY_LIST: Effective = { value: Object.freeze([]), key: '[]', typed: true };
const FALSE: Effective = { value: false, key: 'false', typed: true };
const TRUE: Effective = { value: true, key: 'true', typed: true };
/** Effects of enum values, of durations (by wire text) and of lists of strings (by JSON text). */
const ENUMS = new Map<string, Effective>();
const DURATIONS = new Map<string, Effective>();
const LISTS = new Map<string, Effective>();
/** Values each cache holds at most: a history of ever new values starts it again. */
const CACHED_VALUES = 1024;

function remember(cache: Map<string, Effective>, wire: string, eff: Effective): Effective {
  if (cache.size >= CACHED_VALUES) cache.clear();
  cache.set(wire, eff);
  return eff;
}

/** The effects of no snapshot (every field at its default, no extra field). */
const EMPTY_EFFECTS: Effects = {
  mapped: DIFFED.map((f) => effectiveMapped(f, undefined)),
  extraNames: [],
  extras: [],
};

function effectiveMapped(field: SnapshotField, raw: unknown): Effective {
  switch (field.kind) {
    case 'boolean':
      return effectiveBoolean(raw);
    case 'enum': {
      if (raw === null || raw === undefined) return NULL_TYPED;
      if (typeof raw !== 'string') return untyped(raw);
      const known = ENUMS.get(raw);
      if (known !== undefined) return known;
      // proto3 omits the zero value, so an explicit `…_UNSPECIFIED` means the same as absent.
      const key = raw.endsWith('_UNSPECIFIED') ? 'null' : JSON.stringify(raw);
      return remember(ENUMS, raw, { value: raw, key, typed: true });
    }
    case 'enumList': {
      if (raw === null || raw === undefined) return EMPTY_LIST;
      if (!Array.isArray(raw)) return untyped(raw);
      // Lists of strings (client types are) with equal JSON text are equal: one stands for all.
      const text = raw.every((v) => typeof v === 'string') ? JSON.stringify(raw) : undefined;
      const known = text === undefined ? undefined : LISTS.get(text);
      if (known !== undefined) return known;
      // A permitted set: order and repeats carry no meaning.
      const set = [...new Set(raw.map((v) => canonicalJson(v)))].sort();
      const eff: Effective = { value: raw, key: `[${set.join(',')}]`, typed: true };
      return text === undefined ? eff : remember(LISTS, text, eff);
    }
    case 'duration': {
      if (raw === null || raw === undefined) return NULL_TYPED;
      const known = typeof raw === 'string' ? DURATIONS.get(raw) : undefined;
      if (known !== undefined) return known;
      const parsed = parseDuration(raw);
      if (parsed === undefined) return untyped(raw);
      // "60s" and "60.000s" are the same duration: compare by seconds, store the wire text.
      const eff: Effective = { value: raw, key: `s:${parsed.seconds}`, typed: true };
      return typeof raw === 'string' ? remember(DURATIONS, raw, eff) : eff;
    }
    case 'timestamp':
      return untyped(raw);
  }
}

function effectiveBoolean(raw: unknown): Effective {
  if (raw === null || raw === undefined || raw === false) return FALSE;
  if (raw === true) return TRUE;
  return untyped(raw);
}

function effectiveExtra(name: string, raw: unknown): Effective {
  if (KNOWN_EXTRA_BOOLEANS.has(name)) return effectiveBoolean(raw);
  // An unmapped field has no known default: absent and null both mean "not there".
  if (raw === undefined || raw === null) return { value: null, key: 'null', typed: false };
  return untyped(raw);
}

/** A value of an unexpected type: kept as received, equal only to an identical value. */
function untyped(raw: unknown): Effective {
  const value = raw === undefined ? null : raw;
  return { value, key: `raw:${canonicalJson(value)}`, typed: false };
}

function mappedDirection(field: SnapshotField, a: Effective, b: Effective, ranks: Ranks): Direction {
  if (!a.typed || !b.typed) return 'changed';
  switch (field.kind) {
    case 'boolean':
      return booleanDirection(field.column, a, b);
    case 'enum': {
      const order =
        field.column === 'audit_verbosity'
          ? ranks.auditVerbosity
          : field.column === 'default_tool_classification'
            ? ranks.defaultToolClassification
            : undefined;
      if (order === undefined) return 'changed';
      const ra = typeof a.value === 'string' ? order.indexOf(a.value) : -1;
      const rb = typeof b.value === 'string' ? order.indexOf(b.value) : -1;
      // UNSPECIFIED and unknown values have no rank: never claim a tightening we cannot prove.
      if (ra < 0 || rb < 0) return 'changed';
      return rb < ra ? 'loosened' : 'tightened';
    }
    case 'enumList':
      return clientTypesDirection(a.value as unknown[], b.value as unknown[]);
    case 'duration':
      return durationDirection(field.column, a.value, b.value);
    case 'timestamp':
      return 'changed';
  }
}

function booleanDirection(field: string, a: Effective, b: Effective): Direction {
  const looser = LOOSER_BOOLEAN[field];
  if (looser === undefined || typeof a.value !== 'boolean' || typeof b.value !== 'boolean') return 'changed';
  return b.value === looser ? 'loosened' : 'tightened';
}

/** An empty list permits every client type, so it is the widest set there is. */
function clientTypesDirection(a: readonly unknown[], b: readonly unknown[]): Direction {
  const sa = new Set(a.map((v) => canonicalJson(v)));
  const sb = new Set(b.map((v) => canonicalJson(v)));
  if (sb.size === 0) return 'loosened';
  if (sa.size === 0) return 'tightened';
  const bCoversA = [...sa].every((v) => sb.has(v));
  const aCoversB = [...sb].every((v) => sa.has(v));
  if (bCoversA && !aCoversB) return 'loosened';
  if (aCoversB && !bCoversA) return 'tightened';
  return 'changed';
}

/**
 * Lifecycle durations: zero disables the transition, i.e. an infinitely long duration. A longer
 * inactivity timeout keeps idle clients around longer (looser); a shorter retention deletes
 * evidence sooner (looser). To or from unset, or a negative value, has no meaning: `changed`.
 */
function durationDirection(field: string, a: unknown, b: unknown): Direction {
  const retention = field === RETENTION_FIELD;
  if (!retention && !LIFECYCLE_LONGER_IS_LOOSER.has(field)) return 'changed';
  const da = parseDuration(a);
  const db = parseDuration(b);
  if (da === undefined || db === undefined || da.seconds < 0 || db.seconds < 0) return 'changed';
  const la = da.seconds === 0 ? Number.POSITIVE_INFINITY : da.seconds;
  const lb = db.seconds === 0 ? Number.POSITIVE_INFINITY : db.seconds;
  if (la === lb) return 'changed';
  const longer = lb > la;
  return longer !== retention ? 'loosened' : 'tightened';
}

function extraFieldNames(snapshot: Record<string, unknown>): string[] {
  const names: string[] = [];
  for (const key of Object.keys(snapshot)) {
    if (!MAPPED_TOP_LEVEL_KEYS.has(key)) names.push(`${EXTRA_FIELD_PREFIX}${key}`);
  }
  const lifecycle = snapshot['defaultClientLifecycle'];
  if (isObject(lifecycle)) {
    for (const key of Object.keys(lifecycle)) {
      if (!MAPPED_LIFECYCLE_KEYS.has(key)) names.push(`${EXTRA_FIELD_PREFIX}defaultClientLifecycle.${key}`);
    }
  }
  return names;
}

function readExtra(snapshot: Record<string, unknown>, name: string): unknown {
  const key = name.slice(EXTRA_FIELD_PREFIX.length);
  const lifecyclePrefix = 'defaultClientLifecycle.';
  if (key.startsWith(lifecyclePrefix)) {
    const lifecycle = snapshot['defaultClientLifecycle'];
    return isObject(lifecycle) ? lifecycle[key.slice(lifecyclePrefix.length)] : undefined;
  }
  return snapshot[key];
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Re-exported for callers that compare JSON values the way the diff does. */
export { canonicalJson };

/**
 * Whether an entry is a diff base: the snapshot the next entries are diffed against. Only an entry
 * with a snapshot is. A PUT served without one says nothing about the settings; and a HARD_DELETE
 * is no base either (docs/design/integrity.md, "no blind spot"): the CREATE that follows it is diffed against
 * the last snapshot before the delete, so deleting the settings and re-creating them weaker shows
 * as the loosening it is instead of a diff against nothing.
 */
export function isDiffBase(snapshot: unknown): boolean {
  return typeof snapshot === 'object' && snapshot !== null;
}
