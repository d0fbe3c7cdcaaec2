/**
 * The SQL that Grafana's PostgreSQL data source sends for a panel query, rebuilt here so that tests
 * and `scripts/dashboard-explain.ts` run exactly what a dashboard would. Grafana does it in three
 * steps, reproduced in the same order:
 *
 *  1. the browser replaces template variables (`$tenant`, `${tenant}`, `${tenant:sqlstring}`,
 *     `[[tenant]]`) and the built-ins `$__interval`, `$__interval_ms`, `$__from`, `$__to`; a
 *     single-valued variable is inserted with its single quotes doubled and no quotes around it
 *     (the data source's `interpolateVariable`), so queries write `'$tenant'`;
 *  2. the server replaces `$__interval_ms`, `$__interval`, `$__unixEpochFrom()`, `$__unixEpochTo()`;
 *  3. the PostgreSQL macro engine replaces every `$__name(args)` — `$__timeFilter(col)` becomes
 *     `col BETWEEN '<from>' AND '<to>'` (RFC 3339, UTC, inclusive at both ends), `$__timeGroup(col,
 *     '1h'[, fill])` becomes `floor(extract(epoch from col)/3600)*3600`, `…Alias` adds `AS "time"`.
 *     Arguments are split on commas and trimmed; a `)` ends the argument list, so no argument can
 *     contain one. The fill argument changes nothing in the SQL: Grafana fills missing buckets in
 *     the response (returned here as `fill`). A `$__timeGroup(…)` directly followed by a comma is
 *     read as `$__timeGroupAlias` (Grafana's pre-5.3 compatibility rule).
 *
 * Written from Grafana's documentation and its `pkg/tsdb/grafana-postgresql-datasource/macros.go`
 * behaviour (the numbers are formatted as Go's `%v` formats a float64: `86400`, `1e+06`).
 */

/** The dashboard's time range. */
export interface TimeRange {
  readonly from: Date;
  readonly to: Date;
}

/** How Grafana fills time buckets without rows, from the third argument of `$__timeGroup`. */
export type FillMode =
  | { readonly mode: 'null'; readonly intervalSeconds: number }
  | { readonly mode: 'previous'; readonly intervalSeconds: number }
  | { readonly mode: 'value'; readonly value: number; readonly intervalSeconds: number };

export interface ExpandOptions {
  readonly range: TimeRange;
  /** Template variables by name: a string for a single value, an array for a multi-value variable. */
  readonly variables?: Readonly<Record<string, string | readonly string[]>>;
  /** `$__interval` in milliseconds (Grafana derives it from the range and the panel width). */
  readonly intervalMs?: number;
  /** The clock for intervals in months and years (`1M`, `1y`), which Go measures from now. */
  readonly now?: Date;
}

export interface Expansion {
  readonly sql: string;
  /** Set when a `$__timeGroup` carried a fill argument. */
  readonly fill?: FillMode;
}

/** A macro Grafana would refuse; the message is Grafana's. */
export class MacroError extends Error {
  override readonly name = 'MacroError';
}

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
const YEAR = 365 * DAY;

/** Grafana's `gtime.FormatInterval`: the largest whole unit, `1y`, `2d`, `30m`, `500ms`. */
export function formatInterval(ms: number): string {
  const units: Array<[number, string]> = [
    [YEAR, 'y'],
    [DAY, 'd'],
    [HOUR, 'h'],
    [MINUTE, 'm'],
    [SECOND, 's'],
    [1, 'ms'],
  ];
  for (const [size, suffix] of units) if (ms >= size) return `${Math.floor(ms / size)}${suffix}`;
  return '1ms';
}

const GO_UNITS: Readonly<Record<string, number>> = {
  ns: 1e-6,
  us: 1e-3,
  µs: 1e-3,
  μs: 1e-3,
  ms: 1,
  s: SECOND,
  m: MINUTE,
  h: HOUR,
};

/** Go's `time.ParseDuration` (`1h30m`, `1.5s`, `-2m`), in milliseconds; undefined when invalid. */
function parseGoDuration(text: string): number | undefined {
  let s = text;
  let sign = 1;
  if (s.startsWith('-') || s.startsWith('+')) {
    if (s.startsWith('-')) sign = -1;
    s = s.slice(1);
  }
  if (s === '0') return 0;
  if (s === '') return undefined;
  let total = 0;
  const part = /^(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)/;
  while (s !== '') {
    const m = part.exec(s);
    if (m === null) return undefined;
    total += Number(m[1]) * (GO_UNITS[m[2] as string] as number);
    s = s.slice(m[0].length);
  }
  return sign * total;
}

/**
 * Grafana's `gtime.ParseInterval`, in milliseconds: Go durations, and `Nd`, `Nw`, `NM`, `Ny`
 * counted on the calendar from `now` (UTC here; Grafana uses the server's zone, UTC in its image).
 */
export function parseInterval(text: string, now: Date = new Date()): number {
  const m = /^(\d+)([dwMy])$/.exec(text);
  if (m === null) {
    const ms = parseGoDuration(text);
    if (ms === undefined) throw new MacroError(`error parsing interval ${text}`);
    return ms;
  }
  const n = Number(m[1]);
  const later = new Date(now.getTime());
  switch (m[2]) {
    case 'd':
      later.setUTCDate(later.getUTCDate() + n);
      break;
    case 'w':
      later.setUTCDate(later.getUTCDate() + 7 * n);
      break;
    case 'M':
      later.setUTCMonth(later.getUTCMonth() + n);
      break;
    default:
      later.setUTCFullYear(later.getUTCFullYear() + n);
  }
  return later.getTime() - now.getTime();
}

/** A float64 as Go's `%v` writes it: shortest digits, exponent form from 1e+06 and below 1e-04. */
export function goFloat(x: number): string {
  if (x === 0) return '0';
  const [mantissa, e] = x.toExponential().split('e') as [string, string];
  const exp = Number(e);
  if (exp >= -4 && exp < 6) return String(x);
  const digits = String(Math.abs(exp)).padStart(2, '0');
  return `${mantissa}e${exp < 0 ? '-' : '+'}${digits}`;
}

/** Go's `time.RFC3339Nano` in UTC: `2025-03-01T10:00:00Z`, `…:00.123Z` (trailing zeros dropped). */
export function rfc3339Nano(d: Date): string {
  return d.toISOString().replace(/\.(\d*?)0*Z$/, (_m, frac: string) => (frac === '' ? 'Z' : `.${frac}Z`));
}

// Grafana's template variable syntax: $name, [[name]] / [[name:format]], ${name} / ${name:format}.
const VARIABLE = /\$(\w+)|\[\[(\w+?)(?::(\w+))?\]\]|\$\{(\w+)(?::([^}]+))?\}/g;

function formatValue(value: string | readonly string[], format: string | undefined): string {
  const values = typeof value === 'string' ? [value] : value;
  switch (format) {
    case undefined:
      // The PostgreSQL data source's interpolateVariable: one value bare with quotes doubled;
      // a multi-value variable as a list of quoted literals.
      return typeof value === 'string'
        ? value.replace(/'/g, "''")
        : values.map((v) => `'${v.replace(/'/g, "''")}'`).join(',');
    case 'raw':
      return values.join(',');
    case 'sqlstring':
      return values.map((v) => `'${v.replace(/'/g, "''")}'`).join(',');
    case 'singlequote':
      return values.map((v) => `'${v.replace(/'/g, "\\'")}'`).join(',');
    default:
      throw new MacroError(`variable format ${format} is not supported by this expander`);
  }
}

/**
 * Step 1, the browser: template variables and the built-ins. Names that are neither (such as
 * `$__timeFilter`) are left for the later steps, as Grafana leaves unknown variables in place.
 */
export function interpolateVariables(sql: string, options: ExpandOptions): string {
  const { range } = options;
  const builtIns: Record<string, string> = {
    __from: String(range.from.getTime()),
    __to: String(range.to.getTime()),
    __range_s: String(Math.round((range.to.getTime() - range.from.getTime()) / 1000)),
    __range_ms: String(range.to.getTime() - range.from.getTime()),
  };
  if (options.intervalMs !== undefined) {
    builtIns['__interval'] = formatInterval(options.intervalMs);
    builtIns['__interval_ms'] = String(options.intervalMs);
  }
  const variables = options.variables ?? {};
  return sql.replace(
    VARIABLE,
    (whole, plain?: string, bracket?: string, bracketFmt?: string, braced?: string, bracedFmt?: string) => {
      const name = (plain ?? bracket ?? braced) as string;
      const format = bracketFmt ?? bracedFmt;
      const builtIn = builtIns[name];
      if (builtIn !== undefined) return builtIn;
      const value = Object.hasOwn(variables, name) ? variables[name] : undefined;
      return value === undefined ? whole : formatValue(value, format);
    },
  );
}

/** Step 2, the server's global substitutions. */
export function interpolateGlobals(sql: string, options: ExpandOptions): string {
  let out = sql;
  if (options.intervalMs !== undefined) {
    out = out.replaceAll('$__interval_ms', String(Math.trunc(options.intervalMs)));
    out = out.replaceAll('$__interval', formatInterval(options.intervalMs));
  }
  out = out.replaceAll('$__unixEpochFrom()', String(Math.floor(options.range.from.getTime() / 1000)));
  out = out.replaceAll('$__unixEpochTo()', String(Math.floor(options.range.to.getTime() / 1000)));
  return out;
}

function parseFill(arg: string, intervalSeconds: number): FillMode {
  if (arg === 'NULL') return { mode: 'null', intervalSeconds };
  if (arg === 'previous') return { mode: 'previous', intervalSeconds };
  const value = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(arg) ? Number(arg) : Number.NaN;
  if (Number.isNaN(value)) throw new MacroError(`error parsing fill value ${arg}`);
  return { mode: 'value', value, intervalSeconds };
}

const MACRO = /\$([_a-zA-Z0-9]+)\(([^)]*)\)/g;

/** Step 3, the PostgreSQL macro engine (TimescaleDB off, as govtrail's data source is). */
export function expandMacros(sql: string, options: ExpandOptions): Expansion {
  const now = options.now ?? new Date();
  const from = rfc3339Nano(options.range.from);
  const to = rfc3339Nano(options.range.to);
  const fromS = Math.floor(options.range.from.getTime() / 1000);
  const toS = Math.floor(options.range.to.getTime() / 1000);
  const fromNs = BigInt(options.range.from.getTime()) * 1_000_000n;
  const toNs = BigInt(options.range.to.getTime()) * 1_000_000n;
  let fill: FillMode | undefined;

  const group = (name: string, args: string[]): string => {
    if (args.length < 2) {
      throw new MacroError(`macro ${name} needs time column and interval and optional fill value`);
    }
    const raw = (args[1] as string).replace(/^'+|'+$/g, '');
    let seconds: number;
    try {
      seconds = parseInterval(raw, now) / 1000;
    } catch {
      throw new MacroError(`error parsing interval ${args[1]}`);
    }
    if (args.length === 3) fill = parseFill(args[2] as string, seconds);
    return goFloat(seconds);
  };

  const evaluate = (name: string, args: string[]): string => {
    const column = (): string => {
      if (args.length === 0) throw new MacroError(`missing time column argument for macro ${name}`);
      return args[0] as string;
    };
    switch (name) {
      case '__time':
        return `${column()} AS "time"`;
      case '__timeEpoch':
        return `extract(epoch from ${column()}) as "time"`;
      case '__timeFilter':
        return `${column()} BETWEEN '${from}' AND '${to}'`;
      case '__timeFrom':
        return `'${from}'`;
      case '__timeTo':
        return `'${to}'`;
      case '__timeGroup': {
        const s = group(name, args);
        return `floor(extract(epoch from ${args[0]})/${s})*${s}`;
      }
      case '__timeGroupAlias':
        return `${evaluate('__timeGroup', args)} AS "time"`;
      case '__unixEpochFilter':
        return `${column()} >= ${fromS} AND ${args[0]} <= ${toS}`;
      case '__unixEpochNanoFilter':
        return `${column()} >= ${fromNs} AND ${args[0]} <= ${toNs}`;
      case '__unixEpochNanoFrom':
        return String(fromNs);
      case '__unixEpochNanoTo':
        return String(toNs);
      case '__unixEpochGroup': {
        const s = group(name, args);
        return `floor((${args[0]})/${s})*${s}`;
      }
      case '__unixEpochGroupAlias':
        return `${evaluate('__unixEpochGroup', args)} AS "time"`;
      default:
        throw new MacroError(`unknown macro "${name}"`);
    }
  };

  const out = sql.replace(MACRO, (whole: string, name: string, argText: string) => {
    let macro = name;
    if (macro === '__timeGroup') {
      // Grafana looks at the first occurrence of the same text in the query.
      const at = sql.indexOf(whole);
      if (at >= 0 && sql[at + whole.length] === ',') macro = '__timeGroupAlias';
    }
    const args = argText.split(',').map((a) => a.trim());
    return evaluate(macro, args);
  });
  return fill === undefined ? { sql: out } : { sql: out, fill };
}

/** The three steps: the SQL that reaches PostgreSQL for a panel query. */
export function expandGrafanaSql(sql: string, options: ExpandOptions): Expansion {
  return expandMacros(interpolateGlobals(interpolateVariables(sql, options), options), options);
}

// Bucket sizes Grafana rounds `$__interval` to (ms): a nice value near range / max data points.
const NICE_INTERVALS = [
  10,
  20,
  50,
  100,
  200,
  500,
  SECOND,
  2 * SECOND,
  5 * SECOND,
  10 * SECOND,
  15 * SECOND,
  20 * SECOND,
  30 * SECOND,
  MINUTE,
  2 * MINUTE,
  5 * MINUTE,
  10 * MINUTE,
  15 * MINUTE,
  20 * MINUTE,
  30 * MINUTE,
  HOUR,
  2 * HOUR,
  3 * HOUR,
  6 * HOUR,
  12 * HOUR,
  DAY,
  7 * DAY,
  30 * DAY,
  YEAR,
];

/**
 * `$__interval` for a panel, in milliseconds, close to what Grafana computes: the range divided by
 * the panel's data points (its width in pixels; 1000 here), rounded to a nice bucket, and never
 * below the panel's minimum interval. Only the bucket size depends on it, never which rows match.
 */
export function grafanaInterval(range: TimeRange, minInterval?: string, maxDataPoints = 1000): number {
  const raw = (range.to.getTime() - range.from.getTime()) / maxDataPoints;
  let best = NICE_INTERVALS[0] as number;
  for (const step of NICE_INTERVALS) {
    if (Math.abs(Math.log(step / raw)) < Math.abs(Math.log(best / raw))) best = step;
  }
  const floor = minInterval === undefined || minInterval === '' ? 0 : parseInterval(minInterval, range.to);
  return Math.max(best, floor);
}
