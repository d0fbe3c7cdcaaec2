import { describe, expect, it } from 'vitest';
import { GovtrailError } from '../../src/core/errors.js';
import type { HistoryPage } from '../../src/core/wire.js';
import {
  type FetchHistoryPage,
  type HistoryPageQuery,
  pageHistory,
  parseHistoryPage,
} from '../../src/source/pager.js';

function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (err) {
    return err instanceof GovtrailError ? err.code : 'not-a-GovtrailError';
  }
  return undefined;
}

describe('parseHistoryPage', () => {
  it('passes entries through untouched, unknown fields and values included', () => {
    const entry = {
      metadata: { id: 'k1', changeKind: 'CHANGE_KIND_FROM_THE_FUTURE', extra: { nested: [1, null] } },
      snapshot: null,
      surprise: true,
    };
    const page = parseHistoryPage(
      JSON.stringify({ list: [entry, null, 42], nextPageToken: 't2', more: 1 }),
      3,
    );
    expect(page).toEqual({ entries: [entry, null, 42], nextPageToken: 't2', index: 3 });
  });

  it('reads list null or absent as no entries and nextPageToken null or absent as the end', () => {
    expect(parseHistoryPage('{"list":null,"nextPageToken":null}', 0)).toEqual({
      entries: [],
      nextPageToken: '',
      index: 0,
    });
    expect(parseHistoryPage('{}', 1)).toEqual({ entries: [], nextPageToken: '', index: 1 });
  });

  it('rejects a body that is not JSON, quoting at most 200 characters', () => {
    const body = `<html>${'x'.repeat(1000)}</html>`;
    let caught: unknown;
    try {
      parseHistoryPage(body, 0);
    } catch (err) {
      caught = err;
    }
    expect((caught as GovtrailError).code).toBe('BAD_RESPONSE');
    expect((caught as GovtrailError).message).toContain('<html>xxx');
    expect((caught as GovtrailError).message).not.toContain('x'.repeat(201));
  });

  it('rejects JSON that is not an object, a list that is not an array, and a token that is not a string', () => {
    expect(codeOf(() => parseHistoryPage('[]', 0))).toBe('BAD_RESPONSE');
    expect(codeOf(() => parseHistoryPage('null', 0))).toBe('BAD_RESPONSE');
    expect(codeOf(() => parseHistoryPage('"page"', 0))).toBe('BAD_RESPONSE');
    expect(codeOf(() => parseHistoryPage('{"list":{"0":{}}}', 0))).toBe('BAD_RESPONSE');
    expect(codeOf(() => parseHistoryPage('{"list":"[]"}', 0))).toBe('BAD_RESPONSE');
    expect(codeOf(() => parseHistoryPage('{"list":[],"nextPageToken":7}', 0))).toBe('BAD_RESPONSE');
  });
});

/** An in-memory feed: page i holds entry i and points at page i+1 until `pages` pages. */
function feed(pages: number, tokenFor: (next: number) => string = (n) => `t${n}`) {
  const calls: HistoryPageQuery[] = [];
  const signals: AbortSignal[] = [];
  const fetchPage: FetchHistoryPage = async (query, signal) => {
    calls.push(query);
    signals.push(signal);
    const next = query.index + 1;
    return {
      entries: [`e${query.index}`],
      nextPageToken: next < pages ? tokenFor(next) : '',
      index: query.index,
    };
  };
  return { calls, signals, fetchPage };
}

async function collect(gen: AsyncGenerator<HistoryPage, void, undefined>): Promise<HistoryPage[]> {
  const out: HistoryPage[] = [];
  for await (const page of gen) out.push(page);
  return out;
}

describe('pageHistory', () => {
  it('follows the token chain to the end, without a token on the first request', async () => {
    const f = feed(4);
    const pages = await collect(pageHistory(f.fetchPage, { pageSize: 50, maxPages: 10 }));
    expect(pages.map((p) => p.entries[0])).toEqual(['e0', 'e1', 'e2', 'e3']);
    expect(f.calls.map((c) => c.pageToken)).toEqual([undefined, 't1', 't2', 't3']);
    expect(f.calls.every((c) => c.pageSize === 50)).toBe(true);
  });

  it('prefetches the next page before yielding the current one', async () => {
    const f = feed(3);
    const gen = pageHistory(f.fetchPage, { pageSize: 10, maxPages: 10 });
    const first = await gen.next();
    expect((first.value as HistoryPage).index).toBe(0);
    expect(f.calls).toHaveLength(2);
    await gen.return(undefined);
  });

  it('asks stopAfter before prefetching, and ends the listing after the page it stops on', async () => {
    const f = feed(5);
    const seen: number[] = [];
    const pages = await collect(
      pageHistory(f.fetchPage, {
        pageSize: 10,
        maxPages: 10,
        stopAfter: (page) => {
          seen.push(page.index);
          return page.index === 1;
        },
      }),
    );
    expect(pages.map((p) => p.index)).toEqual([0, 1]);
    expect(seen).toEqual([0, 1]);
    // Page 2 was never requested: stopping is decided before the prefetch.
    expect(f.calls.map((c) => c.index)).toEqual([0, 1]);
  });

  it('does not prefetch when prefetch is false', async () => {
    const f = feed(3);
    const gen = pageHistory(f.fetchPage, { pageSize: 10, maxPages: 10, prefetch: false });
    await gen.next();
    expect(f.calls).toHaveLength(1);
    await gen.next();
    expect(f.calls).toHaveLength(2);
    await gen.return(undefined);
  });

  it('aborts the prefetched request and waits for it when the consumer stops early', async () => {
    let settle: (() => void) | undefined;
    let settled = false;
    const fetchPage: FetchHistoryPage = (query, signal) => {
      if (query.index === 0) return Promise.resolve({ entries: [], nextPageToken: 'next', index: 0 });
      return new Promise((_, reject) => {
        settle = () => {
          settled = true;
          reject(new GovtrailError('ABORTED', 'aborted'));
        };
        signal.addEventListener('abort', () => settle?.(), { once: true });
      });
    };
    for await (const page of pageHistory(fetchPage, { pageSize: 10, maxPages: 10 })) {
      expect(page.index).toBe(0);
      break;
    }
    expect(settled).toBe(true);
  });

  it('does not leave a failed prefetch as an unhandled rejection while the consumer holds a page', async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      const fetchPage: FetchHistoryPage = async (query) => {
        if (query.index === 1) throw new GovtrailError('HTTP_ERROR', 'page 2 failed');
        return { entries: [], nextPageToken: 'n', index: 0 };
      };
      const gen = pageHistory(fetchPage, { pageSize: 10, maxPages: 10 });
      await gen.next();
      // Let the prefetch reject while the consumer is "writing" page 1; a macrotask lets Node run
      // its unhandled-rejection check.
      await new Promise<void>((resolve) => setImmediate(resolve));
      await expect(gen.next()).rejects.toMatchObject({ code: 'HTTP_ERROR' });
      await new Promise<void>((resolve) => setImmediate(resolve));
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });

  it('fails with PAGING_LOOP on a token already used, after yielding the page that carried it', async () => {
    const f = feed(10, (n) => (n >= 3 ? 't1' : `t${n}`));
    const seen: number[] = [];
    await expect(
      (async () => {
        for await (const page of pageHistory(f.fetchPage, { pageSize: 10, maxPages: 100 }))
          seen.push(page.index);
      })(),
    ).rejects.toMatchObject({ code: 'PAGING_LOOP' });
    expect(seen).toEqual([0, 1, 2]);
    expect(f.calls).toHaveLength(3);
  });

  it('detects a page pointing at its own token', async () => {
    const f = feed(10, () => 'same');
    await expect(collect(pageHistory(f.fetchPage, { pageSize: 10, maxPages: 100 }))).rejects.toMatchObject({
      code: 'PAGING_LOOP',
    });
    expect(f.calls).toHaveLength(2);
  });

  it('fails with PAGE_LIMIT only when asked for a page beyond maxPages', async () => {
    const exact = feed(3);
    expect(await collect(pageHistory(exact.fetchPage, { pageSize: 10, maxPages: 3 }))).toHaveLength(3);

    const longer = feed(10);
    const seen: number[] = [];
    await expect(
      (async () => {
        for await (const page of pageHistory(longer.fetchPage, { pageSize: 10, maxPages: 3 }))
          seen.push(page.index);
      })(),
    ).rejects.toMatchObject({ code: 'PAGE_LIMIT' });
    expect(seen).toEqual([0, 1, 2]);
    expect(longer.calls).toHaveLength(3);
  });

  it('clamps the page size it asks for to 10–100', async () => {
    for (const [asked, sent] of [
      [5, 10],
      [10, 10],
      [55.7, 55],
      [100, 100],
      [500, 100],
    ] as const) {
      const f = feed(1);
      await collect(pageHistory(f.fetchPage, { pageSize: asked, maxPages: 1 }));
      expect(f.calls[0]?.pageSize, String(asked)).toBe(sent);
    }
  });

  it('rejects a page size that is not a number', async () => {
    for (const pageSize of [Number.NaN, Number.POSITIVE_INFINITY, '20' as unknown as number]) {
      await expect(collect(pageHistory(feed(1).fetchPage, { pageSize, maxPages: 1 }))).rejects.toMatchObject({
        code: 'INVALID_ARGUMENT',
      });
    }
  });

  it('rejects a maxPages that is not a positive whole number', async () => {
    for (const maxPages of [0, -1, 1.5, Number.NaN]) {
      await expect(collect(pageHistory(feed(1).fetchPage, { pageSize: 10, maxPages }))).rejects.toMatchObject(
        {
          code: 'INVALID_ARGUMENT',
        },
      );
    }
  });
});
