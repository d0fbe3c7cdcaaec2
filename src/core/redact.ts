/**
 * The one redaction step. Every secret govtrail holds (client secrets, tokens, assertions, sink keys
 * and the secret-bearing parts of sink URLs) is registered here once, in each text form it can take
 * on its way back to us: raw, URL-encoded, form-encoded (`+` for a space, upper- and lower-case
 * hex), JSON-escaped and base64. {@link redact} replaces every form wherever it appears; callers
 * that shorten text use {@link clip}, which redacts BEFORE it cuts, so a secret that straddles the
 * cut cannot leave its first characters behind. Text that a reader already cut at a byte limit
 * goes through {@link redactCut}, which also drops a trailing piece of a secret.
 */

/** What a secret is replaced with. */
export const REDACTED = '[REDACTED]';

/** Shorter values would scrub ordinary words; secrets worth the name are longer. */
const MIN_SECRET_LENGTH = 8;

/** A trailing piece of a secret at least this long is dropped by {@link redactCut}. */
const MIN_TRAILING_PIECE = 4;

/** Characters a token-like URL part is made of (percent escapes included). */
const TOKEN_CHARS = /^[A-Za-z0-9%+/=._~-]+$/;

/**
 * Credentials that travel in well-known header schemes, for receivers that echo the request's
 * headers back: `Authorization: Bearer …`, `Basic …`, Splunk HEC's `Splunk <token>`.
 */
const HEADER_CREDENTIAL =
  /\b(Bearer|Basic|Splunk)(\s+|%20|\+)(?=[A-Za-z._~%-]*[0-9=+/])[A-Za-z0-9._~+/=%-]{8,}/gi;

/** Every registered form, longest first so that a longer form is replaced before its own parts. */
let forms: string[] = [];
/** How many registered secrets have each form: a form leaves `forms` with the last of them. */
const formOwners = new Map<string, number>();
const registered = new Set<string>();
/** Secrets that expire (access tokens, client assertions): value → when, and the forms it added. */
const expiring = new Map<string, { readonly until: number; readonly forms: readonly string[] }>();
let nextExpiry = Number.POSITIVE_INFINITY;

/**
 * The text forms one secret can take in what a server echoes: as sent in a query or a form body,
 * as quoted in JSON, and as base64 (HTTP Basic, a JWT segment).
 */
export function secretForms(value: string): string[] {
  const out = new Set<string>([value]);
  const uri = encodeURIComponent(value);
  const form = new URLSearchParams([['k', value]]).toString().slice(2);
  for (const encoded of [uri, form, form.replaceAll('%20', '+'), uri.replaceAll('%20', '+')]) {
    out.add(encoded);
    out.add(encoded.replace(/%[0-9A-F]{2}/g, (m) => m.toLowerCase()));
  }
  out.add(JSON.stringify(value).slice(1, -1));
  // A value that is itself percent-encoded (a URL part) is also echoed decoded.
  if (value.includes('%') || value.includes('+')) {
    try {
      out.add(decodeURIComponent(value.replaceAll('+', ' ')));
      out.add(decodeURIComponent(value));
    } catch {
      // Not valid percent-encoding: the raw form is enough.
    }
  }
  const b64 = Buffer.from(value, 'utf8').toString('base64');
  out.add(b64.replace(/=+$/, ''));
  out.add(Buffer.from(value, 'utf8').toString('base64url'));
  return [...out].filter((f) => f.length >= MIN_SECRET_LENGTH);
}

/**
 * The parts of a URL that carry a secret: userinfo, every query value, and every path segment that
 * looks like a token (at least 8 token characters with a digit, or at least 16). That covers
 * Slack's `/services/T…/B…/<secret>`, a Teams workflow id and its `sig=`, and, conservatively,
 * whatever an unknown receiver puts in its URL.
 */
export function urlSecretParts(url: string): string[] {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return [];
  }
  const parts: string[] = [];
  if (u.username !== '') parts.push(u.username);
  if (u.password !== '') parts.push(u.password);
  const query = u.search.startsWith('?') ? u.search.slice(1) : '';
  for (const pair of query.split('&')) {
    const raw = pair.slice(pair.indexOf('=') + 1);
    if (pair.includes('=') && raw !== '') parts.push(raw);
  }
  for (const segment of u.pathname.split('/')) {
    if (looksLikeToken(segment)) parts.push(segment);
  }
  if (u.hash.length > 1) parts.push(u.hash.slice(1));
  return parts;
}

function looksLikeToken(segment: string): boolean {
  if (segment.length < MIN_SECRET_LENGTH || !TOKEN_CHARS.test(segment)) return false;
  return /[0-9]/.test(segment) || segment.length >= 16;
}

/** The place of a form of length `length` in `forms` (longest first; after forms as long). */
function slotFor(length: number): number {
  let lo = 0;
  let hi = forms.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((forms[mid] as string).length >= length) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

function addForm(form: string): void {
  const owners = formOwners.get(form) ?? 0;
  formOwners.set(form, owners + 1);
  if (owners === 0) forms.splice(slotFor(form.length), 0, form);
}

/** Forgets the secrets whose time is over (a token past its expiry opens nothing any more). */
function dropExpired(now: number): void {
  if (now < nextExpiry) return;
  nextExpiry = Number.POSITIVE_INFINITY;
  const gone = new Set<string>();
  for (const [value, e] of expiring) {
    if (e.until > now) {
      nextExpiry = Math.min(nextExpiry, e.until);
      continue;
    }
    expiring.delete(value);
    registered.delete(value);
    for (const f of e.forms) {
      const owners = (formOwners.get(f) ?? 1) - 1;
      if (owners > 0) formOwners.set(f, owners);
      else {
        formOwners.delete(f);
        gone.add(f);
      }
    }
  }
  if (gone.size > 0) forms = forms.filter((f) => !gone.has(f));
}

/**
 * Registers a secret so that {@link redact} removes it in every form. An absolute http(s) URL (a
 * sink's address) also registers its secret-bearing parts ({@link urlSecretParts}).
 *
 * `until` (epoch ms) is for short-lived secrets (access tokens, client assertions): the secret is
 * forgotten once that time has passed, so a worker that fetches a token per tenant run does not
 * scrub every log line against every token it ever held. Each form is inserted in place, not by
 * sorting all forms again.
 */
export function registerSecret(value: string | undefined, until?: number): void {
  if (value === undefined || value.length < MIN_SECRET_LENGTH) return;
  dropExpired(Date.now());
  if (registered.has(value)) {
    // Registered again without an end (a client secret that is also a token): it stays for good.
    const e = expiring.get(value);
    if (e !== undefined && until === undefined) expiring.delete(value);
    else if (e !== undefined && until !== undefined && until > e.until) {
      expiring.set(value, { until, forms: e.forms });
    }
    return;
  }
  registered.add(value);
  const added = new Set(secretForms(value));
  if (/^https?:\/\//i.test(value.trim())) {
    for (const part of urlSecretParts(value.trim())) for (const f of secretForms(part)) added.add(f);
  }
  for (const f of added) addForm(f);
  if (until !== undefined) {
    expiring.set(value, { until, forms: [...added] });
    nextExpiry = Math.min(nextExpiry, until);
  }
}

/** Whether any secret is registered (the logger skips its scrubbing pass when none is). */
export function hasSecrets(): boolean {
  dropExpired(Date.now());
  return forms.length > 0;
}

/** Replaces every registered secret, in each of its forms, and header-scheme credentials. */
export function redact(text: string): string {
  dropExpired(Date.now());
  let out = text;
  for (const f of forms) if (out.includes(f)) out = out.split(f).join(REDACTED);
  if (out.length >= 14 && /bearer|basic|splunk/i.test(out))
    out = out.replace(HEADER_CREDENTIAL, `$1$2${REDACTED}`);
  return out;
}

/**
 * {@link redact} for text that a reader cut at a byte limit: a secret may have been cut in two, so a
 * trailing piece of any form of a registered secret is dropped as well.
 */
export function redactCut(text: string): string {
  const out = redact(text);
  for (const f of forms) {
    for (let n = Math.min(f.length - 1, out.length); n >= MIN_TRAILING_PIECE; n--) {
      if (out.endsWith(f.slice(0, n))) return `${out.slice(0, out.length - n)}${REDACTED}`;
    }
  }
  return out;
}

/**
 * Redacts `text`, then shortens it to `limit` characters (with `…` when cut). The order is the
 * point: cutting first could keep the head of a secret that the cut made unrecognisable.
 */
export function clip(text: string, limit: number): string {
  const clean = redact(text);
  return clean.length > limit ? `${clean.slice(0, limit)}…` : clean;
}
