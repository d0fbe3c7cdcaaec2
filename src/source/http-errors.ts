/**
 * What the HTTP layer of the tenant API client (http.ts) makes of a failed request: a
 * {@link GovtrailError} with a stable code for every non-2xx answer, network failure, abort, slow
 * or oversized body, and the short quote of a server's answer that an error message may carry.
 */
import { GovtrailError, HttpError, RETRYABLE_STATUSES } from '../core/errors.js';
import { parseJsonText } from '../core/json-text.js';
import { clip } from '../core/redact.js';

/** Which operation a request belongs to (metrics label, log field, error wording). */
export type Route = 'token' | 'history' | 'delete';

/**
 * Network failure codes worth another attempt: the connection was refused, reset, or timed out, or
 * the response was cut short. Anything else (a bad argument, a closed client) is a bug or a
 * permanent condition and fails at once.
 */
export const RETRYABLE_NETWORK_CODES: ReadonlySet<string> = new Set([
  'ECONNRESET',
  'ECONNREFUSED',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'ENETUNREACH',
  'ENETDOWN',
  'EHOSTUNREACH',
  'EAI_AGAIN',
  'UND_ERR_SOCKET',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
  'UND_ERR_RES_CONTENT_LENGTH_MISMATCH',
]);

/** At most this many characters of a server's body are quoted in an error message. */
export const QUOTE_LIMIT = 200;

/**
 * A server's text for an error message: every registered secret removed first, then shortened
 * ({@link clip}), then quoted.
 */
export function quote(text: string, limit: number = QUOTE_LIMIT): string {
  return JSON.stringify(clip(text, limit));
}

/** What a server said in an error body, ready for a message. */
export interface ServerErrorDescription {
  /** One line for the error message. */
  summary: string;
  /** `code` of a grpc-gateway body (a number or a name), or OAuth's `error`. */
  serverCode?: string | number;
  /** `message` of a grpc-gateway body, or OAuth's `error_description`. */
  serverMessage?: string;
}

/**
 * Describes an error body: the grpc-gateway `{code, message}` shape (code may be a number), the
 * OAuth `{error, error_description}` shape, or else the raw text, at most 200 characters.
 */
export function describeErrorBody(text: string): ServerErrorDescription {
  const trimmed = text.trim();
  if (trimmed === '') return { summary: 'empty body' };
  let parsed: unknown;
  try {
    parsed = parseJsonText(trimmed);
  } catch {
    return { summary: `body ${quote(trimmed)}` };
  }
  if (parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)) {
    const o = parsed as Record<string, unknown>;
    const code = pickCode(o['code']) ?? pickCode(o['error']);
    const rawMessage = o['message'] ?? o['error_description'];
    const message = typeof rawMessage === 'string' ? clip(rawMessage, QUOTE_LIMIT) : undefined;
    if (code !== undefined || message !== undefined) {
      const parts = [
        code === undefined ? undefined : `code ${code}`,
        message === undefined ? undefined : `message ${JSON.stringify(message)}`,
      ].filter((p): p is string => p !== undefined);
      return {
        summary: parts.join(', '),
        ...(code === undefined ? {} : { serverCode: code }),
        ...(message === undefined ? {} : { serverMessage: message }),
      };
    }
  }
  return { summary: `body ${quote(trimmed)}` };
}

function pickCode(v: unknown): string | number | undefined {
  if (typeof v === 'number' && Number.isFinite(v)) return v;
  if (typeof v === 'string' && v !== '') return clip(v, 64);
  return undefined;
}

export function routeLabel(route: Route): string {
  switch (route) {
    case 'token':
      return 'token request (POST /auth/v1/token)';
    case 'history':
      return 'history listing (GET /api/v1/settings/ai-governance/history)';
    case 'delete':
      return 'entitlement owner deletion (DELETE /api/v2/apps/…/owners/entitlements/…)';
  }
}

/**
 * Turns a non-2xx status into an error with a stable code: 429 → RATE_LIMITED and 408/5xx →
 * HTTP_ERROR (both retryable), 401 → AUTH_REJECTED, 403 → PERMISSION_DENIED, anything else →
 * HTTP_ERROR carrying the server's `{code, message}` or raw body.
 */
export function statusError(route: Route, status: number, bodyText: string, baseUrl?: string): HttpError {
  const server = describeErrorBody(bodyText);
  const details: Record<string, unknown> = { route, status };
  if (server.serverCode !== undefined) details['serverCode'] = server.serverCode;
  if (server.serverMessage !== undefined) details['serverMessage'] = server.serverMessage;
  const label = routeLabel(route);
  const retryable = RETRYABLE_STATUSES.has(status);
  if (status === 429) {
    return new HttpError('RATE_LIMITED', `${label} was rate limited (HTTP 429): ${server.summary}`, {
      retryable,
      status,
      details,
    });
  }
  if (status === 401) {
    return new HttpError('AUTH_REJECTED', `${label} was refused (HTTP 401): ${server.summary}`, {
      status,
      details,
    });
  }
  if (status === 403) {
    const why =
      route === 'history'
        ? 'the credential may not list the AI governance settings history, which is an admin-tier operation; use a client whose user has the admin role'
        : route === 'delete'
          ? 'the credential may not delete entitlement owners of this resource'
          : 'the token endpoint refused this client';
    return new HttpError(
      'PERMISSION_DENIED',
      `${label} was forbidden (HTTP 403): ${why}; ${server.summary}`,
      {
        status,
        details,
      },
    );
  }
  // A 404 is most often a base URL that is not the tenant's: name the URL tried.
  const where = status === 404 && baseUrl !== undefined ? ` to ${baseUrl}` : '';
  return new HttpError('HTTP_ERROR', `${label}${where} failed with HTTP ${status}: ${server.summary}`, {
    retryable,
    status,
    details,
  });
}

/** Finds the error code of a network failure, looking through causes and aggregate errors. */
export function networkErrorCode(err: unknown): string | undefined {
  const seen = new Set<unknown>();
  const queue: unknown[] = [err];
  while (queue.length > 0) {
    const e = queue.shift();
    if (e === null || typeof e !== 'object' || seen.has(e)) continue;
    seen.add(e);
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && RETRYABLE_NETWORK_CODES.has(code)) return code;
    queue.push((e as { cause?: unknown }).cause);
    if (e instanceof AggregateError) queue.push(...e.errors);
  }
  const top = (err as { code?: unknown } | null)?.code;
  return typeof top === 'string' ? top : undefined;
}

/** The error a failed exchange raises once the caller's signal has fired. */
export function abortedError(cause?: unknown): GovtrailError {
  return new GovtrailError('ABORTED', 'the tenant API request was aborted', { cause });
}

/** The whole body did not arrive in time: NETWORK, retryable, as a gap timeout is. */
export function bodyDeadlineError(route: Route, ms: number): HttpError {
  return new HttpError(
    'NETWORK',
    `${routeLabel(route)} failed: network error UND_ERR_BODY_TIMEOUT (the whole body did not arrive within ${ms} ms, GOVTRAIL_HTTP_BODY_TIMEOUT)`,
    { retryable: true, details: { route, networkCode: 'UND_ERR_BODY_TIMEOUT', bodyDeadlineMs: ms } },
  );
}

/** A 2xx body over the cap: BAD_RESPONSE, not retried (the same page would be as large again). */
export function bodyTooLargeError(route: Route, limit: number, declared?: number): HttpError {
  const size = declared === undefined ? 'more than' : `${declared} bytes, over`;
  return new HttpError(
    'BAD_RESPONSE',
    `${routeLabel(route)} answered a body of ${size} the ${limit}-byte limit (GOVTRAIL_HTTP_MAX_BODY); it was not read`,
    {
      details: { route, maxBodyBytes: limit, ...(declared === undefined ? {} : { contentLength: declared }) },
    },
  );
}
