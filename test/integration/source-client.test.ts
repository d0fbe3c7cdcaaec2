/**
 * The client against the sandbox tenant over real sockets: both credential forms, the token cache,
 * paging (clamping, tolerance, S7 termination, prefetch), the delete, and secrets kept out of
 * errors and logs.
 */
import { Writable } from 'node:stream';
import type { Dispatcher } from 'undici';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { HttpConfig } from '../../src/config/settings.js';
import type { GovtrailError } from '../../src/core/errors.js';
import type { HistoryPage } from '../../src/core/wire.js';
import { createLogger, silentLogger } from '../../src/runtime/logger.js';
import { type OwnerTuple, type Sandbox, startSandbox } from '../../src/sandbox/index.js';
import { TokenCache } from '../../src/source/auth.js';
import { createHttpAgent, TenantApiClient, type TenantApiClientOptions } from '../../src/source/index.js';
import { failure } from '../helpers/failure.js';

const FAST: HttpConfig = {
  connectTimeoutMs: 2000,
  headersTimeoutMs: 5000,
  bodyTimeoutMs: 5000,
  maxAttempts: 4,
  retryBudgetMs: 60_000,
  retryAfterCapMs: 20,
  retryBaseMs: 1,
  retryMaxDelayMs: 5,
};

let sandbox: Sandbox;
const agent = createHttpAgent(FAST);

beforeAll(async () => {
  sandbox = await startSandbox({ entries: 237, seed: 11, tokenTtlSeconds: 3600 });
});
afterEach(() => sandbox.faults.clear());
afterAll(async () => {
  await agent.close();
  await sandbox.close();
});

type Credential = 'secret' | 'key' | 'nonAdmin';

function client(
  credential: Credential = 'secret',
  extra: Partial<TenantApiClientOptions> = {},
): TenantApiClient {
  return new TenantApiClient({
    baseUrl: sandbox.baseUrl,
    clientId: sandbox.credentials[credential].clientId,
    clientSecret: sandbox.credentials[credential].clientSecret,
    http: FAST,
    logger: silentLogger,
    dispatcher: agent,
    ...extra,
  });
}

async function listAll(c: TenantApiClient, pageSize = 100, maxPages = 1000): Promise<HistoryPage[]> {
  const pages: HistoryPage[] = [];
  for await (const page of c.listHistory({ pageSize, maxPages })) pages.push(page);
  return pages;
}

/** Reads the first page only, as a sync run whose checkpoint is on the first page does. */
async function firstPage(c: TenantApiClient): Promise<HistoryPage | undefined> {
  for await (const page of c.listHistory({ pageSize: 100, maxPages: 1000 })) return page;
  return undefined;
}

/** Waits for a condition by yielding to the event loop; no fixed sleeps. */
async function until(condition: () => boolean, timeoutMs = 5000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!condition()) {
    if (performance.now() > deadline) throw new Error('condition not met in time');
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
}

describe('credentials', () => {
  it('authenticates with a plain client secret', async () => {
    const c = client('secret');
    expect((await listAll(c)).flatMap((p) => p.entries)).toHaveLength(237);
    expect(c.stats.tokenRequests).toBe(1);
  });

  it('authenticates with a key secret through a signed client assertion', async () => {
    const c = client('key');
    expect((await listAll(c)).flatMap((p) => p.entries)).toHaveLength(237);
    expect(c.stats.tokenRequests).toBe(1);
  });

  it('rejects a malformed key secret in the constructor with CONFIG naming GOVTRAIL_CLIENT_SECRET', () => {
    let caught: unknown;
    try {
      client('secret', { clientSecret: 'secret-token:conductorone.com:v1:@@not-base64@@' });
    } catch (err) {
      caught = err;
    }
    expect((caught as GovtrailError).code).toBe('CONFIG');
    expect((caught as GovtrailError).message).toContain('GOVTRAIL_CLIENT_SECRET');
    expect((caught as GovtrailError).message).not.toContain('@@not-base64@@');
  });
});

describe('token cache', () => {
  it('reuses one token across listings and deletes', async () => {
    const c = client();
    await listAll(c);
    await listAll(c);
    expect(await c.deleteEntitlementOwner({ ...owner('cache'), entitlementId: 'not-there' })).toBe('absent');
    expect(c.stats.tokenRequests).toBe(1);
  });

  it('a shared TokenCache carries the token from client to client, per credentials', async () => {
    const before = sandbox.stats.tokenRequests;
    const tokens = new TokenCache();
    const a = client('secret', { tokens });
    await listAll(a);
    await a.close();
    const b = client('secret', { tokens });
    await listAll(b);
    expect(b.stats.tokenRequests).toBe(0);
    // Other credentials are another entry of the cache: their own token.
    const k = client('key', { tokens });
    await listAll(k);
    expect(k.stats.tokenRequests).toBe(1);
    // Without the shared cache, each client asks for its own.
    const c = client('secret');
    await listAll(c);
    expect(c.stats.tokenRequests).toBe(1);
    expect(sandbox.stats.tokenRequests - before).toBe(3);
  });

  it('shares one token request among concurrent callers', async () => {
    const before = sandbox.stats.tokenRequests;
    const c = client('key');
    const first = async () => {
      for await (const page of c.listHistory({ pageSize: 10, maxPages: 10 })) return page;
      return undefined;
    };
    const results = await Promise.all([
      first(),
      first(),
      first(),
      c.deleteEntitlementOwner({ ...owner('concurrent'), entitlementId: 'nope-1' }),
      c.deleteEntitlementOwner({ ...owner('concurrent'), entitlementId: 'nope-2' }),
    ]);
    expect(results.slice(3)).toEqual(['absent', 'absent']);
    expect(c.stats.tokenRequests).toBe(1);
    expect(sandbox.stats.tokenRequests - before).toBe(1);
  });

  it('refreshes the token once it is within the safety margin of expiry', async () => {
    let now = 1_000_000;
    const c = client('secret', { now: () => now });
    await firstPage(c);
    // 3600 s lifetime, margin min(60 s, 360 s) = 60 s: still cached 3539 s later …
    now += 3_539_000;
    await firstPage(c);
    expect(c.stats.tokenRequests).toBe(1);
    // … and refreshed at 3540 s.
    now += 1_000;
    await firstPage(c);
    expect(c.stats.tokenRequests).toBe(2);
  });

  it('uses a margin of 10 % of a short lifetime', async () => {
    const short = await startSandbox({ entries: 5, tokenTtlSeconds: 100 });
    try {
      let now = 0;
      const c = new TenantApiClient({
        baseUrl: short.baseUrl,
        clientId: short.credentials.secret.clientId,
        clientSecret: short.credentials.secret.clientSecret,
        http: FAST,
        logger: silentLogger,
        dispatcher: agent,
        now: () => now,
      });
      await listAll(c);
      now = 89_999;
      await listAll(c);
      expect(c.stats.tokenRequests).toBe(1);
      now = 90_000;
      await listAll(c);
      expect(c.stats.tokenRequests).toBe(2);
    } finally {
      await short.close();
    }
  });
});

describe('paging', () => {
  it('pages through the whole history, equal to what the sandbox serves', async () => {
    const c = client();
    const pages = await listAll(c, 25);
    expect(pages.map((p) => p.index)).toEqual([...Array(10).keys()]);
    expect(pages.slice(0, -1).every((p) => p.entries.length === 25)).toBe(true);
    expect(pages.at(-1)?.nextPageToken).toBe('');
    expect(pages.flatMap((p) => p.entries)).toEqual(sandbox.history.entries());
    expect(c.stats.historyRequests).toBe(10);
  });

  it('sends no page_token on the first request and clamps the page size to 10–100', async () => {
    const c = client();
    for await (const page of c.listHistory({ pageSize: 5, maxPages: 10 })) {
      expect(page.entries).toHaveLength(10);
      break;
    }
    expect(sandbox.stats.lastHistoryQuery).toEqual({ page_size: '10' });
    for await (const page of c.listHistory({ pageSize: 500, maxPages: 10, prefetch: false })) {
      expect(page.entries).toHaveLength(100);
      break;
    }
    expect(sandbox.stats.lastHistoryQuery).toEqual({ page_size: '100' });
  });

  it('tolerates list: null, omitted empty fields, unknown fields and unknown enum values', async () => {
    const odd = await startSandbox({ entries: 3, seed: 5 });
    try {
      const raw = {
        metadata: {
          id: 'raw-entry-1',
          changeKind: 'CHANGE_KIND_FROM_THE_FUTURE',
          annotations: null,
          brandNew: 1,
        },
        snapshot: { auditVerbosity: 'AUDIT_VERBOSITY_EXTREME', unknownSetting: { nested: [true] } },
        extraTopLevel: 'kept',
      };
      odd.history.insertRaw(raw);
      const c = new TenantApiClient({
        baseUrl: odd.baseUrl,
        clientId: odd.credentials.secret.clientId,
        clientSecret: odd.credentials.secret.clientSecret,
        http: FAST,
        logger: silentLogger,
        dispatcher: agent,
      });
      const pages = await listAll(c, 10);
      expect(pages[0]?.entries[0]).toEqual(raw);
      expect(pages.flatMap((p) => p.entries)).toEqual(odd.history.entries());

      odd.faults.add({ kind: 'list-null' });
      // A scanned page carries its served entries too: compared by what every page has.
      const empty = (await listAll(c)).map(({ entries, nextPageToken, index }) => ({
        entries,
        nextPageToken,
        index,
      }));
      expect(empty).toEqual([{ entries: [], nextPageToken: '', index: 0 }]);

      odd.faults.add({ kind: 'omit-empty', times: Number.POSITIVE_INFINITY });
      expect((await listAll(c, 10)).flatMap((p) => p.entries)).toEqual(odd.history.entries());
    } finally {
      await odd.close();
    }
  });

  it('fails with BAD_RESPONSE on a body that is not JSON, quoting it', async () => {
    sandbox.faults.add({ kind: 'badjson', afterRequests: 1 });
    const error = await failure(listAll(client(), 100));
    expect(error.code).toBe('BAD_RESPONSE');
    // Quoted as a JSON string, so control characters cannot forge log lines.
    expect(error.message).toContain(JSON.stringify('{"list":[{"metadata":{"id":"2'));
  });

  it('fails with BAD_RESPONSE when list is not an array', async () => {
    sandbox.faults.add({ kind: 'list-not-array' });
    const error = await failure(listAll(client()));
    expect(error.code).toBe('BAD_RESPONSE');
    expect(error.message).toContain('list');
  });

  it('fails with PAGING_LOOP on a repeated page token instead of looping', async () => {
    sandbox.faults.add({ kind: 'repeat-token', afterRequests: 1 });
    const c = client();
    const seen: number[] = [];
    const error = await failure(
      (async () => {
        for await (const page of c.listHistory({ pageSize: 10, maxPages: 1000 })) seen.push(page.index);
      })(),
    );
    expect(error.code).toBe('PAGING_LOOP');
    expect(seen).toEqual([0, 1]);
    expect(c.stats.historyRequests).toBe(2);
  });

  it('fails with PAGE_LIMIT past maxPages', async () => {
    const c = client();
    const error = await failure(listAll(c, 10, 4));
    expect(error.code).toBe('PAGE_LIMIT');
    expect(c.stats.historyRequests).toBe(4);
  });

  it('starts the request for the next page before the consumer asks for it', async () => {
    const before = sandbox.stats.historyRequests;
    const c = client();
    const pages = c.listHistory({ pageSize: 10, maxPages: 100 });
    const first = await pages.next();
    expect((first.value as HistoryPage).index).toBe(0);
    // The consumer holds page 0 (as if writing it); the server sees page 1 requested meanwhile.
    await until(() => sandbox.stats.historyRequests - before === 2);
    const second = await pages.next();
    expect((second.value as HistoryPage).index).toBe(1);
    await pages.return(undefined);
  });

  it('cancels the prefetched request when the consumer stops early, leaving nothing in flight', async () => {
    sandbox.faults.add({ kind: 'hang', afterRequests: 1 });
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    const before = sandbox.stats.historyRequests;
    // A private agent: close() waits for requests in flight, so it only resolves if none dangles.
    const c = new TenantApiClient({
      baseUrl: sandbox.baseUrl,
      clientId: sandbox.credentials.secret.clientId,
      clientSecret: sandbox.credentials.secret.clientSecret,
      http: FAST,
      logger: silentLogger,
    });
    try {
      for await (const page of c.listHistory({ pageSize: 10, maxPages: 100 })) {
        expect(page.index).toBe(0);
        await until(() => sandbox.stats.historyRequests - before === 2);
        break;
      }
      await c.close();
      await new Promise<void>((resolve) => setImmediate(resolve));
      expect(unhandled).toEqual([]);
      expect(c.stats.retries).toBe(0);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });

  it('cancels the prefetch when the consumer throws', async () => {
    sandbox.faults.add({ kind: 'hang', afterRequests: 1 });
    const c = new TenantApiClient({
      baseUrl: sandbox.baseUrl,
      clientId: sandbox.credentials.secret.clientId,
      clientSecret: sandbox.credentials.secret.clientSecret,
      http: FAST,
      logger: silentLogger,
    });
    await expect(
      (async () => {
        for await (const _ of c.listHistory({ pageSize: 10, maxPages: 100 }))
          throw new Error('database down');
      })(),
    ).rejects.toThrow('database down');
    await c.close();
  });
});

let ownerCounter = 0;
function owner(tag: string): OwnerTuple {
  ownerCounter += 1;
  return {
    appId: `app-${tag}-${ownerCounter}`,
    resourceTypeId: 'repository',
    resourceId: `res-${ownerCounter}`,
    roleSlug: 'admin',
    entitlementAppId: 'okta',
    entitlementId: `group-${ownerCounter}`,
  };
}

describe('deleteEntitlementOwner', () => {
  it('deletes an owner, then reports it absent', async () => {
    const o = owner('plain');
    sandbox.owners.add(o);
    const c = client();
    expect(await c.deleteEntitlementOwner(o)).toBe('deleted');
    expect(sandbox.owners.has(o)).toBe(false);
    expect(await c.deleteEntitlementOwner(o)).toBe('absent');
  });

  it('addresses owners whose ids hold /, %, ?, #, +, &, spaces and non-ASCII', async () => {
    const nasty: OwnerTuple = {
      appId: 'app/with/slashes',
      resourceTypeId: '100% type',
      resourceId: 'what? #1 & more+',
      roleSlug: "role (it's)*!",
      entitlementAppId: '日本-app %2F',
      entitlementId: 'ent ü/ß?#',
    };
    sandbox.owners.add(nasty);
    const seeded = sandbox.owners.list();
    const c = client();
    for (const o of seeded) expect(await c.deleteEntitlementOwner(o), JSON.stringify(o)).toBe('deleted');
    expect(sandbox.owners.list()).toEqual([]);
  });

  it('fails with INVALID_ARGUMENT before any request on an empty or blank id', async () => {
    const before = sandbox.stats.requests;
    const c = client();
    for (const field of [
      'appId',
      'resourceTypeId',
      'resourceId',
      'roleSlug',
      'entitlementAppId',
      'entitlementId',
    ]) {
      for (const value of ['', '   ']) {
        const error = await failure(c.deleteEntitlementOwner({ ...owner('bad'), [field]: value }));
        expect(error.code).toBe('INVALID_ARGUMENT');
        expect(error.message).toContain(field);
      }
    }
    expect(sandbox.stats.requests).toBe(before);
  });

  it('retries a delete and reports absent when the retried attempt finds it gone', async () => {
    const o = owner('retry');
    sandbox.owners.add(o);
    sandbox.faults.add({ route: 'delete', kind: 'reset' });
    const c = client();
    expect(await c.deleteEntitlementOwner(o)).toBe('deleted');
    expect(c.stats.retries).toBe(1);
    sandbox.faults.add({ route: 'delete', kind: '503' });
    expect(await c.deleteEntitlementOwner(o)).toBe('absent');
  });

  it('fails with PERMISSION_DENIED for a non-admin client', async () => {
    const o = owner('forbidden');
    sandbox.owners.add(o);
    const error = await failure(client('nonAdmin').deleteEntitlementOwner(o));
    expect(error.code).toBe('PERMISSION_DENIED');
    expect(sandbox.owners.has(o)).toBe(true);
  });
});

describe('secrets (S11)', () => {
  it('keeps the client secret, every assertion and every token out of errors and log lines', async () => {
    // Record what goes on the wire through an injected dispatcher, to learn every token and assertion.
    const tokens = new Set<string>();
    const assertions = new Set<string>();
    const recording = agent.compose((dispatch: Dispatcher['dispatch']) => (opts, handler) => {
      const headers = (opts.headers ?? {}) as Record<string, string>;
      const auth = headers['authorization'];
      if (auth !== undefined) tokens.add(auth.replace(/^Bearer /, ''));
      if (typeof opts.body === 'string' && opts.body.includes('client_assertion=')) {
        const a = new URLSearchParams(opts.body).get('client_assertion');
        if (a !== null) assertions.add(a);
      }
      return dispatch(opts, handler);
    });
    const lines: string[] = [];
    const destination = new Writable({
      write(chunk: Buffer, _encoding, callback) {
        lines.push(chunk.toString('utf8'));
        callback();
      },
    });
    const logger = createLogger({ level: 'trace', destination });
    const errors: GovtrailError[] = [];
    const run = async (credential: Credential, work: (c: TenantApiClient) => Promise<unknown>) => {
      const c = client(credential, { logger, dispatcher: recording });
      try {
        await work(c);
      } catch (err) {
        errors.push(err as GovtrailError);
        logger.error({ err }, 'run failed');
      }
    };

    sandbox.faults.add({ route: 'token', kind: '503', body: 'echo' });
    await run('key', (c) => listAll(c, 100));
    sandbox.expireTokens();
    await run('key', async (c) => {
      await firstPage(c);
      sandbox.expireTokens();
      await firstPage(c);
    });
    sandbox.faults.add({ kind: '401', times: 2 });
    await run('secret', (c) => listAll(c));
    await run('secret', (c) => c.deleteEntitlementOwner({ ...owner('s11'), roleSlug: ' ' }));
    await run('nonAdmin', (c) => listAll(c));
    const keySecret = sandbox.credentials.key.clientSecret;
    await run('key', async () => {
      new TenantApiClient({
        baseUrl: sandbox.baseUrl,
        clientId: 'x',
        clientSecret: `${keySecret.slice(0, -4)}!!!!`,
        http: FAST,
        logger,
      });
    });
    await run('secret', () =>
      listAll(
        new TenantApiClient({
          baseUrl: sandbox.baseUrl,
          clientId: sandbox.credentials.secret.clientId,
          clientSecret: 'wrong-secret-that-must-not-leak',
          http: FAST,
          logger,
          dispatcher: recording,
        }),
      ),
    );

    expect(tokens.size).toBeGreaterThanOrEqual(3);
    expect(assertions.size).toBeGreaterThanOrEqual(3);
    expect(errors.map((e) => e.code)).toEqual([
      'AUTH_REJECTED',
      'INVALID_ARGUMENT',
      'PERMISSION_DENIED',
      'CONFIG',
      'AUTH_REJECTED',
    ]);
    expect(lines.length).toBeGreaterThan(5);

    const secrets = [
      sandbox.credentials.secret.clientSecret,
      sandbox.credentials.key.clientSecret,
      sandbox.credentials.key.clientSecret.slice('secret-token:conductorone.com:v1:'.length, -4),
      sandbox.credentials.nonAdmin.clientSecret,
      'wrong-secret-that-must-not-leak',
      ...tokens,
      ...assertions,
    ];
    const texts = [...lines, ...errors.flatMap((e) => errorTexts(e))];
    for (const secret of secrets) {
      for (const text of texts)
        expect(text.includes(secret), `a secret leaked into: ${text.slice(0, 120)}`).toBe(false);
    }
  });
});

function errorTexts(e: unknown, depth = 0): string[] {
  if (!(e instanceof Error) || depth > 5) return [];
  return [
    e.message,
    JSON.stringify((e as GovtrailError).details ?? {}),
    e.stack ?? '',
    ...errorTexts(e.cause, depth + 1),
  ];
}
