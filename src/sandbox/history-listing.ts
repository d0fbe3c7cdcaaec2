/**
 * The listing order of a sandbox history: which entries are served, and in what order.
 *
 * Order is KSUID order (string order of the sort key, ties broken by insertion index), kept in an
 * ascending array of entry indexes: appends push at the end, late arrivals splice in, removals
 * and expiry splice out. An entry no longer in the order is no longer served; its index is never
 * reused.
 */

/** Position of an entry in the listing order, as a page token names it. */
export interface EntryCursor {
  readonly key: string;
  readonly index: number;
}

export function compareCursor(aKey: string, aIndex: number, bKey: string, bIndex: number): number {
  if (aKey < bKey) return -1;
  if (aKey > bKey) return 1;
  return aIndex - bIndex;
}

/** Sort keys by entry index and the served entries in listing order. */
export class HistoryListing {
  /** Sort key of every entry by index: its KSUID, or a synthetic key for raw entries. Only grows. */
  private readonly keys: string[];
  /** Entry indexes in ascending listing order (oldest first). */
  private readonly order: number[];

  /** Takes over `keys` (indexes 0…n-1) and `order` (those indexes in listing order). */
  constructor(keys: string[], order: number[]) {
    this.keys = keys;
    this.order = order;
  }

  /** Number of entries served. */
  get size(): number {
    return this.order.length;
  }

  /** Indexes handed out so far, served or not: the index the next entry gets. */
  get nextIndex(): number {
    return this.keys.length;
  }

  /** The index of the entry at a listing position (0 = oldest), undefined past the end. */
  indexAt(position: number): number | undefined {
    return this.order[position];
  }

  /** The sort key of an entry. */
  keyOf(index: number): string {
    return this.keys[index]!;
  }

  /** Sort key of the newest entry listed; '' when none is. */
  topKey(): string {
    return this.order.length > 0 ? this.keys[this.order[this.order.length - 1]!]! : '';
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

  /** Lists a new entry where its sort key sorts (after entries with the same key); returns its index. */
  add(key: string): number {
    const index = this.keys.length;
    this.keys.push(key);
    const position = this.positionOf({ key, index });
    if (position === this.order.length) this.order.push(index);
    else this.order.splice(position, 0, index);
    return index;
  }

  /** Stops listing the entry at a position; returns its index. */
  removeAt(position: number): number {
    return this.order.splice(position, 1)[0]!;
  }

  /** Stops listing the `count` oldest entries; returns their indexes. */
  removeOldest(count: number): number[] {
    return this.order.splice(0, count);
  }
}
