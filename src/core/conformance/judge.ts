/**
 * Judging a tenant's stored history against a baseline (docs/design/conformance.md). Pure: the
 * same entries and baseline give the same periods whatever the order they were stored in, the page
 * size or the back end (C5).
 *
 * Instants are nanosecond keys (`2026-10-01T00:00:00.000000000Z`, core/normalise/time.ts): text
 * that sorts as time. The settings at an instant are those of the newest entry at or before it that
 * set them (a snapshot, or a hard delete); of two entries at one instant the greater id is in force,
 * so the earlier one holds for no time at all and opens no period.
 */

import { readWireField } from '../normalise/fields.js';
import type { WireSettings } from '../wire.js';
import type { Baseline, BaselineException, Control } from './baseline.js';
import { effectiveValue, meets, valueKey } from './expect.js';

/** The status of a control at an instant. `unknown` is only ever reported, never stored. */
export type Status = 'pass' | 'fail' | 'excepted' | 'deleted' | 'unknown';

/** Every status, in report order. */
export const STATUSES: readonly Status[] = ['pass', 'fail', 'excepted', 'deleted', 'unknown'];

/** One stored entry that set the settings: a snapshot, or a hard delete (`snapshot` null). */
export interface JudgedEntry {
  /** Nanosecond key of created_at. */
  readonly key: string;
  readonly entryId: string;
  /** The wire snapshot; null for a hard delete. */
  readonly snapshot: WireSettings | null;
  readonly actorKind: string | null;
  readonly actorUserId: string | null;
  /** The entry's first TICKET annotation, when it has one. */
  readonly ticket: string | null;
}

/** One maximal interval of constant status of one control (a row of control_period). */
export interface ControlPeriod {
  readonly controlId: string;
  readonly status: Exclude<Status, 'unknown'>;
  /** Nanosecond key of the first instant. */
  readonly fromKey: string;
  /** Nanosecond key of the first instant after it; null while current. */
  readonly toKey: string | null;
  /** The entry that opened it; null when an exception's approval or expiry did. */
  readonly entryId: string | null;
  readonly actorKind: string | null;
  readonly actorUserId: string | null;
  readonly ticket: string | null;
  /** The field's effective value when the period opened (null for `deleted`). */
  readonly value: unknown;
}

/** What the judge needs besides the history and the baseline. */
export interface JudgeContext {
  /** The tenant's name, as exceptions list it. */
  readonly tenant: string;
  /** Key of the time the baseline text was first loaded: the approval time of an exception without one. */
  readonly loadedAtKey: string;
}

/** An exception as it applies to one tenant: in force over [fromKey, toKey). */
interface Window {
  readonly control: string;
  readonly fromKey: string;
  readonly toKey: string;
  readonly valueKey: string;
}

/** The exceptions of `baseline` that name `tenant`, with their effective approval time. */
function windowsFor(baseline: Baseline, ctx: JudgeContext): Window[] {
  const out: Window[] = [];
  for (const e of baseline.exceptions) {
    if (!e.tenants.includes(ctx.tenant)) continue;
    const control = baseline.controls.find((c) => c.id === e.control);
    if (control === undefined) continue;
    const fromKey = approvedAtKey(e, ctx);
    if (fromKey >= e.expires) continue;
    out.push({ control: e.control, fromKey, toKey: e.expires, valueKey: valueKey(control.field, e.value) });
  }
  return out;
}

/** When an exception starts to hold: its approved_at, else the first load of its baseline text. */
export function approvedAtKey(e: BaselineException, ctx: Pick<JudgeContext, 'loadedAtKey'>): string {
  return e.approvedAt ?? ctx.loadedAtKey;
}

/** Whether an exception approved before its baseline text was first loaded (shown as retroactive). */
export function isRetroactive(e: BaselineException, loadedAtKey: string): boolean {
  return e.approvedAt !== null && e.approvedAt < loadedAtKey;
}

/** The status of one control given the settings in force (null = deleted) at instant `at`. */
export function statusOf(
  control: Control,
  snapshot: WireSettings | null,
  at: string,
  windows: readonly Window[],
): { status: Exclude<Status, 'unknown'>; value: unknown } {
  if (snapshot === null) return { status: 'deleted', value: null };
  const value = effectiveValue(control.field, snapshot);
  if (meets(control.field, value, control.expect)) return { status: 'pass', value };
  // The value's key is computed only when an exception of this control holds at `at`.
  let k: string | undefined;
  for (const w of windows) {
    if (w.control === control.id && w.fromKey <= at && at < w.toKey) {
      k ??= valueKey(control.field, value);
      if (w.valueKey === k) return { status: 'excepted', value };
    }
  }
  return { status: 'fail', value };
}

/**
 * Judges `entries` (the entries that set the settings, in (key, entryId) order, from some instant
 * on) and returns the periods of every control from the first entry's instant on, in control
 * order then time order. Statuses change only at an entry's instant or at an exception's approval
 * or expiry.
 */
export function judgeHistory(
  entries: readonly JudgedEntry[],
  baseline: Baseline,
  ctx: JudgeContext,
): ControlPeriod[] {
  const judge = new HistoryJudge(baseline, ctx);
  for (const e of entries) judge.push(e);
  return judge.finish();
}

/**
 * The judge as a stream: entries are pushed in (key, entryId) order, a page at a time, so a
 * history of millions of entries is judged without holding it. Only the settings in force and the
 * open period of each control are kept.
 */
export class HistoryJudge {
  readonly #baseline: Baseline;
  readonly #windows: readonly Window[];
  /** Exception boundaries, in order; those before the first instant are passed over. */
  readonly #bounds: readonly string[];
  #b = 0;
  /** The entries of the instant being read (the last one is in force). */
  #pending: JudgedEntry | undefined;
  #state: JudgedEntry | undefined;
  #lastKey: string | undefined;
  readonly #open: (ControlPeriod | undefined)[];
  readonly #out: ControlPeriod[][];

  constructor(baseline: Baseline, ctx: JudgeContext) {
    this.#baseline = baseline;
    this.#windows = windowsFor(baseline, ctx);
    this.#bounds = [...new Set(this.#windows.flatMap((w) => [w.fromKey, w.toKey]))].sort();
    this.#open = baseline.controls.map(() => undefined);
    this.#out = baseline.controls.map(() => []);
  }

  /** Adds the next entry; entries must come in (key, entryId) order. */
  push(entry: JudgedEntry): void {
    if (this.#lastKey !== undefined && entry.key < this.#lastKey) {
      throw new RangeError(`entries out of order: ${entry.key} after ${this.#lastKey}`);
    }
    this.#lastKey = entry.key;
    if (this.#pending !== undefined && this.#pending.key !== entry.key) this.#flush();
    this.#pending = entry;
  }

  /** Ends the stream: every period, in control order then time order (the last of each open). */
  finish(): ControlPeriod[] {
    if (this.#pending !== undefined) this.#flush();
    if (this.#state !== undefined) {
      while (this.#b < this.#bounds.length) this.#judgeAt(this.#bounds[this.#b++] as string, undefined);
    }
    return this.#out.flat();
  }

  /** Judges the instant of the pending entry, after every exception boundary before it. */
  #flush(): void {
    const entry = this.#pending as JudgedEntry;
    this.#pending = undefined;
    while (this.#b < this.#bounds.length && (this.#bounds[this.#b] as string) < entry.key) {
      const at = this.#bounds[this.#b++] as string;
      if (this.#state !== undefined) this.#judgeAt(at, undefined);
    }
    let bound = false;
    while (this.#b < this.#bounds.length && this.#bounds[this.#b] === entry.key) {
      this.#b++;
      bound = true;
    }
    const previous = this.#state;
    this.#state = entry;
    // Between exception boundaries a control's status depends on its field's value alone: a field
    // whose raw value is that of the snapshot before keeps its status, and is not judged again.
    const unchanged =
      !bound && previous !== undefined && previous.snapshot !== null && entry.snapshot !== null
        ? (c: Control) => sameRaw(c, previous.snapshot as WireSettings, entry.snapshot as WireSettings)
        : undefined;
    this.#judgeAt(entry.key, entry, unchanged);
  }

  #judgeAt(at: string, opener: JudgedEntry | undefined, unchanged?: (c: Control) => boolean): void {
    const state = this.#state as JudgedEntry;
    const controls = this.#baseline.controls;
    for (let c = 0; c < controls.length; c++) {
      const control = controls[c] as Control;
      if (unchanged !== undefined && this.#open[c] !== undefined && unchanged(control)) continue;
      const { status, value } = statusOf(control, state.snapshot, at, this.#windows);
      const current = this.#open[c];
      if (current !== undefined && current.status === status) continue;
      const list = this.#out[c] as ControlPeriod[];
      if (current !== undefined) list[list.length - 1] = { ...current, toKey: at };
      const next: ControlPeriod = {
        controlId: control.id,
        status,
        fromKey: at,
        toKey: null,
        entryId: opener?.entryId ?? null,
        actorKind: opener?.actorKind ?? null,
        actorUserId: opener?.actorUserId ?? null,
        ticket: opener?.ticket ?? null,
        value,
      };
      list.push(next);
      this.#open[c] = next;
    }
  }
}

/**
 * Whether a control's field holds the same raw wire value in two snapshots: primitives and lists of
 * primitives compared item by item; anything else (an object, an unmapped field) counts as changed.
 */
function sameRaw(control: Control, a: WireSettings, b: WireSettings): boolean {
  const mapped = control.field.mapped;
  if (mapped === undefined) return false;
  const x = readWireField(a as unknown as Record<string, unknown>, mapped);
  const y = readWireField(b as unknown as Record<string, unknown>, mapped);
  if (x === y) return x === null || typeof x !== 'object';
  if (!Array.isArray(x) || !Array.isArray(y) || x.length !== y.length) return false;
  for (let i = 0; i < x.length; i++) {
    const v = x[i];
    if (v !== y[i] || (v !== null && typeof v === 'object')) return false;
  }
  return true;
}

/**
 * Joins periods judged from `startKey` on to the stored periods before it. `before` holds, per
 * control, the last stored period that began before `startKey` (every later one is replaced). It
 * is cut at `startKey`, or extended by the first fresh period when their statuses agree (the
 * stored row keeps its opener). Returns the stored rows to rewrite and the rows to insert.
 */
export function splicePeriods(
  before: ReadonlyMap<string, ControlPeriod>,
  fresh: readonly ControlPeriod[],
  startKey: string,
): { readonly rewrite: ControlPeriod[]; readonly insert: ControlPeriod[] } {
  const rewrite: ControlPeriod[] = [];
  const insert: ControlPeriod[] = [];
  const joined = new Set<string>();
  for (const p of fresh) {
    const prev = before.get(p.controlId);
    if (prev !== undefined && !joined.has(p.controlId) && p.fromKey === startKey) {
      joined.add(p.controlId);
      if (prev.status === p.status) {
        rewrite.push({ ...prev, toKey: p.toKey });
        continue;
      }
      rewrite.push({ ...prev, toKey: startKey });
    }
    insert.push(p);
  }
  // A control with stored periods but nothing fresh (no entry judged) keeps its stored row as is.
  return { rewrite, insert };
}

/** Nanoseconds since the epoch of a key. */
export function keyNanos(key: string): bigint {
  const ms = Date.parse(`${key.slice(0, 19)}Z`);
  return BigInt(ms) * 1_000_000n + BigInt(key.slice(20, 29));
}

/** Share of the period in each status. */
export type Shares = Record<Status, number>;

/** Time in each status, nanoseconds. */
export type Durations = Record<Status, bigint>;

function zeroDurations(): Durations {
  return { pass: 0n, fail: 0n, excepted: 0n, deleted: 0n, unknown: 0n };
}

/**
 * Time spent in each status by one control over [fromKey, toKey): before `firstKey` (the tenant's
 * first snapshot, or when none is given, the first period) the status is `unknown`.
 */
export function durationsOf(periods: readonly ControlPeriod[], fromKey: string, toKey: string): Durations {
  const d = zeroDurations();
  const from = keyNanos(fromKey);
  const to = keyNanos(toKey);
  if (to <= from) return d;
  let covered = 0n;
  for (const p of periods) {
    const a = keyNanos(p.fromKey);
    const z = p.toKey === null ? to : keyNanos(p.toKey);
    const lo = a > from ? a : from;
    const hi = z < to ? z : to;
    if (hi > lo) {
      d[p.status] += hi - lo;
      covered += hi - lo;
    }
  }
  d.unknown = to - from - covered;
  return d;
}

/** Shares from durations: fractions of the whole period (0 when it is empty). */
export function sharesOf(d: Durations): Shares {
  const total = d.pass + d.fail + d.excepted + d.deleted + d.unknown;
  const f = (x: bigint) => (total === 0n ? 0 : Number((x * 1_000_000_000_000n) / total) / 1e12);
  return {
    pass: f(d.pass),
    fail: f(d.fail),
    excepted: f(d.excepted),
    deleted: f(d.deleted),
    unknown: f(d.unknown),
  };
}

/** The sum of several controls' durations: the time-weighted mean over controls when turned into shares. */
export function sumDurations(list: readonly Durations[]): Durations {
  const d = zeroDurations();
  for (const x of list) for (const s of STATUSES) d[s] += x[s];
  return d;
}
