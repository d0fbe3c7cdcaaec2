/**
 * The one place that reads the environment. Settings come from process.env, a `.env` file in the
 * working directory (real environment wins), `NAME_FILE` indirection for secrets, and an optional
 * YAML file (`GOVTRAIL_CONFIG`) that lists several tenants and sinks. Everything is validated once,
 * and a bad setting fails with a {@link ConfigError} naming the variable.
 *
 * This module assembles {@link Config}; the readers of one variable are in env.ts, the tenants in
 * tenants.ts, the YAML file in config-file.ts, and each sink type's settings in its own folder
 * under alerts/sinks/ (the catalogue: alerts/sinks/registry.ts).
 */
import path from 'node:path';
import type { SinkConfig } from '../alerts/sinks/registry.js';
import { configuredSinks } from '../alerts/sinks/sink-settings.js';
import { ConfigError } from '../core/errors.js';
import { type Env, nonEmpty } from '../core/setting-values.js';
import type { HttpConfig, TenantConfig } from '../source/client-config.js';
import { tenantBaselineFiles } from './baseline.js';
import { type ConfigFile, configFileKeys, fileKeyVariable, readConfigFile } from './config-file.js';
import {
  boolSetting,
  byteSizeSetting,
  cronSetting,
  durationSetting,
  intSetting,
  readDotEnv,
  recordReads,
  runbookUrlSetting,
  secretOrFile,
} from './env.js';
import { type GroupConfig, readGroups, readTenants, tenantDefaults } from './tenants.js';

export type { SinkConfig } from '../alerts/sinks/registry.js';
export { parseDurationSetting } from '../core/setting-values.js';
export type { HttpConfig, TenantConfig } from '../source/client-config.js';

/** What a failed scheduled run is given by default: the job engine's defaults too (worker/engine-setup.ts). */
export const JOB_DEFAULTS = {
  /** `GOVTRAIL_JOB_RETRIES`: attempts after the first, inside the slot. */
  retries: 2,
  /** `GOVTRAIL_JOB_RETRY_DELAY`: the first retry's delay, doubled for each further one. */
  retryDelayMs: 30_000,
} as const;

export interface Config {
  /** Configured tenants; empty when nothing is configured (the demo then uses the sandbox). */
  readonly tenants: readonly TenantConfig[];
  /** The `groups:` map of GOVTRAIL_CONFIG (group name → its baseline); empty without one. */
  readonly groups: ReadonlyMap<string, GroupConfig>;
  /** PostgreSQL server; undefined selects the embedded database in {@link dataDir}. */
  readonly databaseUrl: string | undefined;
  /** Directory of the embedded database and other local state. */
  readonly dataDir: string;
  /** Cron expression (UTC) of the worker. */
  readonly schedule: string;
  /** Cron expression (UTC) of the worker's reconcile (docs/design/integrity.md); undefined when `off`. */
  readonly reconcileSchedule: string | undefined;
  /** Default page size for tenants that do not set one. */
  readonly pageSize: number;
  /** Default lookback for tenants that do not set one. */
  readonly lookbackMs: number;
  /** Stop paging after this many pages in one run (docs/design/sync.md S7). */
  readonly maxPages: number;
  /** YAML rule file replacing or extending the built-in pack. */
  readonly alertRulesPath: string | undefined;
  /** `GOVTRAIL_BASELINE`: the baseline file that judges every tenant without one of its own. */
  readonly baselinePath: string | undefined;
  /** Each tenant's own `baseline:` in GOVTRAIL_CONFIG (absolute paths), by tenant name. */
  readonly tenantBaselines: Readonly<Record<string, string>>;
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
  /** `GOVTRAIL_HTTP_HOST`: address /healthz and /metrics listen on; undefined: every interface. */
  readonly httpHost: string | undefined;
  /**
   * `GOVTRAIL_HEALTH_STALE_AFTER`: /healthz calls a tenant stale (and itself unhealthy) when its
   * last successful sync is older than this; undefined: three schedule intervals, at least 10 min.
   */
  readonly healthStaleAfterMs: number | undefined;
  /** `GOVTRAIL_METRICS_TENANTS`: tenants with series of their own in /metrics; the rest are `_other`. */
  readonly metricsTenants: number;
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

/** Every quarter of an hour (UTC). */
export const DEFAULT_SCHEDULE = '*/15 * * * *';

/** Once a day, at a quiet minute (UTC). */
export const DEFAULT_RECONCILE_SCHEDULE = '41 3 * * *';

/** Every secret value of the sinks, for the logger's redaction (registerSecret). */
export function sinkSecrets(config: Pick<Config, 'sinks'>): string[] {
  return config.sinks.flatMap((s) => s.secrets);
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

/** Where the settings come from: the environment over `.env`, over the globals of GOVTRAIL_CONFIG. */
function readSources(
  processEnv: Env,
  options: LoadConfigOptions,
): { cwd: string; env: Env; doc: ConfigFile | undefined } {
  const cwd = options.cwd ?? process.cwd();
  const dot = options.dotenv === false ? {} : readDotEnv(cwd);
  let env: Env = { ...dot, ...processEnv };
  const configFile = nonEmpty(env['GOVTRAIL_CONFIG']);
  let doc: ConfigFile | undefined;
  if (configFile !== undefined) {
    doc = readConfigFile(path.resolve(cwd, configFile));
    // Globals in the file are defaults; the environment overrides them.
    env = { ...doc.globals, ...env };
  }
  if (options.onRead !== undefined) env = recordReads(env, options.onRead);
  return { cwd, env, doc };
}

function logLevelSetting(env: Env): string {
  const logLevel = (nonEmpty(env['LOG_LEVEL'])?.trim().toLowerCase() ?? 'info') as string;
  if (!(LOG_LEVELS as readonly string[]).includes(logLevel)) {
    throw new ConfigError('LOG_LEVEL', `must be one of ${LOG_LEVELS.join(', ')}, got ${logLevel}`);
  }
  return logLevel;
}

function databaseUrlSetting(env: Env): string | undefined {
  const databaseUrl = nonEmpty(env['DATABASE_URL'])?.trim();
  if (databaseUrl !== undefined && !/^postgres(ql)?:\/\//.test(databaseUrl)) {
    throw new ConfigError('DATABASE_URL', 'must start with postgres:// or postgresql://');
  }
  return databaseUrl;
}

/** The worker's sync schedule and its reconcile schedule (`off`: none). */
function scheduleSettings(env: Env): Pick<Config, 'schedule' | 'reconcileSchedule'> {
  const schedule = cronSetting(env, 'GOVTRAIL_SCHEDULE', DEFAULT_SCHEDULE);
  const reconcileRaw = nonEmpty(env['GOVTRAIL_RECONCILE_SCHEDULE'])?.trim();
  const reconcileSchedule =
    reconcileRaw?.toLowerCase() === 'off'
      ? undefined
      : cronSetting(env, 'GOVTRAIL_RECONCILE_SCHEDULE', DEFAULT_RECONCILE_SCHEDULE);
  return { schedule, reconcileSchedule };
}

/** Timeouts, size limit and retries of the tenant API client. */
function httpSettings(env: Env): HttpConfig {
  return {
    connectTimeoutMs: durationSetting(env, 'GOVTRAIL_HTTP_CONNECT_TIMEOUT', 10_000),
    headersTimeoutMs: durationSetting(env, 'GOVTRAIL_HTTP_HEADERS_TIMEOUT', 30_000),
    bodyTimeoutMs: durationSetting(env, 'GOVTRAIL_HTTP_BODY_TIMEOUT', 60_000),
    maxBodyBytes: byteSizeSetting(env, 'GOVTRAIL_HTTP_MAX_BODY', 64 * 1024 * 1024),
    maxAttempts: intSetting(env, 'GOVTRAIL_HTTP_MAX_ATTEMPTS', 6, 1, 20),
    retryBudgetMs: durationSetting(env, 'GOVTRAIL_HTTP_RETRY_BUDGET', 10 * 60_000),
    retryAfterCapMs: durationSetting(env, 'GOVTRAIL_HTTP_RETRY_AFTER_CAP', 5 * 60_000),
    retryBaseMs: durationSetting(env, 'GOVTRAIL_HTTP_RETRY_BASE', 500),
    retryMaxDelayMs: durationSetting(env, 'GOVTRAIL_HTTP_RETRY_MAX_DELAY', 30_000),
  };
}

/** Every setting, read in a fixed order (the first bad one is the one reported). */
function parseConfig(processEnv: Env, options: LoadConfigOptions): Config {
  const { cwd, env, doc } = readSources(processEnv, options);
  const tenants = readTenants(env, doc, cwd);
  const defaults = tenantDefaults(env);
  const logLevel = logLevelSetting(env);
  const databaseUrl = databaseUrlSetting(env);
  const { schedule, reconcileSchedule } = scheduleSettings(env);
  const sinks = configuredSinks({
    env,
    file: doc,
    cwd,
    tenantNames: tenants.map((t) => t.name),
  });
  const shortWebhook = sinks.find((s) => s.type === 'webhook' && s.origin === 'GOVTRAIL_WEBHOOK_URL');
  const resolved = (name: string) => {
    const value = nonEmpty(env[name]);
    return value && path.resolve(cwd, value);
  };

  const config: Config = {
    tenants,
    groups: readGroups(doc),
    databaseUrl,
    dataDir: path.resolve(cwd, nonEmpty(env['GOVTRAIL_DATA_DIR']) ?? '.govtrail'),
    schedule,
    reconcileSchedule,
    pageSize: defaults.pageSize,
    lookbackMs: defaults.lookbackMs,
    maxPages: intSetting(env, 'GOVTRAIL_MAX_PAGES', 200_000, 1, 100_000_000),
    alertRulesPath: resolved('GOVTRAIL_ALERT_RULES'),
    baselinePath: resolved('GOVTRAIL_BASELINE'),
    tenantBaselines: tenantBaselineFiles(doc),
    backfillPerEntryAlerts: boolSetting(env, 'GOVTRAIL_BACKFILL_PER_ENTRY_ALERTS', false),
    sinks,
    runbookUrl: runbookUrlSetting(env, 'GOVTRAIL_RUNBOOK_URL'),
    webhookSecret: shortWebhook?.type === 'webhook' ? shortWebhook.secret : undefined,
    evidenceSigningKey: secretOrFile(env, 'GOVTRAIL_EVIDENCE_SIGNING_KEY', cwd),
    anchorSigningKey: secretOrFile(env, 'GOVTRAIL_ANCHOR_SIGNING_KEY', cwd),
    requireWriterRole: boolSetting(env, 'GOVTRAIL_REQUIRE_WRITER_ROLE', false),
    anchorDir: resolved('GOVTRAIL_ANCHOR_DIR'),
    httpPort: intSetting(env, 'GOVTRAIL_HTTP_PORT', 9464, 0, 65535),
    httpHost: env['GOVTRAIL_HTTP_HOST']?.trim() || undefined,
    healthStaleAfterMs:
      env['GOVTRAIL_HEALTH_STALE_AFTER'] === undefined
        ? undefined
        : durationSetting(env, 'GOVTRAIL_HEALTH_STALE_AFTER', 600_000),
    metricsTenants: intSetting(env, 'GOVTRAIL_METRICS_TENANTS', 100, 0, 100_000),
    workerConcurrency: intSetting(env, 'GOVTRAIL_WORKER_CONCURRENCY', 4, 1, 64),
    shutdownGraceMs: durationSetting(env, 'GOVTRAIL_SHUTDOWN_GRACE', 30_000),
    spreadMs: durationSetting(env, 'GOVTRAIL_SPREAD', 0),
    jobRetries: intSetting(env, 'GOVTRAIL_JOB_RETRIES', JOB_DEFAULTS.retries, 0, 10),
    jobRetryDelayMs: durationSetting(env, 'GOVTRAIL_JOB_RETRY_DELAY', JOB_DEFAULTS.retryDelayMs),
    jobHeartbeatMs: Math.max(10_000, durationSetting(env, 'GOVTRAIL_JOB_HEARTBEAT', 30_000)),
    logLevel,
    http: httpSettings(env),
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
