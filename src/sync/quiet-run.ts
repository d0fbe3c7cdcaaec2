/**
 * A sync with nothing new, in as few round trips as it can take (sync.md "A run with nothing new"):
 * the first page is fetched before the run's transaction is opened and compared with the newest
 * stored entries that opening the run read; when it holds nothing to write and ends the paging,
 * the run is closed in one statement and no transaction is opened at all. Otherwise the page is
 * handed to the transaction as the first of the listing, and the run goes on as any other.
 */
import { MAX_ENTRY_DEPTH } from '../core/normalise/depth.js';
import type { ServedEntry } from '../core/served-entry.js';
import type { HistoryPage } from '../core/wire.js';
import type { StoredVersion } from '../store/read/stored-entries.js';
import type { HistorySource } from './run-types.js';
import { sameAsStored } from './served.js';

/**
 * Whether writing the entries of a page would store, record or reject nothing: every entry on it
 * keys and is stored (among `recent`) with the same content. Only then is the page "quiet";
 * anything else (a new entry, a rewritten one, another version of an id, one too deep or without an
 * id, one older than what `recent` holds) goes through the entry writer, which knows what to do with
 * it. (An id served twice with the stored content both times is what the writer keeps once and says
 * nothing of; served with another content, that copy's hash differs from the stored one.) The same
 * content: the same served digest (the same bytes, nothing parsed), or else the same content hash.
 */
export function isQuietPage(
  served: readonly ServedEntry[],
  recent: ReadonlyMap<string, StoredVersion>,
): boolean {
  if (served.length === 0) return false;
  for (const e of served) {
    if (e.nestsDeeperThan(MAX_ENTRY_DEPTH)) return false;
    const id = e.key?.entryId;
    if (id === undefined) return false;
    const stored = recent.get(id);
    if (stored === undefined || !sameAsStored(e, stored)) return false;
  }
  return true;
}

/** The first page of a listing, fetched ahead, and the listing it came from, to be taken over. */
export interface PeekedListing {
  readonly first: HistoryPage | undefined;
  /** The source to hand the run: its listing yields `first` and then the pages after it. */
  readonly source: HistorySource;
  /** Ends the listing (cancels a prefetched request) when the run needs no more of it. */
  close(): Promise<void>;
}

/**
 * Starts `source`'s listing with `stopAfter` and fetches its first page. The source returned lists
 * that same listing once (the caller's own paging options then must be those given here).
 */
export async function peekListing(
  source: HistorySource,
  options: { pageSize: number; maxPages: number; stopAfter: (page: HistoryPage) => boolean },
): Promise<PeekedListing> {
  const pages = source.listHistory(options)[Symbol.asyncIterator]();
  const head = await pages.next();
  const first = head.done === true ? undefined : head.value;
  let taken = false;
  const close = async (): Promise<void> => {
    await pages.return?.();
  };
  async function* listing(): AsyncGenerator<HistoryPage, void, undefined> {
    try {
      if (first === undefined) return;
      yield first;
      for (;;) {
        const next = await pages.next();
        if (next.done === true) return;
        yield next.value;
      }
    } finally {
      await close();
    }
  }
  return {
    first,
    close,
    source: {
      listHistory() {
        if (taken) throw new Error('a peeked listing is listed once');
        taken = true;
        return listing();
      },
      get stats() {
        return source.stats;
      },
    },
  };
}
