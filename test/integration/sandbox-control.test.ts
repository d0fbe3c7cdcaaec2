import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Sandbox, startSandbox } from '../../src/sandbox/index.js';

let sb: Sandbox;
beforeAll(async () => {
  sb = await startSandbox({ entries: 40, seed: 2 });
});
afterAll(async () => {
  await sb.close();
});

function control(
  path: string,
  body?: unknown,
  method = body === undefined ? 'GET' : 'POST',
): Promise<Response> {
  return fetch(`${sb.baseUrl}/_sandbox/${path}`, {
    method,
    ...(body === undefined
      ? {}
      : { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } }),
  });
}

async function token(): Promise<string> {
  const res = await fetch(`${sb.baseUrl}/auth/v1/token`, {
    method: 'POST',
    body: new URLSearchParams({
      grant_type: 'client_credentials',
      client_id: sb.credentials.secret.clientId,
      client_secret: sb.credentials.secret.clientSecret,
    }),
  });
  return ((await res.json()) as { access_token: string }).access_token;
}

function list(bearer: string): Promise<Response> {
  return fetch(`${sb.baseUrl}/api/v1/settings/ai-governance/history?page_size=10`, {
    headers: { authorization: `Bearer ${bearer}` },
  });
}

describe('sandbox control endpoints', () => {
  it('streams the truth as NDJSON, newest first', async () => {
    const res = await control('entries');
    expect(res.headers.get('content-type')).toBe('application/x-ndjson');
    const lines = (await res.text()).trimEnd().split('\n');
    expect(lines.map((l) => JSON.parse(l))).toEqual(sb.history.entries());
  });

  it('appends generated entries, spec entries, late arrivals and raw values', async () => {
    const before = sb.history.size;
    const appended = (await (await control('append?count=3', {})).json()) as {
      appended: number;
      ids: string[];
    };
    expect(appended.appended).toBe(3);
    expect(
      sb.history
        .entries()
        .slice(0, 3)
        .map((e) => e.metadata?.id),
    ).toEqual([...appended.ids].reverse());
    const entry = await (
      await control('entry', { set: { requireToolApproval: false }, annotations: [] })
    ).json();
    expect(sb.history.entries()[0]).toEqual(entry);
    const late = (await (await control('late', { at: '2025-01-07T00:00:00Z' })).json()) as {
      metadata: { id: string };
    };
    expect(sb.history.entries().map((e) => e.metadata?.id)).toContain(late.metadata.id);
    expect((await control('raw', { odd: true })).status).toBe(200);
    expect(sb.history.entries()[0]).toEqual({ odd: true });
    expect(sb.history.size).toBe(before + 6);
    const bad = await control('append?count=-1', {});
    expect(bad.status).toBe(400);
    expect(await bad.json()).toEqual({ error: expect.stringContaining('count') });
  });

  it('scripts faults, sets and clears random ones, and reports them in the stats', async () => {
    const bearer = await token();
    expect((await control('faults', { kind: '503', times: 'Infinity' })).status).toBe(200);
    expect((await list(bearer)).status).toBe(503);
    expect((await list(bearer)).status).toBe(503);
    await control('faults', { clear: true });
    expect((await list(bearer)).status).toBe(200);
    await control('faults', { random: '500:1', seed: 3 });
    expect((await list(bearer)).status).toBe(500);
    await control('faults', { random: null });
    expect((await list(bearer)).status).toBe(200);
    expect((await control('faults', { kind: 'nope' })).status).toBe(400);
    expect((await control('faults', { random: 'nope:1' })).status).toBe(400);
    const stats = (await (await control('stats')).json()) as Record<string, unknown>;
    expect(stats).toMatchObject({
      injected: { '503': 2, '500': 1 },
      size: sb.history.size,
      historyRequests: sb.stats.historyRequests,
      lastHistoryQuery: { page_size: '10' },
    });
  });

  it('expires tokens', async () => {
    const bearer = await token();
    expect((await list(bearer)).status).toBe(200);
    expect((await control('expire-tokens', {})).status).toBe(200);
    expect((await list(bearer)).status).toBe(401);
  });

  it('lists and adds owners, and is not counted as API traffic', async () => {
    const requests = sb.stats.requests;
    const owner = {
      appId: 'a',
      resourceTypeId: 'b',
      resourceId: 'c d',
      roleSlug: 'e/f',
      entitlementAppId: 'g',
      entitlementId: 'h',
    };
    expect((await control('owners', owner)).status).toBe(200);
    expect(sb.owners.has(owner)).toBe(true);
    expect(await (await control('owners')).json()).toEqual(sb.owners.list());
    expect((await control('owners', { ...owner, appId: '' })).status).toBe(400);
    expect((await control('nothing-here')).status).toBe(404);
    expect(sb.stats.requests).toBe(requests);
  });
});
