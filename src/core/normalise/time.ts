/**
 * RFC 3339 timestamps with up to nanoseconds. A JS Date keeps milliseconds only, so comparisons use
 * a text key: UTC, nine fractional digits, sortable byte-wise. Pure.
 */

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?([Zz]|[+-]\d{2}:\d{2})$/;

export interface ParsedTime {
  /** `2025-03-04T10:11:12.123456789Z`: UTC, nine fractional digits. */
  readonly key: string;
  /** Millisecond-precision Date of the same instant. */
  readonly date: Date;
}

/**
 * Milliseconds since the epoch of a UTC wall-clock time, or undefined when a field is out of range
 * (month 13, 30 February, hour 24, minute 60): Date.UTC would roll those over into a valid instant
 * whose key no longer equals the text. Years 0000–0099 stay themselves (Date.UTC reads them as
 * 1900–1999).
 */
function utcMillis(y: number, mo: number, d: number, h: number, mi: number, s: number): number | undefined {
  if (h > 23 || mi > 59 || s > 59) return undefined;
  if (mo < 1 || mo > 12 || d < 1) return undefined;
  if (y >= 100) {
    // The common case, without a Date object (this runs several times per entry stored).
    const leap = y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0);
    if (d > (mo === 2 && leap ? 29 : (DAYS_IN_MONTH[mo - 1] as number))) return undefined;
    return Date.UTC(y, mo - 1, d, h, mi, s);
  }
  const date = new Date(Date.UTC(2000, mo - 1, d, h, mi, s));
  date.setUTCFullYear(y, mo - 1, d);
  if (date.getUTCFullYear() !== y || date.getUTCMonth() !== mo - 1 || date.getUTCDate() !== d)
    return undefined;
  return date.getTime();
}

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/** Digit value of the character at `i`, or -1. */
function digit(t: string, i: number): number {
  const c = t.charCodeAt(i) - 48;
  return c >= 0 && c <= 9 ? c : -1;
}

/** Two digits at `i` as a number, or -1. */
function two(t: string, i: number): number {
  const a = digit(t, i);
  const b = digit(t, i + 1);
  return a < 0 || b < 0 ? -1 : a * 10 + b;
}

/**
 * The common form `YYYY-MM-DDTHH:MM:SS[.fraction]Z` read without the regular expression (this runs
 * several times for every entry stored): the same instant and key as the general path, or
 * undefined for anything else, which the general path then reads.
 */
function parseUtcFast(t: string): ParsedTime | undefined {
  const n = t.length;
  if (n < 20 || n > 30 || t.charCodeAt(n - 1) !== 90 /* Z */) return undefined;
  if (t.charCodeAt(4) !== 45 || t.charCodeAt(7) !== 45 || t.charCodeAt(10) !== 84 /* T */) return undefined;
  if (t.charCodeAt(13) !== 58 || t.charCodeAt(16) !== 58) return undefined;
  const y1 = two(t, 0);
  const y2 = two(t, 2);
  const mo = two(t, 5);
  const d = two(t, 8);
  const h = two(t, 11);
  const mi = two(t, 14);
  const s = two(t, 17);
  if (y1 < 0 || y2 < 0 || mo < 0 || d < 0 || h < 0 || mi < 0 || s < 0) return undefined;
  let nanos = '000000000';
  if (n > 20) {
    // `.` and 1-9 digits before the Z.
    if (t.charCodeAt(19) !== 46 || n === 21) return undefined;
    for (let i = 20; i < n - 1; i++) if (digit(t, i) < 0) return undefined;
    nanos = t.slice(20, n - 1).padEnd(9, '0');
  }
  const y = y1 * 100 + y2;
  const wall = utcMillis(y, mo, d, h, mi, s);
  if (wall === undefined) return undefined;
  const key = n === 30 ? t : `${t.slice(0, 19)}.${nanos}Z`;
  return { key, date: new Date(wall + Number(nanos.slice(0, 3))) };
}

/** Parses an RFC 3339 timestamp; undefined when it is not one. */
export function parseTimestamp(text: unknown): ParsedTime | undefined {
  if (typeof text !== 'string') return undefined;
  const fast = parseUtcFast(text);
  if (fast !== undefined) return fast;
  const m = RFC3339.exec(text.trim());
  if (m === null) return undefined;
  const [, y = '', mo, d, h, mi, s, frac = '', zone = 'Z'] = m;
  const wall = utcMillis(Number(y), Number(mo), Number(d), Number(h), Number(mi), Number(s));
  if (wall === undefined) return undefined;
  const nanos = frac.padEnd(9, '0');
  const millis = Number(nanos.slice(0, 3));
  if (zone === 'Z' || zone === 'z') {
    // The common case (UTC, as protojson writes it): the key is the text itself, padded.
    return { key: `${y}-${mo}-${d}T${h}:${mi}:${s}.${nanos}Z`, date: new Date(wall + millis) };
  }
  const offsetHours = Number(zone.slice(1, 3));
  const offsetMins = Number(zone.slice(4, 6));
  if (offsetHours > 23 || offsetMins > 59) return undefined;
  const ms = wall - (zone.startsWith('-') ? -1 : 1) * (offsetHours * 60 + offsetMins) * 60_000;
  const instant = new Date(ms);
  // An offset can carry 0000-01-01 into year −1 or 9999-12-31 into 10000: no RFC 3339 key for those.
  if (instant.getUTCFullYear() < 0 || instant.getUTCFullYear() > 9999) return undefined;
  return { key: `${instant.toISOString().slice(0, 19)}.${nanos}Z`, date: new Date(ms + millis) };
}

/** The key of a Date (millisecond precision, padded to nine digits). */
export function dateKey(date: Date): string {
  return `${date.toISOString().slice(0, 23)}000000Z`;
}

/** Subtracts milliseconds from a key, keeping its sub-millisecond digits. */
export function subtractMs(key: string, ms: number): string {
  const base = new Date(`${key.slice(0, 23)}Z`).getTime() - ms;
  return `${new Date(base).toISOString().slice(0, 23)}${key.slice(23)}`;
}
