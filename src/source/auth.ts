/**
 * OAuth 2.0 client credentials for the tenant API (docs/design/tenant-api.md, "Authentication"). Two forms of
 * secret: a plain client secret sent as `client_secret`, or a tenant-issued key secret
 * (`secret-token:conductorone.com:v1:<base64url Ed25519 JWK>`) from which a short-lived EdDSA JWT is
 * signed and sent as `client_assertion`. The access token is cached until shortly before it
 * expires; concurrent callers share one refresh.
 */
import { createHash, randomUUID } from 'node:crypto';
// jose is loaded when a key secret is first used: most tenants authenticate with a client secret.
import type { importJWK } from 'jose';
import { ConfigError, GovtrailError } from '../core/errors.js';
import { clip } from '../core/redact.js';
import type { Logger } from '../runtime/logger.js';
import { registerSecret } from '../runtime/logger.js';
import type { HttpTransport } from './http.js';

/** The setting a bad secret is reported against (exit code 2, "fix this variable"). */
const SECRET_SETTING = 'GOVTRAIL_CLIENT_SECRET';

/** Prefix of a key secret; what follows is the base64url JSON of an Ed25519 private JWK. */
export const KEY_SECRET_PREFIX = 'secret-token:conductorone.com:v1:';
const KEY_SECRET_FAMILY = 'secret-token:';

export const ASSERTION_TYPE = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';

/**
 * Lifetime of a client assertion. The API allows at most 5 minutes (docs/design/tenant-api.md); 2 leaves room
 * for skew.
 */
export const ASSERTION_LIFETIME_S = 120;

/** How long a token or assertion stays scrubbed from logs and errors after it expired. */
const SCRUB_AFTER_EXPIRY_MS = 3_600_000;

/** Assumed token lifetime when the token endpoint sends no usable `expires_in`. */
export const DEFAULT_TOKEN_LIFETIME_S = 60;

/** An Ed25519 private key as a JWK (RFC 8037). */
export interface Ed25519PrivateJwk {
  kty: 'OKP';
  crv: 'Ed25519';
  /** Public key, base64url of 32 bytes. */
  x: string;
  /** Private key, base64url of 32 bytes. */
  d: string;
  kid?: string;
}

/** A client secret after parsing: which form it is, and what the token request needs from it. */
export type ClientCredential = { kind: 'secret'; secret: string } | { kind: 'key'; jwk: Ed25519PrivateJwk };

/** What jose's importJWK yields for an Ed25519 private JWK. */
type SigningKey = Awaited<ReturnType<typeof importJWK>>;

const BASE64URL = /^[A-Za-z0-9_-]+={0,2}$/;

function badKey(reason: string): ConfigError {
  // The reason never quotes the secret or any part of it.
  return new ConfigError(
    SECRET_SETTING,
    `is not a valid key secret (${KEY_SECRET_PREFIX}<base64url JWK>): ${reason}`,
  );
}

function isKeyOf32Bytes(v: unknown): v is string {
  return typeof v === 'string' && BASE64URL.test(v) && Buffer.from(v, 'base64url').length === 32;
}

/**
 * Recognises the form of a client secret. A value starting with `secret-token:` must be a valid
 * v1 key secret holding an Ed25519 private JWK; anything else is a plain secret. Throws a
 * {@link ConfigError} naming GOVTRAIL_CLIENT_SECRET (never quoting it) when it is empty or a
 * malformed key secret.
 */
export function parseClientSecret(secret: string): ClientCredential {
  if (secret.trim() === '') throw new ConfigError(SECRET_SETTING, 'is empty');
  if (!secret.startsWith(KEY_SECRET_FAMILY)) return { kind: 'secret', secret };
  if (!secret.startsWith(KEY_SECRET_PREFIX)) {
    throw badKey(`unsupported issuer or version; expected the prefix ${KEY_SECRET_PREFIX}`);
  }
  const encoded = secret.slice(KEY_SECRET_PREFIX.length).trim();
  if (!BASE64URL.test(encoded)) throw badKey('the key part is not base64url');
  let jwk: unknown;
  try {
    jwk = JSON.parse(Buffer.from(encoded, 'base64url').toString('utf8'));
  } catch {
    throw badKey('the key part does not decode to JSON');
  }
  if (jwk === null || typeof jwk !== 'object' || Array.isArray(jwk))
    throw badKey('the key part is not a JWK object');
  const k = jwk as Record<string, unknown>;
  if (k['kty'] !== 'OKP' || k['crv'] !== 'Ed25519') {
    throw badKey('the JWK is not an Ed25519 key (expected kty "OKP" and crv "Ed25519")');
  }
  if (!isKeyOf32Bytes(k['d'])) throw badKey('the JWK has no valid private part ("d")');
  if (!isKeyOf32Bytes(k['x'])) throw badKey('the JWK has no valid public part ("x")');
  const parsed: Ed25519PrivateJwk = { kty: 'OKP', crv: 'Ed25519', x: k['x'], d: k['d'] };
  if (typeof k['kid'] === 'string') parsed.kid = k['kid'];
  return { kind: 'key', jwk: parsed };
}

/** Audience of the client assertion: the tenant host without port (URL hostname, no brackets). */
export function assertionAudience(baseUrl: string): string {
  return new URL(baseUrl).hostname.replace(/^\[|\]$/g, '');
}

/**
 * Signs a client assertion: an EdDSA JWT with iss = sub = client id, aud = tenant host, iat = now,
 * exp = now + 2 minutes and a random jti, so that a captured assertion is short-lived and single-use.
 */
export async function signClientAssertion(
  key: SigningKey,
  jwk: Ed25519PrivateJwk,
  clientId: string,
  audience: string,
  nowSeconds: number,
): Promise<string> {
  const header: { alg: 'EdDSA'; typ: 'JWT'; kid?: string } = { alg: 'EdDSA', typ: 'JWT' };
  if (jwk.kid !== undefined) header.kid = jwk.kid;
  const { SignJWT } = await import('jose');
  return new SignJWT({})
    .setProtectedHeader(header)
    .setIssuer(clientId)
    .setSubject(clientId)
    .setAudience(audience)
    .setIssuedAt(nowSeconds)
    .setExpirationTime(nowSeconds + ASSERTION_LIFETIME_S)
    .setJti(randomUUID())
    .sign(key);
}

export interface TokenProviderOptions {
  baseUrl: string;
  clientId: string;
  credential: ClientCredential;
  transport: HttpTransport;
  logger: Logger;
  /** Clock for the token cache, in milliseconds. */
  now: () => number;
  /** Tokens kept across clients (see {@link TokenCache}); default: this provider's own. */
  cache?: TokenCache;
}

/** An access token and when to fetch the next one (clock of the provider). */
interface CachedToken {
  readonly token: string;
  readonly refreshAt: number;
}

/**
 * Access tokens kept beyond one client, by tenant credentials: the worker makes a client per run,
 * and a run of a tenant whose token is still valid then sends no token request (scaling.md,
 * "Round trips"). Keyed by base URL, client id and a hash of the secret, never the secret itself.
 */
export class TokenCache {
  readonly #tokens = new Map<string, CachedToken>();

  /** The key of one set of credentials. */
  static keyOf(baseUrl: string, clientId: string, credential: ClientCredential): string {
    const secret = credential.kind === 'secret' ? credential.secret : credential.jwk.d;
    return `${baseUrl}\n${clientId}\n${createHash('sha256').update(secret).digest('base64url')}`;
  }

  get(key: string): CachedToken | undefined {
    return this.#tokens.get(key);
  }

  set(key: string, token: CachedToken | undefined): void {
    if (token === undefined) this.#tokens.delete(key);
    else this.#tokens.set(key, token);
  }
}

/**
 * Obtains and caches the access token. The cache lasts until `expires_in` minus a margin of
 * min(60 s, 10 % of the lifetime); concurrent callers share one in-flight request.
 */
export class TokenProvider {
  readonly #options: TokenProviderOptions;
  readonly #cache: TokenCache;
  readonly #cacheKey: string;
  #inflight: Promise<string> | undefined;
  #key: Promise<SigningKey> | undefined;

  constructor(options: TokenProviderOptions) {
    this.#options = options;
    this.#cache = options.cache ?? new TokenCache();
    this.#cacheKey = TokenCache.keyOf(options.baseUrl, options.clientId, options.credential);
  }

  get #cached(): CachedToken | undefined {
    return this.#cache.get(this.#cacheKey);
  }

  set #cached(token: CachedToken | undefined) {
    this.#cache.set(this.#cacheKey, token);
  }

  /** A valid access token: the cached one, or a fresh one shared with every concurrent caller. */
  getToken(): Promise<string> {
    const cached = this.#cached;
    if (cached !== undefined && this.#options.now() < cached.refreshAt) return Promise.resolve(cached.token);
    this.#inflight ??= this.#fetch().finally(() => {
      this.#inflight = undefined;
    });
    return this.#inflight;
  }

  /**
   * Drops `token` from the cache after the API refused it. A token that was already replaced (by a
   * concurrent caller's refresh) is left alone, so several 401s for one stale token cause one refresh.
   */
  invalidate(token: string): void {
    if (this.#cached?.token === token) this.#cached = undefined;
  }

  async #fetch(): Promise<string> {
    const { transport, now, logger, clientId } = this.#options;
    const started = now();
    const response = await transport.send({
      route: 'token',
      method: 'POST',
      path: '/auth/v1/token',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      // A fresh form per attempt: a retried request then carries a new assertion (new jti and iat).
      body: () => this.#formBody(),
      passStatuses: [400, 401],
    });
    if (response.status === 400 || response.status === 401) {
      throw rejected(response.status, response.text);
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(response.text);
    } catch {
      // The body is not quoted: a token response may hold a token in some form.
      throw new GovtrailError(
        'BAD_RESPONSE',
        `the token endpoint answered HTTP ${response.status} with a body that is not JSON`,
        {
          status: response.status,
          details: { route: 'token', length: response.text.length },
        },
      );
    }
    const body = (parsed !== null && typeof parsed === 'object' ? parsed : {}) as Record<string, unknown>;
    const token = body['access_token'];
    if (typeof token !== 'string' || token === '') {
      throw new GovtrailError('BAD_RESPONSE', 'the token endpoint answered without an access_token', {
        status: response.status,
        details: { route: 'token' },
      });
    }
    const lifetimeS = parseLifetime(body['expires_in']);
    const lifetimeMs = lifetimeS * 1000;
    // Scrubbed while it can open anything, and an hour beyond for late echoes; then forgotten, or a
    // worker fetching tokens run after run would scrub every line against all of them.
    registerSecret(token, Date.now() + lifetimeMs + SCRUB_AFTER_EXPIRY_MS);
    const margin = Math.min(60_000, lifetimeMs * 0.1);
    this.#cached = { token, refreshAt: started + lifetimeMs - margin };
    logger.debug({ clientId, expiresInS: lifetimeS }, 'obtained an access token');
    return token;
  }

  async #formBody(): Promise<string> {
    const { credential, clientId, baseUrl } = this.#options;
    const form = new URLSearchParams({ grant_type: 'client_credentials', client_id: clientId });
    if (credential.kind === 'secret') {
      form.set('client_secret', credential.secret);
    } else {
      const key = await this.#importKey(credential.jwk);
      // Wall clock, not the injectable cache clock: the server checks iat and exp against its own.
      const assertion = await signClientAssertion(
        key,
        credential.jwk,
        clientId,
        assertionAudience(baseUrl),
        Math.floor(Date.now() / 1000),
      );
      registerSecret(assertion, Date.now() + ASSERTION_LIFETIME_S * 1000 + SCRUB_AFTER_EXPIRY_MS);
      form.set('client_assertion_type', ASSERTION_TYPE);
      form.set('client_assertion', assertion);
    }
    return form.toString();
  }

  #importKey(jwk: Ed25519PrivateJwk): Promise<SigningKey> {
    this.#key ??= import('jose')
      .then((jose) => jose.importJWK({ ...jwk }, 'EdDSA'))
      .catch((err: unknown) => {
        throw new ConfigError(SECRET_SETTING, 'the key secret holds an Ed25519 JWK that cannot be imported', {
          cause: err,
        });
      });
    return this.#key;
  }
}

function parseLifetime(v: unknown): number {
  const n =
    typeof v === 'number' ? v : typeof v === 'string' && /^\d+$/.test(v.trim()) ? Number(v) : Number.NaN;
  return Number.isFinite(n) && n > 0 ? n : DEFAULT_TOKEN_LIFETIME_S;
}

/** AUTH_REJECTED from a token endpoint 400/401, with the server's `error` and `error_description`. */
function rejected(status: number, text: string): GovtrailError {
  let error: string | undefined;
  let description: string | undefined;
  try {
    const body = JSON.parse(text) as Record<string, unknown> | null;
    if (body !== null && typeof body === 'object') {
      // Redacted before it is cut (clip): the form body an endpoint echoes holds the secret encoded.
      if (typeof body['error'] === 'string') error = clip(body['error'], 64);
      if (typeof body['error_description'] === 'string') description = clip(body['error_description'], 200);
      if (error === undefined && typeof body['message'] === 'string')
        description = clip(body['message'], 200);
    }
  } catch {
    // Not JSON: the status alone says enough, and the body of a token response is not quoted.
  }
  const said = [error, description].filter((s): s is string => s !== undefined).join(': ');
  return new GovtrailError(
    'AUTH_REJECTED',
    `the token endpoint rejected the client credentials (HTTP ${status})${said ? `: ${said}` : ''}; check GOVTRAIL_CLIENT_ID and ${SECRET_SETTING}`,
    {
      status,
      details: {
        route: 'token',
        ...(error === undefined ? {} : { serverCode: error }),
        ...(description === undefined ? {} : { serverMessage: description }),
      },
    },
  );
}
