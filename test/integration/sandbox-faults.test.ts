import { afterEach, describe, expect, it, vi } from 'vitest';
import { type Sandbox, type SandboxOptions, startSandbox } from '../../src/sandbox/index.js';

let sb: Sandbox | undefined;
afterEach(async () => {
  await sb?.close();
  sb = undefined;
});

const HISTORY = '/api/v1/settings/ai-governance/history';

async function start(
  options: SandboxOptions = {},
): Promise<{ sandbox: Sandbox; token: () => Promise<Response> }> {
  sb = await startSandbox({ entries: 120, ...options });
  const sandbox = sb;
  const token = () =>
    fetch(`${sandbox.baseUrl}/auth/v1/token`, {
      method: 'POST',
      body: new URLSearchParams({
        grant_type: 'client_credentials',
        client_id: sandbox.credentials.secret.clientId,
        client_secret: sandbox.credentials.secret.clientSecret,
      }),
    });
  return { sandbox, token };
}

async function accessToken(token: () => Promise<Response>): Promise<string> {
  const res = await token();
  expect(res.status).toBe(200);
  return ((await res.json()) as { access_token: string }).access_token;
}

function list(sandbox: Sandbox, bearer: string, query = '', init: RequestInit = {}): Promise<Response> {
  return fetch(`${sandbox.baseUrl}${HISTORY}${query}`, {
    headers: { authorization: `Bearer ${bearer}` },
    ...init,
  });
}

describe('sandbox scripted faults', () => {
  it.each([
    ['400', 400, { code: 3 }],
    ['401', 401, { code: 16 }],
    ['403', 403, { code: 7 }],
    ['404', 404, { code: 5 }],
    ['429', 429, { code: 8 }],
    ['500', 500, { code: 13 }],
    ['503', 503, { code: 14 }],
  ] as const)('answers %s in grpc-gateway form, once', async (kind, status, body) => {
    const { sandbox, token } = await start();
    const bearer = await accessToken(token);
    sandbox.faults.add({ kind });
    const res = await list(sandbox, bearer);
    expect(res.status).toBe(status);
    expect(await res.json()).toMatchObject({ ...body, message: expect.any(String), details: [] });
    expect((await list(sandbox, bearer)).status).toBe(200);
    expect(sandbox.faults.injected).toEqual({ [kind]: 1 });
  });

  it.each(['408', '502', '504'] as const)('answers %s with the load balancer’s HTML page', async (kind) => {
    const { sandbox, token } = await start();
    const bearer = await accessToken(token);
    sandbox.faults.add({ kind });
    const res = await list(sandbox, bearer);
    expect(res.status).toBe(Number(kind));
    expect(res.headers.get('content-type')).toBe('text/html');
    expect(await res.text()).toContain(`<title>${kind} `);
  });

  it('sends Retry-After and a custom body when asked, and honours times and afterRequests', async () => {
    const { sandbox, token } = await start();
    const bearer = await accessToken(token);
    sandbox.faults.add({
      kind: '429',
      retryAfter: '3',
      times: 2,
      afterRequests: 1,
      body: '{"code":8,"message":"slow down"}',
    });
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) {
      const res = await list(sandbox, bearer);
      statuses.push(res.status);
      if (res.status === 429) {
        expect(res.headers.get('retry-after')).toBe('3');
        expect(await res.json()).toEqual({ code: 8, message: 'slow down' });
      }
    }
    expect(statuses).toEqual([200, 429, 429, 200]);
    sandbox.faults.add({
      kind: '503',
      retryAfter: 'Wed, 21 Oct 2015 07:28:00 GMT',
      times: Number.POSITIVE_INFINITY,
    });
    for (let i = 0; i < 3; i++) {
      const res = await list(sandbox, bearer);
      expect(res.status).toBe(503);
      expect(res.headers.get('retry-after')).toBe('Wed, 21 Oct 2015 07:28:00 GMT');
    }
    sandbox.faults.clear();
    expect((await list(sandbox, bearer)).status).toBe(200);
    expect(sandbox.faults.injected).toEqual({ '429': 2, '503': 3 });
  });

  it('applies rules to their route only, in the order they were added', async () => {
    const { sandbox, token } = await start();
    const bearer = await accessToken(token);
    sandbox.faults.add({ route: 'token', kind: '500' });
    sandbox.faults.add({ route: 'any', kind: '503', times: 2 });
    const first = await token();
    expect(first.status).toBe(500);
    expect(await first.json()).toMatchObject({ error: 'server_error' });
    expect((await list(sandbox, bearer)).status).toBe(503);
    const second = await token();
    expect(second.status).toBe(503);
    expect(await second.json()).toMatchObject({ error: 'temporarily_unavailable' });
    expect((await list(sandbox, bearer)).status).toBe(200);
    expect((await token()).status).toBe(200);
  });

  it('resets the connection without an answer', async () => {
    const { sandbox, token } = await start();
    const bearer = await accessToken(token);
    sandbox.faults.add({ kind: 'reset' });
    await expect(list(sandbox, bearer)).rejects.toThrow(TypeError);
    expect((await list(sandbox, bearer)).status).toBe(200);
  });

  it('delays the headers of a slow answer, then answers normally', async () => {
    const { sandbox, token } = await start();
    const bearer = await accessToken(token);
    sandbox.faults.add({ kind: 'slow', delayMs: 250 });
    const t0 = performance.now();
    const res = await list(sandbox, bearer, '?page_size=10');
    expect(performance.now() - t0).toBeGreaterThanOrEqual(240);
    expect(res.status).toBe(200);
    expect(((await res.json()) as { list: unknown[] }).list).toHaveLength(10);
  });

  it('never answers a hanging request, until the sandbox closes', async () => {
    const { sandbox, token } = await start();
    const bearer = await accessToken(token);
    sandbox.faults.add({ kind: 'hang' });
    const pending = list(sandbox, bearer);
    let settled = false;
    pending.then(
      () => {
        settled = true;
      },
      () => {
        settled = true;
      },
    );
    await vi.waitFor(() => expect(sandbox.stats.historyRequests).toBe(1));
    // Another request on another connection is served meanwhile.
    expect((await list(sandbox, bearer)).status).toBe(200);
    expect(settled).toBe(false);
    await sandbox.close();
    await expect(pending).rejects.toThrow(TypeError);
  });

  it('answers 200 with broken bodies: not JSON, a list that is not an array, a null list', async () => {
    const { sandbox, token } = await start();
    const bearer = await accessToken(token);
    sandbox.faults.add({ kind: 'badjson' });
    sandbox.faults.add({ kind: 'list-not-array' });
    sandbox.faults.add({ kind: 'list-null' });
    const bad = await list(sandbox, bearer);
    expect(bad.status).toBe(200);
    await expect(bad.json()).rejects.toThrow(SyntaxError);
    expect(await (await list(sandbox, bearer)).text()).toBe('{"list":5}');
    expect(await (await list(sandbox, bearer)).json()).toEqual({ list: null, nextPageToken: '' });
  });

  it('can write a page as pure proto3 JSON, leaving out the empty token at the end', async () => {
    const { sandbox, token } = await start({ entries: 15 });
    const bearer = await accessToken(token);
    sandbox.faults.add({ kind: 'omit-empty', times: 2 });
    const first = (await (await list(sandbox, bearer, '?page_size=10')).json()) as { nextPageToken: string };
    expect(first.nextPageToken).not.toBe('');
    const last = await (
      await list(sandbox, bearer, `?page_size=10&page_token=${first.nextPageToken}`)
    ).json();
    expect(last).not.toHaveProperty('nextPageToken');
    expect((last as { list: unknown[] }).list).toHaveLength(5);
  });

  it('loops pages with repeat-token', async () => {
    const { sandbox, token } = await start();
    const bearer = await accessToken(token);
    sandbox.faults.add({ kind: 'repeat-token', afterRequests: 1, times: Number.POSITIVE_INFINITY });
    const first = (await (await list(sandbox, bearer, '?page_size=10')).json()) as {
      list: unknown[];
      nextPageToken: string;
    };
    const q = `?page_size=10&page_token=${first.nextPageToken}`;
    const second = (await (await list(sandbox, bearer, q)).json()) as {
      list: unknown[];
      nextPageToken: string;
    };
    expect(second.nextPageToken).toBe(first.nextPageToken);
    const third = (await (await list(sandbox, bearer, q)).json()) as {
      list: unknown[];
      nextPageToken: string;
    };
    expect(third).toEqual(second);
    // On a first request, the token it returns serves the first page again.
    const top = (await (await list(sandbox, bearer, '?page_size=10')).json()) as {
      list: unknown[];
      nextPageToken: string;
    };
    sandbox.faults.clear();
    const again = (await (
      await list(sandbox, bearer, `?page_size=10&page_token=${top.nextPageToken}`)
    ).json()) as {
      list: unknown[];
    };
    expect(again.list).toEqual(first.list);
  });

  it('redirects with 307 to the given location, or to another host', async () => {
    const { sandbox, token } = await start();
    const bearer = await accessToken(token);
    sandbox.faults.add({ kind: 'redirect', location: 'https://elsewhere.example/x' });
    sandbox.faults.add({ kind: 'redirect' });
    const res = await list(sandbox, bearer, '', { redirect: 'manual' });
    expect(res.status).toBe(307);
    expect(res.headers.get('location')).toBe('https://elsewhere.example/x');
    const res2 = await list(sandbox, bearer, '?page_size=10', { redirect: 'manual' });
    expect(res2.headers.get('location')).toBe(`http://sandbox-redirect.invalid${HISTORY}?page_size=10`);
  });

  it('rejects a rule it does not know', async () => {
    const { sandbox } = await start();
    expect(() => sandbox.faults.add({ kind: 'teapot' as never })).toThrow(RangeError);
    expect(() => sandbox.faults.setRandom('teapot:0.5')).toThrow(RangeError);
  });
});

describe('sandbox random faults', () => {
  it('draws faults with the given probabilities, reproducibly for a seed', async () => {
    const run = async (): Promise<number[]> => {
      const { sandbox, token } = await start({ faults: '500:0.3,429:0.2,retry-after:2', faultSeed: 5 });
      const bearer = await accessToken(async () => {
        // Token requests draw too: retry until one gets through.
        for (;;) {
          const res = await token();
          if (res.status === 200) return res;
        }
      });
      const statuses: number[] = [];
      for (let i = 0; i < 200; i++) {
        const res = await list(sandbox, bearer, '?page_size=10');
        statuses.push(res.status);
        if (res.status === 429) expect(res.headers.get('retry-after')).toBe('2');
        await res.arrayBuffer();
      }
      await sandbox.close();
      return statuses;
    };
    const a = await run();
    const b = await run();
    expect(b).toEqual(a);
    const count = (s: number) => a.filter((x) => x === s).length;
    expect(count(500)).toBeGreaterThan(40);
    expect(count(500)).toBeLessThan(80);
    expect(count(429)).toBeGreaterThan(20);
    expect(count(429)).toBeLessThan(60);
    expect(count(200)).toBeGreaterThan(80);
  });

  it('expires the caller’s token for this and every later request', async () => {
    const { sandbox, token } = await start();
    const bearer = await accessToken(token);
    sandbox.faults.setRandom('expire:1');
    expect((await list(sandbox, bearer)).status).toBe(401);
    sandbox.faults.setRandom(undefined);
    expect((await list(sandbox, bearer)).status).toBe(401);
    expect((await list(sandbox, await accessToken(token))).status).toBe(200);
    expect(sandbox.faults.injected).toEqual({ expire: 1 });
  });

  it('does not fault the owner delete', async () => {
    const { sandbox, token } = await start();
    const bearer = await accessToken(token);
    sandbox.faults.setRandom('500:1');
    const owner = sandbox.owners.list()[0]!;
    const path = [
      'api',
      'v2',
      'apps',
      owner.appId,
      'resource_types',
      owner.resourceTypeId,
      'resources',
      owner.resourceId,
      'owners',
      'entitlements',
      owner.roleSlug,
      owner.entitlementAppId,
      owner.entitlementId,
    ]
      .map(encodeURIComponent)
      .join('/');
    const res = await fetch(`${sandbox.baseUrl}/${path}`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${bearer}`, 'content-type': 'application/json' },
      body: JSON.stringify({ appEntitlementRef: { appId: owner.entitlementAppId, id: owner.entitlementId } }),
    });
    expect(res.status).toBe(200);
    expect((await list(sandbox, bearer)).status).toBe(500);
  });
});
