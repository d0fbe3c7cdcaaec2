/**
 * The manifest's signature: Ed25519 (JWS alg EdDSA) over manifest.json's exact bytes, serialised as
 * a detached JWS — the compact form with its payload part left empty (RFC 7515 appendix F). The
 * verifier puts base64url(manifest.json) back in the middle and checks the usual JWS signing input.
 * The protected header names the key by its RFC 7638 JWK thumbprint (`kid`), so a wrong key is told
 * apart from a wrong signature.
 */
import { createPrivateKey, createPublicKey, type KeyObject } from 'node:crypto';
import { CompactSign, calculateJwkThumbprint, compactVerify, exportJWK } from 'jose';
import { ConfigError, GovtrailError } from '../../core/errors.js';

export const SIGNING_KEY_SETTING = 'GOVTRAIL_EVIDENCE_SIGNING_KEY';

/** A PEM written into one environment variable with `\n` escapes instead of line breaks. */
function unescapePem(text: string): string {
  const t = text.trim();
  return t.includes('-----BEGIN') && !t.includes('\n') && t.includes('\\n') ? t.replaceAll('\\n', '\n') : t;
}

function keyFromText(text: string, kind: 'private' | 'public'): KeyObject {
  const t = unescapePem(text);
  if (t.startsWith('{')) {
    const jwk = JSON.parse(t) as Record<string, unknown>;
    return kind === 'private'
      ? createPrivateKey({ key: jwk, format: 'jwk' })
      : createPublicKey({ key: jwk, format: 'jwk' });
  }
  return kind === 'private' ? createPrivateKey(t) : createPublicKey(t);
}

/**
 * The signing key of GOVTRAIL_EVIDENCE_SIGNING_KEY (or its `_FILE`; or the variable `setting`
 * names): an Ed25519 private key in PEM (PKCS#8, `-----BEGIN PRIVATE KEY-----`) or as a private
 * JWK. Anything else is a configuration error (exit code 2) naming the variable.
 */
export function parseSigningKey(text: string, setting = SIGNING_KEY_SETTING): KeyObject {
  let key: KeyObject;
  try {
    key = keyFromText(text, 'private');
  } catch (err) {
    throw new ConfigError(
      setting,
      `is not a private key in PEM (PKCS#8) or JWK form: ${(err as Error).message}. Create one with ` +
        '`openssl genpkey -algorithm ed25519 -out evidence-signing.pem`',
      { cause: err },
    );
  }
  if (key.asymmetricKeyType !== 'ed25519') {
    throw new ConfigError(
      setting,
      `must be an Ed25519 key, got ${key.asymmetricKeyType ?? 'an unknown key type'}`,
    );
  }
  return key;
}

/**
 * A public key to check signatures with, from `option` (for messages): PEM (SPKI
 * `-----BEGIN PUBLIC KEY-----`, or a private key, whose public half is taken) or a JWK.
 */
export function parseVerificationKey(text: string, option: string): KeyObject {
  let key: KeyObject;
  try {
    key = keyFromText(text, 'public');
  } catch (err) {
    throw new GovtrailError(
      'USAGE',
      `${option}: not an Ed25519 public key in PEM or JWK form (${(err as Error).message})`,
      { cause: err },
    );
  }
  if (key.asymmetricKeyType !== 'ed25519') {
    throw new GovtrailError(
      'USAGE',
      `${option}: must be an Ed25519 key, got ${key.asymmetricKeyType ?? 'an unknown key type'}`,
    );
  }
  return key;
}

/** The public half of a key (itself when it is public). */
export function publicKeyOf(key: KeyObject): KeyObject {
  return key.type === 'public' ? key : createPublicKey(key);
}

/** RFC 7638 thumbprint (sha256, base64url) of a key's public JWK. */
export async function keyThumbprint(key: KeyObject): Promise<string> {
  return calculateJwkThumbprint(await exportJWK(publicKeyOf(key)), 'sha256');
}

/** Signs `payload`; returns the detached compact JWS `header..signature`. */
export async function signDetached(payload: Uint8Array, key: KeyObject): Promise<string> {
  const kid = await keyThumbprint(key);
  const jws = await new CompactSign(payload).setProtectedHeader({ alg: 'EdDSA', kid }).sign(key);
  const [header, , signature] = jws.split('.');
  return `${header}..${signature}`;
}

/** The `kid` a detached JWS claims, read without checking anything; undefined when unreadable. */
export function claimedKeyId(jws: string): string | undefined {
  try {
    const header = JSON.parse(Buffer.from(jws.split('.')[0] ?? '', 'base64url').toString('utf8')) as {
      kid?: unknown;
    };
    return typeof header.kid === 'string' ? header.kid : undefined;
  } catch {
    return undefined;
  }
}

export type DetachedVerification = { readonly ok: true } | { readonly ok: false; readonly reason: string };

/** Checks a detached JWS over `payload` with `key` (EdDSA only). */
export async function verifyDetached(
  jws: string,
  payload: Uint8Array,
  key: KeyObject,
): Promise<DetachedVerification> {
  const parts = jws.trim().split('.');
  if (parts.length !== 3 || parts[1] !== '') {
    return { ok: false, reason: 'not a detached compact JWS (header..signature)' };
  }
  try {
    await compactVerify(`${parts[0]}.${Buffer.from(payload).toString('base64url')}.${parts[2]}`, key, {
      algorithms: ['EdDSA'],
    });
    return { ok: true };
  } catch (err) {
    return { ok: false, reason: (err as Error).message };
  }
}
