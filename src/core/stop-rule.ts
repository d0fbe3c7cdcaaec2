/**
 * Where a run stops paging and what it checkpoints (docs/design/sync.md steps 3 and 6). Pure: no I/O, no
 * clock.
 */
import { parseTimestamp, subtractMs } from './normalise/time.js';

/** A place in a tenant's history: created_at as a nine-digit UTC key, and the entry id. */
export interface KeyedPosition {
  /** UTC, nine fractional digits (`2025-01-02T03:04:05.123456789Z`): text order is time order. */
  readonly createdAtKey: string;
  readonly entryId: string;
}

/**
 * The stop rule of docs/design/sync.md step 3: after a page, stop when it holds an entry older than
 * `checkpoint − lookback`; with a zero lookback, at the first entry at or before the checkpoint.
 * Entries without a readable createdAt never stop the run (they are kept or rejected elsewhere).
 * Each entry is read for its `metadata` only: a parsed entry, or a ServedEntry (served-entry.ts),
 * whose `metadata` is the same without parsing the rest.
 */
export function pageReachesCheckpoint(
  entries: readonly unknown[],
  checkpoint: KeyedPosition,
  lookbackMs: number,
): boolean {
  const threshold = lookbackBound(checkpoint, lookbackMs);
  for (const raw of entries) {
    const meta = (raw as { metadata?: { createdAt?: unknown; id?: unknown } } | null)?.metadata;
    const t = parseTimestamp(meta?.createdAt);
    if (t === undefined) continue;
    if (lookbackMs > 0) {
      if (t.key < threshold) return true;
    } else {
      const id = typeof meta?.id === 'string' ? meta.id : '';
      if (t.key < threshold || (t.key === threshold && id <= checkpoint.entryId)) return true;
    }
  }
  return false;
}

/**
 * The oldest createdAt key a run must look at: entries older than this are ones an incremental
 * run never fetches, so a served-not-stored entry older than it is `backdated` (docs/design/integrity.md).
 */
export function lookbackBound(checkpoint: KeyedPosition, lookbackMs: number): string {
  return lookbackMs > 0 ? subtractMs(checkpoint.createdAtKey, lookbackMs) : checkpoint.createdAtKey;
}

/** Order of positions by (created_at, entry_id), byte-wise as PostgreSQL's `COLLATE "C"`. */
export function comparePositions(a: KeyedPosition, b: KeyedPosition): number {
  if (a.createdAtKey !== b.createdAtKey) return a.createdAtKey < b.createdAtKey ? -1 : 1;
  return a.entryId === b.entryId ? 0 : a.entryId < b.entryId ? -1 : 1;
}

/**
 * The key of a stored entry: from its verbatim createdAt text when it has one (nanoseconds), else
 * from the timestamptz PostgreSQL kept (milliseconds through a JS Date, padded).
 */
export function storedKey(e: { createdAt: Date; createdAtText: string | null }): string {
  return parseTimestamp(e.createdAtText)?.key ?? `${e.createdAt.toISOString().slice(0, 23)}000000Z`;
}
