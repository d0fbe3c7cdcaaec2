/**
 * The tenant's settings history: a seeded, deterministic generator and the store the server
 * pages through. This module is the history's public face and holds its additions at run time;
 * the rest lives by concern:
 * - history-timeline.ts: when changes happen (gaps, instants, timestamp precision);
 * - history-seeded.ts: the seeded entries, built for a million of them;
 * - history-spec.ts: entries built from an {@link EntrySpec} or generated at run time;
 * - history-listing.ts: listing order, sort keys and the cursors page tokens name;
 * - history-storage.ts: what is served per entry, and lookups by position and id;
 * - history-changes.ts: rewrites, duplicates, removals and expiry at the source.
 *
 * Entries added at run time are few and are kept as the JSON text they are served as.
 */

import { type ExpireResult, type RewriteSpec, SourceChanges } from './history-changes.js';
import type { EntryCursor } from './history-listing.js';
import { SeededEntries } from './history-seeded.js';
import { buildEntry, type EntrySpec, generatedEntry } from './history-spec.js';
import { HistoryStorage, isRecord } from './history-storage.js';
import { advance, nextGap } from './history-timeline.js';
import { ksuidAt } from './ksuid.js';
import { makeUsers, type Users } from './metadata.js';
import { mix, Random } from './random.js';
import { compareInstants, type Instant, parseTimestamp, type SandboxEntry } from './wire.js';

export type { ExpireResult, RewriteSpec } from './history-changes.js';
export type { EntryCursor } from './history-listing.js';
export type { AnnotationSpec, EntrySpec } from './history-spec.js';

/** Options of the seeded history. */
export interface HistoryOptions {
  readonly entries: number;
  readonly seed: number;
  readonly start: string;
  /** Write every field, defaults included (grpc-gateway v2's default marshaler); see populate.ts. */
  readonly emitUnpopulated?: boolean;
}

/** PRNG streams of entries added at run time (apart from the seeded ones'). */
const STREAM_RUNTIME = 0x4a7;

/** The settings history of one sandbox tenant. */
export class HistoryStore {
  private readonly seed: number;
  private readonly users: Users;
  private readonly storage: HistoryStorage;
  private readonly changes: SourceChanges;
  /** Settings after the newest change; null while the object is deleted. */
  private current: Record<string, unknown> | null;
  private newest: Instant | undefined;

  constructor(options: HistoryOptions) {
    const n = options.entries;
    if (!Number.isSafeInteger(n) || n < 0) throw new RangeError('entries must be a non-negative integer');
    this.seed = options.seed;
    this.users = makeUsers(options.seed);
    const seeded = new SeededEntries(n, options.seed, parseTimestamp(options.start), this.users);
    this.storage = new HistoryStorage(seeded, options.emitUnpopulated === true);
    this.changes = new SourceChanges(this.storage);
    this.newest = seeded.newest();
    this.current = seeded.finalSettings();
  }

  /** createdAt of the chronologically newest entry (late arrivals and raw entries aside). */
  get newestInstant(): Instant | undefined {
    return this.newest;
  }

  /** The seeded users behind API and SUPPORT actors. */
  get seededUsers(): Users {
    return this.users;
  }

  /** Number of entries served. */
  get size(): number {
    return this.storage.listing.size;
  }

  /** Changes whenever the served history changes (additions, rewrites, removals, expiry): pages rendered earlier are stale. */
  get version(): number {
    return this.storage.version;
  }

  /** The served JSON text of the entry at a listing position (0 = oldest). */
  jsonAt(position: number): string {
    return this.storage.jsonAt(position);
  }

  /** The cursor naming the entry at a listing position. */
  cursorAt(position: number): EntryCursor {
    return this.storage.listing.cursorAt(position);
  }

  /** How many entries sort strictly before the cursor (the position the cursor would take). */
  positionOf(cursor: EntryCursor): number {
    return this.storage.listing.positionOf(cursor);
  }

  /**
   * The JSON text of every entry, newest first, produced lazily (1 M entries never form one
   * string). A change to the history while the lines are read is seen as a keyset page would see
   * it: the lines go on with the entry that now sorts right below the last one produced.
   */
  jsonLines(): Generator<string> {
    return this.storage.jsonLines();
  }

  /** Every entry as served, newest first (fresh objects: changing them changes nothing). */
  entries(): SandboxEntry[] {
    const out: SandboxEntry[] = [];
    for (const line of this.jsonLines()) out.push(JSON.parse(line) as SandboxEntry);
    return out;
  }

  /** createdAt of the entry at a listing position, or null when it has none (a raw value). */
  createdAtAt(position: number): string | null {
    return this.storage.createdAtAt(position);
  }

  /**
   * The listing position of the entry served with this metadata.id, or -1 when none is. When
   * several are (a duplicate made with extraMetadata), the one whose KSUID is the id, else the
   * newest. Costs a binary search, plus a scan of the entries added at run time when the id is
   * not a sort key.
   */
  positionOfId(id: string): number {
    return this.storage.positionOfId(id);
  }

  /**
   * Rewrites an entry at the source: it keeps its id, createdAt and listing position but is
   * served with other content from now on. `set` is merged over its snapshot (as EntrySpec.set;
   * an entry without a snapshot refuses it), `metadata` over its metadata (id and createdAt may
   * not change). With neither, a default change: `requireToolApproval` flips (when there is a
   * snapshot) and an annotation with key `sandbox_rewrite` names the rewrite's number, so every
   * rewrite of an entry serves a version different from all its earlier ones. The current
   * settings and the newest instant are left as they are. Returns the entry as now served.
   */
  rewrite(id: string, change: RewriteSpec = {}): SandboxEntry {
    return this.changes.rewrite(id, change);
  }

  /**
   * Serves a second version of an entry under the same id, as a faulty source does: the same id
   * and createdAt, other content (`change` as for {@link rewrite}; with neither part, the default
   * change, its annotation keyed `sandbox_duplicate`), listed right next to the original, which is
   * served unchanged. Each call adds one more version. Returns the version added.
   */
  duplicate(id: string, change: RewriteSpec = {}): SandboxEntry {
    return this.changes.duplicate(id, change);
  }

  /**
   * Removes an entry from the middle (or anywhere) of the history: it is no longer served.
   * Pages go on around it in both paging modes (an offset listing that has already passed it
   * skips one entry, as a naive service would). The current settings and the newest instant are
   * left as they are. Returns the entry as it was served.
   */
  remove(id: string): SandboxEntry {
    return this.changes.remove(id);
  }

  /**
   * Retention ran out: the `count` oldest entries in listing order (all of them when there are
   * fewer) are no longer served. Snapshots still served keep the createdAt of their settings
   * object even when the CREATE that began it has expired.
   */
  expire(count = 1): ExpireResult {
    return this.changes.expire(count);
  }

  /**
   * Appends `count` generated changes after the newest entry, continuing the settings'
   * evolution (PUTs, or a CREATE when the object is deleted; never a HARD_DELETE, so that tests
   * stay predictable). `at` fixes the createdAt of the first one; the others follow it.
   */
  append(count = 1, options: { at?: string } = {}): SandboxEntry[] {
    if (!Number.isSafeInteger(count) || count < 0)
      throw new RangeError('count must be a non-negative integer');
    const out: SandboxEntry[] = [];
    for (let k = 0; k < count; k++) {
      const rng = this.runtimeRandom(0);
      const time = this.topTime(k === 0 ? options.at : undefined, rng, 'append');
      const streams = { change: rng, group: this.runtimeRandom(1), entry: this.runtimeRandom(2) };
      const { id, entry, snapshot } = generatedEntry(time, this.current, streams, this.users);
      const json = JSON.stringify(entry);
      this.storage.add(id, json);
      this.current = snapshot;
      this.newest = time;
      out.push(JSON.parse(json) as SandboxEntry);
    }
    return out;
  }

  /** Adds one entry built from a spec at the top (its KSUID sorts by its time, randomly within its second). */
  appendEntry(spec: EntrySpec = {}): SandboxEntry {
    const rng = this.runtimeRandom(0);
    const time = this.topTime(spec.at, rng, 'appendEntry');
    // The sort key is the minted KSUID even when extraMetadata serves another id (a duplicate, say).
    const key = ksuidAt(time.seconds, rng.bytes(16));
    const { entry, snapshot } = buildEntry(spec, time, this.current, rng, key, this.users);
    const json = JSON.stringify(entry);
    this.storage.add(key, json);
    // From the served text, so that later changes to the caller's spec objects change nothing.
    if (entry.metadata?.changeKind === 'CHANGE_KIND_HARD_DELETE') this.current = null;
    else if (snapshot !== undefined) this.current = (JSON.parse(json) as SandboxEntry).snapshot ?? null;
    this.newest = time;
    return JSON.parse(json) as SandboxEntry;
  }

  /**
   * Adds a late arrival: an entry whose createdAt (and so KSUID) lies behind the newest entry,
   * visible from now on. Its snapshot is the settings as they were at `at`, with `set` applied;
   * it does not change the current settings.
   */
  insertLate(spec: EntrySpec & { at: string }): SandboxEntry {
    const rng = this.runtimeRandom(0);
    const time = parseTimestamp(spec.at);
    if (this.newest === undefined || compareInstants(time, this.newest) >= 0) {
      throw new RangeError(`insertLate: ${spec.at} is not earlier than the newest entry; use appendEntry`);
    }
    const base = this.settingsBefore(time);
    const key = this.lateKey(time, rng);
    const { entry } = buildEntry(spec, time, base, rng, key, this.users);
    const json = JSON.stringify(entry);
    this.storage.add(key, json);
    return JSON.parse(json) as SandboxEntry;
  }

  /**
   * Backdates an entry: an insertion into the past, served at the position its KSUID sorts to,
   * however far behind the newest entry `at` lies (before the oldest one too). The same as
   * {@link insertLate}, under the name the reconcile tests use.
   */
  backdate(spec: EntrySpec & { at: string }): SandboxEntry {
    return this.insertLate(spec);
  }

  /**
   * Serves an arbitrary JSON value as an entry (one without metadata.id, a string, null…) at the
   * position an entry created at `at` would take, or at the very top.
   */
  insertRaw(raw: unknown, options: { at?: string } = {}): void {
    this.insertRawText(JSON.stringify(raw) ?? 'null', options);
  }

  /**
   * Serves a JSON text verbatim as an entry, as {@link insertRaw} does: for values JSON.stringify
   * cannot write, such as one nested thousands of levels deep.
   */
  insertRawText(json: string, options: { at?: string } = {}): void {
    const rng = this.runtimeRandom(0);
    let key: string;
    if (options.at !== undefined) {
      key = ksuidAt(parseTimestamp(options.at).seconds, rng.bytes(16));
    } else {
      // Sorts right after the current top; any later second still sorts above it.
      key = `${this.storage.listing.topKey()}~`;
    }
    this.storage.add(key, json, true);
  }

  /** A PRNG stream of the next entry added, fixed by the seed and the entry's index. */
  private runtimeRandom(stream: number): Random {
    return new Random(mix(this.seed, this.storage.listing.nextIndex), STREAM_RUNTIME + stream);
  }

  private nextInstant(rng: Random): Instant {
    if (this.newest === undefined) return parseTimestamp('2025-01-06T09:00:00Z');
    let gap = nextGap(rng, 1);
    // A generated append is a new change, not part of the last burst.
    if (gap === 0) gap = rng.logUniform(5, 600);
    return advance(this.newest, gap, rng);
  }

  /** The time of an entry added at the top: `at`, which may not lie behind the newest entry, or the next instant. */
  private topTime(at: string | undefined, rng: Random, what: string): Instant {
    if (at === undefined) return this.nextInstant(rng);
    const time = parseTimestamp(at);
    if (this.newest !== undefined && compareInstants(time, this.newest) < 0) {
      throw new RangeError(
        `${what}: ${at} is earlier than the newest entry; use insertLate for a late arrival`,
      );
    }
    return time;
  }

  /** The snapshot of the entry listed right before the second of `time`; null when there is none. */
  private settingsBefore(time: Instant): Record<string, unknown> | null {
    const before = this.positionOf({ key: ksuidAt(time.seconds, new Uint8Array(16)), index: -1 });
    if (before === 0) return null;
    const previous: unknown = JSON.parse(this.jsonAt(before - 1));
    return isRecord(previous) && isRecord(previous['snapshot']) ? previous['snapshot'] : null;
  }

  /** A KSUID in the second of `time` that sorts behind the top entry, even when both share that second. */
  private lateKey(time: Instant, rng: Random): string {
    const top = this.storage.listing.topKey();
    let key = ksuidAt(time.seconds, rng.bytes(16));
    // Same second as the top entry: draw again until the late entry really sorts behind it.
    for (let tries = 0; key >= top && tries < 64; tries++) key = ksuidAt(time.seconds, rng.bytes(16));
    if (key >= top) key = ksuidAt(time.seconds, new Uint8Array(16));
    return key;
  }
}
