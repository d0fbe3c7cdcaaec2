/**
 * Every row of docs/design/sync.md "HTTP behaviour", over real sockets against the sandbox tenant. Delays are
 * configured tiny (1–5 ms backoff, small Retry-After caps) so retries do not slow the suite.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { HttpConfig } from '../../src/config/settings.js';
import { GovtrailError } from '../../src/core/errors.js';
import type { HistoryPage } from '../../src/core/wire.js';
import { silentLogger } from '../../src/runtime/logger.js';
import { type Sandbox, startSandbox } from '../../src/sandbox/index.js';
import {
  createHttpAgent,
  type RetryInfo,
  TenantApiClient,
  type TenantApiClientOptions,
} from '../../src/source/index.js';
import { failure } from '../helpers/failure.js';

const FAST: HttpConfig = {
  connectTimeoutMs: 2000,
  headersTimeoutMs: 5000,
  bodyTimeoutMs: 5000,
  maxAttempts: 6,
  retryBudgetMs: 60_000,
  retryAfterCapMs: 50,
  retryBaseMs: 1,
  retryMaxDelayMs: 5,
};

let sandbox: Sandbox;
const agent = createHttpAgent(FAST);

beforeAll(async () => {
  sandbox = await startSandbox({ entries: 30, seed: 7 });
});
afterEach(() => sandbox.faults.clear());
afterAll(async () => {
  await agent.close();
  await sandbox.close();
});

function client(
  http: Partial<HttpConfig> = {},
  extra: Partial<TenantApiClientOptions> = {},
): { client: TenantApiClient; retries: RetryInfo[] } {
  const retries: RetryInfo[] = [];
  const c = new TenantApiClient({
    baseUrl: sandbox.baseUrl,
    clientId: sandbox.credentials.secret.clientId,
    clientSecret: sandbox.credentials.secret.clientSecret,
    http: { ...FAST, ...http },
    logger: silentLogger,
    dispatcher: agent,
    onRetry: (info) => retries.push(info),
    ...extra,
  });
  return { client: c, retries };
}

async function listAll(c: TenantApiClient, pageSize = 10): Promise<HistoryPage[]> {
  const pages: HistoryPage[] = [];
  for await (const page of c.listHistory({ pageSize, maxPages: 100 })) pages.push(page);
  return pages;
}

/** Requests the sandbox has counted since `before`. */
function historyRequestsSince(before: number): number {
  return sandbox.stats.historyRequests - before;
}

describe('retryable statuses', () => {
  for (const status of ['408', '429', '500', '502', '503', '504'] as const) {
    it(`retries a ${status} on the history listing, then succeeds`, async () => {
      sandbox.faults.add({ kind: status, afterRequests: 1 });
      const before = sandbox.stats.historyRequests;
      const { client: c, retries } = client();
      const pages = await listAll(c);
      expect(pages.flatMap((p) => p.entries)).toHaveLength(30);
      expect(historyRequestsSince(before)).toBe(4);
      expect(c.stats.retries).toBe(1);
      expect(retries).toEqual([
        expect.objectContaining({
          attempt: 1,
          route: 'history',
          status: Number(status),
          code: status === '429' ? 'RATE_LIMITED' : 'HTTP_ERROR',
        }),
      ]);
      expect(retries[0]!.delayMs).toBeLessThanOrEqual(FAST.retryMaxDelayMs);
    });
  }

  it('retries the token request and the delete like the listing', async () => {
    sandbox.faults.add({ route: 'token', kind: '503' });
    sandbox.faults.add({ route: 'delete', kind: '502' });
    const { client: c, retries } = client();
    const owner = sandbox.owners.list()[0]!;
    expect(await c.deleteEntitlementOwner(owner)).toBe('deleted');
    expect(retries.map((r) => [r.route, r.status])).toEqual([
      ['token', 503],
      ['delete', 502],
    ]);
    expect(c.stats.tokenRequests).toBe(2);
  });
});

describe('Retry-After', () => {
  it('waits the seconds a 429 asks for when under the cap', async () => {
    sandbox.faults.add({ kind: '429', retryAfter: '1' });
    const { client: c, retries } = client({ retryAfterCapMs: 5000 });
    const started = performance.now();
    await listAll(c);
    expect(retries.map((r) => r.delayMs)).toEqual([1000]);
    expect(performance.now() - started).toBeGreaterThanOrEqual(995);
  });

  it('caps a long delay-seconds value at retryAfterCapMs', async () => {
    sandbox.faults.add({ kind: '503', retryAfter: '120' });
    const { client: c, retries } = client({ retryAfterCapMs: 150 });
    const started = performance.now();
    await listAll(c);
    expect(retries.map((r) => r.delayMs)).toEqual([150]);
    expect(performance.now() - started).toBeGreaterThanOrEqual(145);
  });

  it('honours an HTTP-date, capped', async () => {
    sandbox.faults.add({ kind: '429', retryAfter: new Date(Date.now() + 60_000).toUTCString() });
    const { client: c, retries } = client({ retryAfterCapMs: 150 });
    const started = performance.now();
    await listAll(c);
    expect(retries.map((r) => r.delayMs)).toEqual([150]);
    expect(performance.now() - started).toBeGreaterThanOrEqual(145);
  });

  it('retries at once for an HTTP-date in the past', async () => {
    sandbox.faults.add({ kind: '503', retryAfter: 'Wed, 21 Oct 2015 07:28:00 GMT' });
    const { client: c, retries } = client({ retryAfterCapMs: 5000 });
    await listAll(c);
    expect(retries.map((r) => r.delayMs)).toEqual([0]);
  });
});

describe('giving up', () => {
  it('fails with RATE_LIMITED after maxAttempts 429s', async () => {
    sandbox.faults.add({ kind: '429', times: Number.POSITIVE_INFINITY });
    const before = sandbox.stats.historyRequests;
    const { client: c } = client({ maxAttempts: 4 });
    const error = await failure(listAll(c));
    expect(error.code).toBe('RATE_LIMITED');
    expect(error.status).toBe(429);
    expect(error.retryable).toBe(true);
    expect(historyRequestsSince(before)).toBe(4);
    expect(c.stats.retries).toBe(3);
  });

  it('fails with HTTP_ERROR (retryable, with the status) after maxAttempts 5xx', async () => {
    sandbox.faults.add({ kind: '502', times: Number.POSITIVE_INFINITY });
    const before = sandbox.stats.historyRequests;
    const { client: c } = client({ maxAttempts: 3 });
    const error = await failure(listAll(c));
    expect(error.code).toBe('HTTP_ERROR');
    expect(error.status).toBe(502);
    expect(error.retryable).toBe(true);
    expect(error.message).toContain('3 attempts');
    expect(historyRequestsSince(before)).toBe(3);
  });

  it('uses 6 attempts per request by default', async () => {
    sandbox.faults.add({ kind: '500', times: Number.POSITIVE_INFINITY });
    const before = sandbox.stats.historyRequests;
    const { client: c } = client();
    expect((await failure(listAll(c))).status).toBe(500);
    expect(historyRequestsSince(before)).toBe(6);
  });
});

describe('network failures', () => {
  it('retries a connection reset, then succeeds', async () => {
    sandbox.faults.add({ kind: 'reset', afterRequests: 2 });
    const { client: c, retries } = client();
    const pages = await listAll(c);
    expect(pages).toHaveLength(3);
    expect(retries).toEqual([expect.objectContaining({ route: 'history', code: 'NETWORK' })]);
    expect(retries[0]).not.toHaveProperty('status');
  });

  it('fails with NETWORK after resets on every attempt', async () => {
    sandbox.faults.add({ kind: 'reset', times: Number.POSITIVE_INFINITY });
    const { client: c } = client({ maxAttempts: 3 });
    const error = await failure(listAll(c));
    expect(error.code).toBe('NETWORK');
    expect(c.stats.historyRequests).toBe(3);
  });

  it('retries a response whose headers are late, then succeeds', async () => {
    // undici checks parser timeouts on a coarse (~0.5 s) timer, so the delay must clearly exceed it.
    sandbox.faults.add({ kind: 'slow', delayMs: 3000 });
    const { client: c, retries } = client({ headersTimeoutMs: 100 });
    expect(await listAll(c)).toHaveLength(3);
    expect(retries).toEqual([expect.objectContaining({ code: 'NETWORK' })]);
  });

  it('fails with NETWORK (cause: a headers timeout) when the headers are late on every attempt', async () => {
    sandbox.faults.add({ kind: 'slow', delayMs: 3000, times: Number.POSITIVE_INFINITY });
    const { client: c } = client({ headersTimeoutMs: 80, maxAttempts: 2 });
    const error = await failure(listAll(c));
    expect(error.code).toBe('NETWORK');
    expect((error.cause as { code?: string }).code).toBe('UND_ERR_HEADERS_TIMEOUT');
    expect(c.stats.historyRequests).toBe(2);
  });

  it('fails with NETWORK when nothing listens', async () => {
    const closed = await startSandbox({ entries: 0 });
    const baseUrl = closed.baseUrl;
    await closed.close();
    const { client: c } = client({ maxAttempts: 2 }, { baseUrl });
    const error = await failure(listAll(c));
    expect(error.code).toBe('NETWORK');
    expect(c.stats.tokenRequests).toBe(2);
  });
});

describe('run-level retry budget', () => {
  it('fails with RETRY_BUDGET_EXHAUSTED, the last error as cause, when the next wait would exceed it', async () => {
    sandbox.faults.add({ kind: '503', retryAfter: '1', times: Number.POSITIVE_INFINITY });
    const { client: c } = client({ retryAfterCapMs: 100, retryBudgetMs: 250 });
    const error = await failure(listAll(c));
    expect(error.code).toBe('RETRY_BUDGET_EXHAUSTED');
    expect(error.cause).toBeInstanceOf(GovtrailError);
    expect((error.cause as GovtrailError).code).toBe('HTTP_ERROR');
    expect((error.cause as GovtrailError).status).toBe(503);
    // Two waits of 100 ms fit in 250 ms; the third does not.
    expect(c.stats.historyRequests).toBe(3);
  });

  it('is shared by every request of one client instance', async () => {
    const { client: c } = client({ retryAfterCapMs: 100, retryBudgetMs: 150 });
    sandbox.faults.add({ kind: '503', retryAfter: '1' });
    await listAll(c);
    sandbox.faults.add({ kind: '503', retryAfter: '1' });
    expect((await failure(listAll(c))).code).toBe('RETRY_BUDGET_EXHAUSTED');
    // A new instance (a new run) starts with a fresh budget.
    sandbox.faults.add({ kind: '503', retryAfter: '1' });
    await listAll(client({ retryAfterCapMs: 100, retryBudgetMs: 150 }).client);
  });
});

describe('statuses that are not retried', () => {
  it('refreshes the token once on a 401 and retries the call', async () => {
    const { client: c } = client();
    await listAll(c);
    expect(c.stats.tokenRequests).toBe(1);
    sandbox.expireTokens();
    expect((await listAll(c)).flatMap((p) => p.entries)).toHaveLength(30);
    expect(c.stats.tokenRequests).toBe(2);
    expect(c.stats.retries).toBe(0);
  });

  it('fails with AUTH_REJECTED on a second 401 after the refresh', async () => {
    sandbox.faults.add({ kind: '401', times: 2 });
    const before = sandbox.stats.historyRequests;
    const { client: c } = client();
    const error = await failure(listAll(c));
    expect(error.code).toBe('AUTH_REJECTED');
    expect(error.status).toBe(401);
    expect(c.stats.tokenRequests).toBe(2);
    expect(historyRequestsSince(before)).toBe(2);
  });

  it('fails with AUTH_REJECTED and the OAuth error when the token endpoint refuses the credentials', async () => {
    const { client: c } = client({}, { clientSecret: 'definitely-the-wrong-secret' });
    const error = await failure(listAll(c));
    expect(error.code).toBe('AUTH_REJECTED');
    expect(error.status).toBe(401);
    expect(error.message).toContain('invalid_client');
    expect(error.message).not.toContain('definitely-the-wrong-secret');
    expect(c.stats.tokenRequests).toBe(1);
  });

  it('fails with AUTH_REJECTED on a token endpoint 400', async () => {
    sandbox.faults.add({ route: 'token', kind: '400' });
    const error = await failure(listAll(client().client));
    expect(error.code).toBe('AUTH_REJECTED');
    expect(error.message).toContain('invalid_request');
  });

  it('fails with PERMISSION_DENIED on a 403, saying the listing is admin-tier', async () => {
    const { client: c } = client(
      {},
      {
        clientId: sandbox.credentials.nonAdmin.clientId,
        clientSecret: sandbox.credentials.nonAdmin.clientSecret,
      },
    );
    const error = await failure(listAll(c));
    expect(error.code).toBe('PERMISSION_DENIED');
    expect(error.status).toBe(403);
    expect(error.message).toMatch(/admin-tier/);
    expect(c.stats.historyRequests).toBe(1);
  });

  it('fails with HTTP_ERROR carrying the grpc-gateway {code, message} on another 4xx', async () => {
    sandbox.faults.add({
      kind: '400',
      body: '{"code":3,"message":"page_size must be a number","details":[]}',
    });
    const { client: c } = client();
    const error = await failure(listAll(c));
    expect(error.code).toBe('HTTP_ERROR');
    expect(error.status).toBe(400);
    expect(error.retryable).toBe(false);
    expect(error.message).toContain('code 3');
    expect(error.message).toContain('page_size must be a number');
    expect(error.details).toMatchObject({ serverCode: 3, serverMessage: 'page_size must be a number' });
    expect(c.stats.historyRequests).toBe(1);
  });

  it('quotes at most 200 characters of a raw 4xx body', async () => {
    sandbox.faults.add({ kind: '404', body: `no such route ${'z'.repeat(400)}` });
    const error = await failure(listAll(client().client));
    expect(error.code).toBe('HTTP_ERROR');
    expect(error.status).toBe(404);
    expect(error.message).toContain('no such route');
    expect(error.message).not.toContain('z'.repeat(200));
  });
});

describe('abort', () => {
  it('fails with ABORTED, without retrying, when the signal fires during a request', async () => {
    sandbox.faults.add({ kind: 'hang' });
    const controller = new AbortController();
    const before = sandbox.stats.historyRequests;
    const { client: c } = client({}, { signal: controller.signal });
    const listing = failure(listAll(c));
    await until(() => historyRequestsSince(before) === 1);
    controller.abort();
    const error = await listing;
    expect(error.code).toBe('ABORTED');
    expect(c.stats.retries).toBe(0);
  });

  it('fails with ABORTED when the signal fires during a retry wait', async () => {
    sandbox.faults.add({ kind: '503', retryAfter: '30' });
    const controller = new AbortController();
    const { client: c, retries } = client({ retryAfterCapMs: 30_000 }, { signal: controller.signal });
    const listing = failure(listAll(c));
    await until(() => retries.length === 1);
    const started = performance.now();
    controller.abort();
    expect((await listing).code).toBe('ABORTED');
    expect(performance.now() - started).toBeLessThan(1000);
  });
});

/** Waits for a condition by yielding to the event loop; no fixed sleeps. */
async function until(condition: () => boolean, timeoutMs = 5000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!condition()) {
    if (performance.now() > deadline) throw new Error('condition not met in time');
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
}
