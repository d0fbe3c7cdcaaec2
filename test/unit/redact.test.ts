/**
 * The one redaction step (src/core/redact.ts): every form of a registered secret, the secret-bearing
 * parts of sink URLs, header credentials, and redaction before any cut.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { clip, REDACTED, redact, redactCut, registerSecret, urlSecretParts } from '../../src/core/redact.js';

/** 60 characters, with `+`, `/`, `=` and a space-free mix that form-encoding changes. */
const SECRET = 'Zk9+Q2xpZW50/U2VjcmV0=Wm9vK3Rlc3Q/aGFyZGVu+MDEyMzQ1Njc4OQ==a';

/** Every 12-character window of `secret` found in `text`. */
function leakedWindows(text: string, secret: string): string[] {
  const out: string[] = [];
  for (let i = 0; i + 12 <= secret.length; i++) {
    const w = secret.slice(i, i + 12);
    for (const form of [w, encodeURIComponent(w), new URLSearchParams([['k', w]]).toString().slice(2)]) {
      if (text.includes(form)) out.push(form);
    }
  }
  return out;
}

describe('redact', () => {
  registerSecret(SECRET);

  it('has a 60-character secret with + / = for the checks', () => {
    expect(SECRET).toHaveLength(60);
  });

  it.each([
    ['raw', SECRET],
    ['URL-encoded', encodeURIComponent(SECRET)],
    ['form-encoded', new URLSearchParams([['client_secret', SECRET]]).toString()],
    [
      'form-encoded, lower-case hex',
      new URLSearchParams([['s', SECRET]]).toString().replace(/%[0-9A-F]{2}/g, (m) => m.toLowerCase()),
    ],
    ['JSON-escaped', JSON.stringify({ s: SECRET })],
    ['base64', Buffer.from(SECRET).toString('base64')],
  ])('removes the %s form', (_name, form) => {
    const out = redact(`echo: grant_type=client_credentials&x=${form}&y=1`);
    expect(out).toContain(REDACTED);
    expect(leakedWindows(out, SECRET)).toEqual([]);
  });

  it('redacts before it cuts: a secret straddling the cut leaves nothing', () => {
    const body = `${'x'.repeat(150)}client_secret=${encodeURIComponent(SECRET)}`;
    const out = clip(body, 200);
    expect(leakedWindows(out, SECRET)).toEqual([]);
    expect(out.length).toBeLessThanOrEqual(201);
  });

  it('drops the head of a secret that a reader cut at its byte limit', () => {
    const cut = `prefix ${encodeURIComponent(SECRET)}`.slice(0, 40);
    expect(redact(cut)).toContain('Zk9%2BQ2xp');
    const out = redactCut(cut);
    expect(out).not.toContain('Zk9%2BQ2xp');
    expect(out).toBe(`prefix ${REDACTED}`);
  });

  it('removes a Splunk, Bearer or Basic credential echoed in headers', () => {
    const out = redact(
      'Authorization: Splunk 11111111-2222-3333-4444-555555555555, Bearer eyJhbGciOi1.x.y Basic dXNlcjpwYXNzMQ==',
    );
    expect(out).not.toMatch(/11111111|eyJhbGciOi1|dXNlcjpwYXNzMQ/);
    expect(redact('Basic authentication required')).toBe('Basic authentication required');
  });
});

describe('secret-bearing parts of sink URLs', () => {
  it('Slack: the team, bot and secret path segments', () => {
    expect(
      urlSecretParts('https://hooks.slack.com/services/T0AAAAAAA/B0BBBBBBB/abcdefGHIJKLmnopQRSTuvwx'),
    ).toEqual(['T0AAAAAAA', 'B0BBBBBBB', 'abcdefGHIJKLmnopQRSTuvwx']);
  });

  it('Teams: the workflow id and every query value (sig=)', () => {
    const parts = urlSecretParts(
      'https://prod-01.westeurope.logic.azure.com/workflows/0123456789abcdef0123456789abcdef/triggers/manual/paths/invoke?api-version=2016-06-01&sp=%2Ftriggers%2Fmanual%2Frun&sv=1.0&sig=AbCdEfGhIjKlMnOpQrStUvWxYz0123456789abcdEFG',
    );
    expect(parts).toContain('0123456789abcdef0123456789abcdef');
    expect(parts).toContain('AbCdEfGhIjKlMnOpQrStUvWxYz0123456789abcdEFG');
    expect(parts).not.toContain('manual');
  });

  it('userinfo, and a receiver echoing "Cannot POST <path>" keeps none of it', () => {
    const url = 'https://user:pa55word1@hooks.example.com/in/k3y-0123456789abcdef?token=t0ken-value-1234';
    registerSecret(url);
    const out = redact('Cannot POST /in/k3y-0123456789abcdef?token=t0ken-value-1234 (user pa55word1)');
    expect(out).not.toMatch(/k3y-0123|t0ken-value|pa55word1/);
  });
});

describe('short-lived secrets (access tokens, client assertions)', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('scrubs a token until its time is over, then forgets it', () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const token = 'tok-8f3a9c1d2e4b5a6f7081';
    registerSecret(token, Date.now() + 60_000);
    expect(redact(`Bearer-less echo ${token}`)).toBe(`Bearer-less echo ${REDACTED}`);
    vi.setSystemTime(Date.now() + 59_000);
    expect(redact(token)).toBe(REDACTED);
    vi.setSystemTime(Date.now() + 2_000);
    expect(redact(token)).toBe(token);
  });

  it('keeps a secret registered for good even when a token with the same value expires', () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const lasting = 'same-value-0123456789ab';
    registerSecret(lasting, Date.now() + 1_000);
    registerSecret(lasting);
    vi.setSystemTime(Date.now() + 10_000);
    expect(redact(lasting)).toBe(REDACTED);
  });

  it('keeps a form another live secret shares when one of them expires', () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    // Two sink URLs that differ but carry the same secret path segment: both register its forms.
    const part = 'k3y-shared-0123456789';
    registerSecret(`https://hooks.example.com/in/${part}`, Date.now() + 1_000);
    registerSecret(`https://other.example.com/hook/${part}`, Date.now() + 100_000);
    vi.setSystemTime(Date.now() + 10_000);
    expect(redact(`POST /hook/${part}`)).toBe(`POST /hook/${REDACTED}`);
    vi.setSystemTime(Date.now() + 100_000);
    expect(redact(`POST /hook/${part}`)).toBe(`POST /hook/${part}`);
  });

  it('replaces a longer secret whole when a shorter one inside it was registered first', () => {
    const inner = 'inner-secret-4242';
    const outer = `xx${inner}yy-outer`;
    registerSecret(inner, Date.now() + 60_000);
    registerSecret(outer, Date.now() + 60_000);
    expect(redact(`a ${outer} b ${inner} c`)).toBe(`a ${REDACTED} b ${REDACTED} c`);
  });
});
