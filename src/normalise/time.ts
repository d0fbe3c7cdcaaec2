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

/** Parses an RFC 3339 timestamp; undefined when it is not one. */
export function parseTimestamp(text: unknown): ParsedTime | undefined {
  if (typeof text !== 'string') return undefined;
  const m = RFC3339.exec(text.trim());
  if (m === null) return undefined;
  const [, y, mo, d, h, mi, s, frac = '', zone = 'Z'] = m;
  if ((zone === 'Z' || zone === 'z') && y !== undefined && y >= '1970') {
    // The common case (UTC, as protojson writes it): the key is the text itself, padded.
    const whole = Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(s));
    const date = new Date(whole);
    if (date.getUTCDate() !== Number(d) || date.getUTCMonth() !== Number(mo) - 1 || Number(s) > 59)
      return undefined;
    const nanos = frac.padEnd(9, '0');
    if (nanos !== '000000000') date.setTime(whole + Number(nanos.slice(0, 3)));
    return { key: `${y}-${mo}-${d}T${h}:${mi}:${s}.${nanos}Z`, date };
  }
  let offsetMinutes = 0;
  if (zone !== 'Z' && zone !== 'z') {
    const sign = zone.startsWith('-') ? -1 : 1;
    offsetMinutes = sign * (Number(zone.slice(1, 3)) * 60 + Number(zone.slice(4, 6)));
  }
  const ms =
    Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(s)) - offsetMinutes * 60_000;
  const check = new Date(Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(s)));
  // Reject impossible dates (2025-02-30) that Date.UTC would silently roll over.
  if (check.getUTCDate() !== Number(d) || check.getUTCMonth() !== Number(mo) - 1 || Number(s) > 59)
    return undefined;
  if (!Number.isFinite(ms)) return undefined;
  const nanos = frac.padEnd(9, '0');
  const whole = new Date(ms).toISOString().slice(0, 19);
  return { key: `${whole}.${nanos}Z`, date: new Date(ms + Number(nanos.slice(0, 3))) };
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
