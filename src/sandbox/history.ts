/**
 * The tenant's settings history: a seeded, deterministic generator and the store the server
 * pages through.
 *
 * Storage is built for a million entries. The seeded ("bulk") part keeps, per entry, only its
 * time, change kind, a 14-byte settings model, the index of the CREATE that began the current
 * settings object and the index of its burst; the metadata (actor, annotations, trace and System
 * Log ids) is regenerated from (seed, index) each time the entry is served. Entries added at run
 * time are few and are kept as the JSON text they are served as.
 *
 * Order is KSUID order (string order of the sort key, ties broken by insertion index), kept in an
 * ascending array of entry indexes: appends push at the end, late arrivals splice in, removals
 * and expiry splice out. An entry no longer in `order` is no longer served; its index is never
 * reused. A rewritten entry keeps its index and sort key and is served from the JSON text its
 * rewrite stored in `custom`, whether it began as a seeded entry or not.
 *
 * A HARD_DELETE entry carries no snapshot. The API documentation (docs/design/tenant-api.md) defines the
 * snapshot as "the settings object as it was after the change", and after a hard delete there is no object;
 * protojson leaves an unset message out (with emitUnpopulated it is `null`). The next change to the settings
 * is then a CREATE that starts a new object with a new createdAt.
 */
import { ksuidAt } from './ksuid.js';
import { annotation, annotationOfKind, generateMetadata, makeUsers, type Users } from './metadata.js';
import { populateEntry } from './populate.js';
import { mix, Random, WeightedTable } from './random.js';
import {
  applyChange,
  applyChangeToWire,
  chooseChange,
  createModel,
  MODEL_SIZE,
  mergeSettings,
  modelToJson,
  modelToWire,
  wireToModel,
} from './settings.js';
import {
  compareInstants,
  formatTimestamp,
  type Instant,
  omitDefaults,
  parseTimestamp,
  type SandboxActor,
  type SandboxAnnotation,
  type SandboxEntry,
  type SandboxMetadata,
} from './wire.js';

/** An annotation in an {@link EntrySpec}; missing parts are filled in from the kind. */
export interface AnnotationSpec {
  key?: string;
  kind?: string;
  rawValue?: string;
  displayValue?: string;
  displayLabel?: string;
  displayUrl?: string;
}

/** How to build one entry by hand; every part is optional and defaults realistically. */
export interface EntrySpec {
  /** createdAt: RFC 3339 with up to 9 fractional digits; served in protojson form (UTC, 0/3/6/9 digits). */
  at?: string;
  /** Default CHANGE_KIND_PUT, or CHANGE_KIND_CREATE when the settings object does not exist. */
  changeKind?: string;
  /** Default an API user. userId defaults to a seeded user for ACTOR_KIND_API and ACTOR_KIND_SUPPORT only. */
  actor?: { kind?: string; userId?: string };
  /** Default one ticket annotation; `[]` for a change without any. */
  annotations?: AnnotationSpec[];
  /** Wire-named snapshot fields merged over the current settings (objects one level deep); false, 0, "" and null clear a field. */
  set?: Record<string, unknown>;
  /** Replaces the whole snapshot, served verbatim; null serves the entry without a snapshot. */
  snapshot?: object | null;
  /** Extra metadata fields, merged last (they may override generated ones). */
  extraMetadata?: Record<string, unknown>;
}

/** How {@link HistoryStore.rewrite} changes an entry; with neither part, a default visible change. */
export interface RewriteSpec {
  /** Wire-named snapshot fields merged over the entry's snapshot, as {@link EntrySpec.set}. */
  set?: Record<string, unknown>;
  /** Fields merged over the entry's metadata (shallowly; `annotations` is replaced whole). */
  metadata?: Record<string, unknown>;
}

/** What {@link HistoryStore.expire} did. */
export interface ExpireResult {
  /** Entries no longer served (fewer than asked when the history had fewer). */
  readonly expired: number;
  /** Entries served now. */
  readonly size: number;
  /** createdAt of the oldest entry still served; null when none is (or it has none: a raw value). */
  readonly oldest: string | null;
}

/** Options of the seeded history. */
export interface HistoryOptions {
  readonly entries: number;
  readonly seed: number;
  readonly start: string;
  /** Write every field, defaults included (grpc-gateway v2's default marshaler); see populate.ts. */
  readonly emitUnpopulated?: boolean;
}

/** Position of an entry in the listing order, as a page token names it. */
export interface EntryCursor {
  readonly key: string;
  readonly index: number;
}

const CHANGE_KINDS = ['CHANGE_KIND_CREATE', 'CHANGE_KIND_PUT', 'CHANGE_KIND_HARD_DELETE'] as const;
const CREATE = 0;
const PUT = 1;
const HARD_DELETE = 2;

// Independent PRNG streams, so that adding draws to one part never shifts another.
const STREAM_TIMELINE = 0x7131;
const STREAM_IDS = 0x1d5;
const STREAM_GROUP = 0x6a0;
const STREAM_ENTRY = 0xe47;
const STREAM_RUNTIME = 0x4a7;

/** Seeded histories are squeezed into about a year when their natural spread would be longer. */
const TARGET_SPAN_SECONDS = 365 * 86_400;
/** Mean of the unscaled gap distribution in {@link nextGap} (measured: about 1.4 days). */
const MEAN_GAP_SECONDS = 122_000;

/** Seconds to the next change: a burst (0, same second), minutes, hours or days. */
function nextGap(rng: Random, scale: number): number {
  const r = rng.next();
  if (r < 0.07) return 0;
  if (r < 0.25) return rng.logUniform(5, 600) * scale;
  if (r < 0.65) return rng.logUniform(1_800, 43_200) * scale;
  return rng.logUniform(86_400, 864_000) * scale;
}

/**
 * The instant `gap` seconds after `prev`, strictly later. Precision varies as on the live
 * service: mostly nanoseconds, sometimes microseconds, milliseconds or whole seconds.
 */
const FRACTION_DIGITS = new WeightedTable([
  [9, 70],
  [6, 18],
  [3, 8],
  [0, 4],
] as const);

function advance(prev: Instant, gap: number, rng: Random): Instant {
  const digits = FRACTION_DIGITS.pick(rng);
  let seconds: number;
  let nanos: number;
  if (gap === 0) {
    seconds = prev.seconds;
    nanos = prev.nanos + rng.int(1_000, 50_000_000);
  } else {
    const whole = Math.floor(gap);
    seconds = prev.seconds + whole;
    nanos = prev.nanos + Math.floor((gap - whole) * 1e9);
    // Past a few seconds the sub-second part carries no information: make it random.
    if (gap > 5) nanos = rng.int(0, 999_999_999);
  }
  if (nanos >= 1e9) {
    seconds += Math.floor(nanos / 1e9);
    nanos %= 1e9;
  }
  const unit = 10 ** (9 - digits);
  nanos -= nanos % unit;
  if (seconds < prev.seconds || (seconds === prev.seconds && nanos <= prev.nanos)) {
    seconds = prev.seconds;
    nanos = prev.nanos + 1;
    if (nanos >= 1e9) {
      seconds += 1;
      nanos -= 1e9;
    }
  }
  return { seconds, nanos };
}

function compareCursor(aKey: string, aIndex: number, bKey: string, bIndex: number): number {
  if (aKey < bKey) return -1;
  if (aKey > bKey) return 1;
  return aIndex - bIndex;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

const ACTOR_KINDS_WITH_USER = new Set(['ACTOR_KIND_API', 'ACTOR_KIND_SUPPORT']);
const ACTOR_KINDS_WITHOUT_SYSLOG = new Set(['ACTOR_KIND_WORKFLOW', 'ACTOR_KIND_INTERNAL']);

const KIND_DEFAULTS: Readonly<Record<string, { key: string; label: string }>> = {
  ANNOTATION_KIND_TICKET: { key: 'ticket_id', label: 'Ticket' },
  ANNOTATION_KIND_REASON: { key: 'reason', label: 'Reason' },
  ANNOTATION_KIND_WORKFLOW: { key: 'workflow_run_id', label: 'Workflow run' },
  ANNOTATION_KIND_BATCH: { key: 'batch_id', label: 'Batch' },
  ANNOTATION_KIND_CORRELATION: { key: 'correlation_id', label: 'Correlation' },
  ANNOTATION_KIND_AUTOMATION: { key: 'automation', label: 'Automation' },
};

/** The settings history of one sandbox tenant. */
export class HistoryStore {
  private readonly seed: number;
  private readonly users: Users;
  private readonly bulk: number;
  private readonly seconds: Float64Array;
  private readonly nanos: Uint32Array;
  private readonly kinds: Uint8Array;
  private readonly models: Uint8Array;
  private readonly createRef: Int32Array;
  private readonly group: Int32Array;
  /** Sort key of every entry by index: its KSUID, or a synthetic key for raw entries. */
  private readonly keys: string[] = [];
  /** Served JSON of entries added at run time, by index. */
  private readonly custom = new Map<number, string>();
  /** Entry indexes in ascending listing order (oldest first). */
  private readonly order: number[];
  /** Settings after the newest change; null while the object is deleted. */
  private current: Record<string, unknown> | null = null;
  private newest: Instant | undefined;
  private lastCreateIndex = -1;
  private lastCreateText = '';
  private readonly emitUnpopulated: boolean;
  /** Indexes of entries inserted with insertRaw: served exactly as given, whatever the encoding. */
  private readonly raw = new Set<number>();
  /** How many times each rewritten entry has been rewritten, by index. */
  private readonly rewrites = new Map<number, number>();
  /** Versions added with duplicate, per id: each serves a content different from the earlier ones. */
  private readonly duplicates = new Map<string, number>();
  /** Changes to the served history other than additions (rewrites, removals, expiry). */
  private mutations = 0;

  constructor(options: HistoryOptions) {
    const n = options.entries;
    if (!Number.isSafeInteger(n) || n < 0) throw new RangeError('entries must be a non-negative integer');
    this.seed = options.seed;
    this.emitUnpopulated = options.emitUnpopulated === true;
    this.users = makeUsers(options.seed);
    this.bulk = n;
    this.seconds = new Float64Array(n);
    this.nanos = new Uint32Array(n);
    this.kinds = new Uint8Array(n);
    this.models = new Uint8Array(n * MODEL_SIZE);
    this.createRef = new Int32Array(n);
    this.group = new Int32Array(n);
    this.order = new Array<number>(n);
    this.generate(parseTimestamp(options.start));
  }

  private generate(start: Instant): void {
    const n = this.bulk;
    const timeline = new Random(this.seed, STREAM_TIMELINE);
    const ids = new Random(this.seed, STREAM_IDS);
    const scale = Math.min(1, TARGET_SPAN_SECONDS / Math.max(1, n * MEAN_GAP_SECONDS));
    let model: Uint8Array = new Uint8Array(MODEL_SIZE);
    let created = 0;
    let time = start;
    for (let i = 0; i < n; i++) {
      let kind = PUT;
      if (i === 0) {
        kind = CREATE;
        model = createModel(timeline);
      } else {
        const gap = nextGap(timeline, scale);
        time = advance(time, gap, timeline);
        this.group[i] = gap === 0 ? this.group[i - 1]! : i;
        if (this.kinds[i - 1] === HARD_DELETE) {
          kind = CREATE;
          model = createModel(timeline);
        } else if (i > 10 && timeline.chance(0.004)) {
          kind = HARD_DELETE;
        } else {
          applyChange(model, chooseChange(model, timeline, i / n));
        }
      }
      if (i === 0) this.group[0] = 0;
      if (kind === CREATE) created = i;
      this.seconds[i] = time.seconds;
      this.nanos[i] = time.nanos;
      this.kinds[i] = kind;
      this.models.set(model, i * MODEL_SIZE);
      this.createRef[i] = created;
      this.keys.push(ksuidAt(time.seconds, ids.bytes(16)));
      this.order[i] = i;
    }
    // Generation is chronological; KSUID order differs only inside one second, where it is random.
    let runStart = 0;
    for (let i = 1; i <= n; i++) {
      if (i === n || this.seconds[i] !== this.seconds[runStart]) {
        if (i - runStart > 1) {
          const run = this.order
            .slice(runStart, i)
            .sort((a, b) => compareCursor(this.keys[a]!, a, this.keys[b]!, b));
          for (let k = 0; k < run.length; k++) this.order[runStart + k] = run[k]!;
        }
        runStart = i;
      }
    }
    if (n > 0) {
      const last = n - 1;
      this.newest = { seconds: this.seconds[last]!, nanos: this.nanos[last]! };
      this.current = this.kinds[last] === HARD_DELETE ? null : this.bulkSnapshot(last);
    }
  }

  private bulkTimestamp(i: number): string {
    return formatTimestamp(this.seconds[i]!, this.nanos[i]!);
  }

  private bulkSnapshot(i: number): Record<string, unknown> {
    const model = this.models.subarray(i * MODEL_SIZE, (i + 1) * MODEL_SIZE);
    return modelToWire(model, this.bulkTimestamp(this.createRef[i]!), this.bulkTimestamp(i));
  }

  private bulkJson(i: number): string {
    const g = this.group[i]!;
    const inBurst = g !== i || (i + 1 < this.bulk && this.group[i + 1] === i);
    const generated = generateMetadata({
      group: new Random(mix(this.seed, g), STREAM_GROUP),
      entry: new Random(mix(this.seed, i), STREAM_ENTRY),
      seconds: this.seconds[i]!,
      inBurst,
      users: this.users,
    });
    const metadata: SandboxMetadata = {
      id: this.keys[i]!,
      createdAt: this.bulkTimestamp(i),
      changeKind: CHANGE_KINDS[this.kinds[i]!]!,
      ...generated,
    };
    const head = `{"metadata":${JSON.stringify(metadata)}`;
    if (this.kinds[i] === HARD_DELETE) return `${head}}`;
    const model = this.models.subarray(i * MODEL_SIZE, (i + 1) * MODEL_SIZE);
    return `${head},"snapshot":${modelToJson(model, this.createdTimestamp(this.createRef[i]!), metadata.createdAt!)}}`;
  }

  /** createdAt of the settings object: the same CREATE for long runs of entries, so remembered. */
  private createdTimestamp(createIndex: number): string {
    if (createIndex !== this.lastCreateIndex) {
      this.lastCreateIndex = createIndex;
      this.lastCreateText = this.bulkTimestamp(createIndex);
    }
    return this.lastCreateText;
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
    return this.order.length;
  }

  /** The served JSON text of the entry at a listing position (0 = oldest). */
  jsonAt(position: number): string {
    const index = this.order[position];
    if (index === undefined) throw new RangeError(`no entry at position ${position}`);
    const json = this.custom.get(index) ?? this.bulkJson(index);
    if (!this.emitUnpopulated || this.raw.has(index)) return json;
    return JSON.stringify(populateEntry(JSON.parse(json) as Record<string, unknown>));
  }

  /** The cursor naming the entry at a listing position. */
  cursorAt(position: number): EntryCursor {
    const index = this.order[position];
    if (index === undefined) throw new RangeError(`no entry at position ${position}`);
    return { key: this.keys[index]!, index };
  }

  /** How many entries sort strictly before the cursor (the position the cursor would take). */
  positionOf(cursor: EntryCursor): number {
    let lo = 0;
    let hi = this.order.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const index = this.order[mid]!;
      if (compareCursor(this.keys[index]!, index, cursor.key, cursor.index) < 0) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /**
   * The JSON text of every entry, newest first, produced lazily (1 M entries never form one
   * string). A change to the history while the lines are read is seen as a keyset page would see
   * it: the lines go on with the entry that now sorts right below the last one produced.
   */
  *jsonLines(): Generator<string> {
    let version = this.version;
    let p = this.order.length - 1;
    while (p >= 0) {
      const index = this.order[p]!;
      yield this.jsonAt(p);
      if (this.version !== version) {
        version = this.version;
        p = this.positionOf({ key: this.keys[index]!, index });
      }
      p--;
    }
  }

  /** Every entry as served, newest first (fresh objects: changing them changes nothing). */
  entries(): SandboxEntry[] {
    const out: SandboxEntry[] = [];
    for (const line of this.jsonLines()) out.push(JSON.parse(line) as SandboxEntry);
    return out;
  }

  /** Changes whenever the served history changes (additions, rewrites, removals, expiry): pages rendered earlier are stale. */
  get version(): number {
    return this.keys.length + this.mutations;
  }

  /** createdAt of the entry at a listing position, or null when it has none (a raw value). */
  createdAtAt(position: number): string | null {
    const index = this.order[position];
    if (index === undefined) throw new RangeError(`no entry at position ${position}`);
    const json = this.custom.get(index);
    if (json === undefined) return this.bulkTimestamp(index);
    const value: unknown = JSON.parse(json);
    const createdAt =
      isRecord(value) && isRecord(value['metadata']) ? value['metadata']['createdAt'] : undefined;
    return typeof createdAt === 'string' ? createdAt : null;
  }

  /** metadata.id as served; for a seeded entry, without generating its metadata. */
  private servedId(index: number): unknown {
    const json = this.custom.get(index);
    if (json === undefined) return this.keys[index];
    const value: unknown = JSON.parse(json);
    return isRecord(value) && isRecord(value['metadata']) ? value['metadata']['id'] : undefined;
  }

  /**
   * The listing position of the entry served with this metadata.id, or -1 when none is. When
   * several are (a duplicate made with extraMetadata), the one whose KSUID is the id, else the
   * newest. Costs a binary search, plus a scan of the entries added at run time when the id is
   * not a sort key.
   */
  positionOfId(id: string): number {
    for (let p = this.positionOf({ key: id, index: -1 }); p < this.order.length; p++) {
      const index = this.order[p]!;
      if (this.keys[index] !== id) break;
      if (this.servedId(index) === id) return p;
    }
    let best = -1;
    for (const index of this.custom.keys()) {
      if (this.keys[index] === id || this.servedId(index) !== id) continue;
      const p = this.positionOf({ key: this.keys[index]!, index });
      if (this.order[p] === index && p > best) best = p;
    }
    return best;
  }

  private requirePosition(id: unknown, what: string): number {
    if (typeof id !== 'string' || id === '') throw new RangeError(`${what}: id must be a non-empty string`);
    const position = this.positionOfId(id);
    if (position < 0) throw new RangeError(`${what}: no entry with id ${JSON.stringify(id)} is served`);
    return position;
  }

  /** Drops what is kept for an entry that is no longer served. */
  private forget(index: number): void {
    this.custom.delete(index);
    this.raw.delete(index);
    this.rewrites.delete(index);
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
    const position = this.requirePosition(id, 'rewrite');
    const index = this.order[position]!;
    const count = (this.rewrites.get(index) ?? 0) + 1;
    this.custom.set(index, this.changedJson(index, change, 'rewrite', count));
    this.rewrites.set(index, count);
    this.mutations++;
    return JSON.parse(this.jsonAt(position)) as SandboxEntry;
  }

  /**
   * Serves a second version of an entry under the same id, as a faulty source does: the same id
   * and createdAt, other content (`change` as for {@link rewrite}; with neither part, the default
   * change, its annotation keyed `sandbox_duplicate`), listed right next to the original, which is
   * served unchanged. Each call adds one more version. Returns the version added.
   */
  duplicate(id: string, change: RewriteSpec = {}): SandboxEntry {
    const position = this.requirePosition(id, 'duplicate');
    const index = this.order[position]!;
    const copies = (this.duplicates.get(id) ?? 0) + 1;
    const json = this.changedJson(index, change, 'duplicate', copies);
    this.duplicates.set(id, copies);
    const copy = this.keys.length;
    if (this.raw.has(index)) this.raw.add(copy);
    // The original's sort key: ties keep insertion order, so the copy sorts right after it.
    this.insert(this.keys[index]!, json);
    this.mutations++;
    return JSON.parse(json) as SandboxEntry;
  }

  /** The entry at `index` with `change` applied, as JSON text (see {@link rewrite}). */
  private changedJson(
    index: number,
    change: RewriteSpec,
    what: 'rewrite' | 'duplicate',
    count: number,
  ): string {
    const id = this.servedId(index);
    const { set, metadata: extra } = change;
    if (set !== undefined && !isRecord(set)) throw new RangeError(`${what}: set must be an object`);
    if (extra !== undefined && !isRecord(extra)) throw new RangeError(`${what}: metadata must be an object`);
    const stored: unknown = JSON.parse(this.custom.get(index) ?? this.bulkJson(index));
    if (!isRecord(stored) || !isRecord(stored['metadata'])) {
      throw new RangeError(`${what}: entry ${JSON.stringify(id)} has no metadata object`);
    }
    const metadata: Record<string, unknown> = { ...stored['metadata'] };
    let snapshot = stored['snapshot'];
    const raw = this.raw.has(index);
    const mergeSnapshot = (fields: Record<string, unknown>): void => {
      if (!isRecord(snapshot)) {
        throw new RangeError(`${what}: entry ${JSON.stringify(id)} has no snapshot to set fields on`);
      }
      // Raw entries are served exactly as given: no defaults are dropped from them.
      const merged = mergeSettings(snapshot, fields);
      snapshot = raw ? merged : omitDefaults(merged);
    };
    if (set === undefined && extra === undefined) {
      if (isRecord(snapshot))
        mergeSnapshot({ requireToolApproval: snapshot['requireToolApproval'] !== true });
      const note =
        what === 'rewrite'
          ? annotation(
              'sandbox_rewrite',
              'ANNOTATION_KIND_REASON',
              `rewrite-${count}`,
              `Rewritten at the source (rewrite ${count})`,
              'Rewrite',
              '',
            )
          : annotation(
              'sandbox_duplicate',
              'ANNOTATION_KIND_REASON',
              `duplicate-${count}`,
              `Served twice by the source (version ${count + 1})`,
              'Duplicate',
              '',
            );
      const before = Array.isArray(metadata['annotations']) ? (metadata['annotations'] as unknown[]) : [];
      const at = before.findIndex((a) => isRecord(a) && a['key'] === `sandbox_${what}`);
      metadata['annotations'] =
        at < 0 ? [...before, note] : [...before.slice(0, at), note, ...before.slice(at + 1)];
    } else {
      if (set !== undefined) mergeSnapshot(set);
      if (extra !== undefined) {
        for (const field of ['id', 'createdAt']) {
          if (Object.hasOwn(extra, field) && extra[field] !== metadata[field]) {
            throw new RangeError(
              `${what}: an entry keeps its ${field}; remove it and backdate a new one to move it`,
            );
          }
        }
        Object.assign(metadata, extra);
      }
    }
    const next: Record<string, unknown> = { ...stored, metadata };
    if (Object.hasOwn(stored, 'snapshot')) next['snapshot'] = snapshot;
    return JSON.stringify(next);
  }

  /**
   * Removes an entry from the middle (or anywhere) of the history: it is no longer served.
   * Pages go on around it in both paging modes (an offset listing that has already passed it
   * skips one entry, as a naive service would). The current settings and the newest instant are
   * left as they are. Returns the entry as it was served.
   */
  remove(id: string): SandboxEntry {
    const position = this.requirePosition(id, 'remove');
    const entry = JSON.parse(this.jsonAt(position)) as SandboxEntry;
    const index = this.order[position]!;
    this.order.splice(position, 1);
    this.forget(index);
    this.mutations++;
    return entry;
  }

  /**
   * Retention ran out: the `count` oldest entries in listing order (all of them when there are
   * fewer) are no longer served. Snapshots still served keep the createdAt of their settings
   * object even when the CREATE that began it has expired.
   */
  expire(count = 1): ExpireResult {
    if (!Number.isSafeInteger(count) || count < 0)
      throw new RangeError('count must be a non-negative integer');
    const n = Math.min(count, this.order.length);
    if (n > 0) {
      for (const index of this.order.splice(0, n)) this.forget(index);
      this.mutations++;
    }
    return {
      expired: n,
      size: this.order.length,
      oldest: this.order.length === 0 ? null : this.createdAtAt(0),
    };
  }

  private insert(key: string, json: string): void {
    const index = this.keys.length;
    this.keys.push(key);
    this.custom.set(index, json);
    const position = this.positionOf({ key, index });
    if (position === this.order.length) this.order.push(index);
    else this.order.splice(position, 0, index);
  }

  private runtimeRandom(stream: number): Random {
    return new Random(mix(this.seed, this.keys.length), STREAM_RUNTIME + stream);
  }

  private nextInstant(rng: Random): Instant {
    if (this.newest === undefined) return parseTimestamp('2025-01-06T09:00:00Z');
    let gap = nextGap(rng, 1);
    // A generated append is a new change, not part of the last burst.
    if (gap === 0) gap = rng.logUniform(5, 600);
    return advance(this.newest, gap, rng);
  }

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
      const createdAt = formatTimestamp(time.seconds, time.nanos);
      let changeKind: number;
      let snapshot: Record<string, unknown>;
      if (this.current === null) {
        changeKind = CREATE;
        snapshot = modelToWire(createModel(rng), createdAt, createdAt);
      } else {
        changeKind = PUT;
        const changes = chooseChange(wireToModel(this.current), rng, 1);
        snapshot = applyChangeToWire({ ...this.current, updatedAt: createdAt }, changes);
      }
      const id = ksuidAt(time.seconds, rng.bytes(16));
      const generated = generateMetadata({
        group: this.runtimeRandom(1),
        entry: this.runtimeRandom(2),
        seconds: time.seconds,
        inBurst: false,
        users: this.users,
      });
      const entry: SandboxEntry = {
        metadata: { id, createdAt, changeKind: CHANGE_KINDS[changeKind]!, ...generated },
        snapshot,
      };
      const json = JSON.stringify(entry);
      this.insert(id, json);
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
    const { entry, snapshot } = this.build(spec, time, this.current, rng, key);
    const json = JSON.stringify(entry);
    this.insert(key, json);
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
    const before = this.positionOf({ key: ksuidAt(time.seconds, new Uint8Array(16)), index: -1 });
    let base: Record<string, unknown> | null = null;
    if (before > 0) {
      const previous: unknown = JSON.parse(this.jsonAt(before - 1));
      if (isRecord(previous) && isRecord(previous['snapshot'])) base = previous['snapshot'];
    }
    const top = this.order.length > 0 ? this.keys[this.order[this.order.length - 1]!]! : '';
    let key = ksuidAt(time.seconds, rng.bytes(16));
    // Same second as the top entry: draw again until the late entry really sorts behind it.
    for (let tries = 0; key >= top && tries < 64; tries++) key = ksuidAt(time.seconds, rng.bytes(16));
    if (key >= top) key = ksuidAt(time.seconds, new Uint8Array(16));
    const { entry } = this.build(spec, time, base, rng, key);
    const json = JSON.stringify(entry);
    this.insert(key, json);
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
      const top = this.order.length > 0 ? this.keys[this.order[this.order.length - 1]!]! : '';
      // Sorts right after the current top; any later second still sorts above it.
      key = `${top}~`;
    }
    this.raw.add(this.keys.length);
    this.insert(key, json);
  }

  private build(
    spec: EntrySpec,
    time: Instant,
    base: Record<string, unknown> | null,
    rng: Random,
    id: string,
  ): { entry: SandboxEntry; snapshot: Record<string, unknown> | undefined } {
    const createdAt = formatTimestamp(time.seconds, time.nanos);
    const changeKind = spec.changeKind ?? (base === null ? 'CHANGE_KIND_CREATE' : 'CHANGE_KIND_PUT');
    const actorKind = spec.actor?.kind ?? 'ACTOR_KIND_API';
    const actor: SandboxActor = {};
    if (actorKind !== '' && actorKind !== 'ACTOR_KIND_UNSPECIFIED') actor.kind = actorKind;
    const userId =
      spec.actor?.userId ??
      (actorKind === 'ACTOR_KIND_SUPPORT'
        ? rng.pick(this.users.support)
        : ACTOR_KINDS_WITH_USER.has(actorKind)
          ? rng.pick(this.users.api)
          : undefined);
    if (userId !== undefined && userId !== '') actor.userId = userId;

    const annotations = (spec.annotations ?? [{ kind: 'ANNOTATION_KIND_TICKET' }]).map((a) =>
      completeAnnotation(a, rng, time.seconds),
    );
    const metadata: SandboxMetadata = { id, createdAt, changeKind, actor };
    if (annotations.length > 0) metadata.annotations = annotations;
    if (!ACTOR_KINDS_WITHOUT_SYSLOG.has(actorKind))
      metadata.syslogEventId = ksuidAt(time.seconds, rng.bytes(16));
    metadata.traceId = rng.hex(32);
    Object.assign(metadata, spec.extraMetadata ?? {});

    const entry: SandboxEntry = { metadata };
    let snapshot: Record<string, unknown> | undefined;
    if (spec.snapshot !== undefined) {
      if (spec.snapshot !== null) snapshot = spec.snapshot as Record<string, unknown>;
    } else if (changeKind !== 'CHANGE_KIND_HARD_DELETE') {
      const fresh = changeKind === 'CHANGE_KIND_CREATE' || base === null;
      const start = fresh
        ? modelToWire(createModel(rng), createdAt, createdAt)
        : { ...base, updatedAt: createdAt };
      snapshot = omitDefaults(mergeSettings(start, spec.set ?? {}));
    }
    if (snapshot !== undefined) entry.snapshot = snapshot;
    return { entry, snapshot };
  }
}

/** Fills in what an annotation spec leaves out, from its kind; empty strings stay out (protojson). */
function completeAnnotation(spec: AnnotationSpec, rng: Random, seconds: number): SandboxAnnotation {
  const kind = spec.kind ?? 'ANNOTATION_KIND_GENERIC';
  const generated = spec.rawValue === undefined ? annotationOfKind(kind, rng, seconds) : undefined;
  const defaults = KIND_DEFAULTS[kind];
  const key = spec.key ?? generated?.key ?? defaults?.key ?? 'note';
  const rawValue = spec.rawValue ?? generated?.rawValue ?? '';
  const displayValue = spec.displayValue ?? generated?.displayValue ?? rawValue;
  const displayLabel = spec.displayLabel ?? generated?.displayLabel ?? defaults?.label ?? '';
  let displayUrl = spec.displayUrl ?? generated?.displayUrl ?? '';
  if (spec.displayUrl === undefined && generated === undefined && kind === 'ANNOTATION_KIND_TICKET') {
    displayUrl = `https://acme.atlassian.net/browse/${encodeURIComponent(rawValue.trim())}`;
  }
  return annotation(
    key,
    kind === 'ANNOTATION_KIND_UNSPECIFIED' ? '' : kind,
    rawValue,
    displayValue,
    displayLabel,
    displayUrl,
  );
}
