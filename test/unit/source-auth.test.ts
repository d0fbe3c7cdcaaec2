import { generateKeyPairSync } from 'node:crypto';
import { decodeProtectedHeader, importJWK, jwtVerify } from 'jose';
import { describe, expect, it } from 'vitest';
import { GovtrailError } from '../../src/core/errors.js';
import {
  ASSERTION_LIFETIME_S,
  assertionAudience,
  type Ed25519PrivateJwk,
  KEY_SECRET_PREFIX,
  parseClientSecret,
  signClientAssertion,
} from '../../src/source/auth.js';

function ed25519Jwk(): Ed25519PrivateJwk {
  const { privateKey } = generateKeyPairSync('ed25519');
  return privateKey.export({ format: 'jwk' }) as Ed25519PrivateJwk;
}

function keySecret(jwk: unknown): string {
  return KEY_SECRET_PREFIX + Buffer.from(JSON.stringify(jwk)).toString('base64url');
}

function configError(secret: string): GovtrailError {
  try {
    parseClientSecret(secret);
  } catch (err) {
    expect(err).toBeInstanceOf(GovtrailError);
    const e = err as GovtrailError;
    expect(e.code).toBe('CONFIG');
    expect(e.message).toContain('GOVTRAIL_CLIENT_SECRET');
    // No part of the secret beyond the public prefix may appear in the message.
    const tail = secret.slice(KEY_SECRET_PREFIX.length);
    if (tail.length >= 6) expect(e.message).not.toContain(tail.slice(0, 6));
    return e;
  }
  throw new Error('expected a CONFIG error');
}

describe('parseClientSecret', () => {
  it('recognises a plain secret', () => {
    expect(parseClientSecret('s3cr3t-plain-value')).toEqual({ kind: 'secret', secret: 's3cr3t-plain-value' });
  });

  it('decodes a v1 key secret holding an Ed25519 private JWK', () => {
    const jwk = ed25519Jwk();
    const parsed = parseClientSecret(keySecret(jwk));
    expect(parsed).toEqual({ kind: 'key', jwk: { kty: 'OKP', crv: 'Ed25519', x: jwk.x, d: jwk.d } });
  });

  it('accepts padded base64url', () => {
    const jwk = ed25519Jwk();
    const padded = `${keySecret(jwk)}${'='.repeat((4 - ((keySecret(jwk).length - KEY_SECRET_PREFIX.length) % 4)) % 4)}`;
    expect(parseClientSecret(padded).kind).toBe('key');
  });

  it('rejects a key secret with another issuer or version', () => {
    const body = Buffer.from(JSON.stringify(ed25519Jwk())).toString('base64url');
    configError(`secret-token:conductorone.com:v2:${body}`);
    configError(`secret-token:example.com:v1:${body}`);
  });

  it('rejects a key part that is not base64url or not JSON', () => {
    configError(`${KEY_SECRET_PREFIX}not*base64!`);
    configError(`${KEY_SECRET_PREFIX}${Buffer.from('not json at all').toString('base64url')}`);
    configError(`${KEY_SECRET_PREFIX}${Buffer.from('[1,2]').toString('base64url')}`);
  });

  it('rejects keys on the wrong curve or of the wrong type', () => {
    const x25519 = generateKeyPairSync('x25519').privateKey.export({ format: 'jwk' });
    expect(configError(keySecret(x25519)).message).toContain('Ed25519');
    const p256 = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ format: 'jwk' });
    configError(keySecret(p256));
  });

  it('rejects a public-only or truncated JWK', () => {
    const { d: _d, ...publicOnly } = ed25519Jwk();
    configError(keySecret(publicOnly));
    configError(keySecret({ ...ed25519Jwk(), d: 'AAAA' }));
  });

  it('rejects an empty secret', () => {
    configError('   ');
  });
});

describe('signClientAssertion', () => {
  it('signs an EdDSA JWT with iss = sub = client id, aud = host, a 2-minute life and a random jti', async () => {
    const jwk = ed25519Jwk();
    const key = await importJWK(jwk, 'EdDSA');
    const now = Math.floor(Date.now() / 1000);
    const a = await signClientAssertion(key, jwk, 'owl@acme.example/pcc', 'acme.example', now);
    const b = await signClientAssertion(key, jwk, 'owl@acme.example/pcc', 'acme.example', now);
    const { d: _d, ...pub } = jwk;
    const { payload } = await jwtVerify(a, await importJWK(pub, 'EdDSA'), {
      issuer: 'owl@acme.example/pcc',
      subject: 'owl@acme.example/pcc',
      audience: 'acme.example',
    });
    expect(decodeProtectedHeader(a).alg).toBe('EdDSA');
    expect(payload.iat).toBe(now);
    expect(payload.exp).toBe(now + ASSERTION_LIFETIME_S);
    expect(payload.exp! - payload.iat!).toBeLessThanOrEqual(300);
    expect(typeof payload.jti).toBe('string');
    const { payload: other } = await jwtVerify(b, await importJWK(pub, 'EdDSA'));
    expect(other.jti).not.toBe(payload.jti);
  });
});

describe('assertionAudience', () => {
  it('is the host without port', () => {
    expect(assertionAudience('https://acme.conductor.one:8443/base')).toBe('acme.conductor.one');
    expect(assertionAudience('http://127.0.0.1:4000')).toBe('127.0.0.1');
    expect(assertionAudience('http://[::1]:4000')).toBe('::1');
  });
});
