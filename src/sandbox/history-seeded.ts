/**
 * The seeded ("bulk") part of a sandbox history, built for a million entries. Per entry it keeps
 * only its time, change kind, a 14-byte settings model, the index of the CREATE that began the
 * current settings object and the index of its burst; the metadata (actor, annotations, trace
 * and System Log ids) is regenerated from (seed, index) each time the entry is served.
 *
 * A HARD_DELETE entry carries no snapshot: the snapshot is "the settings object as it was after
 * the change", and after a hard delete there is no object; protojson leaves an unset message out
 * (with emitUnpopulated it is `null`). The next change to the settings is then a CREATE that
 * starts a new object with a new createdAt.
 */

import { compareCursor } from './history-listing.js';
import { advance, MEAN_GAP_SECONDS, nextGap, TARGET_SPAN_SECONDS } from './history-timeline.js';
import { ksuidAt } from './ksuid.js';
import { generateMetadata, type Users } from './metadata.js';
import { mix, Random } from './random.js';
import { applyChange, chooseChange, createModel, MODEL_SIZE, modelToJson, modelToWire } from './settings.js';
import { formatTimestamp, type Instant, type SandboxMetadata } from './wire.js';

export const CHANGE_KINDS = ['CHANGE_KIND_CREATE', 'CHANGE_KIND_PUT', 'CHANGE_KIND_HARD_DELETE'] as const;
export const CREATE = 0;
export const PUT = 1;
export const HARD_DELETE = 2;

// Independent PRNG streams, so that adding draws to one part never shifts another.
const STREAM_TIMELINE = 0x7131;
const STREAM_IDS = 0x1d5;
const STREAM_GROUP = 0x6a0;
const STREAM_ENTRY = 0xe47;

/** The seeded entries of one history, indexes 0…count-1, generated chronologically. */
export class SeededEntries {
  readonly count: number;
  /** KSUID of every seeded entry by index (the listing takes this array over and appends to it). */
  readonly keys: string[] = [];
  private readonly seed: number;
  private readonly users: Users;
  private readonly seconds: Float64Array;
  private readonly nanos: Uint32Array;
  private readonly kinds: Uint8Array;
  private readonly models: Uint8Array;
  private readonly createRef: Int32Array;
  private readonly group: Int32Array;
  private lastCreateIndex = -1;
  private lastCreateText = '';

  constructor(count: number, seed: number, start: Instant, users: Users) {
    this.count = count;
    this.seed = seed;
    this.users = users;
    this.seconds = new Float64Array(count);
    this.nanos = new Uint32Array(count);
    this.kinds = new Uint8Array(count);
    this.models = new Uint8Array(count * MODEL_SIZE);
    this.createRef = new Int32Array(count);
    this.group = new Int32Array(count);
    this.generate(start);
  }

  private generate(start: Instant): void {
    const n = this.count;
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
    }
  }

  /**
   * The seeded indexes in listing (KSUID) order. Generation is chronological; KSUID order differs
   * only inside one second, where it is random.
   */
  listingOrder(): number[] {
    const n = this.count;
    const order = new Array<number>(n);
    for (let i = 0; i < n; i++) order[i] = i;
    let runStart = 0;
    for (let i = 1; i <= n; i++) {
      if (i === n || this.seconds[i] !== this.seconds[runStart]) {
        if (i - runStart > 1) {
          const run = order
            .slice(runStart, i)
            .sort((a, b) => compareCursor(this.keys[a]!, a, this.keys[b]!, b));
          for (let k = 0; k < run.length; k++) order[runStart + k] = run[k]!;
        }
        runStart = i;
      }
    }
    return order;
  }

  /** createdAt of the chronologically newest seeded entry; undefined when there is none. */
  newest(): Instant | undefined {
    if (this.count === 0) return undefined;
    const last = this.count - 1;
    return { seconds: this.seconds[last]!, nanos: this.nanos[last]! };
  }

  /** The settings after the newest seeded change; null when it deleted them or there is none. */
  finalSettings(): Record<string, unknown> | null {
    if (this.count === 0) return null;
    const last = this.count - 1;
    return this.kinds[last] === HARD_DELETE ? null : this.snapshot(last);
  }

  /** createdAt of a seeded entry, in protojson form. */
  timestamp(i: number): string {
    return formatTimestamp(this.seconds[i]!, this.nanos[i]!);
  }

  private snapshot(i: number): Record<string, unknown> {
    const model = this.models.subarray(i * MODEL_SIZE, (i + 1) * MODEL_SIZE);
    return modelToWire(model, this.timestamp(this.createRef[i]!), this.timestamp(i));
  }

  /** The served JSON text of a seeded entry, its metadata regenerated from (seed, index). */
  json(i: number): string {
    const g = this.group[i]!;
    const inBurst = g !== i || (i + 1 < this.count && this.group[i + 1] === i);
    const generated = generateMetadata({
      group: new Random(mix(this.seed, g), STREAM_GROUP),
      entry: new Random(mix(this.seed, i), STREAM_ENTRY),
      seconds: this.seconds[i]!,
      inBurst,
      users: this.users,
    });
    const metadata: SandboxMetadata = {
      id: this.keys[i]!,
      createdAt: this.timestamp(i),
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
      this.lastCreateText = this.timestamp(createIndex);
    }
    return this.lastCreateText;
  }
}
