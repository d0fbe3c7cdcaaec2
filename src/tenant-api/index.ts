/** The tenant API client: authentication, retries, the history pager and the owner deletion. */

export type { HistoryPage } from '../wire.js';
export type { ClientCredential, Ed25519PrivateJwk } from './auth.js';
export { ASSERTION_TYPE, KEY_SECRET_PREFIX, parseClientSecret } from './auth.js';
export { backoffDelay, parseRetryAfter, RetryBudget } from './backoff.js';
export type { TenantApiClientOptions, TenantApiStats } from './client.js';
export { TenantApiClient, validateBaseUrl } from './client.js';
export type { ListHistoryOptions } from './history.js';
export { parseHistoryPage } from './history.js';
export type { RetryInfo, Route } from './http.js';
export { createHttpAgent } from './http.js';
export type { EntitlementOwnerRef } from './owners.js';
export { encodePathSegment, entitlementOwnerBody, entitlementOwnerPath } from './owners.js';
