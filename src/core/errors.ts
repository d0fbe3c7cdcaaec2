import { redact } from './redact.js';

/**
 * Errors with stable codes. Callers decide what to do from `code` (or the class), never from
 * message text. The README's "Error codes" table is kept in step with {@link ERROR_CODES} by a test.
 */

/** Every code govtrail can raise, with the one-line meaning shown in the README. */
export const ERROR_CODES = {
  CONFIG: 'a setting is missing or invalid (exit code 2)',
  USAGE: 'a command-line argument is missing or invalid (exit code 2)',
  AUTH_REJECTED:
    'the tenant rejected the credentials or the token (401 after one refresh, or token endpoint 4xx)',
  PERMISSION_DENIED: 'the credential lacks the permission (403; the history listing is admin-tier)',
  RATE_LIMITED: 'still throttled (429) after every retry',
  HTTP_ERROR:
    'the tenant answered with an unexpected status; the message carries its {code, message} or raw body',
  BAD_RESPONSE: 'a response body was not JSON or not the shape the tenant API documents',
  NETWORK: 'connection failed, was reset, or timed out after every retry',
  RETRY_BUDGET_EXHAUSTED: 'the run-level retry budget (10 minutes) ran out',
  PAGING_LOOP: 'the tenant returned a page token already seen: paging stopped instead of looping',
  PAGE_LIMIT: 'more pages than the safety limit: paging stopped',
  INSECURE_URL: 'plain http to a host that is not loopback, or a redirect to another host',
  INVALID_ARGUMENT: 'an argument to an API call was empty or malformed (no request was sent)',
  DATABASE: 'the database failed or refused a statement',
  MIGRATION_FAILED: 'a migration failed; start-up stopped and nothing of that migration was applied',
  ABORTED: 'the work was cancelled (shutdown signal or timeout)',
  DELIVERY_FAILED: 'an alert sink refused or could not be reached',
  RULES_INVALID: 'the alert rule file is invalid (exit code 2)',
  BASELINE_INVALID:
    'the baseline file is invalid: one line naming the file, the line and the problem (exit code 2)',
  TAMPERED: 'the tamper-evidence chain does not verify',
  INTERNAL: 'a bug in govtrail; please report it with the log',
} as const;

export type ErrorCode = keyof typeof ERROR_CODES;

export interface GovtrailErrorOptions {
  cause?: unknown;
  /** Whether repeating the same operation may succeed. */
  retryable?: boolean;
  /** HTTP status behind the error, when there was one. */
  status?: number;
  /** Extra structured detail for logs (never secrets). */
  details?: Record<string, unknown>;
}

/**
 * An error with a stable code. Its message is redacted when the error is created (src/core/redact.ts):
 * whatever carries it on (the log, `sync_run.error_message`, `alert_delivery.last_error`, a
 * command's output) never holds a registered secret in any of its forms.
 */
export class GovtrailError extends Error {
  override name = 'GovtrailError';
  readonly code: ErrorCode;
  readonly retryable: boolean;
  readonly status: number | undefined;
  readonly details: Record<string, unknown> | undefined;

  constructor(code: ErrorCode, message: string, options: GovtrailErrorOptions = {}) {
    super(redact(message), options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.retryable = options.retryable ?? false;
    this.status = options.status;
    this.details = options.details;
  }
}

/** A setting is missing or invalid: the message names the variable to fix. Exit code 2. */
export class ConfigError extends GovtrailError {
  override name = 'ConfigError';
  readonly setting: string;
  constructor(setting: string, reason: string, options: GovtrailErrorOptions = {}) {
    super('CONFIG', `${setting}: ${reason}`, options);
    this.setting = setting;
  }
}

/** An HTTP exchange with the tenant failed. */
export class HttpError extends GovtrailError {
  override name = 'HttpError';
}

/** Statuses and error codes worth retrying (docs/design/sync.md, "HTTP behaviour"). */
export const RETRYABLE_STATUSES: ReadonlySet<number> = new Set([408, 429, 500, 502, 503, 504]);

/** Wraps anything thrown into a GovtrailError, keeping it as the cause. */
export function toGovtrailError(err: unknown, fallback: ErrorCode = 'INTERNAL'): GovtrailError {
  if (err instanceof GovtrailError) return err;
  if (isAbortError(err)) return new GovtrailError('ABORTED', 'the operation was aborted', { cause: err });
  const message = err instanceof Error ? err.message : String(err);
  return new GovtrailError(fallback, message, { cause: err });
}

export function isAbortError(err: unknown): boolean {
  return (
    err instanceof Error && (err.name === 'AbortError' || (err as { code?: unknown }).code === 'ABORT_ERR')
  );
}

/** Codes of errors the operator fixes in a setting, an argument or the rule file: exit code 2. */
const USAGE_CODES: ReadonlySet<ErrorCode> = new Set(['CONFIG', 'USAGE', 'RULES_INVALID', 'BASELINE_INVALID']);

/** Process exit code for an error: 2 for configuration, usage and rule-file problems, 1 otherwise. */
export function exitCodeFor(err: unknown): 1 | 2 {
  return err instanceof GovtrailError && USAGE_CODES.has(err.code) ? 2 : 1;
}
