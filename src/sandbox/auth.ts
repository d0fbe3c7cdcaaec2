/**
 * The token endpoint and bearer-token checks (docs/design/tenant-api.md, "Authentication").
 *
 * Three clients exist: an admin with a plain client secret, an admin with a key secret
 * (`secret-token:conductorone.com:v1:<base64url Ed25519 private JWK>`) that must prove
 * possession with an EdDSA client assertion, and a non-admin whose tokens work but are refused
 * (403) by the admin-tier operations. Credentials travel in the form body only: an HTTP Basic
 * header is ignored, since the API takes the credentials from the request body, not from headers
 * (docs/design/tenant-api.md, "Authentication").
 */
import { createHash, generateKeyPairSync, type KeyObject, randomBytes, timingSafeEqual } from 'node:crypto';
import { jwtVerify } from 'jose';
import { Random } from './random.js';

/** One client id and the secret that goes with it. */
export interface SandboxCredentials {
  readonly clientId: string;
  readonly clientSecret: string;
}

/** The three sandbox clients. */
export interface SandboxCredentialSet {
  /** Admin, plain client secret (sent as client_secret). */
  readonly secret: SandboxCredentials;
  /** Admin, key secret: the client signs an EdDSA client_assertion with it. */
  readonly key: SandboxCredentials;
  /** Valid tokens, but 403 on the history listing and the delete. */
  readonly nonAdmin: SandboxCredentials;
}

/** Prefix of a key secret; the rest is base64url of an Ed25519 private JWK. */
const KEY_SECRET_PREFIX = 'secret-token:conductorone.com:v1:';
/** client_assertion_type of a JWT bearer client assertion (RFC 7523). */
const JWT_BEARER = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';
/** Tolerated clock difference with the client. */
const SKEW_SECONDS = 30;
/**
 * The longest assertion lifetime accepted (docs/design/tenant-api.md, "Authentication": exp at most 5 minutes
 * ahead).
 */
const MAX_ASSERTION_SECONDS = 300;

type Client =
  | { readonly kind: 'secret'; readonly digest: Buffer; readonly admin: boolean }
  | { readonly kind: 'key'; readonly publicKey: KeyObject; readonly admin: boolean };

interface IssuedToken {
  readonly clientId: string;
  readonly admin: boolean;
  readonly expiresAt: number;
}

/** A response of the token endpoint. */
export interface TokenResponse {
  readonly status: number;
  readonly body: Record<string, unknown>;
}

/** The outcome of checking an Authorization header. */
export type BearerCheck =
  | { readonly ok: true; readonly token: string; readonly clientId: string; readonly admin: boolean }
  | { readonly ok: false; readonly message: string };

const ADJECTIVES = [
  'calm',
  'brave',
  'quiet',
  'swift',
  'lucky',
  'bold',
  'gentle',
  'amber',
  'misty',
  'sunny',
] as const;
const ANIMALS = [
  'otter',
  'heron',
  'lynx',
  'marten',
  'puffin',
  'badger',
  'gecko',
  'ibis',
  'walrus',
  'yak',
] as const;

function digest(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}

/** The audience a client must name: the Host header's host name, without port or IPv6 brackets. */
function audienceOf(hostHeader: string | undefined): string | undefined {
  if (hostHeader === undefined || hostHeader === '') return undefined;
  try {
    return new URL(`http://${hostHeader}`).hostname.replace(/^\[(.*)\]$/, '$1');
  } catch {
    return undefined;
  }
}

/** Options of the auth service. */
export interface AuthOptions {
  /** Host name that appears in client ids (`name-12345@<hostname>/pcc`). */
  readonly hostname: string;
  readonly seed: number;
  readonly clientId?: string | undefined;
  readonly clientSecret?: string | undefined;
  readonly tokenTtlSeconds: number;
}

/** Clients, issued tokens, and the token endpoint. */
export class AuthService {
  /** The three clients' credentials. */
  readonly credentials: SandboxCredentialSet;
  private readonly clients = new Map<string, Client>();
  private readonly tokens = new Map<string, IssuedToken>();
  private readonly ttlSeconds: number;
  /** Every access token issued and every client assertion received (newest last, bounded). */
  private readonly issuedLog: string[] = [];
  private readonly assertionLog: string[] = [];

  constructor(options: AuthOptions) {
    if (!Number.isSafeInteger(options.tokenTtlSeconds) || options.tokenTtlSeconds <= 0) {
      throw new RangeError('tokenTtlSeconds must be a positive integer');
    }
    this.ttlSeconds = options.tokenTtlSeconds;
    const rng = new Random(options.seed, 0xc11e);
    const used = new Set<string>();
    const makeId = (): string => {
      for (;;) {
        const id = `${rng.pick(ADJECTIVES)}-${rng.pick(ANIMALS)}-${rng.int(10_000, 99_999)}@${options.hostname}/pcc`;
        if (!used.has(id)) {
          used.add(id);
          return id;
        }
      }
    };
    const secretId = options.clientId ?? makeId();
    used.add(secretId);
    const secret: SandboxCredentials = {
      clientId: secretId,
      clientSecret: options.clientSecret ?? randomBytes(32).toString('base64url'),
    };
    const { privateKey, publicKey } = generateKeyPairSync('ed25519');
    const jwk = privateKey.export({ format: 'jwk' });
    const key: SandboxCredentials = {
      clientId: makeId(),
      clientSecret:
        KEY_SECRET_PREFIX +
        Buffer.from(JSON.stringify({ kty: 'OKP', crv: 'Ed25519', d: jwk.d, x: jwk.x })).toString('base64url'),
    };
    const nonAdmin: SandboxCredentials = {
      clientId: makeId(),
      clientSecret: randomBytes(32).toString('base64url'),
    };
    this.credentials = { secret, key, nonAdmin };
    this.clients.set(secret.clientId, { kind: 'secret', digest: digest(secret.clientSecret), admin: true });
    this.clients.set(key.clientId, { kind: 'key', publicKey, admin: true });
    this.clients.set(nonAdmin.clientId, {
      kind: 'secret',
      digest: digest(nonAdmin.clientSecret),
      admin: false,
    });
  }

  /** Access tokens issued so far, expired ones included (tests scan logs and tables for them). */
  issuedTokens(): string[] {
    return [...this.issuedLog];
  }

  /** client_assertion values received so far, accepted or not. */
  receivedAssertions(): string[] {
    return [...this.assertionLog];
  }

  /** Every token issued so far stops working. */
  expireAll(): void {
    this.tokens.clear();
  }

  /** One token stops working. */
  revoke(token: string): void {
    this.tokens.delete(token);
  }

  /** Checks an `Authorization: Bearer …` header. */
  check(authorization: string | undefined): BearerCheck {
    if (authorization === undefined) return { ok: false, message: 'missing bearer token' };
    const m = /^Bearer[ \t]+([^\s]+)[ \t]*$/i.exec(authorization);
    if (m === null) return { ok: false, message: 'malformed Authorization header: expected a bearer token' };
    const token = m[1]!;
    const issued = this.tokens.get(token);
    if (issued === undefined) return { ok: false, message: 'invalid or expired token' };
    if (Date.now() >= issued.expiresAt) {
      this.tokens.delete(token);
      return { ok: false, message: 'invalid or expired token' };
    }
    return { ok: true, token, clientId: issued.clientId, admin: issued.admin };
  }

  /** Handles POST /auth/v1/token. */
  async token(
    body: Buffer,
    contentType: string | undefined,
    hostHeader: string | undefined,
  ): Promise<TokenResponse> {
    if (!/^application\/x-www-form-urlencoded\b/i.test(contentType ?? '')) {
      return oauthError(
        400,
        'invalid_request',
        'the token request must be application/x-www-form-urlencoded',
      );
    }
    const form = new URLSearchParams(body.toString('utf8'));
    for (const name of new Set(form.keys())) {
      if (form.getAll(name).length > 1)
        return oauthError(400, 'invalid_request', `parameter ${name} repeated`);
    }
    const grantType = form.get('grant_type');
    if (grantType === null) return oauthError(400, 'invalid_request', 'grant_type is required');
    if (grantType !== 'client_credentials') {
      return oauthError(400, 'unsupported_grant_type', 'only client_credentials is supported');
    }
    const clientId = form.get('client_id');
    if (clientId === null || clientId === '') {
      return oauthError(400, 'invalid_request', 'client_id is required in the request body (not in headers)');
    }
    const secret = form.get('client_secret');
    const assertion = form.get('client_assertion');
    const assertionType = form.get('client_assertion_type');
    if (secret !== null && (assertion !== null || assertionType !== null)) {
      return oauthError(400, 'invalid_request', 'send either client_secret or a client assertion, not both');
    }
    if (assertion !== null) remember(this.assertionLog, assertion);
    const client = this.clients.get(clientId);
    if (secret !== null) {
      if (client?.kind !== 'secret' || !timingSafeEqual(digest(secret), client.digest)) {
        return oauthError(401, 'invalid_client', 'client authentication failed');
      }
      return this.issue(clientId, client.admin);
    }
    if (assertion === null || assertionType === null) {
      return oauthError(400, 'invalid_request', 'client_secret or client_assertion is required');
    }
    if (assertionType !== JWT_BEARER) {
      return oauthError(400, 'invalid_request', `client_assertion_type must be ${JWT_BEARER}`);
    }
    if (client?.kind !== 'key') return oauthError(401, 'invalid_client', 'client authentication failed');
    const audience = audienceOf(hostHeader);
    if (audience === undefined) return oauthError(400, 'invalid_request', 'missing Host header');
    const problem = await verifyAssertion(assertion, client.publicKey, clientId, audience);
    if (problem !== undefined)
      return oauthError(401, 'invalid_client', `client assertion rejected: ${problem}`);
    return this.issue(clientId, client.admin);
  }

  private issue(clientId: string, admin: boolean): TokenResponse {
    const now = Date.now();
    // Drop expired tokens as new ones are issued, so a long soak test does not grow the map.
    for (const [t, info] of this.tokens) if (info.expiresAt <= now) this.tokens.delete(t);
    const token = randomBytes(32).toString('base64url');
    this.tokens.set(token, { clientId, admin, expiresAt: now + this.ttlSeconds * 1000 });
    remember(this.issuedLog, token);
    return { status: 200, body: { access_token: token, token_type: 'Bearer', expires_in: this.ttlSeconds } };
  }
}

/** Keeps the most recent values only, so that a soak test does not grow memory without bound. */
const LOG_LIMIT = 10_000;
function remember(log: string[], value: string): void {
  log.push(value);
  if (log.length > LOG_LIMIT) log.splice(0, log.length - LOG_LIMIT);
}

function oauthError(status: number, error: string, description: string): TokenResponse {
  return { status, body: { error, error_description: description } };
}

/** Why an assertion is not acceptable, or undefined when it is. */
async function verifyAssertion(
  assertion: string,
  publicKey: KeyObject,
  clientId: string,
  audience: string,
): Promise<string | undefined> {
  try {
    const { payload } = await jwtVerify(assertion, publicKey, {
      algorithms: ['EdDSA', 'Ed25519'],
      issuer: clientId,
      subject: clientId,
      audience,
      clockTolerance: SKEW_SECONDS,
      requiredClaims: ['exp'],
    });
    const now = Math.floor(Date.now() / 1000);
    if (payload.exp !== undefined && payload.exp > now + MAX_ASSERTION_SECONDS + SKEW_SECONDS) {
      return `"exp" is more than ${MAX_ASSERTION_SECONDS} seconds ahead`;
    }
    if (payload.iat !== undefined && payload.iat > now + SKEW_SECONDS) return '"iat" is in the future';
    return undefined;
  } catch (error) {
    return error instanceof Error ? error.message : 'invalid assertion';
  }
}
