/**
 * The sandbox's own view of the wire format: proto3 JSON as Go's protojson (behind grpc-gateway) writes it.
 * Kept apart from src/source/ on purpose (docs/design/style.md, the sandbox rule).
 *
 * What protojson does, and the sandbox therefore does too:
 * - fields holding their default value (false, "", 0, empty list, enum value 0) are omitted;
 * - message fields (timestamps, durations, nested objects) are written whenever they are set,
 *   even when their content is zero — a set zero duration is `"0s"`;
 * - timestamps are UTC RFC 3339 with 0, 3, 6 or 9 fractional digits, as few as the value needs;
 * - durations are seconds with 0, 3, 6 or 9 fractional digits and an `s` suffix (`"1.500s"`).
 */

/** An annotation as served. */
export interface SandboxAnnotation {
  key?: string;
  kind?: string;
  rawValue?: string;
  displayValue?: string;
  displayLabel?: string;
  displayUrl?: string;
  [field: string]: unknown;
}

/** The actor as served. */
export interface SandboxActor {
  kind?: string;
  userId?: string;
  [field: string]: unknown;
}

/** The metadata envelope as served. */
export interface SandboxMetadata {
  id?: string;
  createdAt?: string;
  changeKind?: string;
  actor?: SandboxActor;
  annotations?: SandboxAnnotation[];
  syslogEventId?: string;
  traceId?: string;
  [field: string]: unknown;
}

/**
 * One history entry exactly as the server sends it (a fresh parse of the served JSON). An entry
 * inserted with `insertRaw` is whatever value was given and need not have this shape.
 */
export interface SandboxEntry {
  metadata?: SandboxMetadata;
  snapshot?: Record<string, unknown>;
  [field: string]: unknown;
}

/** A point in time as protobuf holds it. */
export interface Instant {
  readonly seconds: number;
  readonly nanos: number;
}

/** Orders two instants. */
export function compareInstants(a: Instant, b: Instant): number {
  return a.seconds - b.seconds || a.nanos - b.nanos;
}

/** Go protojson's fraction rule: 0, 3, 6 or 9 digits, the fewest that keep the value exact. */
function fraction(nanos: number): string {
  if (nanos === 0) return '';
  const digits = String(nanos).padStart(9, '0');
  if (digits.endsWith('000000')) return `.${digits.slice(0, 3)}`;
  if (digits.endsWith('000')) return `.${digits.slice(0, 6)}`;
  return `.${digits}`;
}

const TWO_DIGITS = Array.from({ length: 100 }, (_, i) => String(i).padStart(2, '0'));
let cachedDay = Number.NaN;
let cachedDayText = '';

/** `YYYY-MM-DDT` of a day count since 1970-01-01 (Howard Hinnant's civil_from_days). */
function dayText(days: number): string {
  if (days === cachedDay) return cachedDayText;
  const z = days + 719_468;
  const era = Math.floor(z / 146_097);
  const doe = z - era * 146_097;
  const yoe = Math.floor(
    (doe - Math.floor(doe / 1460) + Math.floor(doe / 36_524) - Math.floor(doe / 146_096)) / 365,
  );
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const day = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const month = mp < 10 ? mp + 3 : mp - 9;
  const year = yoe + era * 400 + (month <= 2 ? 1 : 0);
  cachedDay = days;
  cachedDayText = `${String(year).padStart(4, '0')}-${TWO_DIGITS[month]}-${TWO_DIGITS[day]}T`;
  return cachedDayText;
}

/** A google.protobuf.Timestamp in proto3 JSON: `2025-03-04T10:11:12.123456789Z`. */
export function formatTimestamp(seconds: number, nanos: number): string {
  // Serving formats several timestamps per entry: plain arithmetic instead of a Date per call.
  const days = Math.floor(seconds / 86_400);
  let rest = seconds - days * 86_400;
  const hour = Math.floor(rest / 3600);
  rest -= hour * 3600;
  const minute = Math.floor(rest / 60);
  const second = rest - minute * 60;
  return `${dayText(days)}${TWO_DIGITS[hour]}:${TWO_DIGITS[minute]}:${TWO_DIGITS[second]}${fraction(nanos)}Z`;
}

/** A google.protobuf.Duration in proto3 JSON: `"3600s"`, `"1.500s"`, `"0s"`. */
export function formatDuration(seconds: number, nanos = 0): string {
  return `${seconds}${fraction(nanos)}s`;
}

const RFC3339 =
  /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(?:([Zz])|([+-])(\d{2}):(\d{2}))$/;

/** Parses RFC 3339 with up to nine fractional digits and any offset; throws on anything else. */
export function parseTimestamp(text: string): Instant {
  const m = RFC3339.exec(text);
  if (m === null) throw new RangeError(`not an RFC 3339 time: ${JSON.stringify(text)}`);
  const [year, month, day, hour, minute, second] = [m[1], m[2], m[3], m[4], m[5], m[6]].map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  // setUTCFullYear, unlike Date.UTC, does not read years 0–99 as 1900–1999.
  const check = new Date(0);
  check.setUTCFullYear(year, month - 1, day);
  check.setUTCHours(hour, minute, second, 0);
  const ms = check.getTime();
  // Dates silently roll 2025-02-30 over to March: refuse what does not round-trip.
  if (
    check.getUTCDate() !== day ||
    check.getUTCMonth() !== month - 1 ||
    hour > 23 ||
    minute > 59 ||
    second > 59
  ) {
    throw new RangeError(`not a valid calendar time: ${JSON.stringify(text)}`);
  }
  let seconds = ms / 1000;
  if (m[9] !== undefined) {
    const offset = Number(m[10]) * 3600 + Number(m[11]) * 60;
    seconds -= m[9] === '+' ? offset : -offset;
  }
  return { seconds, nanos: Number((m[7] ?? '').padEnd(9, '0')) };
}

/** Puts known keys in the order protojson writes them (field-number order), unknown keys after. */
export function orderKeys(value: Record<string, unknown>, order: readonly string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of order) if (Object.hasOwn(value, key)) out[key] = value[key];
  for (const key of Object.keys(value)) if (!Object.hasOwn(out, key)) out[key] = value[key];
  return out;
}

/**
 * Removes what protojson would not write: false, "", 0, empty lists and nulls. Nested objects are
 * kept (a set message is written even when empty) and cleaned recursively.
 */
export function omitDefaults(value: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(value)) {
    if (v === null || v === undefined || v === false || v === '' || v === 0) continue;
    if (Array.isArray(v)) {
      if (v.length > 0) out[key] = v;
      continue;
    }
    out[key] = typeof v === 'object' ? omitDefaults(v as Record<string, unknown>) : v;
  }
  return out;
}
