/** The tenant API client: authentication, retries, the history pager and the owner deletion. */

export { backoffDelay, parseRetryAfter, RetryBudget } from '../core/backoff.js';
export type { HistoryPage } from '../core/wire.js';
export type { ClientCredential, Ed25519PrivateJwk } from './auth.js';
export { ASSERTION_TYPE, KEY_SECRET_PREFIX, parseClientSecret } from './auth.js';
export type { TenantApiClientOptions, TenantApiStats } from './client.js';
export { TenantApiClient, validateBaseUrl } from './client.js';
export type { RetryInfo } from './http.js';
export { createHttpAgent } from './http.js';
export type { Route } from './http-errors.js';
export type { EntitlementOwnerRef } from './owners.js';
export { encodePathSegment, entitlementOwnerBody, entitlementOwnerPath } from './owners.js';
export type { ListHistoryOptions } from './pager.js';
export { parseHistoryPage } from './pager.js';
