/**
 * The HTTP layer of the tenant API client: one undici request per attempt, retried with p-retry on
 * the statuses and network failures docs/design/sync.md ("HTTP behaviour") names, with full-jitter backoff,
 * `Retry-After`, a per-request attempt limit and the run-level retry budget. Every non-2xx answer
 * becomes a {@link GovtrailError} with a stable code; redirects are never followed.
 */
import { setTimeout as delay } from 'node:timers/promises';
import pRetry from 'p-retry';
import { Agent, type Dispatcher, request } from 'undici';
import { backoffDelay, parseRetryAfter, type RetryBudget } from '../core/backoff.js';
import { GovtrailError, HttpError, isAbortError } from '../core/errors.js';
import { redactCut } from '../core/redact.js';
import type { Logger } from '../runtime/logger.js';
import type { HttpConfig } from './client-config.js';
import {
  abortedError,
  bodyDeadlineError,
  bodyTooLargeError,
  networkErrorCode,
  RETRYABLE_NETWORK_CODES,
  type Route,
  routeLabel,
  statusError,
} from './http-errors.js';

/** Reported to {@link HttpTransportOptions.onRetry} before each wait between two attempts. */
export interface RetryInfo {
  /** The attempt that just failed (1 for the first). */
  attempt: number;
  /** How long the client waits before the next attempt. */
  delayMs: number;
  /** HTTP status of the failed attempt; absent for network errors. */
  status?: number;
  /** Error code of the failed attempt (RATE_LIMITED, HTTP_ERROR, NETWORK). */
  code: string;
  route: Route;
}

/** Request counters of one client instance. Every attempt counts, retries included. */
export interface HttpStats {
  requests: number;
  historyRequests: number;
  tokenRequests: number;
  deleteRequests: number;
  retries: number;
}

/** One logical request; the transport may send it several times. */
export interface RequestSpec {
  route: Route;
  method: 'GET' | 'POST' | 'DELETE';
  /** Path and query relative to the base URL, starting with `/`. Segments already encoded. */
  path: string;
  /** Extra request headers. May carry the bearer token: never logged, never put in an error. */
  headers?: Record<string, string>;
  /** The body, or a function building a fresh one for each attempt (a new client assertion). */
  body?: string | (() => Promise<string>);
  /**
   * Non-2xx statuses handed back to the caller instead of being turned into an error: 401 so the
   * caller can refresh its token, 404 for a delete of something already gone, 400 at the token
   * endpoint. They are never retried here.
   */
  passStatuses?: readonly number[];
  /** Cancels this request only (a discarded prefetch); the client-wide signal still applies. */
  signal?: AbortSignal;
}

/** A response the caller asked for: any 2xx, or one of {@link RequestSpec.passStatuses}. */
export interface HttpResponse {
  status: number;
  /** The whole body as received (a history page is scanned as bytes: served-entry.ts). */
  readonly bytes: Buffer;
  /** The whole body as text (UTF-8), decoded once when first read. */
  readonly text: string;
}

/** A response whose text is decoded from its bytes only when read. */
class BodyResponse implements HttpResponse {
  #text: string | undefined;
  constructor(
    readonly status: number,
    readonly bytes: Buffer,
  ) {}
  get text(): string {
    this.#text ??= this.bytes.toString('utf8');
    return this.#text;
  }
}

export interface HttpTransportOptions {
  /** Validated base URL without trailing slash; every request goes to its origin. */
  baseUrl: string;
  dispatcher: Dispatcher;
  http: HttpConfig;
  logger: Logger;
  budget: RetryBudget;
  stats: HttpStats;
  signal?: AbortSignal | undefined;
  onRetry?: ((info: RetryInfo) => void) | undefined;
  /** Uniform random numbers in [0, 1) for the jitter; injectable for tests. */
  random?: () => number;
}

/** At most this much of an error body is read; the rest is discarded with the socket. */
const ERROR_BODY_LIMIT = 16 * 1024;
/** Largest 2xx body read when GOVTRAIL_HTTP_MAX_BODY is not set: a page of 100 entries is ~100 KiB. */
export const DEFAULT_MAX_BODY_BYTES = 64 * 1024 * 1024;

const USER_AGENT = 'govtrail/0.1 (+https://github.com/govtrail)';

/**
 * Creates the one undici Agent the process shares across runs: keep-alive connections (undici's
 * default) with the configured connect, headers and body timeouts. Redirects are not followed:
 * the agent has no redirect interceptor, and none may be added, because a redirect would carry the
 * bearer token to wherever the server points.
 */
export function createHttpAgent(http: HttpConfig): Agent {
  return new Agent({
    connect: { timeout: http.connectTimeoutMs },
    headersTimeout: http.headersTimeoutMs,
    bodyTimeout: http.bodyTimeoutMs,
  });
}

/**
 * Sends requests to one tenant with retries. One instance per client; it owns no sockets (the
 * dispatcher does) and shares the run-level {@link RetryBudget} with nothing else.
 */
export class HttpTransport {
  readonly #origin: string;
  readonly #baseUrl: string;
  readonly #options: HttpTransportOptions;
  /** Retry-After waits of failed attempts, keyed by the error that carried them. */
  readonly #retryAfter = new WeakMap<GovtrailError, number>();

  constructor(options: HttpTransportOptions) {
    this.#options = options;
    this.#baseUrl = options.baseUrl;
    this.#origin = new URL(options.baseUrl).origin;
  }

  /**
   * Sends `spec`, retrying retryable failures. Resolves with any 2xx response or a status the spec
   * passes through; rejects with a GovtrailError otherwise.
   */
  async send(spec: RequestSpec): Promise<HttpResponse> {
    const { http, budget, logger, onRetry, stats } = this.#options;
    const signals = [this.#options.signal, spec.signal].filter((s): s is AbortSignal => s !== undefined);
    const signal =
      signals.length === 0 ? undefined : signals.length === 1 ? signals[0] : AbortSignal.any(signals);
    const maxAttempts = Math.max(1, Math.trunc(http.maxAttempts));
    let attempts = 0;
    try {
      return await pRetry(
        (attemptNumber) => {
          attempts = attemptNumber;
          return this.#attempt(spec, signal);
        },
        {
          retries: maxAttempts - 1,
          // p-retry 7 has no per-error delay, so its own backoff is switched off and the wait
          // (Retry-After or full jitter, charged to the run budget) is taken in shouldRetry, which
          // p-retry calls only when another attempt will follow (onFailedAttempt runs after the
          // last attempt too).
          minTimeout: 0,
          maxTimeout: 0,
          factor: 1,
          randomize: false,
          shouldRetry: async ({ error, attemptNumber }) => {
            if (!(error instanceof GovtrailError) || !error.retryable || signal?.aborted) return false;
            const hinted = this.#retryAfter.get(error);
            const wait =
              hinted ??
              backoffDelay(attemptNumber - 1, http.retryBaseMs, http.retryMaxDelayMs, this.#options.random);
            // Throws RETRY_BUDGET_EXHAUSTED, which p-retry passes on unchanged.
            budget.reserve(wait, error);
            stats.retries += 1;
            const info: RetryInfo = {
              attempt: attemptNumber,
              delayMs: wait,
              code: error.code,
              route: spec.route,
              ...(error.status === undefined ? {} : { status: error.status }),
            };
            logger.warn({ ...info, retryAfter: hinted !== undefined }, 'tenant API request failed; retrying');
            onRetry?.(info);
            if (wait > 0) await delay(wait, undefined, signal === undefined ? {} : { signal });
            return true;
          },
        },
      );
    } catch (err) {
      if (signal?.aborted)
        throw err instanceof GovtrailError && err.code === 'ABORTED' ? err : abortedError(err);
      if (err instanceof GovtrailError) {
        if (err.retryable && err.code !== 'RETRY_BUDGET_EXHAUSTED' && attempts >= maxAttempts) {
          throw new HttpError(
            err.code,
            `${err.message} (gave up after ${attempts} attempt${attempts === 1 ? '' : 's'})`,
            {
              cause: err.cause,
              retryable: true,
              ...(err.status === undefined ? {} : { status: err.status }),
              details: { ...err.details, attempts },
            },
          );
        }
        throw err;
      }
      if (isAbortError(err)) throw abortedError(err);
      throw new GovtrailError('INTERNAL', 'unexpected failure in the tenant API client', { cause: err });
    }
  }

  /** One attempt: send, then read the body or turn the status into an error. */
  async #attempt(spec: RequestSpec, signal: AbortSignal | undefined): Promise<HttpResponse> {
    const { dispatcher, http, stats, logger } = this.#options;
    if (signal?.aborted) throw abortedError(signal.reason);
    stats.requests += 1;
    if (spec.route === 'history') stats.historyRequests += 1;
    else if (spec.route === 'token') stats.tokenRequests += 1;
    else stats.deleteRequests += 1;

    const url = `${this.#baseUrl}${spec.path}`;
    const requestBody = typeof spec.body === 'function' ? await spec.body() : spec.body;
    const started = performance.now();
    let response: Dispatcher.ResponseData;
    try {
      response = await request(url, {
        method: spec.method,
        dispatcher,
        headers: { accept: 'application/json', 'user-agent': USER_AGENT, ...spec.headers },
        body: requestBody ?? null,
        // Per request as well as on the agent, so an injected dispatcher gets the same limits.
        headersTimeout: http.headersTimeoutMs,
        bodyTimeout: http.bodyTimeoutMs,
        signal: signal ?? null,
      });
    } catch (err) {
      throw this.#networkError(err, spec.route, signal);
    }

    const { statusCode: status, body } = response;
    const ok = (status >= 200 && status < 300) || (spec.passStatuses?.includes(status) ?? false);
    // The whole body of an answer the caller takes (a page is scanned as bytes); of an error, text.
    let read: { ok: true; bytes: Buffer } | { ok: false; text: string };
    // undici's bodyTimeout bounds each gap between chunks; this bounds the whole body, so that an
    // upstream trickling a byte at a time cannot hold the run open.
    const deadline = setTimeout(
      () => body.destroy(bodyDeadlineError(spec.route, http.bodyTimeoutMs)),
      http.bodyTimeoutMs,
    );
    try {
      read = ok
        ? {
            ok,
            bytes: await readBounded(
              body,
              http.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES,
              spec.route,
              header(response, 'content-length'),
            ),
          }
        : { ok, text: await readCapped(body, ERROR_BODY_LIMIT) };
    } catch (err) {
      body.destroy();
      throw this.#networkError(err, spec.route, signal);
    } finally {
      clearTimeout(deadline);
    }
    logger.debug(
      { route: spec.route, method: spec.method, status, ms: Math.round(performance.now() - started) },
      'tenant API response',
    );
    if (read.ok) return new BodyResponse(status, read.bytes);

    if (status >= 300 && status < 400)
      throw this.#redirectError(spec.route, status, header(response, 'location'), url);
    const error = statusError(spec.route, status, read.text, this.#baseUrl);
    if (error.retryable) {
      const hinted = parseRetryAfter(header(response, 'retry-after'), Date.now(), http.retryAfterCapMs);
      if (hinted !== undefined) this.#retryAfter.set(error, hinted);
    }
    throw error;
  }

  #networkError(err: unknown, route: Route, signal: AbortSignal | undefined): GovtrailError {
    if (signal?.aborted || isAbortError(err)) return abortedError(err);
    if (err instanceof GovtrailError) return err;
    const code = networkErrorCode(err);
    const retryable = code !== undefined && RETRYABLE_NETWORK_CODES.has(code);
    // The URL tried is named: a mistyped base URL (or host) is the usual cause of a first failure.
    const message = `${routeLabel(route)} to ${this.#baseUrl} failed: network error${code ? ` ${code}` : ''}`;
    return new HttpError('NETWORK', message, {
      cause: err,
      retryable,
      details: { route, ...(code === undefined ? {} : { networkCode: code }) },
    });
  }

  /**
   * A 3xx is never followed: following would re-send the request (and its bearer token) to a place
   * the server chose. A Location on another origin is reported as INSECURE_URL.
   */
  #redirectError(
    route: Route,
    status: number,
    location: string | undefined,
    requestUrl: string,
  ): GovtrailError {
    let target: URL | undefined;
    if (location !== undefined) {
      try {
        target = new URL(location, requestUrl);
      } catch {
        target = undefined;
      }
    }
    const details = { route, status, ...(target === undefined ? {} : { locationHost: target.host }) };
    if (target !== undefined && target.origin !== this.#origin) {
      return new HttpError(
        'INSECURE_URL',
        `${routeLabel(route)} was redirected (HTTP ${status}) to another origin, ${target.origin}; ` +
          'redirects are not followed so that the token never leaves the tenant host',
        { status, details },
      );
    }
    return new HttpError(
      'HTTP_ERROR',
      `${routeLabel(route)} answered with a redirect (HTTP ${status}), which is not followed; check the base URL`,
      { status, details },
    );
  }
}

/**
 * Reads a 2xx body, at most `limit` bytes: a larger Content-Length is refused before
 * reading, and a body that grows past the limit is destroyed as soon as it does, so no more than
 * `limit` bytes (plus one chunk) are ever held.
 */
async function readBounded(
  body: Dispatcher.ResponseData['body'],
  limit: number,
  route: Route,
  contentLength: string | undefined,
): Promise<Buffer> {
  const declared = contentLength === undefined ? Number.NaN : Number(contentLength);
  if (Number.isSafeInteger(declared) && declared > limit) {
    body.destroy();
    throw bodyTooLargeError(route, limit, declared);
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    const buf = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as Uint8Array);
    size += buf.length;
    if (size > limit) {
      body.destroy();
      throw bodyTooLargeError(route, limit);
    }
    chunks.push(buf);
  }
  return Buffer.concat(chunks, size);
}

function header(response: Dispatcher.ResponseData, name: string): string | undefined {
  const v = response.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

/**
 * Reads at most `limit` bytes of an error body, then destroys the rest. Reading it to the end keeps
 * the keep-alive socket reusable in the usual case of a short body. A body cut at the limit may end
 * in the first part of a secret, which no longer matches the whole: {@link redactCut} drops it.
 */
async function readCapped(body: Dispatcher.ResponseData['body'], limit: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    const buf = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as Uint8Array);
    chunks.push(buf);
    size += buf.length;
    if (size >= limit) {
      body.destroy();
      break;
    }
  }
  const text = Buffer.concat(chunks).subarray(0, limit).toString('utf8');
  return size >= limit ? redactCut(text) : text;
}
