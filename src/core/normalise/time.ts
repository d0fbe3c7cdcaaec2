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
 * The wall-clock milliseconds of the common form `YYYY-MM-DDTHH:MM:SS[.fraction]Z`, read without
 * the regular expression (this runs several times for every entry stored), or undefined for
 * anything else, which the general path then reads. The fraction is checked, not read.
 */
function fastWall(t: string): number | undefined {
  const n = t.length;
  if (n < 20 || n > 30 || t.charCodeAt(n - 1) !== 90 /* Z */) return undefined;
  if (t.charCodeAt(4) !== 45 || t.charCodeAt(7) !== 45 || t.charCodeAt(10) !== 84 /* T */) return undefined;
  if (t.charCodeAt(13) !== 58 || t.charCodeAt(16) !== 58) return undefined;
  if (n > 20) {
    // `.` and 1-9 digits before the Z.
    if (t.charCodeAt(19) !== 46 || n === 21) return undefined;
    for (let i = 20; i < n - 1; i++) if (digit(t, i) < 0) return undefined;
  }
  return wallMillis(t);
}

/** The key of a text fastWall accepted: nine fractional digits (the text itself when it has them). */
function fastKey(t: string): string {
  const n = t.length;
  if (n === 30) return t;
  if (n === 20) return `${t.slice(0, 19)}.000000000Z`;
  return `${t.slice(0, n - 1).padEnd(29, '0')}Z`;
}

/** The common form read fast (fastWall), with its key and Date; undefined for anything else. */
function parseUtcFast(t: string): ParsedTime | undefined {
  const wall = fastWall(t);
  if (wall === undefined) return undefined;
  const key = fastKey(t);
  return { key, date: new Date(wall + three(key, 20)) };
}

/**
 * The key of an RFC 3339 timestamp, as parseTimestamp gives it; undefined when it is not one. The
 * common form costs no Date and no result object: a run keys every entry it is served.
 */
export function timestampKey(text: unknown): string | undefined {
  if (typeof text !== 'string') return undefined;
  if (fastWall(text) !== undefined) return fastKey(text);
  return parseTimestamp(text)?.key;
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
  return `${isoMillis(keyMillis(key) - ms)}${key.slice(23)}`;
}

/**
 * `Date.parse` of a key's first 23 characters (`YYYY-MM-DDTHH:MM:SS.mmm`, UTC), read digit by digit:
 * the rules' burst window and the in-memory walk ask it of every entry, and parsing the text as a
 * Date costs several times more. Anything but a valid wall-clock time goes to Date.parse itself.
 */
export function keyMillis(key: string): number {
  return validKeyMillis(key) ?? Date.parse(`${key.slice(0, 23)}Z`);
}

/**
 * The instant of a key's first 23 characters, to the millisecond, when they are a valid UTC time
 * (`YYYY-MM-DDTHH:MM:SS.mmm`, no field out of range); else undefined.
 */
export function validKeyMillis(key: string): number | undefined {
  const ms = key.charCodeAt(19) === 46 /* . */ ? three(key, 20) : -1;
  if (ms < 0 || key.charCodeAt(4) !== 45 || key.charCodeAt(7) !== 45 || key.charCodeAt(10) !== 84)
    return undefined;
  if (key.charCodeAt(13) !== 58 || key.charCodeAt(16) !== 58) return undefined;
  const wall = wallMillis(key);
  return wall === undefined ? undefined : wall + ms;
}

/** The wall-clock time of the first 19 characters of a key; undefined when not a valid one. */
function wallMillis(key: string): number | undefined {
  const y1 = two(key, 0);
  const y2 = two(key, 2);
  const mo = two(key, 5);
  const d = two(key, 8);
  const h = two(key, 11);
  const mi = two(key, 14);
  const s = two(key, 17);
  if (y1 < 0 || y2 < 0 || mo < 0 || d < 0 || h < 0 || mi < 0 || s < 0) return undefined;
  return utcMillis(y1 * 100 + y2, mo, d, h, mi, s);
}

/** Three digits at `i` as a number, or -1. */
function three(t: string, i: number): number {
  const a = two(t, i);
  const b = digit(t, i + 2);
  return a < 0 || b < 0 ? -1 : a * 10 + b;
}

/** Milliseconds from the epoch to the start of year 0000 and to the end of year 9999. */
const FIRST_MS = -62_167_219_200_000;
const LAST_MS = 253_402_300_799_999;
const DAY_MS = 86_400_000;

/**
 * `new Date(ms).toISOString().slice(0, 23)` without the Date: toISOString costs several times the
 * arithmetic (it runs for every entry the rules look at). Years 0000–9999 only; any other instant,
 * and NaN, go to toISOString itself (which throws for NaN, as before).
 */
export function isoMillis(ms: number): string {
  if (!(ms >= FIRST_MS && ms <= LAST_MS) || !Number.isInteger(ms))
    return new Date(ms).toISOString().slice(0, 23);
  const days = Math.floor(ms / DAY_MS);
  const inDay = ms - days * DAY_MS;
  // Days to a civil date (H. Hinnant's algorithm, eras of 400 years starting 0000-03-01).
  const z = days + 719_468;
  const era = Math.floor(z / 146_097);
  const doe = z - era * 146_097;
  const yoe = Math.floor(
    (doe - Math.floor(doe / 1460) + Math.floor(doe / 36_524) - Math.floor(doe / 146_096)) / 365,
  );
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const d = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const m = mp < 10 ? mp + 3 : mp - 9;
  const y = yoe + era * 400 + (m <= 2 ? 1 : 0);
  const h = Math.floor(inDay / 3_600_000);
  const mi = Math.floor(inDay / 60_000) % 60;
  const s = Math.floor(inDay / 1000) % 60;
  const milli = inDay % 1000;
  return `${D2[Math.floor(y / 100)]}${D2[y % 100]}-${D2[m]}-${D2[d]}T${D2[h]}:${D2[mi]}:${D2[s]}.${D3[milli]}`;
}

/** '00'…'99' and '000'…'999', so that formatting a time pads nothing. */
const D2 = Array.from({ length: 100 }, (_, i) => String(i).padStart(2, '0'));
const D3 = Array.from({ length: 1000 }, (_, i) => String(i).padStart(3, '0'));
