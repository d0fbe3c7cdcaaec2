import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type OwnerTuple, type Sandbox, startSandbox } from '../../src/sandbox/index.js';

let sb: Sandbox;
let admin: string;
let nonAdmin: string;

async function tokenFor(c: { clientId: string; clientSecret: string }): Promise<string> {
  const res = await fetch(`${sb.baseUrl}/auth/v1/token`, {
    method: 'POST',
    body: new URLSearchParams({
      grant_type: 'client_credentials',
      client_id: c.clientId,
      client_secret: c.clientSecret,
    }),
  });
  return ((await res.json()) as { access_token: string }).access_token;
}

beforeAll(async () => {
  sb = await startSandbox({
    entries: 10,
    owners: [
      {
        appId: 'app-1',
        resourceTypeId: 'rt',
        resourceId: 'r',
        roleSlug: 'admin',
        entitlementAppId: 'app-2',
        entitlementId: 'ent-1',
      },
    ],
  });
  admin = await tokenFor(sb.credentials.secret);
  nonAdmin = await tokenFor(sb.credentials.nonAdmin);
});
afterAll(async () => {
  await sb.close();
});

/** Every segment percent-encoded, as a client of the API must (docs/design/tenant-api.md). */
function pathOf(t: OwnerTuple, encode: (s: string) => string = encodeURIComponent): string {
  return (
    `/api/v2/apps/${encode(t.appId)}/resource_types/${encode(t.resourceTypeId)}/resources/${encode(t.resourceId)}` +
    `/owners/entitlements/${encode(t.roleSlug)}/${encode(t.entitlementAppId)}/${encode(t.entitlementId)}`
  );
}

function bodyOf(t: OwnerTuple): string {
  return JSON.stringify({ appEntitlementRef: { appId: t.entitlementAppId, id: t.entitlementId } });
}

/**
 * DELETE through node:http, which sends the path byte for byte (fetch would normalise it, and
 * some tests need paths a URL parser would change).
 */
function del(path: string, body: string | undefined, bearer: string | null = admin, method = 'DELETE') {
  const url = new URL(sb.baseUrl);
  return new Promise<{ status: number; json: unknown }>((resolve, reject) => {
    const req = request(
      {
        host: url.hostname,
        port: url.port,
        method,
        path,
        headers: {
          'content-type': 'application/json',
          // node:http sends a DELETE body without framing unless told its length.
          'content-length': String(Buffer.byteLength(body ?? '')),
          ...(bearer === null ? {} : { authorization: `Bearer ${bearer}` }),
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          try {
            resolve({ status: res.statusCode ?? 0, json: JSON.parse(Buffer.concat(chunks).toString()) });
          } catch (error) {
            reject(error);
          }
        });
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

describe('sandbox DeleteEntitlementOwner', () => {
  it('seeds awkward owners: slashes, percent signs, ? and #, spaces and non-ASCII', () => {
    const text = JSON.stringify(sb.owners.list());
    for (const needle of ['org/admins', '%', '?', '#', ' ', 'ü', '日本']) expect(text).toContain(needle);
  });

  it('deletes an owner with 200 {}, then answers 404 for it', async () => {
    const t = sb.owners.list().at(-1)!;
    expect(t.appId).toBe('app-1');
    const first = await del(pathOf(t), bodyOf(t));
    expect(first).toEqual({ status: 200, json: {} });
    expect(sb.owners.has(t)).toBe(false);
    const again = await del(pathOf(t), bodyOf(t));
    expect(again).toEqual({ status: 404, json: { code: 5, message: expect.any(String), details: [] } });
    expect(sb.stats.deleteRequests).toBe(2);
  });

  it('round-trips every awkward seeded owner when each segment is percent-encoded', async () => {
    const awkward = sb.owners.list();
    expect(awkward.length).toBeGreaterThanOrEqual(5);
    for (const t of awkward) {
      const res = await del(pathOf(t), bodyOf(t));
      expect(res, JSON.stringify(t)).toEqual({ status: 200, json: {} });
    }
    expect(sb.owners.list()).toEqual([]);
    for (const t of awkward) sb.owners.add(t);
  });

  it('keeps an encoded slash inside its segment, and does not match an unencoded one', async () => {
    const t = sb.owners.list().find((o) => o.roleSlug.includes('/'))!;
    // Encoding only what a URL would break on leaves the slash raw: one segment too many.
    const res = await del(
      pathOf(t, (s) => encodeURI(s).replace(/[?#]/g, encodeURIComponent)),
      bodyOf(t),
    );
    expect(res).toMatchObject({ status: 404, json: { code: 5 } });
    expect(sb.owners.has(t)).toBe(true);
  });

  it('refuses a body that disagrees with the path, a missing body and a body that is not JSON', async () => {
    const t = sb.owners.list()[0]!;
    const other = JSON.stringify({
      appEntitlementRef: { appId: t.entitlementAppId, id: `${t.entitlementId}-x` },
    });
    for (const body of [other, '{}', '', 'not json', JSON.stringify({ appEntitlementRef: null })]) {
      const res = await del(pathOf(t), body);
      expect(res, body).toMatchObject({ status: 400, json: { code: 3, details: [] } });
    }
    expect(sb.owners.has(t)).toBe(true);
  });

  it('requires an admin bearer token', async () => {
    const t = sb.owners.list()[0]!;
    expect(await del(pathOf(t), bodyOf(t), null)).toMatchObject({ status: 401, json: { code: 16 } });
    expect(await del(pathOf(t), bodyOf(t), 'nope')).toMatchObject({ status: 401, json: { code: 16 } });
    expect(await del(pathOf(t), bodyOf(t), nonAdmin)).toMatchObject({ status: 403, json: { code: 7 } });
    expect(sb.owners.has(t)).toBe(true);
  });

  it('answers 405 to another method, 404 to another shape and 400 to broken percent-encoding', async () => {
    const t = sb.owners.list()[0]!;
    expect(await del(pathOf(t), undefined, admin, 'GET')).toMatchObject({ status: 405, json: { code: 12 } });
    expect(await del(`${pathOf(t)}/extra`, bodyOf(t))).toMatchObject({ status: 404 });
    expect(await del(pathOf({ ...t, roleSlug: '' }), bodyOf(t))).toMatchObject({ status: 404 });
    expect(await del(pathOf(t).replace('/owners/', '/owner/'), bodyOf(t))).toMatchObject({ status: 404 });
    const broken = pathOf(t).replace(/\/[^/]*$/, '/%E0%A4%A');
    expect(await del(broken, bodyOf(t))).toMatchObject({ status: 400, json: { code: 3 } });
  });
});
