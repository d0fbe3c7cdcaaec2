/**
 * Redirects, which the sandbox cannot aim at another host: a tiny tenant on one port redirects to
 * a second server on another origin, which must never receive a request, let alone the bearer.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { HttpConfig } from '../../src/config/settings.js';
import { GovtrailError } from '../../src/core/errors.js';
import { silentLogger } from '../../src/runtime/logger.js';
import { createHttpAgent, TenantApiClient } from '../../src/source/index.js';

const SECRET = 'redirect-test-client-secret';
const TOKEN = 'redirect-test-access-token';

const http: HttpConfig = {
  connectTimeoutMs: 2000,
  headersTimeoutMs: 2000,
  bodyTimeoutMs: 2000,
  maxAttempts: 3,
  retryBudgetMs: 1000,
  retryAfterCapMs: 10,
  retryBaseMs: 1,
  retryMaxDelayMs: 5,
};

interface Seen {
  method: string;
  url: string;
  authorization: string | undefined;
  body: string;
}

async function listen(
  handler: (req: IncomingMessage, body: string) => [number, Record<string, string>, string],
) {
  const seen: Seen[] = [];
  const server: Server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => {
      body += c;
    });
    req.on('end', () => {
      seen.push({
        method: req.method ?? '',
        url: req.url ?? '',
        authorization: req.headers.authorization,
        body,
      });
      const [status, headers, text] = handler(req, body);
      res.writeHead(status, { 'content-type': 'application/json', ...headers });
      res.end(text);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { server, seen, baseUrl: `http://127.0.0.1:${port}` };
}

let elsewhere: Awaited<ReturnType<typeof listen>>;
let tenant: Awaited<ReturnType<typeof listen>>;
/** Where the tenant's next history or token response points; set per test. */
let historyLocation = '';
let tokenLocation = '';
const agent = createHttpAgent(http);

beforeAll(async () => {
  elsewhere = await listen(() => [
    200,
    {},
    JSON.stringify({ list: [], nextPageToken: '', access_token: 'x' }),
  ]);
  tenant = await listen((req) => {
    if (req.url?.startsWith('/auth/v1/token')) {
      if (tokenLocation !== '') return [307, { location: tokenLocation }, ''];
      return [200, {}, JSON.stringify({ access_token: TOKEN, token_type: 'Bearer', expires_in: 3600 })];
    }
    return [302, { location: historyLocation }, '{"moved":true}'];
  });
});

afterEach(() => {
  elsewhere.seen.length = 0;
  tenant.seen.length = 0;
  historyLocation = '';
  tokenLocation = '';
});

afterAll(async () => {
  await agent.close();
  await new Promise((resolve) => elsewhere.server.close(resolve));
  await new Promise((resolve) => tenant.server.close(resolve));
});

function client(): TenantApiClient {
  return new TenantApiClient({
    baseUrl: tenant.baseUrl,
    clientId: 'redirect-client',
    clientSecret: SECRET,
    http,
    logger: silentLogger,
    dispatcher: agent,
  });
}

async function firstPageError(c: TenantApiClient): Promise<GovtrailError> {
  try {
    for await (const _ of c.listHistory({ pageSize: 10, maxPages: 5 })) break;
  } catch (err) {
    expect(err).toBeInstanceOf(GovtrailError);
    return err as GovtrailError;
  }
  throw new Error('expected the listing to fail');
}

describe('redirects are never followed', () => {
  it('fails with INSECURE_URL on a redirect to another host, which never sees a request or the bearer', async () => {
    historyLocation = `${elsewhere.baseUrl}/api/v1/settings/ai-governance/history?page_size=10`;
    const error = await firstPageError(client());
    expect(error.code).toBe('INSECURE_URL');
    expect(error.status).toBe(302);
    expect(error.message).not.toContain(TOKEN);
    expect(elsewhere.seen).toEqual([]);
    const history = tenant.seen.filter((s) => s.url.startsWith('/api/'));
    expect(history).toHaveLength(1);
    expect(history[0]?.authorization).toBe(`Bearer ${TOKEN}`);
  });

  it('fails with HTTP_ERROR on a same-origin redirect, without a second request', async () => {
    historyLocation = '/api/v1/settings/ai-governance/history-moved';
    const error = await firstPageError(client());
    expect(error.code).toBe('HTTP_ERROR');
    expect(error.status).toBe(302);
    expect(tenant.seen.filter((s) => s.url.startsWith('/api/'))).toHaveLength(1);
  });

  it('does not carry the client secret to another host when the token endpoint redirects', async () => {
    tokenLocation = `${elsewhere.baseUrl}/auth/v1/token`;
    const error = await firstPageError(client());
    expect(error.code).toBe('INSECURE_URL');
    expect(error.message).not.toContain(SECRET);
    expect(elsewhere.seen).toEqual([]);
    expect(tenant.seen).toHaveLength(1);
    expect(tenant.seen[0]?.body).toContain('client_secret=');
  });
});

describe('base URL check', () => {
  it('refuses plain http to a host that is not loopback, before any request', () => {
    for (const baseUrl of [
      'http://tenant.example.com',
      'ftp://127.0.0.1',
      'not a url',
      'https://u:p@tenant.example',
    ]) {
      let caught: unknown;
      try {
        new TenantApiClient({ baseUrl, clientId: 'c', clientSecret: SECRET, http, logger: silentLogger });
      } catch (err) {
        caught = err;
      }
      expect((caught as GovtrailError).code, baseUrl).toBe('INSECURE_URL');
    }
  });

  it('accepts https anywhere and http to loopback', async () => {
    for (const baseUrl of ['https://tenant.example.com/', 'http://localhost:1', 'http://[::1]:1']) {
      const c = new TenantApiClient({
        baseUrl,
        clientId: 'c',
        clientSecret: SECRET,
        http,
        logger: silentLogger,
      });
      await c.close();
    }
  });
});
