/**
 * The control endpoints that make the source disagree with a stored copy (rewrite, remove,
 * backdate, expire, duplicate), checked over real sockets: the paged listing, in both paging modes, and the
 * truth stream must serve exactly the changed history.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ksuidSeconds, type Sandbox, type SandboxEntry, startSandbox } from '../../src/sandbox/index.js';

interface Page {
  list: SandboxEntry[];
  nextPageToken: string;
}

let sb: Sandbox | undefined;
afterEach(async () => {
  await sb?.close();
  sb = undefined;
});

interface Harness {
  sandbox: Sandbox;
  token: string;
}

async function start(paging: 'keyset' | 'offset', entries = 60): Promise<Harness> {
  sb = await startSandbox({ entries, seed: 11, paging });
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

function control(h: Harness, path: string, body?: unknown): Promise<Response> {
  return fetch(`${h.sandbox.baseUrl}/_sandbox/${path}`, {
    method: 'POST',
    ...(body === undefined
      ? {}
      : {
          body: typeof body === 'string' ? body : JSON.stringify(body),
          headers: { 'content-type': 'application/json' },
        }),
  });
}

async function ok<T>(res: Response | Promise<Response>): Promise<T> {
  const r = await res;
  const text = await r.text();
  expect(r.status, text).toBe(200);
  return JSON.parse(text) as T;
}

async function page(h: Harness, pageToken = ''): Promise<Page> {
  const params = new URLSearchParams({ page_size: '10' });
  if (pageToken !== '') params.set('page_token', pageToken);
  const res = await fetch(`${h.sandbox.baseUrl}/api/v1/settings/ai-governance/history?${params}`, {
    headers: { authorization: `Bearer ${h.token}` },
  });
  expect(res.status).toBe(200);
  return (await res.json()) as Page;
}

/** Every entry of the listing, pages of 10; `between` runs after each page. */
async function listAll(
  h: Harness,
  between: (pages: number) => Promise<void> = async () => {},
): Promise<{ entries: SandboxEntry[]; pages: number }> {
  const entries: SandboxEntry[] = [];
  let next = '';
  let pages = 0;
  do {
    const p = await page(h, next);
    entries.push(...p.list);
    pages++;
    await between(pages);
    next = p.nextPageToken;
  } while (next !== '');
  return { entries, pages };
}

async function truth(h: Harness): Promise<SandboxEntry[]> {
  const res = await fetch(`${h.sandbox.baseUrl}/_sandbox/entries`);
  const text = (await res.text()).trimEnd();
  return text === '' ? [] : text.split('\n').map((l) => JSON.parse(l) as SandboxEntry);
}

const idOf = (e: SandboxEntry): string => e.metadata!.id!;

/** The listing, which must be the truth and must serve every id exactly once. */
async function served(h: Harness): Promise<SandboxEntry[]> {
  const { entries, pages } = await listAll(h);
  expect(pages).toBeGreaterThan(2);
  expect(entries).toEqual(await truth(h));
  expect(new Set(entries.map(idOf)).size).toBe(entries.length);
  return entries;
}

async function expectRefused(res: Promise<Response>, message: RegExp): Promise<void> {
  const r = await res;
  expect(r.status).toBe(400);
  const body = (await r.json()) as { error: string };
  expect(body.error).toMatch(message);
}

/** Seconds of an RFC 3339 instant, fraction dropped. */
const secondOf = (at: string): number => Date.parse(`${at.slice(0, 19)}Z`) / 1000;

describe.each(['keyset', 'offset'] as const)('sandbox reconcile controls, %s paging', (paging) => {
  it('rewrites an entry in place: same id, createdAt and position, other content', async () => {
    const h = await start(paging);
    const before = await served(h);
    const target = before[23]!;
    const answer = await ok<SandboxEntry>(
      control(h, 'rewrite', {
        id: idOf(target),
        set: { auditVerbosity: 'AUDIT_VERBOSITY_DEBUG', discoveryInterval: '5s' },
        metadata: { traceId: 'f'.repeat(32) },
      }),
    );
    const after = await served(h);
    expect(after.map(idOf)).toEqual(before.map(idOf));
    expect(after[23]).toEqual(answer);
    expect(after[23]).not.toEqual(target);
    expect(answer.metadata).toEqual({ ...target.metadata, traceId: 'f'.repeat(32) });
    expect(answer.snapshot).toMatchObject({
      auditVerbosity: 'AUDIT_VERBOSITY_DEBUG',
      discoveryInterval: '5s',
    });
    expect(answer.metadata?.createdAt).toBe(target.metadata?.createdAt);
    for (let i = 0; i < before.length; i++) if (i !== 23) expect(after[i]).toEqual(before[i]);
  });

  it('rewrites an entry without instructions visibly, and every rewrite again into a new version', async () => {
    const h = await start(paging);
    const before = await served(h);
    const v1 = before[41]!;
    const v2 = await ok<SandboxEntry>(control(h, 'rewrite', { id: idOf(v1) }));
    const v3 = await ok<SandboxEntry>(control(h, 'rewrite', { id: idOf(v1) }));
    const v4 = await ok<SandboxEntry>(control(h, 'rewrite', { id: idOf(v1) }));
    const versions = [v1, v2, v3, v4].map((v) => JSON.stringify(v));
    expect(new Set(versions).size).toBe(4);
    for (const v of [v2, v3, v4]) {
      expect(idOf(v)).toBe(idOf(v1));
      expect(v.metadata?.createdAt).toBe(v1.metadata?.createdAt);
    }
    // The settings change too, not only the annotations.
    expect(v2.snapshot?.['requireToolApproval'] === true).toBe(v1.snapshot?.['requireToolApproval'] !== true);
    const after = await served(h);
    expect(after[41]).toEqual(v4);
    expect(after.map(idOf)).toEqual(before.map(idOf));
  });

  it('serves an id twice: the added version beside the unchanged original, in every listing', async () => {
    const h = await start(paging);
    const before = await served(h);
    const original = before[33]!;
    const other = await ok<SandboxEntry>(
      control(h, 'duplicate', { id: idOf(original), set: { discoveryInterval: '9s' } }),
    );
    const same = await ok<SandboxEntry>(control(h, 'duplicate', { id: idOf(original), metadata: {} }));
    expect(idOf(other)).toBe(idOf(original));
    expect(other.metadata?.createdAt).toBe(original.metadata?.createdAt);
    expect(other.snapshot?.['discoveryInterval']).toBe('9s');
    expect(same).toEqual(original);
    // The listing is the truth, with the id three times, next to each other, and nothing else moved.
    const { entries } = await listAll(h);
    expect(entries).toEqual(await truth(h));
    expect(entries).toHaveLength(before.length + 2);
    const at = entries.flatMap((e, i) => (idOf(e) === idOf(original) ? [i] : []));
    expect(at).toEqual([33, 34, 35]);
    expect(entries.slice(33, 36)).toContainEqual(original);
    expect(entries.slice(33, 36)).toContainEqual(other);
    expect([...entries.slice(0, 33), ...entries.slice(36)]).toEqual([
      ...before.slice(0, 33),
      ...before.slice(34),
    ]);
    // A default duplicate is a version of its own; a rewrite still changes the original.
    const third = await ok<SandboxEntry>(control(h, 'duplicate', { id: idOf(original) }));
    expect([original, other].map((v) => JSON.stringify(v))).not.toContain(JSON.stringify(third));
    const rewritten = await ok<SandboxEntry>(control(h, 'rewrite', { id: idOf(original) }));
    expect((await truth(h)).filter((e) => idOf(e) === idOf(original))).toContainEqual(rewritten);
  });

  it('serves a rewrite in a page rendered ahead before it', async () => {
    const h = await start(paging);
    const first = await page(h);
    // Let the server render the next page ahead, then change an entry on it.
    await new Promise((resolve) => setTimeout(resolve, 30));
    const target = h.sandbox.history.entries()[14]!;
    const answer = await ok<SandboxEntry>(control(h, 'rewrite', { id: idOf(target) }));
    const second = await page(h, first.nextPageToken);
    expect(second.list[4]).toEqual(answer);
    expect(second.list[4]).not.toEqual(target);
  });

  it('removes an entry from the middle: every other entry is still served exactly once', async () => {
    const h = await start(paging);
    const before = await served(h);
    const gone = idOf(before[17]!);
    expect(await ok(control(h, 'remove', { id: gone }))).toEqual({ removed: gone, size: before.length - 1 });
    const after = await served(h);
    expect(after).toEqual(before.filter((e) => idOf(e) !== gone));
    // By query parameter too.
    const alsoGone = idOf(before[44]!);
    expect(await ok(control(h, `remove?id=${alsoGone}`))).toEqual({
      removed: alsoGone,
      size: before.length - 2,
    });
    expect(await served(h)).toEqual(before.filter((e) => idOf(e) !== gone && idOf(e) !== alsoGone));
    expect(h.sandbox.history.size).toBe(before.length - 2);
  });

  it('keeps page tokens working when entries not yet served are removed during a listing', async () => {
    const h = await start(paging);
    const before = await served(h);
    const doomed = [idOf(before[10]!), idOf(before[25]!), idOf(before[47]!)];
    const { entries } = await listAll(h, async (pages) => {
      // After page 1: the first entry of page 2, one in page 3, one in page 5.
      if (pages === 1) for (const id of doomed) await ok(control(h, 'remove', { id }));
    });
    expect(entries).toEqual(before.filter((e) => !doomed.includes(idOf(e))));
  });

  it('serves a backdated entry once, at its time position, far behind the newest', async () => {
    const h = await start(paging);
    const before = await served(h);
    const oldest = before.at(-1)!.metadata!.createdAt!;
    const at = new Date(Date.parse(oldest) + 3 * 86_400_000 + 123).toISOString();
    const entry = await ok<SandboxEntry>(
      control(h, 'backdate', { at, set: { requireToolApproval: true }, annotations: [] }),
    );
    expect(entry.metadata?.createdAt).toBe(at);
    expect(ksuidSeconds(idOf(entry))).toBe(secondOf(at));
    const after = await served(h);
    expect(after.filter((e) => idOf(e) === idOf(entry))).toEqual([entry]);
    expect(after.filter((e) => idOf(e) !== idOf(entry))).toEqual(before);
    const position = after.findIndex((e) => idOf(e) === idOf(entry));
    // Far in the past: behind nearly every entry, and more than a page below the top.
    expect(position).toBeGreaterThan(before.length / 2);
    for (let i = 0; i < after.length; i++) {
      if (i < position) expect(idOf(after[i]!) > idOf(entry)).toBe(true);
      if (i > position) expect(idOf(after[i]!) < idOf(entry)).toBe(true);
      const s = secondOf(after[i]!.metadata!.createdAt!);
      if (i < position) expect(s).toBeGreaterThanOrEqual(secondOf(at));
      if (i > position) expect(s).toBeLessThanOrEqual(secondOf(at));
    }
    // Before everything: served last; /late does the same.
    const first = await ok<SandboxEntry>(control(h, 'late', { at: '2024-12-01T00:00:00Z' }));
    const last = (await served(h)).at(-1)!;
    expect(last).toEqual(first);
    expect(first.metadata?.changeKind).toBe('CHANGE_KIND_CREATE');
  });

  it('expires the oldest entries: they are gone and the rest intact', async () => {
    const h = await start(paging);
    const before = await served(h);
    const answer = await ok<{ expired: number; size: number; oldest: string | null }>(
      control(h, 'expire?count=7'),
    );
    const kept = before.slice(0, -7);
    expect(answer).toEqual({ expired: 7, size: kept.length, oldest: kept.at(-1)!.metadata!.createdAt });
    expect(await served(h)).toEqual(kept);
    // A listing under way in which retention runs out serves what is left, once.
    const { entries } = await listAll(h, async (pages) => {
      // After page 4 of 6: the page after it, rendered ahead already, holds two of them.
      if (pages === 4) await ok(control(h, 'expire?count=5'));
    });
    expect(entries).toEqual(kept.slice(0, -5));
    // Asked for more than there is: everything.
    expect(await ok(control(h, 'expire?count=1000'))).toEqual({
      expired: kept.length - 5,
      size: 0,
      oldest: null,
    });
    expect((await page(h)).list).toEqual([]);
    expect(await truth(h)).toEqual([]);
  });
});

describe('sandbox reconcile controls, bad input', () => {
  it('refuses with 400 and a message', async () => {
    const h = await start('keyset', 30);
    const id = idOf(h.sandbox.history.entries()[0]!);
    const deleted = h.sandbox.history.appendEntry({ changeKind: 'CHANGE_KIND_HARD_DELETE' });
    const missing = '2aAAAAAAAAAAAAAAAAAAAAAAAAA';
    await expectRefused(control(h, 'rewrite', { id: missing }), /no entry with id "2aA+"/);
    await expectRefused(control(h, 'rewrite', {}), /id must be a non-empty string/);
    await expectRefused(control(h, 'rewrite', { id: 5 }), /id must be a non-empty string/);
    await expectRefused(control(h, 'rewrite', { id, settings: {} }), /unknown field "settings"/);
    await expectRefused(control(h, 'rewrite', { id, set: [1] }), /set must be an object/);
    await expectRefused(control(h, 'rewrite', { id, metadata: { id: missing } }), /keeps its id/);
    await expectRefused(
      control(h, 'rewrite', { id, metadata: { createdAt: '2020-01-01T00:00:00Z' } }),
      /keeps its createdAt/,
    );
    await expectRefused(
      control(h, 'rewrite', { id: idOf(deleted), set: { enabled: true } }),
      /has no snapshot/,
    );
    await expectRefused(control(h, 'rewrite', '{"id":'), /JSON/);
    await expectRefused(control(h, 'rewrite', [id]), /must be a JSON object/);
    await expectRefused(control(h, 'remove', { id: missing }), /no entry with id/);
    await expectRefused(control(h, 'remove', {}), /id must be a non-empty string/);
    await ok(control(h, 'remove', { id }));
    await expectRefused(control(h, 'remove', { id }), /no entry with id/);
    await expectRefused(control(h, 'rewrite', { id }), /no entry with id/);
    await expectRefused(control(h, 'expire?count=-1'), /count must be a non-negative integer/);
    await expectRefused(control(h, 'expire?count=x'), /count must be a non-negative integer/);
    await expectRefused(control(h, 'duplicate', { id: missing }), /no entry with id/);
    await expectRefused(control(h, 'duplicate', {}), /id must be a non-empty string/);
    await expectRefused(
      control(h, 'duplicate', { id: idOf(h.sandbox.history.entries()[3]!), metadata: { id: missing } }),
      /keeps its id/,
    );
    await expectRefused(control(h, 'backdate', {}), /./);
    await expectRefused(
      control(h, 'backdate', { at: '2099-01-01T00:00:00Z' }),
      /not earlier than the newest/,
    );
    // Nothing refused changed anything.
    expect(h.sandbox.history.size).toBe(30);
    expect(await truth(h)).toEqual(h.sandbox.history.entries());
  });
});
