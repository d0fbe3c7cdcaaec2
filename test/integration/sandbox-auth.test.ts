import { generateKeyPairSync } from 'node:crypto';
import { importJWK, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Sandbox, type SandboxCredentials, startSandbox } from '../../src/sandbox/index.js';

const ASSERTION_TYPE = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';
let sb: Sandbox;

beforeAll(async () => {
  sb = await startSandbox({ entries: 30, tokenTtlSeconds: 900 });
});
afterAll(async () => {
  await sb.close();
});

function post(form: Record<string, string>, init: RequestInit = {}): Promise<Response> {
  return fetch(`${sb.baseUrl}/auth/v1/token`, { method: 'POST', body: new URLSearchParams(form), ...init });
}

async function tokenFor(c: SandboxCredentials): Promise<string> {
  const res = await post({
    grant_type: 'client_credentials',
    client_id: c.clientId,
    client_secret: c.clientSecret,
  });
  expect(res.status).toBe(200);
  return ((await res.json()) as { access_token: string }).access_token;
}

function privateJwk(secret: string): { kty: string; crv: string; d: string; x: string } {
  expect(secret.startsWith('secret-token:conductorone.com:v1:')).toBe(true);
  return JSON.parse(Buffer.from(secret.split(':').at(-1)!, 'base64url').toString('utf8'));
}

/** Signs a client assertion as the Go SDK does; `claims` overrides the defaults. */
async function assertion(
  claims: Record<string, unknown> = {},
  secret = sb.credentials.key.clientSecret,
): Promise<string> {
  const key = await importJWK(privateJwk(secret), 'EdDSA');
  const now = Math.floor(Date.now() / 1000);
  const id = sb.credentials.key.clientId;
  return new SignJWT({
    iss: id,
    sub: id,
    aud: '127.0.0.1',
    iat: now,
    nbf: now - 120,
    exp: now + 120,
    ...claims,
  })
    .setProtectedHeader({ alg: 'EdDSA' })
    .sign(key);
}

function postAssertion(jwt: string, clientId = sb.credentials.key.clientId): Promise<Response> {
  return post({
    grant_type: 'client_credentials',
    client_id: clientId,
    client_assertion_type: ASSERTION_TYPE,
    client_assertion: jwt,
  });
}

function listHistory(token: string | undefined): Promise<Response> {
  return fetch(`${sb.baseUrl}/api/v1/settings/ai-governance/history`, {
    headers: token === undefined ? {} : { authorization: `Bearer ${token}` },
  });
}

describe('sandbox token endpoint', () => {
  it('issues a bearer token for a plain client secret sent in the form body', async () => {
    const c = sb.credentials.secret;
    expect(c.clientId).toMatch(/^[a-z]+-[a-z]+-\d{5}@127\.0\.0\.1\/pcc$/);
    const res = await post({
      grant_type: 'client_credentials',
      client_id: c.clientId,
      client_secret: c.clientSecret,
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/json');
    const body = (await res.json()) as Record<string, unknown>;
    expect(body).toEqual({ access_token: expect.any(String), token_type: 'Bearer', expires_in: 900 });
    expect((await listHistory(body['access_token'] as string)).status).toBe(200);
    expect(sb.issuedTokens()).toContain(body['access_token']);
  });

  it('issues a token for a key secret that proves possession with an EdDSA assertion', async () => {
    const jwt = await assertion();
    const res = await postAssertion(jwt);
    expect(res.status).toBe(200);
    const { access_token } = (await res.json()) as { access_token: string };
    expect((await listHistory(access_token)).status).toBe(200);
    expect(sb.receivedAssertions()).toContain(jwt);
  });

  it.each([
    ['a key that is not the client’s', async () => assertion({}, otherKeySecret()), /signature/],
    ['an audience with the port', async () => assertion({ aud: new URL(sb.baseUrl).host }), /"aud"/],
    ['another audience', async () => assertion({ aud: 'acme.conductor.one' }), /"aud"/],
    ['another issuer', async () => assertion({ iss: sb.credentials.secret.clientId }), /"iss"/],
    ['another subject', async () => assertion({ sub: 'someone-else@127.0.0.1/pcc' }), /"sub"/],
    [
      'an expired assertion',
      async () => assertion({ iat: now() - 600, nbf: now() - 600, exp: now() - 120 }),
      /"exp"/,
    ],
    [
      'an assertion valid for an hour',
      async () => assertion({ exp: now() + 3600 }),
      /"exp" is more than 300/,
    ],
    [
      'an assertion issued in the future',
      async () => assertion({ iat: now() + 120, exp: now() + 200 }),
      /"iat"/,
    ],
    ['an assertion without exp', async () => assertion({ exp: undefined }), /"exp"/],
  ])('rejects %s with 401 invalid_client', async (_name, make, reason) => {
    const res = await postAssertion(await make());
    expect(res.status).toBe(401);
    const body = (await res.json()) as { error: string; error_description: string };
    expect(body.error).toBe('invalid_client');
    expect(body.error_description).toMatch(reason);
  });

  it('rejects a wrong secret, an unknown client and a secret sent for a key client', async () => {
    const { secret, key } = sb.credentials;
    for (const form of [
      { client_id: secret.clientId, client_secret: `${secret.clientSecret}x` },
      { client_id: secret.clientId, client_secret: '' },
      { client_id: 'nobody@127.0.0.1/pcc', client_secret: secret.clientSecret },
      { client_id: key.clientId, client_secret: key.clientSecret },
    ]) {
      const res = await post({ grant_type: 'client_credentials', ...form });
      expect(res.status).toBe(401);
      expect(await res.json()).toMatchObject({ error: 'invalid_client' });
    }
    // A plain-secret client cannot use an assertion either.
    expect((await postAssertion(await assertion(), secret.clientId)).status).toBe(401);
  });

  it('answers malformed requests with 400 and an OAuth error', async () => {
    const { secret } = sb.credentials;
    const cases: Array<[Promise<Response>, string]> = [
      [post({ client_id: secret.clientId, client_secret: secret.clientSecret }), 'invalid_request'],
      [post({ grant_type: 'password', client_id: secret.clientId }), 'unsupported_grant_type'],
      [post({ grant_type: 'client_credentials', client_secret: secret.clientSecret }), 'invalid_request'],
      [
        post({ grant_type: 'client_credentials', client_id: secret.clientId, client_assertion: 'x' }),
        'invalid_request',
      ],
      [
        fetch(`${sb.baseUrl}/auth/v1/token`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ grant_type: 'client_credentials', ...secret }),
        }),
        'invalid_request',
      ],
      [
        // Credentials in an HTTP Basic header are not accepted: they belong in the body.
        post(
          { grant_type: 'client_credentials' },
          {
            headers: {
              authorization: `Basic ${Buffer.from(`${secret.clientId}:${secret.clientSecret}`).toString('base64')}`,
            },
          },
        ),
        'invalid_request',
      ],
    ];
    for (const [request, error] of cases) {
      const res = await request;
      expect(res.status).toBe(400);
      expect(await res.json()).toMatchObject({ error });
    }
    expect((await fetch(`${sb.baseUrl}/auth/v1/token`)).status).toBe(405);
  });
});

describe('sandbox bearer checks', () => {
  it('answers 401 in grpc-gateway form without a token, with a bad one, and after expireTokens()', async () => {
    const res = await listHistory(undefined);
    expect(res.status).toBe(401);
    expect(await res.json()).toEqual({ code: 16, message: expect.any(String), details: [] });
    expect((await listHistory('not-a-token')).status).toBe(401);
    const valid = await fetch(`${sb.baseUrl}/api/v1/settings/ai-governance/history`, {
      headers: { authorization: `Basic ${Buffer.from('a:b').toString('base64')}` },
    });
    expect(valid.status).toBe(401);

    const token = await tokenFor(sb.credentials.secret);
    expect((await listHistory(token)).status).toBe(200);
    sb.expireTokens();
    expect((await listHistory(token)).status).toBe(401);
    expect((await listHistory(await tokenFor(sb.credentials.secret))).status).toBe(200);
  });

  it('gives the non-admin client a working token that the admin-tier listing refuses with 403', async () => {
    const token = await tokenFor(sb.credentials.nonAdmin);
    const res = await listHistory(token);
    expect(res.status).toBe(403);
    expect(await res.json()).toEqual({ code: 7, message: expect.any(String), details: [] });
  });

  it('lets a token expire after expires_in', async () => {
    const short = await startSandbox({ entries: 1, tokenTtlSeconds: 1 });
    try {
      const res = await fetch(`${short.baseUrl}/auth/v1/token`, {
        method: 'POST',
        body: new URLSearchParams({
          grant_type: 'client_credentials',
          client_id: short.credentials.secret.clientId,
          client_secret: short.credentials.secret.clientSecret,
        }),
      });
      const { access_token, expires_in } = (await res.json()) as { access_token: string; expires_in: number };
      expect(expires_in).toBe(1);
      const list = () =>
        fetch(`${short.baseUrl}/api/v1/settings/ai-governance/history`, {
          headers: { authorization: `Bearer ${access_token}` },
        }).then((r) => r.status);
      expect(await list()).toBe(200);
      await expect.poll(list, { timeout: 3000, interval: 100 }).toBe(401);
    } finally {
      await short.close();
    }
  });
});

function now(): number {
  return Math.floor(Date.now() / 1000);
}

function otherKeySecret(): string {
  const jwk = generateKeyPairSync('ed25519').privateKey.export({ format: 'jwk' });
  const json = JSON.stringify({ kty: 'OKP', crv: 'Ed25519', d: jwk.d, x: jwk.x });
  return `secret-token:conductorone.com:v1:${Buffer.from(json).toString('base64url')}`;
}
