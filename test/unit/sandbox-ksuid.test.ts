import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodeKsuid, encodeKsuid, KSUID_EPOCH, ksuidAt, ksuidSeconds } from '../../src/sandbox/ksuid.js';
import { formatDuration, formatTimestamp, parseTimestamp } from '../../src/sandbox/wire.js';

const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex').toUpperCase();
const bytesOf = (h: string): Uint8Array => new Uint8Array(Buffer.from(h, 'hex'));

function compareBytes(a: Uint8Array, b: Uint8Array): number {
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return a[i]! - b[i]!;
  return 0;
}

describe('sandbox KSUID', () => {
  it('matches the reference encoding of segmentio/ksuid', () => {
    // The example of the segmentio/ksuid README.
    expect(encodeKsuid(bytesOf('0669F7EFB5A1CD34B5F99D1154FB6853345C9735'))).toBe(
      '0ujtsYcgvSTl8PAuAdqWYSMnLOv',
    );
    expect(hex(decodeKsuid('0ujtsYcgvSTl8PAuAdqWYSMnLOv'))).toBe('0669F7EFB5A1CD34B5F99D1154FB6853345C9735');
    expect(new Date(ksuidSeconds('0ujtsYcgvSTl8PAuAdqWYSMnLOv') * 1000).toISOString()).toBe(
      '2017-10-10T04:00:47.000Z',
    );
  });

  it('encodes the smallest and largest values at full width', () => {
    expect(encodeKsuid(new Uint8Array(20))).toBe('000000000000000000000000000');
    expect(encodeKsuid(new Uint8Array(20).fill(255))).toBe('aWgEPTl1tmebfsQzFP4bxwgy80V');
    expect(hex(decodeKsuid('aWgEPTl1tmebfsQzFP4bxwgy80V'))).toBe('FF'.repeat(20));
  });

  it('rejects text that is not a KSUID', () => {
    expect(() => decodeKsuid('0ujtsYcgvSTl8PAuAdqWYSMnLO')).toThrow(RangeError);
    expect(() => decodeKsuid('0ujtsYcgvSTl8PAuAdqWYSMnLO-')).toThrow(RangeError);
    expect(() => decodeKsuid('0ujtsYcgvSTl8PAuAdqWYSMnLOü')).toThrow(RangeError);
    // Larger than 2^160 - 1.
    expect(() => decodeKsuid('aWgEPTl1tmebfsQzFP4bxwgy80W')).toThrow(RangeError);
    expect(() => ksuidAt(KSUID_EPOCH - 1, new Uint8Array(16))).toThrow(RangeError);
  });

  it('round-trips any 20 bytes', () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 20, maxLength: 20 }), (bytes) => {
        const text = encodeKsuid(bytes);
        expect(text).toMatch(/^[0-9A-Za-z]{27}$/);
        expect(hex(decodeKsuid(text))).toBe(hex(bytes));
      }),
    );
  });

  it('orders strings exactly as it orders bytes', () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ minLength: 20, maxLength: 20 }),
        fc.uint8Array({ minLength: 20, maxLength: 20 }),
        (a, b) => {
          const byBytes = Math.sign(compareBytes(a, b));
          const sa = encodeKsuid(a);
          const sb = encodeKsuid(b);
          expect(sa < sb ? -1 : sa > sb ? 1 : 0).toBe(byBytes);
        },
      ),
    );
  });

  it('orders by time at one-second resolution, whatever the payloads', () => {
    const payload = fc.uint8Array({ minLength: 16, maxLength: 16 });
    fc.assert(
      fc.property(
        fc.integer({ min: KSUID_EPOCH, max: KSUID_EPOCH + 2 ** 32 - 2 }),
        fc.integer({ min: 1, max: 100_000 }),
        payload,
        payload,
        (t, dt, p, q) => {
          const later = Math.min(t + dt, KSUID_EPOCH + 2 ** 32 - 1);
          expect(ksuidAt(t, p) < ksuidAt(later, q)).toBe(true);
          expect(ksuidSeconds(ksuidAt(t, p))).toBe(t);
        },
      ),
    );
  });
});

describe('sandbox protojson timestamps', () => {
  it('formats any instant like Date.toISOString, with 0, 3, 6 or 9 fractional digits', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: -62_135_596_800, max: 253_402_300_799 }),
        fc.constantFrom(0, 5, 120_000_000, 123_456_000, 123_456_789, 999_999_999, 1_000, 7),
        (seconds, nanos) => {
          const text = formatTimestamp(seconds, nanos);
          expect(text.slice(0, 19)).toBe(new Date(seconds * 1000).toISOString().slice(0, 19));
          expect(text).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{3}|\.\d{6}|\.\d{9})?Z$/);
          expect(parseTimestamp(text)).toEqual({ seconds, nanos });
        },
      ),
    );
    expect(formatTimestamp(1_741_083_072, 120_000_000)).toBe('2025-03-04T10:11:12.120Z');
    expect(formatTimestamp(1_741_083_072, 123_456_000)).toBe('2025-03-04T10:11:12.123456Z');
    expect(formatTimestamp(1_741_083_072, 0)).toBe('2025-03-04T10:11:12Z');
    expect(formatDuration(1, 500_000_000)).toBe('1.500s');
    expect(formatDuration(3600)).toBe('3600s');
  });
});
