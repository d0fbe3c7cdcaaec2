/**
 * The tenant API client: one instance per sync run. It owns the token cache, the run-level retry
 * budget and the request counters, and sends everything to the one origin of its base URL.
 */
import type { Agent, Dispatcher } from 'undici';
import { RetryBudget } from '../core/backoff.js';
import { ConfigError, GovtrailError } from '../core/errors.js';
import type { HistoryPage } from '../core/wire.js';
import type { Logger } from '../runtime/logger.js';
import { registerSecret } from '../runtime/logger.js';
import { parseClientSecret, type TokenCache, TokenProvider } from './auth.js';
import { type HttpConfig, isLoopbackHost } from './client-config.js';
import {
  createHttpAgent,
  type HttpResponse,
  type HttpStats,
  HttpTransport,
  type RequestSpec,
  type RetryInfo,
} from './http.js';
import { abortedError, statusError } from './http-errors.js';
import { type EntitlementOwnerRef, entitlementOwnerBody, entitlementOwnerPath } from './owners.js';
import { type HistoryPageQuery, type ListHistoryOptions, pageHistory, parseHistoryBody } from './pager.js';

const HISTORY_PATH = '/api/v1/settings/ai-governance/history';

/** Options of {@link TenantApiClient}. */
export interface TenantApiClientOptions {
  /** Base URL of the tenant: https, or plain http only to a loopback host. */
  baseUrl: string;
  clientId: string;
  /** Plain client secret or `secret-token:conductorone.com:v1:…` key secret. Never logged. */
  clientSecret: string;
  http: HttpConfig;
  logger: Logger;
  /** Dispatcher to send through (a shared agent, tests). Default: a private agent, closed by close(). */
  dispatcher?: Dispatcher;
  /** Aborts everything in flight and every later call: they fail with ABORTED. */
  signal?: AbortSignal;
  /** Called before each wait between two attempts (metrics). */
  onRetry?: (info: RetryInfo) => void;
  /** Clock of the token cache, in milliseconds. Default Date.now. */
  now?: () => number;
  /** Tokens kept across clients (the worker's, one per process); default: this client's own. */
  tokens?: TokenCache;
}

/** Request counters of one client; every attempt counts. */
export interface TenantApiStats {
  /** Every HTTP request sent, token requests and retries included. */
  readonly requests: number;
  readonly historyRequests: number;
  readonly deleteRequests: number;
  readonly tokenRequests: number;
  /** Waits between attempts (one per retried attempt). */
  readonly retries: number;
}

/**
 * Checks a base URL again at the point of use: https, or http only to a loopback host, no
 * credentials, query or fragment. Returns it without trailing slash.
 */
export function validateBaseUrl(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new GovtrailError('INSECURE_URL', 'the tenant base URL is not a valid URL');
  }
  const secure = url.protocol === 'https:' || (url.protocol === 'http:' && isLoopbackHost(url.hostname));
  if (!secure) {
    throw new GovtrailError(
      'INSECURE_URL',
      `the tenant base URL must use https (plain http only to a loopback host), got ${url.protocol}//${url.host}`,
    );
  }
  if (url.username !== '' || url.password !== '' || url.search !== '' || url.hash !== '') {
    throw new GovtrailError(
      'INSECURE_URL',
      'the tenant base URL must not carry credentials, a query or a fragment',
    );
  }
  return url.toString().replace(/\/+$/, '');
}

/**
 * Client for the two operations of the tenant API (docs/design/tenant-api.md), with authentication and
 * retries.
 */
export class TenantApiClient {
  readonly #transport: HttpTransport;
  readonly #tokens: TokenProvider;
  readonly #logger: Logger;
  readonly #signal: AbortSignal | undefined;
  readonly #privateAgent: Agent | undefined;
  readonly #stats: HttpStats = {
    requests: 0,
    historyRequests: 0,
    tokenRequests: 0,
    deleteRequests: 0,
    retries: 0,
  };

  /**
   * Validates the base URL (INSECURE_URL) and the form of the secret (CONFIG naming
   * GOVTRAIL_CLIENT_SECRET). Sends nothing until the first call.
   */
  constructor(options: TenantApiClientOptions) {
    // First of all, so that the secret is scrubbed from any log line that might follow.
    registerSecret(options.clientSecret);
    // A key secret's base64url part and private key are secrets on their own too.
    if (options.clientSecret.startsWith('secret-token:')) {
      registerSecret(options.clientSecret.slice(options.clientSecret.lastIndexOf(':') + 1));
    }
    const baseUrl = validateBaseUrl(options.baseUrl);
    if (options.clientId.trim() === '') throw new ConfigError('GOVTRAIL_CLIENT_ID', 'is empty');
    const credential = parseClientSecret(options.clientSecret);
    if (credential.kind === 'key') registerSecret(credential.jwk.d);
    this.#logger = options.logger.child({ component: 'tenant-api' });
    this.#signal = options.signal;
    let dispatcher = options.dispatcher;
    if (dispatcher === undefined) {
      this.#privateAgent = createHttpAgent(options.http);
      dispatcher = this.#privateAgent;
    }
    this.#transport = new HttpTransport({
      baseUrl,
      dispatcher,
      http: options.http,
      logger: this.#logger,
      budget: new RetryBudget(options.http.retryBudgetMs),
      stats: this.#stats,
      signal: options.signal,
      onRetry: options.onRetry,
    });
    this.#tokens = new TokenProvider({
      baseUrl,
      clientId: options.clientId,
      credential,
      transport: this.#transport,
      logger: this.#logger,
      now: options.now ?? Date.now,
      ...(options.tokens !== undefined ? { cache: options.tokens } : {}),
    });
  }

  /** A snapshot of the request counters. */
  get stats(): TenantApiStats {
    return { ...this.#stats };
  }

  /**
   * Async generator of validated history pages, newest first. Fails with BAD_RESPONSE,
   * PAGING_LOOP, PAGE_LIMIT or any HTTP error code; stopping early cancels a prefetched request.
   */
  listHistory(options: ListHistoryOptions): AsyncGenerator<HistoryPage, void, undefined> {
    return pageHistory((query, signal) => this.#fetchHistoryPage(query, signal), options);
  }

  /**
   * Deletes one entitlement ownership source. Resolves 'deleted' on success and 'absent' on 404
   * (already gone, also after a retried attempt that had in fact succeeded). Invalid ids fail with
   * INVALID_ARGUMENT before any request.
   */
  async deleteEntitlementOwner(ref: EntitlementOwnerRef): Promise<'deleted' | 'absent'> {
    const path = entitlementOwnerPath(ref);
    const response = await this.#authorized({
      route: 'delete',
      method: 'DELETE',
      path,
      headers: { 'content-type': 'application/json' },
      body: entitlementOwnerBody(ref),
      passStatuses: [404],
    });
    const outcome = response.status === 404 ? 'absent' : 'deleted';
    this.#logger.debug({ route: 'delete', outcome }, 'entitlement owner deletion done');
    return outcome;
  }

  /** Closes the private agent, if the client made one; an injected dispatcher is left open. */
  async close(): Promise<void> {
    if (this.#privateAgent !== undefined && !this.#privateAgent.closed) await this.#privateAgent.close();
  }

  async #fetchHistoryPage(query: HistoryPageQuery, signal: AbortSignal): Promise<HistoryPage> {
    const params = new URLSearchParams({ page_size: String(query.pageSize) });
    if (query.pageToken !== undefined) params.set('page_token', query.pageToken);
    const response = await this.#authorized({
      route: 'history',
      method: 'GET',
      path: `${HISTORY_PATH}?${params.toString()}`,
      signal,
    });
    return parseHistoryBody(response.bytes, query.index);
  }

  /**
   * Sends an authenticated request. A 401 means the token went stale: it is dropped, a new one is
   * fetched once and the request is sent once more; a second 401 fails with AUTH_REJECTED.
   */
  async #authorized(spec: RequestSpec): Promise<HttpResponse> {
    const passStatuses = [401, ...(spec.passStatuses ?? [])];
    const send = async (): Promise<{ response: HttpResponse; token: string }> => {
      const token = await this.#token(spec.signal);
      const response = await this.#transport.send({
        ...spec,
        headers: { ...spec.headers, authorization: `Bearer ${token}` },
        passStatuses,
      });
      return { response, token };
    };
    const first = await send();
    if (first.response.status !== 401) return first.response;
    this.#logger.info({ route: spec.route }, 'the access token was refused (401); fetching a new one once');
    this.#tokens.invalidate(first.token);
    const second = await send();
    if (second.response.status !== 401) return second.response;
    const error = statusError(spec.route, 401, second.response.text);
    throw new GovtrailError('AUTH_REJECTED', `${error.message}, also with a freshly issued token`, {
      status: 401,
      ...(error.details === undefined ? {} : { details: error.details }),
    });
  }

  /** The token, given up on as soon as `signal` (a discarded prefetch) or the client's signal fires. */
  async #token(signal: AbortSignal | undefined): Promise<string> {
    const signals = [this.#signal, signal].filter((s): s is AbortSignal => s !== undefined);
    if (signals.some((s) => s.aborted)) throw abortedError();
    if (signals.length === 0) return this.#tokens.getToken();
    const combined = AbortSignal.any(signals);
    let onAbort: (() => void) | undefined;
    const aborted = new Promise<never>((_, reject) => {
      onAbort = () => reject(abortedError(combined.reason));
      combined.addEventListener('abort', onAbort, { once: true });
    });
    try {
      return await Promise.race([this.#tokens.getToken(), aborted]);
    } finally {
      if (onAbort !== undefined) combined.removeEventListener('abort', onAbort);
    }
  }
}
