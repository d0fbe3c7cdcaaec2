/**
 * What the tenant API client needs to know of one tenant and of HTTP, and the URL and page-size
 * rules of the API: the types config/ fills from the environment and source/ consumes, kept here
 * so the client does not load the settings parser (zod, yaml) to reach a tenant.
 */

export const DEFAULT_PAGE_SIZE = 100;
export const MIN_PAGE_SIZE = 10;
export const MAX_PAGE_SIZE = 100;

/** How govtrail reaches one tenant and names it in the database. */
export interface TenantConfig {
  /** The tenant's name in the database (`tenant_id` of every row). */
  readonly name: string;
  /** Base URL of the tenant API, without a trailing slash. */
  readonly baseUrl: string;
  /** OAuth client id. */
  readonly clientId: string;
  /** Plain client secret, or a `secret-token:conductorone.com:v1:…` key secret. Never logged. */
  readonly clientSecret: string;
  /** History page size, already clamped to 10–100. */
  readonly pageSize: number;
  /** Overlap window behind the checkpoint, in milliseconds (docs/design/sync.md step 3). */
  readonly lookbackMs: number;
  /** Groups the configuration puts the tenant in (`groups:`); the registry holds the effective ones. */
  readonly groups?: readonly string[];
  /** Labels the configuration gives the tenant (`labels:`, key → value). */
  readonly labels?: Readonly<Record<string, string>>;
}

/** HTTP timeouts and retry policy (docs/design/sync.md, "HTTP behaviour"). */
export interface HttpConfig {
  readonly connectTimeoutMs: number;
  readonly headersTimeoutMs: number;
  /** Longest gap between two chunks of a body, and the deadline for the whole body. */
  readonly bodyTimeoutMs: number;
  /** Largest 2xx body read (GOVTRAIL_HTTP_MAX_BODY); default DEFAULT_MAX_BODY_BYTES of http.ts. */
  readonly maxBodyBytes?: number;
  /** Attempts per request, the first included. */
  readonly maxAttempts: number;
  /** Total time a run may spend waiting between retries. */
  readonly retryBudgetMs: number;
  /** Upper bound on an honoured Retry-After. */
  readonly retryAfterCapMs: number;
  /** Base delay of the exponential backoff. */
  readonly retryBaseMs: number;
  /** Cap of one backoff delay. */
  readonly retryMaxDelayMs: number;
}

/** Clamps a page size to the range the API accepts (docs/design/tenant-api.md, "Paging"). */
export function clampPageSize(n: number): number {
  return Math.min(MAX_PAGE_SIZE, Math.max(MIN_PAGE_SIZE, Math.trunc(n)));
}

/** True for hosts that never leave the machine, where plain http is acceptable. */
export function isLoopbackHost(hostname: string): boolean {
  const h = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  return h === 'localhost' || h === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h);
}
