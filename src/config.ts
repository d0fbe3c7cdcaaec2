/**
 * The one place that reads the environment. Settings come from process.env, a `.env` file in the
 * working directory (real environment wins), `NAME_FILE` indirection for secrets, and an optional
 * YAML file (`GOVTRAIL_CONFIG`) that lists several tenants. Everything is validated once with zod,
 * and a bad setting fails with a {@link ConfigError} naming the variable.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parseEnv } from 'node:util';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { ConfigError } from './errors.js';

export const DEFAULT_PAGE_SIZE = 100;
export const MIN_PAGE_SIZE = 10;
export const MAX_PAGE_SIZE = 100;

/** How govtrail reaches one tenant and names it in the database. */
export interface TenantConfig {
  /** The tenant's name in the database (`tenant_id` of every row). */
  readonly name: string;
  /** Base URL of the tenant API, without a trailing slash. */
  readonly baseUrl: string;
  /** OAuth client id. */
  readonly clientId: string;
  /** Plain client secret, or a `secret-token:conductorone.com:v1:…` key secret. Never logged. */
  readonly clientSecret: string;
  /** History page size, already clamped to 10–100. */
  readonly pageSize: number;
  /** Overlap window behind the checkpoint, in milliseconds (sync.md step 3). */
  readonly lookbackMs: number;
}

/** HTTP timeouts and retry policy (sync.md, "HTTP behaviour"). */
export interface HttpConfig {
  readonly connectTimeoutMs: number;
  readonly headersTimeoutMs: number;
  readonly bodyTimeoutMs: number;
  /** Attempts per request, the first included. */
  readonly maxAttempts: number;
  /** Total time a run may spend waiting between retries. */
  readonly retryBudgetMs: number;
  /** Upper bound on an honoured Retry-After. */
  readonly retryAfterCapMs: number;
  /** Base delay of the exponential backoff. */
  readonly retryBaseMs: number;
  /** Cap of one backoff delay. */
  readonly retryMaxDelayMs: number;
}

export interface Config {
  /** Configured tenants; empty when nothing is configured (the demo then uses the sandbox). */
  readonly tenants: readonly TenantConfig[];
  /** PostgreSQL server; undefined selects the embedded database in {@link dataDir}. */
  readonly databaseUrl: string | undefined;
  /** Directory of the embedded database and other local state. */
  readonly dataDir: string;
  /** Cron expression (UTC) of the worker. */
  readonly schedule: string;
  /** Cron expression (UTC) of the worker's reconcile (integrity.md); undefined when `off`. */
  readonly reconcileSchedule: string | undefined;
  /** Default page size for tenants that do not set one. */
  readonly pageSize: number;
  /** Default lookback for tenants that do not set one. */
  readonly lookbackMs: number;
  /** Stop paging after this many pages in one run (sync.md S7). */
  readonly maxPages: number;
  /** YAML rule file replacing or extending the built-in pack. */
  readonly alertRulesPath: string | undefined;
  /** When true, a backfill raises per-entry alerts instead of one digest (S9). */
  readonly backfillPerEntryAlerts: boolean;
  readonly webhookUrl: string | undefined;
  /** HMAC key of the webhook signature. Never logged. */
  readonly webhookSecret: string | undefined;
  readonly slackWebhookUrl: string | undefined;
  /** Port of the worker's /healthz and /metrics. */
  readonly httpPort: number;
  /** Tenants synced at once by the worker. */
  readonly workerConcurrency: number;
  /** Grace period for a run in flight at shutdown. */
  readonly shutdownGraceMs: number;
  readonly logLevel: string;
  readonly http: HttpConfig;
}

export type Env = Readonly<Record<string, string | undefined>>;

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
const TENANT_NAME = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/;

/** Parses `15m`, `90s`, `1h30m`, `500ms`, `2d` or a bare number of seconds into milliseconds. */
export function parseDurationSetting(text: string): number | undefined {
  const t = text.trim();
  if (/^\d+(\.\d+)?$/.test(t)) return Math.round(Number(t) * 1000);
  const re = /(\d+(?:\.\d+)?)(ms|s|m|h|d)/gy;
  const unit: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };
  let total = 0;
  let matched = 0;
  for (let m = re.exec(t); m !== null; m = re.exec(t)) {
    total += Number(m[1]) * (unit[m[2] as string] as number);
    matched = re.lastIndex;
  }
  return matched === t.length && t.length > 0 ? Math.round(total) : undefined;
}

/** Clamps a page size to the range the API accepts (the brief, section 8.1). */
export function clampPageSize(n: number): number {
  return Math.min(MAX_PAGE_SIZE, Math.max(MIN_PAGE_SIZE, Math.trunc(n)));
}

/** True for hosts that never leave the machine, where plain http is acceptable. */
export function isLoopbackHost(hostname: string): boolean {
  const h = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  return h === 'localhost' || h === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h);
}

/** The `@host/` part of a client id such as `sleepy-owl-12345@acme.conductor.one/pcc`. */
export function hostFromClientId(clientId: string): string | undefined {
  const m = /@([^/@\s]+)\//.exec(clientId);
  return m?.[1];
}

/** Validates a base URL: https, or http only to a loopback host. Returns it without trailing slash. */
export function normaliseBaseUrl(raw: string, setting: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(setting, `not a URL: ${JSON.stringify(raw)}`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new ConfigError(setting, `must be an https:// URL, got ${url.protocol}`);
  }
  if (url.protocol === 'http:' && !isLoopbackHost(url.hostname)) {
    throw new ConfigError(setting, `plain http is allowed only for loopback hosts, got ${url.hostname}`);
  }
  if (url.username || url.password) throw new ConfigError(setting, 'must not carry credentials');
  if (url.search || url.hash) throw new ConfigError(setting, 'must not carry a query or fragment');
  return url.toString().replace(/\/+$/, '');
}

/** Reads `NAME`, or the file named by `NAME_FILE` (trailing newline removed). */
function secretOrFile(env: Env, name: string, baseDir: string): string | undefined {
  const direct = nonEmpty(env[name]);
  const file = nonEmpty(env[`${name}_FILE`]);
  if (direct !== undefined && file !== undefined) {
    throw new ConfigError(name, `set either ${name} or ${name}_FILE, not both`);
  }
  if (file !== undefined) {
    const p = path.resolve(baseDir, file);
    try {
      return readFileSync(p, 'utf8').replace(/\r?\n$/, '');
    } catch (err) {
      throw new ConfigError(`${name}_FILE`, `cannot read ${p}: ${(err as Error).message}`);
    }
  }
  return direct;
}

function nonEmpty(v: string | undefined): string | undefined {
  return v === undefined || v.trim() === '' ? undefined : v;
}

/** Once a day, at a quiet minute (UTC). */
export const DEFAULT_RECONCILE_SCHEDULE = '41 3 * * *';

/** A cron expression of 5 or 6 fields (node-cron checks the fields themselves when the worker starts). */
function cronSetting(env: Env, name: string, fallback: string): string {
  const value = nonEmpty(env[name])?.trim() ?? fallback;
  const fields = value.split(/\s+/);
  if (fields.length < 5 || fields.length > 6) {
    throw new ConfigError(name, `must be a cron expression of 5 or 6 fields, got ${JSON.stringify(value)}`);
  }
  return value;
}

function intSetting(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = nonEmpty(env[name]);
  if (raw === undefined) return fallback;
  const n = Number(raw.trim());
  if (!Number.isInteger(n) || n < min || n > max) {
    throw new ConfigError(name, `must be a whole number from ${min} to ${max}, got ${JSON.stringify(raw)}`);
  }
  return n;
}

function durationSetting(env: Env, name: string, fallbackMs: number): number {
  const raw = nonEmpty(env[name]);
  if (raw === undefined) return fallbackMs;
  const ms = parseDurationSetting(raw);
  if (ms === undefined) {
    throw new ConfigError(name, `must be a duration such as 15m, 90s, 1h or 0, got ${JSON.stringify(raw)}`);
  }
  return ms;
}

function boolSetting(env: Env, name: string, fallback: boolean): boolean {
  const raw = nonEmpty(env[name])?.trim().toLowerCase();
  if (raw === undefined) return fallback;
  if (['1', 'true', 'yes', 'on'].includes(raw)) return true;
  if (['0', 'false', 'no', 'off'].includes(raw)) return false;
  throw new ConfigError(name, `must be true or false, got ${JSON.stringify(raw)}`);
}

function urlSetting(env: Env, name: string): string | undefined {
  const raw = nonEmpty(env[name]);
  if (raw === undefined) return undefined;
  const parsed = z.url({ protocol: /^https?$/ }).safeParse(raw);
  if (!parsed.success) throw new ConfigError(name, `must be an http(s) URL, got ${JSON.stringify(raw)}`);
  return raw;
}

/**
 * Builds one tenant from a flat map of settings. `prefix` names the keys in messages, so that an
 * error in the YAML file points at `tenants[2].client_id` and an env error at `GOVTRAIL_CLIENT_ID`.
 */
function buildTenant(
  values: Env,
  keys: {
    domain: string;
    baseUrl: string;
    clientId: string;
    clientSecret: string;
    name: string;
    pageSize: string;
    lookback: string;
  },
  defaults: { pageSize: number; lookbackMs: number },
  baseDir: string,
): TenantConfig {
  const clientId = nonEmpty(values[keys.clientId])?.trim();
  if (clientId === undefined) throw new ConfigError(keys.clientId, 'is required');
  const clientSecret = secretOrFile(values, keys.clientSecret, baseDir);
  if (clientSecret === undefined) {
    throw new ConfigError(keys.clientSecret, `is required (or ${keys.clientSecret}_FILE)`);
  }
  const baseUrlRaw = nonEmpty(values[keys.baseUrl]);
  const domainRaw = nonEmpty(values[keys.domain])?.trim();
  let baseUrl: string;
  if (baseUrlRaw !== undefined) {
    baseUrl = normaliseBaseUrl(baseUrlRaw.trim(), keys.baseUrl);
  } else {
    const host = domainRaw ?? hostFromClientId(clientId);
    if (host === undefined) {
      throw new ConfigError(
        keys.domain,
        `is required: the client id has no "@host/" part to take the tenant host from`,
      );
    }
    if (/[/?#@\s]/.test(host) || host.includes('://')) {
      throw new ConfigError(keys.domain, `must be a bare host name such as acme.conductor.one, got ${host}`);
    }
    baseUrl = normaliseBaseUrl(`https://${host}`, keys.domain);
  }
  const name = nonEmpty(values[keys.name])?.trim() ?? new URL(baseUrl).host;
  if (!TENANT_NAME.test(name)) {
    throw new ConfigError(
      keys.name,
      `must be 1–128 characters of letters, digits, ".", "_", ":" or "-", got ${JSON.stringify(name)}`,
    );
  }
  const pageSizeRaw = nonEmpty(values[keys.pageSize]);
  let pageSize = defaults.pageSize;
  if (pageSizeRaw !== undefined) {
    const n = Number(pageSizeRaw);
    if (!Number.isFinite(n)) throw new ConfigError(keys.pageSize, `must be a number, got ${pageSizeRaw}`);
    pageSize = clampPageSize(n);
  }
  const lookbackRaw = nonEmpty(values[keys.lookback]);
  let lookbackMs = defaults.lookbackMs;
  if (lookbackRaw !== undefined) {
    const ms = parseDurationSetting(lookbackRaw);
    if (ms === undefined)
      throw new ConfigError(keys.lookback, `must be a duration such as 15m, got ${lookbackRaw}`);
    lookbackMs = ms;
  }
  return Object.freeze({ name, baseUrl, clientId, clientSecret, pageSize, lookbackMs });
}

const ENV_TENANT_KEYS = {
  domain: 'GOVTRAIL_TENANT_DOMAIN',
  baseUrl: 'GOVTRAIL_BASE_URL',
  clientId: 'GOVTRAIL_CLIENT_ID',
  clientSecret: 'GOVTRAIL_CLIENT_SECRET',
  name: 'GOVTRAIL_TENANT',
  pageSize: 'GOVTRAIL_PAGE_SIZE',
  lookback: 'GOVTRAIL_LOOKBACK',
};

/** Keys a tenant may carry in the YAML file: the env names without `GOVTRAIL_`, in snake_case. */
const yamlTenantSchema = z
  .object({
    name: z.string().optional(),
    tenant: z.string().optional(),
    tenant_domain: z.string().optional(),
    domain: z.string().optional(),
    base_url: z.string().optional(),
    client_id: z.string().optional(),
    client_secret: z.string().optional(),
    client_secret_file: z.string().optional(),
    page_size: z.union([z.number(), z.string()]).optional(),
    lookback: z.union([z.number(), z.string()]).optional(),
  })
  .strict();

const yamlFileSchema = z
  .object({
    tenants: z.array(z.unknown()).min(1),
  })
  .catchall(z.union([z.string(), z.number(), z.boolean()]));

function loadTenantsFile(
  file: string,
  defaults: { pageSize: number; lookbackMs: number },
): { tenants: TenantConfig[]; globals: Record<string, string> } {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new ConfigError('GOVTRAIL_CONFIG', `cannot read ${file}: ${(err as Error).message}`);
  }
  let doc: unknown;
  try {
    doc = parseYaml(text);
  } catch (err) {
    throw new ConfigError('GOVTRAIL_CONFIG', `${file} is not valid YAML: ${(err as Error).message}`);
  }
  const parsed = yamlFileSchema.safeParse(doc);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new ConfigError(
      'GOVTRAIL_CONFIG',
      `${file}: ${issue?.path.join('.') || '(top level)'}: ${issue?.message ?? 'invalid'} (expected a "tenants:" list)`,
    );
  }
  const baseDir = path.dirname(file);
  const tenants = parsed.data.tenants.map((raw, i) => {
    const where = `${file}: tenants[${i}]`;
    const t = yamlTenantSchema.safeParse(raw);
    if (!t.success) {
      const issue = t.error.issues[0];
      const keyPath = issue?.code === 'unrecognized_keys' ? issue.keys.join(', ') : issue?.path.join('.');
      throw new ConfigError('GOVTRAIL_CONFIG', `${where}: ${keyPath ? `${keyPath}: ` : ''}${issue?.message}`);
    }
    const v = t.data;
    const flat: Record<string, string | undefined> = {
      domain: v.tenant_domain ?? v.domain,
      base_url: v.base_url,
      client_id: v.client_id,
      client_secret: v.client_secret,
      client_secret_FILE: v.client_secret_file,
      name: v.name ?? v.tenant,
      page_size: v.page_size === undefined ? undefined : String(v.page_size),
      lookback: v.lookback === undefined ? undefined : String(v.lookback),
    };
    const keys = {
      domain: `${where}.domain`,
      baseUrl: `${where}.base_url`,
      clientId: `${where}.client_id`,
      clientSecret: `${where}.client_secret`,
      name: `${where}.name`,
      pageSize: `${where}.page_size`,
      lookback: `${where}.lookback`,
    };
    // buildTenant reads values by the key names it reports, so map the display keys onto the values.
    const values: Record<string, string | undefined> = {
      [keys.domain]: flat.domain,
      [keys.baseUrl]: flat.base_url,
      [keys.clientId]: flat.client_id,
      [keys.clientSecret]: flat.client_secret,
      [`${keys.clientSecret}_FILE`]: flat.client_secret_FILE,
      [keys.name]: flat.name,
      [keys.pageSize]: flat.page_size,
      [keys.lookback]: flat.lookback,
    };
    return buildTenant(values, keys, defaults, baseDir);
  });
  const seen = new Set<string>();
  for (const [i, t] of tenants.entries()) {
    if (seen.has(t.name)) {
      throw new ConfigError('GOVTRAIL_CONFIG', `${file}: tenants[${i}]: duplicate tenant name ${t.name}`);
    }
    seen.add(t.name);
  }
  const globals: Record<string, string> = {};
  for (const [k, v] of Object.entries(parsed.data)) {
    if (k === 'tenants') continue;
    globals[
      k.toUpperCase().startsWith('GOVTRAIL_') ||
      k.toUpperCase() === 'DATABASE_URL' ||
      k.toUpperCase() === 'LOG_LEVEL'
        ? k.toUpperCase()
        : `GOVTRAIL_${k.toUpperCase()}`
    ] = String(v);
  }
  return { tenants, globals };
}

/** Reads `.env` in `cwd` when present. The real environment wins over it. */
export function readDotEnv(cwd: string): Record<string, string> {
  const file = path.join(cwd, '.env');
  if (!existsSync(file)) return {};
  try {
    return parseEnv(readFileSync(file, 'utf8')) as Record<string, string>;
  } catch (err) {
    throw new ConfigError('.env', `cannot parse ${file}: ${(err as Error).message}`);
  }
}

export interface LoadConfigOptions {
  /** Directory holding `.env` and against which relative paths resolve. */
  cwd?: string;
  /** Skip the `.env` file (tests). */
  dotenv?: boolean;
}

/**
 * Parses and validates every setting once. Throws {@link ConfigError} (exit code 2) naming the
 * variable at fault. The result is deeply frozen.
 */
export function loadConfig(processEnv: Env, options: LoadConfigOptions = {}): Config {
  const cwd = options.cwd ?? process.cwd();
  const dot = options.dotenv === false ? {} : readDotEnv(cwd);
  let env: Env = { ...dot, ...processEnv };

  const configFile = nonEmpty(env['GOVTRAIL_CONFIG']);
  const defaultsFromEnv = (e: Env) => ({
    pageSize: clampPageSize(intSetting(e, 'GOVTRAIL_PAGE_SIZE', DEFAULT_PAGE_SIZE, -1e9, 1e9)),
    lookbackMs: durationSetting(e, 'GOVTRAIL_LOOKBACK', 15 * 60_000),
  });

  let tenants: TenantConfig[] = [];
  if (configFile !== undefined) {
    const file = path.resolve(cwd, configFile);
    // Globals in the file are defaults; the environment overrides them.
    const first = loadTenantsFile(file, defaultsFromEnv(env));
    env = { ...first.globals, ...env };
    tenants = loadTenantsFile(file, defaultsFromEnv(env)).tenants;
    if (nonEmpty(env['GOVTRAIL_CLIENT_ID']) !== undefined) {
      throw new ConfigError(
        'GOVTRAIL_CLIENT_ID',
        'is set together with GOVTRAIL_CONFIG: list every tenant in the file instead',
      );
    }
  } else if (
    nonEmpty(env['GOVTRAIL_CLIENT_ID']) !== undefined ||
    nonEmpty(env['GOVTRAIL_CLIENT_SECRET']) !== undefined
  ) {
    tenants = [buildTenant(env, ENV_TENANT_KEYS, defaultsFromEnv(env), cwd)];
  }

  const defaults = defaultsFromEnv(env);
  const logLevel = (nonEmpty(env['LOG_LEVEL'])?.trim().toLowerCase() ?? 'info') as string;
  if (!(LOG_LEVELS as readonly string[]).includes(logLevel)) {
    throw new ConfigError('LOG_LEVEL', `must be one of ${LOG_LEVELS.join(', ')}, got ${logLevel}`);
  }
  const databaseUrl = nonEmpty(env['DATABASE_URL'])?.trim();
  if (databaseUrl !== undefined && !/^postgres(ql)?:\/\//.test(databaseUrl)) {
    throw new ConfigError('DATABASE_URL', 'must start with postgres:// or postgresql://');
  }
  const schedule = cronSetting(env, 'GOVTRAIL_SCHEDULE', '*/15 * * * *');
  const reconcileRaw = nonEmpty(env['GOVTRAIL_RECONCILE_SCHEDULE'])?.trim();
  const reconcileSchedule =
    reconcileRaw?.toLowerCase() === 'off'
      ? undefined
      : cronSetting(env, 'GOVTRAIL_RECONCILE_SCHEDULE', DEFAULT_RECONCILE_SCHEDULE);
  const webhookSecret = secretOrFile(env, 'GOVTRAIL_WEBHOOK_SECRET', cwd);

  const config: Config = {
    tenants,
    databaseUrl,
    dataDir: path.resolve(cwd, nonEmpty(env['GOVTRAIL_DATA_DIR']) ?? '.govtrail'),
    schedule,
    reconcileSchedule,
    pageSize: defaults.pageSize,
    lookbackMs: defaults.lookbackMs,
    maxPages: intSetting(env, 'GOVTRAIL_MAX_PAGES', 200_000, 1, 100_000_000),
    alertRulesPath:
      nonEmpty(env['GOVTRAIL_ALERT_RULES']) && path.resolve(cwd, env['GOVTRAIL_ALERT_RULES'] as string),
    backfillPerEntryAlerts: boolSetting(env, 'GOVTRAIL_BACKFILL_PER_ENTRY_ALERTS', false),
    webhookUrl: urlSetting(env, 'GOVTRAIL_WEBHOOK_URL'),
    webhookSecret,
    slackWebhookUrl: urlSetting(env, 'GOVTRAIL_SLACK_WEBHOOK_URL'),
    httpPort: intSetting(env, 'GOVTRAIL_HTTP_PORT', 9464, 0, 65535),
    workerConcurrency: intSetting(env, 'GOVTRAIL_WORKER_CONCURRENCY', 4, 1, 64),
    shutdownGraceMs: durationSetting(env, 'GOVTRAIL_SHUTDOWN_GRACE', 30_000),
    logLevel,
    http: {
      connectTimeoutMs: durationSetting(env, 'GOVTRAIL_HTTP_CONNECT_TIMEOUT', 10_000),
      headersTimeoutMs: durationSetting(env, 'GOVTRAIL_HTTP_HEADERS_TIMEOUT', 30_000),
      bodyTimeoutMs: durationSetting(env, 'GOVTRAIL_HTTP_BODY_TIMEOUT', 60_000),
      maxAttempts: intSetting(env, 'GOVTRAIL_HTTP_MAX_ATTEMPTS', 6, 1, 20),
      retryBudgetMs: durationSetting(env, 'GOVTRAIL_HTTP_RETRY_BUDGET', 10 * 60_000),
      retryAfterCapMs: durationSetting(env, 'GOVTRAIL_HTTP_RETRY_AFTER_CAP', 5 * 60_000),
      retryBaseMs: durationSetting(env, 'GOVTRAIL_HTTP_RETRY_BASE', 500),
      retryMaxDelayMs: durationSetting(env, 'GOVTRAIL_HTTP_RETRY_MAX_DELAY', 30_000),
    },
  };
  return deepFreeze(config);
}

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}
