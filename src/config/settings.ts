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
import type { SinkConfig } from '../alerts/sinks/registry.js';
import { configuredSinks } from '../alerts/sinks/sink-settings.js';
import { cronProblem } from '../core/cron.js';
import { ConfigError } from '../core/errors.js';
import { type Env, nonEmpty, parseDurationSetting } from '../core/setting-values.js';
import { describeYamlError } from '../core/yaml-error.js';
import {
  clampPageSize,
  DEFAULT_PAGE_SIZE,
  type HttpConfig,
  isLoopbackHost,
  type TenantConfig,
} from '../source/client-config.js';

export type { SinkConfig, SinkConfigOf, SinkType } from '../alerts/sinks/registry.js';
export { type Env, parseDurationSetting } from '../core/setting-values.js';
export {
  clampPageSize,
  DEFAULT_PAGE_SIZE,
  type HttpConfig,
  isLoopbackHost,
  MAX_PAGE_SIZE,
  MIN_PAGE_SIZE,
  type TenantConfig,
} from '../source/client-config.js';

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
  /**
   * Where alerts go, in order: the log sink (unless the list configures one), the YAML `sinks:`
   * list, the environment short forms (`GOVTRAIL_WEBHOOK_URL`, `GOVTRAIL_PAGERDUTY_ROUTING_KEY`, …),
   * then NOTIFY (unless configured). Names are unique.
   */
  readonly sinks: readonly SinkConfig[];
  /**
   * Runbook link of an alert for PagerDuty and Teams (`GOVTRAIL_RUNBOOK_URL`): a URL in which
   * `{rule_id}` is replaced by the rule id; no link when unset.
   */
  readonly runbookUrl: string | undefined;
  /**
   * HMAC key of the `GOVTRAIL_WEBHOOK_SECRET` short form, kept for the callers that register it for
   * redaction; every sink secret is in `sinks[].secrets` ({@link sinkSecrets}). Never logged.
   */
  readonly webhookSecret: string | undefined;
  /**
   * Ed25519 private key (PEM PKCS#8, or a JWK) that signs evidence-pack manifests
   * (`GOVTRAIL_EVIDENCE_SIGNING_KEY` or `…_FILE`); packs are unsigned without it. Never logged.
   */
  readonly evidenceSigningKey: string | undefined;
  /**
   * Ed25519 private key (PEM PKCS#8, or a JWK) that signs chain anchors
   * (`GOVTRAIL_ANCHOR_SIGNING_KEY` or `…_FILE`; docs/tamper-evidence.md). Never logged.
   */
  readonly anchorSigningKey: string | undefined;
  /** Where the worker writes an anchor after every run that stored entries (`GOVTRAIL_ANCHOR_DIR`). */
  readonly anchorDir: string | undefined;
  /** The worker refuses to start as the schema owner (`GOVTRAIL_REQUIRE_WRITER_ROLE`). */
  readonly requireWriterRole: boolean;
  /** Port of the worker's /healthz and /metrics. */
  readonly httpPort: number;
  /** Tenants synced at once by the worker. */
  readonly workerConcurrency: number;
  /** Grace period for a run in flight at shutdown. */
  readonly shutdownGraceMs: number;
  /** `GOVTRAIL_SPREAD`: a slot's tenants start over this window, each at a stable offset (0: at once). */
  readonly spreadMs: number;
  /** `GOVTRAIL_JOB_RETRIES`: attempts after the first of a failed scheduled run, inside its slot. */
  readonly jobRetries: number;
  /** `GOVTRAIL_JOB_RETRY_DELAY`: delay before the first retry; doubled for each further one. */
  readonly jobRetryDelayMs: number;
  /** `GOVTRAIL_JOB_HEARTBEAT`: a replica silent this long loses its running job to another (≥ 10s). */
  readonly jobHeartbeatMs: number;
  readonly logLevel: string;
  readonly http: HttpConfig;
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
const TENANT_NAME = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/;

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

/** Once a day, at a quiet minute (UTC). */
export const DEFAULT_RECONCILE_SCHEDULE = '41 3 * * *';

/** A cron expression of 5 or 6 fields, each within its range (steps included). */
function cronSetting(env: Env, name: string, fallback: string): string {
  const value = nonEmpty(env[name])?.trim() ?? fallback;
  const fields = value.split(/\s+/);
  if (fields.length < 5 || fields.length > 6) {
    throw new ConfigError(name, `must be a cron expression of 5 or 6 fields, got ${JSON.stringify(value)}`);
  }
  const problem = cronProblem(value);
  if (problem !== undefined) throw new ConfigError(name, `${JSON.stringify(value)}: ${problem}`);
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

const BYTE_UNITS: Readonly<Record<string, number>> = {
  '': 1,
  b: 1,
  kib: 1024,
  mib: 1024 ** 2,
  gib: 1024 ** 3,
};

/** A size such as `67108864`, `512KiB` or `64MiB`, from 64 KiB to 4 GiB. */
function byteSizeSetting(env: Env, name: string, fallback: number): number {
  const raw = nonEmpty(env[name]);
  if (raw === undefined) return fallback;
  const m = /^(\d+)\s*([a-z]*)$/i.exec(raw.trim());
  const unit = m === null ? undefined : BYTE_UNITS[(m[2] as string).toLowerCase()];
  const n = m === null || unit === undefined ? Number.NaN : Number(m[1]) * unit;
  if (!Number.isSafeInteger(n) || n < 64 * 1024 || n > 4 * 1024 ** 3) {
    throw new ConfigError(
      name,
      `must be a size from 64KiB to 4GiB such as 64MiB, got ${JSON.stringify(raw)}`,
    );
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
    tenants: z.array(z.unknown()).min(1).optional(),
    sinks: z.array(z.unknown()).optional(),
  })
  .catchall(z.union([z.string(), z.number(), z.boolean()]))
  .refine((doc) => doc.tenants !== undefined || doc.sinks !== undefined, {
    message: 'has neither a "tenants:" nor a "sinks:" list',
  });

/** The YAML file of GOVTRAIL_CONFIG, checked for its shape; its parts are read by the callers. */
interface ConfigFile {
  readonly file: string;
  readonly tenants: readonly unknown[] | undefined;
  readonly sinks: readonly unknown[] | undefined;
  /** Other top-level keys, as the environment variables they stand for. */
  readonly globals: Record<string, string>;
}

/** The environment variable a top-level key of the YAML file stands for (`schedule` → GOVTRAIL_SCHEDULE). */
export function fileKeyVariable(key: string): string {
  const k = key.toUpperCase();
  return k.startsWith('GOVTRAIL_') || k === 'DATABASE_URL' || k === 'LOG_LEVEL' ? k : `GOVTRAIL_${k}`;
}

/** The top-level keys of the YAML file, or [] when it cannot be read (loadConfig reports that). */
export function configFileKeys(file: string): string[] {
  try {
    const doc: unknown = parseYaml(readFileSync(file, 'utf8'));
    return doc !== null && typeof doc === 'object' && !Array.isArray(doc) ? Object.keys(doc) : [];
  } catch {
    return [];
  }
}

function readConfigFile(file: string): ConfigFile {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new ConfigError('GOVTRAIL_CONFIG', `cannot read ${file}: ${(err as Error).message}`);
  }
  let doc: unknown;
  try {
    doc = parseYaml(text, { prettyErrors: false });
  } catch (err) {
    // Position and reason only: the parser's excerpt of the file may show a password.
    throw new ConfigError('GOVTRAIL_CONFIG', `${file} is not valid YAML: ${describeYamlError(err, text)}`);
  }
  const parsed = yamlFileSchema.safeParse(doc);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new ConfigError(
      'GOVTRAIL_CONFIG',
      `${file}: ${issue?.path.join('.') || '(top level)'}: ${issue?.message ?? 'invalid'} (expected a "tenants:" or "sinks:" list)`,
    );
  }
  const globals: Record<string, string> = {};
  for (const [k, v] of Object.entries(parsed.data)) {
    if (k === 'tenants' || k === 'sinks') continue;
    globals[fileKeyVariable(k)] = String(v);
  }
  return { file, tenants: parsed.data.tenants, sinks: parsed.data.sinks, globals };
}

function buildFileTenants(
  file: string,
  list: readonly unknown[],
  defaults: { pageSize: number; lookbackMs: number },
): TenantConfig[] {
  const baseDir = path.dirname(file);
  const tenants = list.map((raw, i) => {
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
  return tenants;
}

/** Every secret value of the sinks, for the logger's redaction (registerSecret). */
export function sinkSecrets(config: Pick<Config, 'sinks'>): string[] {
  return config.sinks.flatMap((s) => s.secrets);
}

/** A runbook link template: an http(s) URL once `{rule_id}` is filled in. */
function runbookUrlSetting(env: Env, name: string): string | undefined {
  const raw = nonEmpty(env[name])?.trim();
  if (raw === undefined) return undefined;
  const parsed = z.url({ protocol: /^https?$/ }).safeParse(raw.replaceAll('{rule_id}', 'AIGOV-001'));
  if (!parsed.success) {
    throw new ConfigError(
      name,
      `must be an http(s) URL, optionally with {rule_id}, got ${JSON.stringify(raw)}`,
    );
  }
  return raw;
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
  /** Called with the name of every variable the settings are read from (config-warnings.ts). */
  onRead?: (variable: string) => void;
}

/**
 * Parses and validates every setting once. Throws {@link ConfigError} (exit code 2) naming the
 * variable at fault, or the key of the GOVTRAIL_CONFIG file when the value came from there. The
 * result is deeply frozen.
 */
export function loadConfig(processEnv: Env, options: LoadConfigOptions = {}): Config {
  try {
    return parseConfig(processEnv, options);
  } catch (err) {
    throw attributeToFile(err, processEnv, options);
  }
}

/**
 * A ConfigError about a variable the environment does not set but a top-level key of the YAML
 * file does, renamed after that key (`<file>: schedule`): the operator fixes the file, not
 * GOVTRAIL_SCHEDULE.
 */
function attributeToFile(err: unknown, processEnv: Env, options: LoadConfigOptions): unknown {
  if (!(err instanceof ConfigError) || !/^[A-Z][A-Z0-9_]*$/.test(err.setting)) return err;
  const cwd = options.cwd ?? process.cwd();
  const env: Env = { ...(options.dotenv === false ? {} : readDotEnv(cwd)), ...processEnv };
  const configFile = nonEmpty(env['GOVTRAIL_CONFIG']);
  if (configFile === undefined || nonEmpty(env[err.setting]) !== undefined) return err;
  const file = path.resolve(cwd, configFile);
  const key = configFileKeys(file).find((k) => fileKeyVariable(k) === err.setting);
  if (key === undefined) return err;
  return new ConfigError(`${file}: ${key}`, err.message.slice(err.setting.length + 2), { cause: err });
}

function parseConfig(processEnv: Env, options: LoadConfigOptions): Config {
  const cwd = options.cwd ?? process.cwd();
  const dot = options.dotenv === false ? {} : readDotEnv(cwd);
  let env: Env = { ...dot, ...processEnv };

  const configFile = nonEmpty(env['GOVTRAIL_CONFIG']);
  const defaultsFromEnv = (e: Env) => ({
    pageSize: clampPageSize(intSetting(e, 'GOVTRAIL_PAGE_SIZE', DEFAULT_PAGE_SIZE, -1e9, 1e9)),
    lookbackMs: durationSetting(e, 'GOVTRAIL_LOOKBACK', 15 * 60_000),
  });

  let tenants: TenantConfig[] = [];
  let doc: ConfigFile | undefined;
  if (configFile !== undefined) {
    doc = readConfigFile(path.resolve(cwd, configFile));
    // Globals in the file are defaults; the environment overrides them.
    env = { ...doc.globals, ...env };
  }
  if (options.onRead !== undefined) env = recordReads(env, options.onRead);
  if (doc?.tenants !== undefined) {
    tenants = buildFileTenants(doc.file, doc.tenants, defaultsFromEnv(env));
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
  const sinks = configuredSinks({
    env,
    file: doc,
    cwd,
    tenantNames: tenants.map((t) => t.name),
  });
  const shortWebhook = sinks.find((s) => s.type === 'webhook' && s.origin === 'GOVTRAIL_WEBHOOK_URL');

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
    sinks,
    runbookUrl: runbookUrlSetting(env, 'GOVTRAIL_RUNBOOK_URL'),
    webhookSecret: shortWebhook?.type === 'webhook' ? shortWebhook.secret : undefined,
    evidenceSigningKey: secretOrFile(env, 'GOVTRAIL_EVIDENCE_SIGNING_KEY', cwd),
    anchorSigningKey: secretOrFile(env, 'GOVTRAIL_ANCHOR_SIGNING_KEY', cwd),
    requireWriterRole: boolSetting(env, 'GOVTRAIL_REQUIRE_WRITER_ROLE', false),
    anchorDir:
      nonEmpty(env['GOVTRAIL_ANCHOR_DIR']) && path.resolve(cwd, env['GOVTRAIL_ANCHOR_DIR'] as string),
    httpPort: intSetting(env, 'GOVTRAIL_HTTP_PORT', 9464, 0, 65535),
    workerConcurrency: intSetting(env, 'GOVTRAIL_WORKER_CONCURRENCY', 4, 1, 64),
    shutdownGraceMs: durationSetting(env, 'GOVTRAIL_SHUTDOWN_GRACE', 30_000),
    spreadMs: durationSetting(env, 'GOVTRAIL_SPREAD', 0),
    jobRetries: intSetting(env, 'GOVTRAIL_JOB_RETRIES', 2, 0, 10),
    jobRetryDelayMs: durationSetting(env, 'GOVTRAIL_JOB_RETRY_DELAY', 30_000),
    jobHeartbeatMs: Math.max(10_000, durationSetting(env, 'GOVTRAIL_JOB_HEARTBEAT', 30_000)),
    logLevel,
    http: {
      connectTimeoutMs: durationSetting(env, 'GOVTRAIL_HTTP_CONNECT_TIMEOUT', 10_000),
      headersTimeoutMs: durationSetting(env, 'GOVTRAIL_HTTP_HEADERS_TIMEOUT', 30_000),
      bodyTimeoutMs: durationSetting(env, 'GOVTRAIL_HTTP_BODY_TIMEOUT', 60_000),
      maxBodyBytes: byteSizeSetting(env, 'GOVTRAIL_HTTP_MAX_BODY', 64 * 1024 * 1024),
      maxAttempts: intSetting(env, 'GOVTRAIL_HTTP_MAX_ATTEMPTS', 6, 1, 20),
      retryBudgetMs: durationSetting(env, 'GOVTRAIL_HTTP_RETRY_BUDGET', 10 * 60_000),
      retryAfterCapMs: durationSetting(env, 'GOVTRAIL_HTTP_RETRY_AFTER_CAP', 5 * 60_000),
      retryBaseMs: durationSetting(env, 'GOVTRAIL_HTTP_RETRY_BASE', 500),
      retryMaxDelayMs: durationSetting(env, 'GOVTRAIL_HTTP_RETRY_MAX_DELAY', 30_000),
    },
  };
  return deepFreeze(config);
}

/** `env`, reporting the name of every variable looked up in it. */
function recordReads(env: Env, onRead: (variable: string) => void): Env {
  return new Proxy(env, {
    get(target, name) {
      if (typeof name === 'string') onRead(name);
      return Reflect.get(target, name);
    },
  });
}

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}
