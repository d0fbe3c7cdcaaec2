/**
 * The configured sinks, from the YAML `sinks:` list and the environment short forms (README
 * "Alerts"): the keys every sink has (`type`, `name`, `min_severity`, `rules`, `tenants`), then its
 * type's own keys through the {@link SINK_REGISTRY}. Loads no sink module.
 */
import path from 'node:path';
import { z } from 'zod';
import { SEVERITIES, type Severity } from '../../core/alert.js';
import { ConfigError } from '../../core/errors.js';
import type { SinkRoute } from '../../core/routing.js';
import { type Env, nonEmpty } from '../../core/setting-values.js';
import { SINK_REGISTRY, SINK_TYPES, type SinkConfig, type SinkType } from './registry.js';
import { failOnIssue, type SettingReader, settingReader } from './settings-reader.js';

const SINK_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

/** The keys every sink may carry besides its type's own. */
const sinkCommonSchema = z
  .object({
    type: z.string(),
    name: z.string().optional(),
    min_severity: z.string().optional(),
    rules: z
      .object({ include: z.array(z.string()).optional(), exclude: z.array(z.string()).optional() })
      .strict()
      .optional(),
    tenants: z.array(z.string()).optional(),
  })
  .strict();

const COMMON_KEYS = new Set(Object.keys(sinkCommonSchema.shape));

/** The filters of a sink. */
function parseRoute(v: z.output<typeof sinkCommonSchema>, r: SettingReader): SinkRoute {
  const list = (values: string[] | undefined, key: string): string[] | undefined => {
    if (values === undefined) return undefined;
    const trimmed = values.map((x) => x.trim());
    if (trimmed.length === 0 || trimmed.some((x) => x === '')) {
      r.fail(key, 'must list at least one value, none of them empty (leave it out to allow every value)');
    }
    return trimmed;
  };
  let minSeverity: Severity | undefined;
  if (v.min_severity !== undefined) {
    const s = v.min_severity.trim().toLowerCase();
    if (!(SEVERITIES as readonly string[]).includes(s)) {
      r.fail(
        'min_severity',
        `must be one of ${SEVERITIES.join(', ')}, got ${JSON.stringify(v.min_severity)}`,
      );
    }
    minSeverity = s as Severity;
  }
  const includeRules = list(v.rules?.include, 'rules.include');
  const excludeRules = list(v.rules?.exclude, 'rules.exclude');
  const tenants = list(v.tenants, 'tenants');
  return {
    ...(minSeverity === undefined ? {} : { minSeverity }),
    ...(includeRules === undefined ? {} : { includeRules }),
    ...(excludeRules === undefined ? {} : { excludeRules }),
    ...(tenants === undefined ? {} : { tenants }),
  };
}

/** One sink from its keys (YAML, or the short form's variables mapped onto the same keys). */
function parseSink(
  values: Readonly<Record<string, unknown>>,
  r: SettingReader,
  origin: string,
  secrets: string[],
): SinkConfig {
  const common: Record<string, unknown> = {};
  const own: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(values)) (COMMON_KEYS.has(k) ? common : own)[k] = v;
  const parsed = sinkCommonSchema.safeParse(common);
  if (!parsed.success) failOnIssue(parsed.error, r, 'is not a sink setting');
  const type = parsed.data.type.trim().toLowerCase();
  if (!(SINK_TYPES as readonly string[]).includes(type)) {
    r.fail('type', `must be one of ${SINK_TYPES.join(', ')}, got ${JSON.stringify(parsed.data.type)}`);
  }
  const name = parsed.data.name?.trim() ?? type;
  if (!SINK_NAME.test(name)) {
    r.fail(
      'name',
      `must be 1–64 characters of letters, digits, ".", "_" or "-", got ${JSON.stringify(name)}`,
    );
  }
  const route = parseRoute(parsed.data, r);
  const settings = SINK_REGISTRY[type as SinkType].settings.parse(own, r);
  return { type, name, route, origin, secrets, ...settings } as SinkConfig;
}

/** The `sinks:` list of the GOVTRAIL_CONFIG file. */
export interface SinkListFile {
  /** The file's path: names its entries in messages and anchors their `*_file` paths. */
  readonly file: string;
  readonly sinks: readonly unknown[] | undefined;
}

/** The sinks of the file's `sinks:` list, in its order. */
function fileSinks(doc: SinkListFile | undefined, cwd: string): SinkConfig[] {
  const sinks: SinkConfig[] = [];
  for (const [i, raw] of (doc?.sinks ?? []).entries()) {
    const where = `${doc?.file}: sinks[${i}]`;
    const secrets: string[] = [];
    const r = settingReader({
      name: (key) => (key === '' ? where : `${where}.${key}`),
      baseDir: path.dirname(doc?.file ?? cwd),
      secrets,
    });
    if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
      r.fail('', 'must be a map of settings with at least a "type"');
    }
    sinks.push(parseSink(raw as Record<string, unknown>, r, where, secrets));
  }
  return sinks;
}

/** One sink per type whose short-form variables (or a secret's `_FILE` one) the environment sets. */
function shortFormSinks(env: Env, cwd: string): SinkConfig[] {
  const sinks: SinkConfig[] = [];
  for (const type of SINK_TYPES) {
    const vars = SINK_REGISTRY[type].settings.env;
    if (vars === undefined) continue;
    const values: Record<string, unknown> = {};
    const names = new Map<string, string>();
    for (const [key, variable] of Object.entries(vars)) {
      names.set(key, variable);
      names.set(`${key}_file`, `${variable}_FILE`);
      const direct = nonEmpty(env[variable]);
      const file = nonEmpty(env[`${variable}_FILE`]);
      if (direct !== undefined) values[key] = direct;
      if (file !== undefined) values[`${key}_file`] = file;
    }
    if (Object.keys(values).length === 0) continue;
    const first = Object.values(vars)[0] as string;
    const secrets: string[] = [];
    const r = settingReader({ name: (key) => names.get(key) ?? first, baseDir: cwd, secrets });
    sinks.push(parseSink({ ...values, type }, r, first, secrets));
  }
  return sinks;
}

/** The log sink first and NOTIFY last, each unless configured (both then let every alert through). */
function withBuiltIns(configured: readonly SinkConfig[]): SinkConfig[] {
  const sinks: SinkConfig[] = [];
  const implicit = (type: 'log' | 'notify'): SinkConfig => ({
    type,
    name: type,
    route: {},
    origin: 'default',
    secrets: [],
  });
  if (!configured.some((s) => s.type === 'log')) sinks.push(implicit('log'));
  sinks.push(...configured);
  if (!configured.some((s) => s.type === 'notify')) sinks.push(implicit('notify'));
  return sinks;
}

/** Fails on a sink name used twice, or a `tenants` filter naming no configured tenant. */
function checkNamesAndTenants(sinks: readonly SinkConfig[], tenantNames: readonly string[]): void {
  const seen = new Map<string, string>();
  const describeOrigin = (origin: string, name: string) =>
    origin === 'default' ? `the built-in ${name} sink` : origin;
  for (const s of sinks) {
    const other = seen.get(s.name);
    if (other !== undefined) {
      // Name the configured one: the built-in log and notify sinks cannot be renamed.
      const [setting, elsewhere] = s.origin === 'default' ? [other, s.origin] : [s.origin, other];
      throw new ConfigError(
        setting,
        `sink name "${s.name}" is used twice (also by ${describeOrigin(elsewhere, s.name)}): give each sink its own "name"`,
      );
    }
    seen.set(s.name, s.origin);
    for (const t of s.route.tenants ?? []) {
      if (tenantNames.length > 0 && !tenantNames.includes(t)) {
        throw new ConfigError(
          `${s.origin}.tenants`,
          `names no configured tenant: ${JSON.stringify(t)} (tenants: ${tenantNames.join(', ')})`,
        );
      }
    }
  }
}

/**
 * Every sink: the YAML `sinks:` list, then the short forms of the environment, with the log sink
 * first and NOTIFY last when the list does not configure them (both then let every alert through).
 * Names are unique; a `tenants` filter names configured tenants only (any, when none is configured).
 * Throws {@link ConfigError} naming the key or variable at fault.
 */
export function configuredSinks(o: {
  readonly env: Env;
  readonly file: SinkListFile | undefined;
  /** Anchors the `*_FILE` paths of the short forms (and of the list when there is no file). */
  readonly cwd: string;
  readonly tenantNames: readonly string[];
}): SinkConfig[] {
  const sinks = withBuiltIns([...fileSinks(o.file, o.cwd), ...shortFormSinks(o.env, o.cwd)]);
  checkNamesAndTenants(sinks, o.tenantNames);
  return sinks;
}
