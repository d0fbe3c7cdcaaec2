/**
 * The history pager: validates each page of `GET /api/v1/settings/ai-governance/history` and walks
 * the `nextPageToken` chain as an async generator, newest first, with a one-page prefetch so the
 * next request overlaps the consumer's database writes. Termination is guaranteed (docs/design/sync.md S7): a
 * repeated token or too many pages fails instead of looping.
 */

import { GovtrailError } from '../core/errors.js';
import { parseJsonText } from '../core/json-text.js';
import { scannedHistoryPage } from '../core/served-entry.js';
import type { HistoryPage } from '../core/wire.js';
import { clampPageSize } from './client-config.js';
import { quote } from './http-errors.js';

/** Options of one history listing. */
export interface ListHistoryOptions {
  /** Requested page size; clamped to 10–100 before it is sent. */
  pageSize: number;
  /** Safety limit: asking for a page beyond this many fails with PAGE_LIMIT. */
  maxPages: number;
  /** Start the request for page k+1 before yielding page k. Default true. */
  prefetch?: boolean;
  /**
   * Asked of each page before the next one is requested (so before a prefetch): true ends the
   * listing after this page. The sync's stop rule lives here, so that a run with nothing new makes
   * exactly one request instead of one plus an abandoned prefetch.
   */
  stopAfter?: (page: HistoryPage) => boolean;
}

/** What the pager asks of the client for one page. */
export interface HistoryPageQuery {
  pageSize: number;
  /** Absent on the first request of a listing. */
  pageToken: string | undefined;
  /** 0-based index of the page within the listing. */
  index: number;
}

/** Fetches and validates one page; `signal` fires when the pager discards the request. */
export type FetchHistoryPage = (query: HistoryPageQuery, signal: AbortSignal) => Promise<HistoryPage>;

function badPage(what: string, details: Record<string, unknown>): GovtrailError {
  return new GovtrailError('BAD_RESPONSE', `the history listing answered with ${what}`, {
    details: { route: 'history', ...details },
  });
}

/**
 * Validates the body of one history page (docs/design/tenant-api.md, "Response"). The body must be a JSON
 * object; `list` an array, null or absent (null and absent become []); `nextPageToken` a string, null or
 * absent (null and absent become "", the end). Entries are passed through untouched: unknown fields, unknown
 * enum values and nulls are the normaliser's business, not the pager's.
 */
export function parseHistoryPage(text: string, index: number): HistoryPage {
  let body: unknown;
  try {
    body = parseJsonText(text);
  } catch {
    throw badPage(`a body that is not JSON: ${quote(text)}`, { index });
  }
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw badPage(`JSON that is not an object: ${quote(text)}`, { index });
  }
  const o = body as Record<string, unknown>;
  const list = o['list'];
  if (list !== undefined && list !== null && !Array.isArray(list)) {
    throw badPage(
      `a "list" that is neither an array nor null: ${quote(JSON.stringify(list) ?? String(list))}`,
      {
        index,
        listType: typeof list,
      },
    );
  }
  const token = o['nextPageToken'];
  if (token !== undefined && token !== null && typeof token !== 'string') {
    throw badPage(
      `a "nextPageToken" that is not a string: ${quote(JSON.stringify(token) ?? String(token))}`,
      {
        index,
      },
    );
  }
  return { entries: Array.isArray(list) ? list : [], nextPageToken: token ?? '', index };
}

/**
 * A history page's body as the client received it: scanned into served entries (their bytes and
 * served digests, parsed only when read) when the scan vouches for it, else parsed and validated
 * by {@link parseHistoryPage}, which reports what is wrong.
 */
export function parseHistoryBody(body: Buffer, index: number): HistoryPage {
  return scannedHistoryPage(body, index) ?? parseHistoryPage(body.toString('utf8'), index);
}

interface PendingPage {
  promise: Promise<HistoryPage>;
  controller: AbortController;
}

function invalid(message: string): GovtrailError {
  return new GovtrailError('INVALID_ARGUMENT', message);
}

/**
 * Walks the history newest first, yielding validated pages (page size clamped to 10–100). A repeated `nextPageToken` fails with
 * PAGING_LOOP and a page beyond `maxPages` with PAGE_LIMIT, each raised only when the consumer asks
 * for the page that would need it: a consumer that stops at its checkpoint first never sees them.
 * Stopping early (`break`, `return()`, a throw in the loop body) aborts a prefetched request and
 * waits for it to settle, so no request outlives the listing.
 */
export async function* pageHistory(
  fetchPage: FetchHistoryPage,
  options: ListHistoryOptions,
): AsyncGenerator<HistoryPage, void, undefined> {
  const { maxPages } = options;
  const prefetch = options.prefetch ?? true;
  if (typeof options.pageSize !== 'number' || !Number.isFinite(options.pageSize)) {
    throw invalid(`pageSize must be a number, got ${String(options.pageSize)}`);
  }
  // The API treats sizes outside 10–100 as the nearest bound (docs/design/tenant-api.md, "Paging"); sending
  // the clamped value keeps the request honest about the page size it will get.
  const pageSize = clampPageSize(options.pageSize);
  if (!Number.isInteger(maxPages) || maxPages < 1) {
    throw invalid(`maxPages must be a whole number of at least 1, got ${String(maxPages)}`);
  }
  const used = new Set<string>();
  const start = (pageToken: string | undefined, index: number): PendingPage => {
    if (pageToken !== undefined) used.add(pageToken);
    const controller = new AbortController();
    const promise = fetchPage({ pageSize, pageToken, index }, controller.signal);
    // The rejection is observed by the `await` below when the page is consumed; until then (while
    // the consumer holds the previous page) this keeps Node from reporting it as unhandled.
    promise.catch(() => undefined);
    return { promise, controller };
  };

  let pending: PendingPage | undefined = start(undefined, 0);
  try {
    for (let index = 0; pending !== undefined; index += 1) {
      const page: HistoryPage = await pending.promise;
      pending = undefined;
      const next = page.nextPageToken;
      let stop: GovtrailError | undefined;
      if (next !== '' && used.has(next)) {
        stop = new GovtrailError(
          'PAGING_LOOP',
          `the history listing returned a page token already used in this listing (after page ${index + 1}); ` +
            'paging stopped instead of looping',
          { details: { route: 'history', page: index + 1 } },
        );
      } else if (next !== '' && index + 1 >= maxPages) {
        stop = new GovtrailError(
          'PAGE_LIMIT',
          `the history listing has more than ${maxPages} pages, the safety limit; paging stopped ` +
            '(raise GOVTRAIL_MAX_PAGES if the history really is that long)',
          { details: { route: 'history', maxPages } },
        );
      }
      const stopHere = options.stopAfter?.(page) === true;
      const hasNext = next !== '' && stop === undefined && !stopHere;
      if (prefetch && hasNext) pending = start(next, index + 1);
      yield page;
      if (stop !== undefined && !stopHere) throw stop;
      if (!hasNext) return;
      if (!prefetch) pending = start(next, index + 1);
    }
  } finally {
    if (pending !== undefined) {
      pending.controller.abort();
      // Wait for the discarded request to settle so its socket is released before return() resolves.
      await pending.promise.then(
        () => undefined,
        () => undefined,
      );
    }
  }
}
