/**
 * proto3 JSON durations: a decimal number of seconds with up to nine fractional digits and an
 * `s` suffix (`"3600s"`, `"1.5s"`, `"0s"`, `"-2s"`). Pure.
 */

const DURATION = /^(-)?(\d+)(?:\.(\d{1,9}))?s$/;

export interface ParsedDuration {
  /** Whole and fractional seconds as a JS number (microsecond precision is what PostgreSQL keeps). */
  readonly seconds: number;
  /** PostgreSQL interval literal, exact to the microsecond: `'3600.5 seconds'`. */
  readonly interval: string;
}

/**
 * Durations already parsed, by text: a tenant's history repeats a handful of values, and each is
 * parsed several times per entry (the columns, then the diff). Bounded; results are immutable.
 */
const parsed = new Map<string, ParsedDuration | undefined>();
const MAX_CACHED = 1024;

/** Parses a proto3 JSON duration; undefined when the text is not one. */
export function parseDuration(text: unknown): ParsedDuration | undefined {
  if (typeof text !== 'string') return undefined;
  const known = parsed.get(text);
  if (known !== undefined || parsed.has(text)) return known;
  const result = parseDurationText(text);
  if (parsed.size >= MAX_CACHED) parsed.clear();
  parsed.set(text, result);
  return result;
}

function parseDurationText(text: string): ParsedDuration | undefined {
  const m = DURATION.exec(text.trim());
  if (m === null) return undefined;
  const sign = m[1] ?? '';
  const whole = m[2] as string;
  // PostgreSQL intervals keep microseconds: cut the nanosecond digits rather than round them away silently.
  let frac = (m[3] ?? '').slice(0, 6);
  let end = frac.length;
  while (end > 0 && frac.charCodeAt(end - 1) === 48) end--;
  frac = frac.slice(0, end);
  const digits = whole.length > 1 && whole.charCodeAt(0) === 48 ? BigInt(whole).toString() : whole;
  const literal = `${sign}${digits}${frac ? `.${frac}` : ''}`;
  return { seconds: Number(`${sign}${whole}.${m[3] ?? '0'}`), interval: `${literal} seconds` };
}
