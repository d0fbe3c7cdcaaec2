/**
 * Expectations of a baseline control and the effective values they judge. Pure: no clock, no I/O.
 *
 * A value the wire omits is its proto3 default, read exactly as the diff reads it (core/diff.ts):
 * an absent boolean is false, an absent client type list is [] (every type), an absent enum or an
 * explicit `…_UNSPECIFIED` is null, an absent duration is null (unset). A field this version does
 * not map (`extra_fields.<wireName>`) has no known default: absent and null are both null.
 */
import { canonicalJson } from '../normalise/canonical.js';
import { parseDuration } from '../normalise/duration.js';
import { readWireField, SNAPSHOT_FIELDS, type SnapshotField } from '../normalise/fields.js';
import type { WireSettings } from '../wire.js';

/** The snapshot fields a control may name directly: every diffed column (timestamps move with every write). */
export const CONTROL_FIELDS: readonly SnapshotField[] = SNAPSHOT_FIELDS.filter((f) => f.diffed);

/** Prefix of a control field that names a snapshot key this version does not map. */
export const EXTRA_PREFIX = 'extra_fields.';

/** Extra fields whose meaning is known well enough to read an absent value as false (as the diff does). */
const KNOWN_EXTRA_BOOLEANS: ReadonlySet<string> = new Set(['untrustedJudgeDisable']);

/**
 * Lifecycle durations where zero disables the transition, i.e. means "never": an infinitely long
 * duration, as the diff reads them.
 */
const ZERO_IS_NEVER: ReadonlySet<string> = new Set([
  'inactivity_close_after',
  'inactivity_hide_after',
  'retention_delete_after',
]);

/** What a control field holds, which decides the expectations it accepts. */
export type ValueKind = 'boolean' | 'enum' | 'enumList' | 'duration' | 'extra';

/** A bound of `at_least` / `at_most`. */
export type Bound =
  | {
      readonly type: 'rank';
      readonly order: readonly string[];
      readonly index: number;
      readonly text: string;
    }
  | { readonly type: 'duration'; readonly seconds: number; readonly text: string }
  | { readonly type: 'number'; readonly value: number };

/** One expectation, validated against its field at load. */
export type Expectation =
  | { readonly kind: 'equals'; readonly value: unknown }
  | { readonly kind: 'one_of'; readonly values: readonly unknown[] }
  | { readonly kind: 'at_least'; readonly bound: Bound }
  | { readonly kind: 'at_most'; readonly bound: Bound }
  | { readonly kind: 'subset_of'; readonly values: readonly string[] }
  | { readonly kind: 'not_empty' };

/** The expectation keys a control may use, one per control. */
export const EXPECTATION_KEYS = [
  'equals',
  'one_of',
  'at_least',
  'at_most',
  'subset_of',
  'not_empty',
] as const;

/** A control's field as the judge reads it. */
export interface FieldRef {
  /** `require_tool_approval`, or `extra_fields.<wireName>`. */
  readonly name: string;
  readonly kind: ValueKind;
  /** The mapped field, when it is one. */
  readonly mapped?: SnapshotField;
}

/** The field a control names, or undefined when it is neither a mapped column nor `extra_fields.<x>`. */
export function fieldRef(name: string): FieldRef | undefined {
  const mapped = CONTROL_FIELDS.find((f) => f.column === name);
  if (mapped !== undefined) {
    const kind: ValueKind = mapped.kind === 'timestamp' ? 'extra' : mapped.kind;
    return { name, kind, mapped };
  }
  if (name.startsWith(EXTRA_PREFIX) && name.length > EXTRA_PREFIX.length) return { name, kind: 'extra' };
  return undefined;
}

/**
 * The effective value of a field in a wire snapshot: what is shown as `value` and what the
 * expectation judges. Lists are returned as received (order kept), enums as names (null for
 * absent or unspecified), durations as their wire text (null for unset).
 */
export function effectiveValue(field: FieldRef, snapshot: WireSettings): unknown {
  const s = snapshot as unknown as Record<string, unknown>;
  if (field.mapped !== undefined) {
    const raw = readWireField(s, field.mapped);
    switch (field.kind) {
      case 'boolean':
        return raw === undefined || raw === null ? false : raw;
      case 'enum':
        if (raw === undefined || raw === null) return null;
        return typeof raw === 'string' && raw.endsWith('_UNSPECIFIED') ? null : raw;
      case 'enumList':
        return raw === undefined || raw === null ? [] : raw;
      default:
        return raw === undefined ? null : raw;
    }
  }
  const key = field.name.slice(EXTRA_PREFIX.length);
  const lifecycle = 'defaultClientLifecycle.';
  let raw: unknown;
  if (key.startsWith(lifecycle)) {
    const l = s['defaultClientLifecycle'];
    raw =
      typeof l === 'object' && l !== null && !Array.isArray(l)
        ? (l as Record<string, unknown>)[key.slice(lifecycle.length)]
        : undefined;
  } else raw = s[key];
  if (raw === undefined || raw === null) return KNOWN_EXTRA_BOOLEANS.has(key) ? false : null;
  return raw;
}

/** Seconds of a duration value (wire `"3600s"` or baseline `365d`), +Infinity for a zero that means "never". */
function durationSeconds(field: FieldRef, value: unknown): number | undefined {
  const parsed =
    parseDuration(value)?.seconds ?? (typeof value === 'string' ? parseBaselineDuration(value) : undefined);
  if (parsed === undefined) return undefined;
  if (parsed === 0 && ZERO_IS_NEVER.has(field.name)) return Number.POSITIVE_INFINITY;
  return parsed;
}

const BASELINE_DURATION = /^(?:(\d+)d)?(?:(\d+)h)?(?:(\d+)m)?(?:(\d+(?:\.\d+)?)s)?$/;

/** Seconds of `365d`, `1h`, `90m`, `1h30m`, `45s`; undefined when malformed or empty. */
export function parseBaselineDuration(text: string): number | undefined {
  const m = BASELINE_DURATION.exec(text.trim());
  if (m === null || text.trim() === '') return undefined;
  return Number(m[1] ?? 0) * 86_400 + Number(m[2] ?? 0) * 3600 + Number(m[3] ?? 0) * 60 + Number(m[4] ?? 0);
}

/** A key under which two effective values of one field are equal exactly when they mean the same. */
export function valueKey(field: FieldRef, value: unknown): string {
  switch (field.kind) {
    case 'boolean':
      return typeof value === 'boolean' ? String(value) : `raw:${canonicalJson(value)}`;
    case 'enum':
      if (value === null) return 'null';
      return typeof value === 'string' && value.endsWith('_UNSPECIFIED') ? 'null' : canonicalJson(value);
    case 'enumList':
      if (!Array.isArray(value)) return `raw:${canonicalJson(value)}`;
      // A permitted set: order and repeats carry no meaning.
      return `[${[...new Set(value.map((v) => canonicalJson(v)))].sort().join(',')}]`;
    case 'duration': {
      if (value === null) return 'null';
      const s = durationSeconds(field, value);
      return s === undefined ? `raw:${canonicalJson(value)}` : `s:${s}`;
    }
    case 'extra':
      return canonicalJson(value);
  }
}

function compareBound(field: FieldRef, value: unknown, bound: Bound): number | undefined {
  switch (bound.type) {
    case 'rank': {
      const i = typeof value === 'string' ? bound.order.indexOf(value) : -1;
      return i < 0 ? undefined : i - bound.index;
    }
    case 'duration': {
      if (value === null) return undefined;
      const s = durationSeconds(field, value);
      return s === undefined ? undefined : s === bound.seconds ? 0 : s < bound.seconds ? -1 : 1;
    }
    case 'number':
      return typeof value === 'number' && Number.isFinite(value) ? Math.sign(value - bound.value) : undefined;
  }
}

/**
 * Whether an effective value meets an expectation. A value that cannot be compared (an unranked
 * enum, an unset duration, a value of the wrong type) does not meet `at_least` / `at_most`.
 */
export function meets(field: FieldRef, value: unknown, expect: Expectation): boolean {
  switch (expect.kind) {
    case 'equals':
      return valueKey(field, value) === valueKey(field, expect.value);
    case 'one_of': {
      const k = valueKey(field, value);
      return expect.values.some((v) => valueKey(field, v) === k);
    }
    case 'at_least': {
      const c = compareBound(field, value, expect.bound);
      return c !== undefined && c >= 0;
    }
    case 'at_most': {
      const c = compareBound(field, value, expect.bound);
      return c !== undefined && c <= 0;
    }
    case 'subset_of':
      // The empty (or absent) list permits every type: it is a subset of nothing.
      return (
        Array.isArray(value) &&
        value.length > 0 &&
        value.every((v) => typeof v === 'string' && expect.values.includes(v))
      );
    case 'not_empty':
      if (value === null || value === undefined || value === '') return false;
      if (Array.isArray(value)) return value.length > 0;
      if (typeof value === 'object') return Object.keys(value).length > 0;
      return true;
  }
}
