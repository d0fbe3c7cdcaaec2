/**
 * The change walk of a tenant's first run, computed from the entries as they are inserted instead
 * of reading them all back afterwards. Pure: no I/O.
 *
 * The stored walk (change-step.ts) reads every new entry back in (created_at, entry_id) order,
 * diffs it against the latest entry that says what the settings were, and evaluates the rules with
 * the burst window of the 24 h before it. On a backfill the tenant has no other rows, so the same
 * walk can run over the entries themselves. They arrive newest first, so an entry is finished
 * once everything it looks back on has arrived: its diff base and as much older history as the
 * pack's burst windows reach (an hour with the shipped pack, at most 24 h), plus a margin. Entries
 * are held until then, which keeps memory to that much history, and most entries are finished
 * within the page that brought them.
 *
 * It must give exactly what the stored walk gives, or nothing: whenever it cannot be sure (an
 * entry arrives more than a few seconds out of time order, an entry id whose byte order may differ
 * from JavaScript's, more than `maxHeld` entries waiting), it gives up and the caller runs the
 * stored walk, which replaces every field change written so far.
 */

import { diffSnapshots, isDiffBase } from '../core/diff.js';
import { parseJsonText } from '../core/json-text.js';
import { toJsonbText } from '../core/normalise/canonical.js';
import { validKeyMillis } from '../core/normalise/time.js';
import type { AnnotationRow, EntryRow, NormalisedEntry } from '../core/normalise/types.js';
import type { ConditionSpec } from '../core/rules/pack-schema.js';
import { parseWindowSeconds } from '../core/rules/pack-schema.js';
import type { RulePack } from '../core/rules/rules.js';
import { firingRuleIds } from '../core/rules/rules.js';
import type { WireSettings } from '../core/wire.js';
import type { FieldChangeRow } from '../store/write/field-changes.js';

/**
 * The burst window both walks keep behind an entry: long enough for any sensible
 * `entries_in_window` rule (a pack with a longer one uses the stored walk, which truncates it).
 */
export const WALK_WINDOW_MS = 24 * 3_600_000;

/**
 * How far out of time order the API may serve entries: it orders by KSUID, whose time has whole
 * seconds, so entries of one second come in any createdAt order. An entry served more than this
 * after an older one makes the walk give up.
 */
const DISORDER_MS = 5_000;
/** Older entries must reach this far past the window before an entry is finished (≥ DISORDER_MS). */
const MARGIN_MS = 60_000;

/** What the walk keeps of a waiting entry: not its raw JSON (a day of history is held). */
interface Held {
  /** The entry's columns, with `raw` cut down to what the stored walk reads back: the snapshot. */
  readonly entry: EntryRow;
  readonly annotations: readonly AnnotationRow[];
  /** PostgreSQL's created_at (microseconds) as sortable text: the walk's order is (pos, entryId). */
  readonly pos: string;
  /** Date.parse(pos): milliseconds, for the time windows and to order by before pos. */
  readonly ms: number;
  /** The snapshot as jsonb returns it, or null. */
  readonly snapshot: WireSettings | null;
  readonly isBase: boolean;
}

export interface BackfillWalkResult {
  readonly first: EntryRow | undefined;
  readonly last: EntryRow | undefined;
  readonly perRuleCounts: Record<string, number>;
}

/**
 * The sort position PostgreSQL gives a nine-digit UTC key (`2025-01-02T03:04:05.123456789Z`) once
 * stored as timestamptz, as sortable text with microseconds. The server parses the fraction with
 * strtod and rounds `frac * 1e6` half-to-even (rint); the same double arithmetic here gives the
 * same microsecond, ties included (checked against PostgreSQL 15 on 20 000 fractions).
 * Undefined for a key of another shape.
 */
export function storedPosition(key: string): string | undefined {
  if (!KEY_SHAPE.test(key)) return undefined;
  // A time served to the microsecond or coarser (nanoseconds 000) is its own position: the
  // arithmetic below gives back its six digits (checked for every one of them in the tests).
  if (key.charCodeAt(26) === 48 && key.charCodeAt(27) === 48 && key.charCodeAt(28) === 48)
    return `${key.slice(0, 26)}Z`;
  const m = KEY_SHAPE.exec(key) as RegExpExecArray;
  const seconds = m[1] as string;
  const x = Number(`0.${m[2]}`) * 1_000_000;
  const micros = x - Math.trunc(x) === 0.5 ? 2 * Math.round(x / 2) : Math.round(x);
  if (micros < 1_000_000) return `${seconds}.${String(micros).padStart(6, '0')}Z`;
  const next = new Date(Date.parse(`${seconds}Z`) + 1000).toISOString().slice(0, 19);
  return `${next}.000000Z`;
}

const KEY_SHAPE = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})\.(\d{9})Z$/;

function compare(a: Held, b: Held): number {
  // ms is read from pos, so it orders as pos does: the text is compared only within a millisecond.
  if (a.ms !== b.ms) return a.ms < b.ms ? -1 : 1;
  if (a.pos !== b.pos) return a.pos < b.pos ? -1 : 1;
  const x = a.entry.entryId;
  const y = b.entry.entryId;
  return x === y ? 0 : x < y ? -1 : 1;
}

/** Longest entries_in_window window of the pack's enabled rules, in seconds (0 when none). */
function longestWindowSeconds(pack: RulePack): number {
  let longest = 0;
  const visit = (c: ConditionSpec | undefined): void => {
    if (c === undefined) return;
    if (c.entries_in_window !== undefined)
      longest = Math.max(longest, parseWindowSeconds(c.entries_in_window.window) ?? Number.POSITIVE_INFINITY);
    for (const x of c.any_of ?? []) visit(x);
    for (const x of c.all_of ?? []) visit(x);
    visit(c.not);
  };
  for (const rule of pack.rules) {
    if (!rule.enabled) continue;
    visit(rule.condition);
    for (const o of rule.severity_overrides ?? []) visit(o.when);
  }
  return longest;
}

/** Whether the in-memory walk can stand in for the stored one with this pack. */
export function canWalkInMemory(pack: RulePack): boolean {
  return longestWindowSeconds(pack) * 1000 <= WALK_WINDOW_MS;
}

const ASCII = /^[\x20-\x7e]*$/;

export class BackfillWalk {
  /** Entries waiting, oldest first. */
  private held: Held[] = [];
  /** createdAtKey of each held entry, same order (the rules' burst window). */
  private keys: string[] = [];
  /** The last entry finished: every later arrival must sort before it. */
  private boundary: Held | undefined;
  private failed: string | undefined;
  private first: EntryRow | undefined;
  private last: EntryRow | undefined;
  private readonly perRuleCounts: Record<string, number> = {};
  /**
   * How much older history an entry waits for: the longest burst window of the pack's rules (the
   * only thing they look back on besides the diff base), at most WALK_WINDOW_MS. The default pack's
   * is an hour: an entry is held for an hour of history, not a day, so most are finished within
   * the page that brought them and their objects die young (docs/design/sync.md S9; what that
   * saves, bench/RESULTS.md (s)).
   */
  private readonly lookBackMs: number;

  constructor(
    private readonly pack: RulePack,
    private readonly tenantId: string,
    private readonly maxHeld = 200_000,
  ) {
    this.lookBackMs = Math.min(WALK_WINDOW_MS, longestWindowSeconds(pack) * 1000);
  }

  /** Why the walk gave up, or undefined while it is on track. */
  get gaveUp(): string | undefined {
    return this.failed;
  }

  get heldCount(): number {
    return this.held.length;
  }

  /**
   * Takes newly inserted entries (a batch of the run, in any order; batches newest first) and
   * returns the field changes of the entries it could finish. Returns [] once it gave up.
   */
  add(entries: readonly NormalisedEntry[]): FieldChangeRow[] {
    if (this.failed !== undefined || entries.length === 0) return [];
    const batch: Held[] = [];
    for (const n of entries) {
      const pos = storedPosition(n.entry.createdAtKey);
      const ms = pos === undefined ? undefined : validKeyMillis(pos);
      if (pos === undefined || ms === undefined)
        return this.giveUp(`created_at key ${n.entry.createdAtKey} has an unexpected shape`);
      if (!ASCII.test(n.entry.entryId)) return this.giveUp('an entry id is not printable ASCII');
      batch.push(held(n, pos, ms));
    }
    // Nothing may arrive newer than what finished entries looked back on: everything held is
    // trusted only from the oldest entry seen + DISORDER_MS on (see drain).
    const oldestSeen = this.held[0];
    if (oldestSeen !== undefined) {
      const limit = oldestSeen.ms + DISORDER_MS;
      for (const h of batch)
        if (h.ms > limit)
          return this.giveUp(
            `entry ${h.entry.entryId} arrived more than ${DISORDER_MS} ms out of time order`,
          );
    }
    batch.sort(compare);
    const newest = batch[batch.length - 1] as Held;
    if (this.boundary !== undefined && compare(newest, this.boundary) >= 0)
      return this.giveUp(`entry ${newest.entry.entryId} arrived after a newer one was finished`);
    const oldestHeld = this.held[0];
    if (oldestHeld === undefined || compare(newest, oldestHeld) < 0) {
      this.held = batch.concat(this.held);
    } else {
      this.held = batch.concat(this.held).sort(compare);
    }
    this.keys = this.held.map((h) => h.entry.createdAtKey);
    if (this.held.length > this.maxHeld) return this.giveUp(`more than ${this.maxHeld} entries waiting`);
    return this.drain(false);
  }

  /** After the last batch: finishes every held entry and returns their field changes. */
  finish(): { changes: FieldChangeRow[]; result: BackfillWalkResult | undefined } {
    if (this.failed !== undefined) return { changes: [], result: undefined };
    const changes = this.drain(true);
    return {
      changes,
      result: { first: this.first, last: this.last, perRuleCounts: this.perRuleCounts },
    };
  }

  private giveUp(reason: string): [] {
    this.failed = reason;
    this.held = [];
    this.keys = [];
    return [];
  }

  /** Finishes held entries from the newest down while everything they look back on is here. */
  private drain(ended: boolean): FieldChangeRow[] {
    const out: FieldChangeRow[] = [];
    const oldest = this.held[0];
    if (oldest === undefined) return out;
    // Entries still to come are older than oldest + DISORDER_MS: an entry is finished once its
    // burst window and its diff base lie above that (or once the history has ended).
    const settled = oldest.ms + DISORDER_MS;
    const reach = oldest.ms + this.lookBackMs + MARGIN_MS;
    while (this.held.length > 0) {
      const top = this.held.length - 1;
      const e = this.held[top] as Held;
      if (!ended && e.ms < reach) break;
      let b = top - 1;
      while (b >= 0 && !(this.held[b] as Held).isBase) b--;
      const base = b >= 0 ? (this.held[b] as Held) : undefined;
      if (!ended && (base === undefined || base.ms <= settled)) break;
      const changes = diffSnapshots(base?.snapshot ?? null, e.snapshot, this.pack.ranks);
      for (const change of changes) out.push({ entryId: e.entry.entryId, change });
      const fired = firingRuleIds(this.pack, {
        tenantId: this.tenantId,
        entry: e.entry,
        annotations: e.annotations,
        snapshot: e.snapshot,
        changes,
        recentEntryKeys: this.keys,
      });
      for (const id of fired) this.perRuleCounts[id] = (this.perRuleCounts[id] ?? 0) + 1;
      this.last ??= e.entry;
      this.first = e.entry;
      this.boundary = e;
      this.held.pop();
      this.keys.pop();
    }
    return out;
  }
}

function held(n: NormalisedEntry, pos: string, ms: number): Held {
  let snapshot = n.snapshotWire;
  // What jsonb gives back is the text toJsonbText stored, parsed: it differs from the value only
  // for NUL, lone surrogates and numbers JSON cannot write. Round-trip only a snapshot that has any.
  if (snapshot !== null && !jsonbKeepsAsIs(snapshot))
    snapshot = parseJsonText(toJsonbText(snapshot)) as WireSettings;
  const isBase = isDiffBase(snapshot);
  return {
    entry: { ...n.entry, raw: { snapshot } },
    annotations: n.annotations,
    pos,
    ms,
    snapshot,
    isBase,
  };
}

const NOT_AS_IS = /[\u0000\ud800-\udfff]/;

/** Whether jsonb stores and returns this parsed JSON value unchanged (see toJsonbText). */
function jsonbKeepsAsIs(value: unknown): boolean {
  if (typeof value === 'string') return !NOT_AS_IS.test(value);
  if (typeof value === 'number') return Number.isFinite(value);
  if (value === null || typeof value !== 'object') return true;
  if (Array.isArray(value)) return value.every(jsonbKeepsAsIs);
  // for-in, not Object.entries: no array of pairs per object (this runs for every stored entry).
  for (const k in value) {
    if (!Object.hasOwn(value, k)) continue;
    if (NOT_AS_IS.test(k) || !jsonbKeepsAsIs((value as Record<string, unknown>)[k])) return false;
  }
  return true;
}
