import { afterEach, describe, expect, it } from 'vitest';
import { type Sandbox, type SandboxOptions, startSandbox } from '../../src/sandbox/index.js';

interface Page {
  list: unknown[];
  nextPageToken: string;
}

let sb: Sandbox | undefined;
afterEach(async () => {
  await sb?.close();
  sb = undefined;
});

async function start(options: SandboxOptions = {}): Promise<{ sandbox: Sandbox; token: string }> {
  sb = await startSandbox(options);
  const res = await fetch(`${sb.baseUrl}/auth/v1/token`, {
    method: 'POST',
    body: new URLSearchParams({
      grant_type: 'client_credentials',
      client_id: sb.credentials.secret.clientId,
      client_secret: sb.credentials.secret.clientSecret,
    }),
  });
  return { sandbox: sb, token: ((await res.json()) as { access_token: string }).access_token };
}

async function get(sandbox: Sandbox, token: string, query = ''): Promise<Response> {
  return fetch(`${sandbox.baseUrl}/api/v1/settings/ai-governance/history${query}`, {
    headers: { authorization: `Bearer ${token}` },
  });
}

async function page(sandbox: Sandbox, token: string, query = ''): Promise<Page> {
  const res = await get(sandbox, token, query);
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toBe('application/json');
  return (await res.json()) as Page;
}

/** Pages to the end; `between` runs after each page. */
async function listAll(
  sandbox: Sandbox,
  token: string,
  pageSize?: number,
  between: (pageIndex: number) => void = () => {},
): Promise<{ entries: unknown[]; pages: Page[] }> {
  const pages: Page[] = [];
  let next = '';
  do {
    const params = new URLSearchParams();
    if (pageSize !== undefined) params.set('page_size', String(pageSize));
    if (next !== '') params.set('page_token', next);
    const p = await page(sandbox, token, `?${params}`);
    pages.push(p);
    between(pages.length);
    next = p.nextPageToken;
  } while (next !== '');
  return { entries: pages.flatMap((p) => p.list), pages };
}

const idOf = (e: unknown): string | undefined => (e as { metadata?: { id?: string } }).metadata?.id;

describe('sandbox history listing', () => {
  it('pages newest first and the pages concatenate to the truth', async () => {
    const { sandbox, token } = await start({ entries: 2000, seed: 3 });
    const { entries, pages } = await listAll(sandbox, token, 100);
    expect(pages).toHaveLength(20);
    expect(entries).toEqual(sandbox.history.entries());
    expect(pages.at(-1)!.nextPageToken).toBe('');
    expect(pages.slice(0, -1).every((p) => p.list.length === 100 && p.nextPageToken !== '')).toBe(true);
    const ids = entries.map(idOf) as string[];
    expect(ids.every((id, i) => i === 0 || ids[i - 1]! > id)).toBe(true);
    expect(sandbox.stats.entriesServed).toBe(2000);
    expect(sandbox.stats.lastHistoryQuery).toEqual({
      page_size: '100',
      page_token: pages.at(-2)!.nextPageToken,
    });
  });

  it('serves the exact bytes it claims as truth, with the default page size of 25', async () => {
    const { sandbox, token } = await start({ entries: 60, seed: 9 });
    const res = await get(sandbox, token);
    const text = await res.text();
    const truth = [...sandbox.history.jsonLines()];
    expect(text.startsWith(`{"list":[${truth.slice(0, 25).join(',')}],"nextPageToken":"`)).toBe(true);
    const { pages } = await listAll(sandbox, token);
    expect(pages.map((p) => p.list.length)).toEqual([25, 25, 10]);
  });

  it('clamps page_size to 10–100 and refuses one that is not a number', async () => {
    const { sandbox, token } = await start({ entries: 300 });
    expect((await page(sandbox, token, '?page_size=5')).list).toHaveLength(10);
    expect((await page(sandbox, token, '?page_size=500')).list).toHaveLength(100);
    expect((await page(sandbox, token, '?page_size=0')).list).toHaveLength(25);
    expect((await page(sandbox, token, '?page_size=42')).list).toHaveLength(42);
    const bad = await get(sandbox, token, '?page_size=ten');
    expect(bad.status).toBe(400);
    expect(await bad.json()).toEqual({ code: 3, message: expect.stringContaining('page_size'), details: [] });
  });

  it('ends with an empty token, and serves an empty history as an empty list', async () => {
    const { sandbox, token } = await start({ entries: 0 });
    expect(await (await get(sandbox, token)).text()).toBe('{"list":[],"nextPageToken":""}');
    sandbox.history.append(3);
    expect(await page(sandbox, token, '?page_size=10')).toEqual({
      list: sandbox.history.entries(),
      nextPageToken: '',
    });
  });

  it('refuses a page token it did not mint', async () => {
    const { sandbox, token } = await start({ entries: 50 });
    const first = await page(sandbox, token, '?page_size=10');
    const forged = `${first.nextPageToken.slice(0, -2)}AA`;
    for (const t of [forged, 'abc', '!!!', first.nextPageToken.slice(1)]) {
      const res = await get(sandbox, token, `?page_token=${encodeURIComponent(t)}`);
      expect(res.status).toBe(400);
      expect(await res.json()).toMatchObject({ code: 3 });
    }
    // The real one still works, even much later: keyset tokens name an entry, not a moment.
    expect((await page(sandbox, token, `?page_size=10&page_token=${first.nextPageToken}`)).list).toHaveLength(
      10,
    );
  });

  it('does not shift keyset pages when entries are appended during a listing', async () => {
    const { sandbox, token } = await start({ entries: 250, seed: 4 });
    const truth = sandbox.history.entries();
    const { entries } = await listAll(sandbox, token, 50, (n) => {
      if (n === 2) sandbox.history.append(7);
    });
    expect(entries).toEqual(truth);
    expect(sandbox.history.size).toBe(257);
    // The seven new entries sit above the first page: the next listing starts with them.
    const top = await page(sandbox, token, '?page_size=10');
    expect(top.list.slice(0, 7)).toEqual(sandbox.history.entries().slice(0, 7));
  });

  it('re-serves entries across page boundaries with offset paging when entries are appended', async () => {
    const { sandbox, token } = await start({ entries: 250, seed: 4, paging: 'offset' });
    const truth = sandbox.history.entries();
    const { entries } = await listAll(sandbox, token, 50, (n) => {
      if (n === 2) sandbox.history.append(7);
    });
    const ids = entries.map(idOf);
    expect(entries).toHaveLength(257);
    expect(new Set(ids).size).toBe(250);
    expect(ids.slice(100, 107)).toEqual(ids.slice(93, 100));
    expect([...new Set(ids)]).toEqual(truth.map(idOf));
  });

  it('serves a late arrival behind the newest entry, in the pages not read yet', async () => {
    const { sandbox, token } = await start({ entries: 200, seed: 12 });
    const first = await page(sandbox, token, '?page_size=20');
    const twentieth = (first.list.at(-1) as { metadata: { createdAt: string } }).metadata.createdAt;
    const at = new Date(Date.parse(twentieth) - 60_000).toISOString();
    const late = sandbox.history.insertLate({ at, set: { requireToolApproval: false } });
    let next = first.nextPageToken;
    const rest: unknown[] = [];
    while (next !== '') {
      const p = await page(sandbox, token, `?page_size=20&page_token=${next}`);
      rest.push(...p.list);
      next = p.nextPageToken;
    }
    expect(rest.map(idOf)).toContain(late.metadata!.id);
    expect([...first.list, ...rest]).toEqual(sandbox.history.entries());
    expect(sandbox.history.entries()[0]).toEqual(first.list[0]);
  });

  it('serves raw values as entries, exactly as given', async () => {
    const { sandbox, token } = await start({ entries: 5 });
    sandbox.history.insertRaw({ metadata: { createdAt: '2030-01-01T00:00:00Z' }, snapshot: {} });
    sandbox.history.insertRaw(null, { at: '2025-01-01T00:00:00Z' });
    const { entries } = await listAll(sandbox, token, 10);
    expect(entries[0]).toEqual({ metadata: { createdAt: '2030-01-01T00:00:00Z' }, snapshot: {} });
    expect(entries.at(-1)).toBeNull();
    expect(entries).toHaveLength(7);
  });

  it('routes like grpc-gateway: 405 for another method, 404 elsewhere, and counts requests', async () => {
    const { sandbox, token } = await start({ entries: 5 });
    const post = await fetch(`${sandbox.baseUrl}/api/v1/settings/ai-governance/history`, { method: 'POST' });
    expect(post.status).toBe(405);
    expect(await post.json()).toMatchObject({ code: 12 });
    for (const path of ['/api/v1/settings/ai-governance/history/', '/api/v1/settings/ai-governance', '/']) {
      const res = await fetch(`${sandbox.baseUrl}${path}`, { headers: { authorization: `Bearer ${token}` } });
      expect(res.status).toBe(404);
      expect(await res.json()).toEqual({ code: 5, message: 'Not Found', details: [] });
    }
    await get(sandbox, token);
    // The POST counts as a request but not as a listing.
    expect(sandbox.stats).toMatchObject({
      requests: 6,
      tokenRequests: 1,
      historyRequests: 1,
      deleteRequests: 0,
    });
  });
});
