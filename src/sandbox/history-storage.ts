/**
 * What a sandbox history serves, entry by entry: the seeded entries (regenerated on demand), the
 * JSON text of entries added or rewritten at run time, and the listing order over both.
 *
 * A rewritten entry keeps its index and sort key and is served from the JSON text its rewrite
 * stored, whether it began as a seeded entry or not. Entries inserted raw are served exactly as
 * given, whatever the encoding.
 */
import { HistoryListing } from './history-listing.js';
import type { SeededEntries } from './history-seeded.js';
import { populateEntry } from './populate.js';

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Served entries by index and listing position. */
export class HistoryStorage {
  readonly listing: HistoryListing;
  private readonly seeded: SeededEntries;
  /** Served JSON of entries added at run time (and of rewritten ones), by index. */
  private readonly custom = new Map<number, string>();
  /** Indexes of entries inserted raw: served exactly as given, whatever the encoding. */
  private readonly raw = new Set<number>();
  /** Write every field, defaults included (grpc-gateway v2's default marshaler); see populate.ts. */
  private readonly emitUnpopulated: boolean;
  /** Changes to the served history other than additions (rewrites, removals, expiry). */
  private mutations = 0;

  constructor(seeded: SeededEntries, emitUnpopulated: boolean) {
    this.seeded = seeded;
    this.emitUnpopulated = emitUnpopulated;
    this.listing = new HistoryListing(seeded.keys, seeded.listingOrder());
  }

  /** Changes whenever the served history changes (additions, rewrites, removals, expiry). */
  get version(): number {
    return this.listing.nextIndex + this.mutations;
  }

  /** Counts a change to the served history other than an addition. */
  changed(): void {
    this.mutations++;
  }

  /** Lists a new entry served as `json` where `key` sorts; returns its index. */
  add(key: string, json: string, raw = false): number {
    if (raw) this.raw.add(this.listing.nextIndex);
    const index = this.listing.add(key);
    this.custom.set(index, json);
    return index;
  }

  /** Serves an entry as `json` from now on (a rewrite). */
  replace(index: number, json: string): void {
    this.custom.set(index, json);
  }

  /** Drops what is kept for an entry that is no longer served. */
  forget(index: number): void {
    this.custom.delete(index);
    this.raw.delete(index);
  }

  isRaw(index: number): boolean {
    return this.raw.has(index);
  }

  /** The JSON text kept for an entry, before any encoding option is applied. */
  storedJson(index: number): string {
    return this.custom.get(index) ?? this.seeded.json(index);
  }

  /** The served JSON text of the entry at a listing position (0 = oldest). */
  jsonAt(position: number): string {
    const index = this.listing.indexAt(position);
    if (index === undefined) throw new RangeError(`no entry at position ${position}`);
    const json = this.storedJson(index);
    if (!this.emitUnpopulated || this.raw.has(index)) return json;
    return JSON.stringify(populateEntry(JSON.parse(json) as Record<string, unknown>));
  }

  /**
   * The JSON text of every entry, newest first, produced lazily (1 M entries never form one
   * string). A change to the history while the lines are read is seen as a keyset page would see
   * it: the lines go on with the entry that now sorts right below the last one produced.
   */
  *jsonLines(): Generator<string> {
    const { listing } = this;
    let version = this.version;
    let p = listing.size - 1;
    while (p >= 0) {
      const index = listing.indexAt(p)!;
      yield this.jsonAt(p);
      if (this.version !== version) {
        version = this.version;
        p = listing.positionOf({ key: listing.keyOf(index), index });
      }
      p--;
    }
  }

  /** createdAt of the entry at a listing position, or null when it has none (a raw value). */
  createdAtAt(position: number): string | null {
    const index = this.listing.indexAt(position);
    if (index === undefined) throw new RangeError(`no entry at position ${position}`);
    const json = this.custom.get(index);
    if (json === undefined) return this.seeded.timestamp(index);
    const value: unknown = JSON.parse(json);
    const createdAt =
      isRecord(value) && isRecord(value['metadata']) ? value['metadata']['createdAt'] : undefined;
    return typeof createdAt === 'string' ? createdAt : null;
  }

  /** metadata.id as served; for a seeded entry, without generating its metadata. */
  servedId(index: number): unknown {
    const json = this.custom.get(index);
    if (json === undefined) return this.listing.keyOf(index);
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
    const { listing } = this;
    for (let p = listing.positionOf({ key: id, index: -1 }); p < listing.size; p++) {
      const index = listing.indexAt(p)!;
      if (listing.keyOf(index) !== id) break;
      if (this.servedId(index) === id) return p;
    }
    let best = -1;
    for (const index of this.custom.keys()) {
      if (listing.keyOf(index) === id || this.servedId(index) !== id) continue;
      const p = listing.positionOf({ key: listing.keyOf(index), index });
      if (listing.indexAt(p) === index && p > best) best = p;
    }
    return best;
  }

  /** The position of the entry served with `id`; a RangeError naming `what` when there is none. */
  requirePosition(id: unknown, what: string): number {
    if (typeof id !== 'string' || id === '') throw new RangeError(`${what}: id must be a non-empty string`);
    const position = this.positionOfId(id);
    if (position < 0) throw new RangeError(`${what}: no entry with id ${JSON.stringify(id)} is served`);
    return position;
  }
}
