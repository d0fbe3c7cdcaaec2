/**
 * parseTimestamp reads the common UTC form without its regular expression (a fast path, run several
 * times per entry stored): for any text, it must give what the regular expression alone gave — the
 * same key and instant, or undefined. Texts are drawn as RFC 3339 times edited a few characters at
 * a time, so that both near misses and valid times of every shape are tried.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  isoMillis,
  keyMillis,
  parseTimestamp,
  subtractMs,
  timestampKey,
} from '../../src/core/normalise/time.js';

if (process.env['CI']) fc.configureGlobal({ seed: 20_261_126 });

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?([Zz]|[+-]\d{2}:\d{2})$/;

/** parseTimestamp as it was before the fast path: the reference. */
function reference(text: string): { key: string; ms: number } | undefined {
  const m = RFC3339.exec(text.trim());
  if (m === null) return undefined;
  const [, y = '', mo = '', d = '', h = '', mi = '', s = '', frac = '', zone = 'Z'] = m;
  if (Number(h) > 23 || Number(mi) > 59 || Number(s) > 59) return undefined;
  const date = new Date(Date.UTC(2000, Number(mo) - 1, Number(d), Number(h), Number(mi), Number(s)));
  date.setUTCFullYear(Number(y), Number(mo) - 1, Number(d));
  if (
    date.getUTCFullYear() !== Number(y) ||
    date.getUTCMonth() !== Number(mo) - 1 ||
    date.getUTCDate() !== Number(d)
  )
    return undefined;
  const wall = date.getTime();
  const nanos = frac.padEnd(9, '0');
  const millis = Number(nanos.slice(0, 3));
  if (zone === 'Z' || zone === 'z')
    return { key: `${y}-${mo}-${d}T${h}:${mi}:${s}.${nanos}Z`, ms: wall + millis };
  const oh = Number(zone.slice(1, 3));
  const om = Number(zone.slice(4, 6));
  if (oh > 23 || om > 59) return undefined;
  const ms = wall - (zone.startsWith('-') ? -1 : 1) * (oh * 60 + om) * 60_000;
  const instant = new Date(ms);
  if (instant.getUTCFullYear() < 0 || instant.getUTCFullYear() > 9999) return undefined;
  return { key: `${instant.toISOString().slice(0, 19)}.${nanos}Z`, ms: ms + millis };
}

const SEEDS = [
  '2025-01-06T09:00:00Z',
  '2024-02-29T23:59:59.123456789Z',
  '0099-12-31T00:00:00.1Z',
  '2023-02-29T00:00:00Z',
  '2025-04-31T00:00:00.5Z',
  '2025-01-06 09:00:00.000z',
  '2000-02-29T00:00:00.000000001+01:30',
  '9999-12-31T23:59:59.999999999Z',
];
const EDIT_CHARS = '0123456789-:.TtZz +x\u00a0';

const edited = fc
  .tuple(
    fc.constantFrom(...SEEDS),
    fc.array(fc.tuple(fc.nat(40), fc.constantFrom(0, 1, 2), fc.constantFrom(...EDIT_CHARS)), {
      maxLength: 3,
    }),
  )
  .map(([seed, edits]) =>
    edits.reduce((t, [at, op, c]) => {
      const p = at % (t.length + 1);
      if (op === 0) return t.slice(0, p) + c + t.slice(p + 1);
      if (op === 1) return t.slice(0, p) + c + t.slice(p);
      return t.slice(0, p) + t.slice(p + 1);
    }, seed),
  );

describe('parseTimestamp', () => {
  it('gives what the regular expression alone gave, for any text near an RFC 3339 time', () => {
    fc.assert(
      fc.property(edited, (text) => {
        const got = parseTimestamp(text);
        expect(got && { key: got.key, ms: got.date.getTime() }).toEqual(reference(text));
      }),
      { numRuns: 20_000 },
    );
  });

  it('and timestampKey (no Date made) gives its key, for any text near an RFC 3339 time', () => {
    fc.assert(
      fc.property(edited, (text) => {
        expect(timestampKey(text)).toBe(reference(text)?.key);
      }),
      { numRuns: 20_000 },
    );
    expect(timestampKey(undefined)).toBeUndefined();
    expect(timestampKey(20_250_106)).toBeUndefined();
  });
});

/** subtractMs as it was before keyMillis and isoMillis: the reference. */
function referenceSubtract(key: string, ms: number): string {
  const base = new Date(`${key.slice(0, 23)}Z`).getTime() - ms;
  return `${new Date(base).toISOString().slice(0, 23)}${key.slice(23)}`;
}

describe('keyMillis and isoMillis', () => {
  it('read a key as Date.parse does, for any text near an RFC 3339 time', () => {
    fc.assert(
      fc.property(edited, (text) => {
        expect(keyMillis(text)).toBe(Date.parse(`${text.slice(0, 23)}Z`));
      }),
      { numRuns: 20_000 },
    );
  });

  it('write an instant as toISOString does, inside years 0000-9999 and past them', () => {
    const first = Date.UTC(2000, 0, 1);
    const instant = fc.oneof(
      fc.integer({ min: -62_167_219_200_000 - 1e11, max: 253_402_300_799_999 + 1e11 }),
      fc.integer({ min: -3, max: 3 }).map((d) => -62_167_219_200_000 + d),
      fc.integer({ min: -3, max: 3 }).map((d) => 253_402_300_799_999 + d),
      fc.integer({ min: -1e6, max: 1e6 }).map((d) => first + d * 86_400_000),
    );
    fc.assert(
      fc.property(instant, (ms) => {
        expect(isoMillis(ms)).toBe(new Date(ms).toISOString().slice(0, 23));
      }),
      { numRuns: 50_000 },
    );
    expect(() => isoMillis(Number.NaN)).toThrow(RangeError);
  });

  it('subtract as the Date arithmetic did, for any text near an RFC 3339 time', () => {
    fc.assert(
      fc.property(edited, fc.integer({ min: 0, max: 400 * 86_400_000 }), (text, ms) => {
        let want: string | Error;
        try {
          want = referenceSubtract(text, ms);
        } catch (err) {
          want = err as Error;
        }
        if (want instanceof Error) expect(() => subtractMs(text, ms)).toThrow(RangeError);
        else expect(subtractMs(text, ms)).toBe(want);
      }),
      { numRuns: 20_000 },
    );
  });
});
