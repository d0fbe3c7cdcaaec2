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
import { SEVERITIES, type Severity } from '../core/alert.js';
import { cronProblem } from '../core/cron.js';
import { ConfigError } from '../core/errors.js';
import type { SinkRoute } from '../core/routing.js';
import { describeYamlError } from '../core/yaml-error.js';
import {
  clampPageSize,
  DEFAULT_PAGE_SIZE,
  type HttpConfig,
  isLoopbackHost,
  type TenantConfig,
} from '../source/client-config.js';

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

// ---------------------------------------------------------------------------------------------
// Alert sinks: the YAML `sinks:` list and the environment short forms (README "Alerts").
//
// Adding a sink type: its settings in SinkSettingsByType, its keys and short form in SINK_SPECS,
// a module under src/alerts/sinks/ and one line in that folder's index.ts.
// ---------------------------------------------------------------------------------------------

/** The settings of each sink type beyond its name, type and filters. */
export interface SinkSettingsByType {
  /** One structured log line per alert. */
  readonly log: Readonly<Record<never, never>>;
  /** `pg_notify('govtrail_alerts', <alert id>)` on the database govtrail writes to. */
  readonly notify: Readonly<Record<never, never>>;
  /** Generic JSON webhook. */
  readonly webhook: {
    readonly url: string;
    /** HMAC key of the signature header; unsigned without it. Never logged. */
    readonly secret: string | undefined;
    /** `json` (govtrail's own body, the default) or `ocsf` (an OCSF Detection Finding). */
    readonly format: 'json' | 'ocsf';
    readonly timeoutMs: number | undefined;
  };
  /** Slack incoming webhook (the URL is the credential). */
  readonly slack: { readonly url: string; readonly timeoutMs: number | undefined };
  /** PagerDuty Events API v2. */
  readonly pagerduty: {
    /** The integration's routing key. Never logged. */
    readonly routingKey: string;
    /** The enqueue endpoint: `https://<host>/v2/enqueue`. */
    readonly url: string;
    readonly timeoutMs: number | undefined;
  };
  /** Microsoft Teams Workflows webhook (the URL, with its `sig=`, is the credential). */
  readonly teams: { readonly url: string; readonly timeoutMs: number | undefined };
  /** Splunk HTTP Event Collector: OCSF Detection Findings in HEC's envelope. */
  readonly splunk_hec: {
    /** `https://HOST:8088/services/collector/event`. */
    readonly url: string;
    /** The HEC token. Never logged. */
    readonly token: string;
    readonly host: string | undefined;
    readonly source: string | undefined;
    readonly sourcetype: string | undefined;
    readonly index: string | undefined;
    readonly timeoutMs: number | undefined;
  };
  /** Syslog RFC 5424 carrying OCSF, over TCP (octet counting), TLS (RFC 5425) or UDP. */
  readonly syslog: {
    readonly protocol: 'tcp' | 'tls' | 'udp';
    readonly host: string;
    readonly port: number;
    /** Facility number (0–23); `local0` (16) by default. */
    readonly facility: number;
    /** HOSTNAME of the header; the machine's host name by default. */
    readonly hostname: string | undefined;
    /** PEM: CA bundle, client certificate and key (TLS). The key is never logged. */
    readonly ca: string | undefined;
    readonly cert: string | undefined;
    readonly key: string | undefined;
    readonly rejectUnauthorized: boolean;
    readonly timeoutMs: number | undefined;
  };
  /** Mail over SMTP (STARTTLS or implicit TLS): one per alert, or a digest per delivery pass. */
  readonly email: {
    readonly host: string;
    readonly port: number;
    readonly security: 'starttls' | 'tls';
    readonly user: string | undefined;
    /** Never logged. */
    readonly password: string | undefined;
    readonly from: string;
    readonly to: readonly string[];
    readonly ca: string | undefined;
    readonly rejectUnauthorized: boolean;
    readonly timeoutMs: number | undefined;
    /** `alert`: one mail per alert; `digest`: one mail per delivery pass listing its alerts. */
    readonly mode: 'alert' | 'digest';
  };
}

export type SinkType = keyof SinkSettingsByType;

/** Every sink type, in the order the short forms are added. */
export const SINK_TYPES = [
  'log',
  'webhook',
  'slack',
  'pagerduty',
  'teams',
  'splunk_hec',
  'syslog',
  'email',
  'notify',
] as const satisfies readonly SinkType[];

/** What every configured sink has. */
export interface SinkCommon<T extends SinkType> {
  readonly type: T;
  /** Unique; the `sink` column of alert_delivery. Defaults to the type. */
  readonly name: string;
  /** Which alerts get a delivery row for this sink (decided when the alert is stored). */
  readonly route: SinkRoute;
  /** Where it was configured, for messages: `<file>: sinks[2]`, an environment variable, or `default`. */
  readonly origin: string;
  /** Values to scrub from logs: keys, secrets, URLs that carry credentials. Never logged. */
  readonly secrets: readonly string[];
}

export type SinkConfigOf<T extends SinkType> = SinkCommon<T> & SinkSettingsByType[T];

/** One configured sink. */
export type SinkConfig = { [T in SinkType]: SinkConfigOf<T> }[SinkType];

/** Reads one sink's keys, naming them in errors as the operator wrote them. */
interface SettingReader {
  /** The key's name in messages: `<file>: sinks[1].url` or `GOVTRAIL_TEAMS_WEBHOOK_URL`. */
  name(key: string): string;
  fail(key: string, reason: string): never;
  /** `key`, or the content of the file named by `key_file` (not both); kept as a secret. */
  secret(values: Readonly<Record<string, unknown>>, key: string): string | undefined;
  /** `secret()`, required. */
  requiredSecret(values: Readonly<Record<string, unknown>>, key: string): string;
  /** An https URL, or http to a loopback host. Never echoed: a sink URL may carry a credential. */
  url(value: string, key: string): string;
  duration(value: string | number | undefined, key: string): number | undefined;
}

interface SinkSpec<T extends SinkType> {
  /**
   * The short form: key → environment variable. Setting any of them (or a secret's `_FILE`
   * variant) configures one sink of the type, named after it.
   */
  readonly env: Readonly<Record<string, string>> | undefined;
  parse(values: Readonly<Record<string, unknown>>, r: SettingReader): SinkSettingsByType[T];
}

function sinkSpec<T extends SinkType, S extends z.ZodRawShape>(o: {
  keys: S;
  env?: Readonly<Record<string, string>>;
  build: (v: z.output<z.ZodObject<S>>, r: SettingReader) => SinkSettingsByType[T];
}): SinkSpec<T> {
  const schema = z.object(o.keys).strict();
  return {
    env: o.env,
    parse(values, r) {
      const parsed = schema.safeParse(values);
      if (!parsed.success) failOnIssue(parsed.error, r, 'is not a setting of this sink type');
      return o.build(parsed.data, r);
    },
  };
}

function failOnIssue(error: z.ZodError, r: SettingReader, unknownKey: string): never {
  const issue = error.issues[0];
  if (issue?.code === 'unrecognized_keys') r.fail(String(issue.keys[0]), unknownKey);
  r.fail(issue?.path.join('.') ?? '', issue?.message ?? 'invalid');
}

const text = z.string();
const duration = z.union([z.string(), z.number()]);
const httpKeys = { timeout: duration.optional() };

/** PagerDuty Events API v2 routing keys are 32 characters. */
const ROUTING_KEY = /^[A-Za-z0-9]{32}$/;

/** Hosts of the retired Office 365 connectors ("incoming webhooks"). */
function isRetiredTeamsConnector(url: URL): boolean {
  const host = url.hostname.toLowerCase();
  return (
    host === 'webhook.office.com' ||
    host.endsWith('.webhook.office.com') ||
    ((host === 'outlook.office.com' || host === 'outlook.office365.com') &&
      url.pathname.startsWith('/webhook'))
  );
}

const SINK_SPECS: { readonly [T in SinkType]: SinkSpec<T> } = {
  log: sinkSpec({ keys: {}, build: () => ({}) }),
  notify: sinkSpec({ keys: {}, build: () => ({}) }),
  webhook: sinkSpec({
    keys: {
      url: text.optional(),
      url_file: text.optional(),
      secret: text.optional(),
      secret_file: text.optional(),
      format: text.optional(),
      ...httpKeys,
    },
    env: {
      url: 'GOVTRAIL_WEBHOOK_URL',
      secret: 'GOVTRAIL_WEBHOOK_SECRET',
      format: 'GOVTRAIL_WEBHOOK_FORMAT',
      timeout: 'GOVTRAIL_WEBHOOK_TIMEOUT',
      min_severity: 'GOVTRAIL_WEBHOOK_MIN_SEVERITY',
    },
    build: (v, r) => {
      const format = (v.format ?? 'json').trim().toLowerCase();
      if (format !== 'json' && format !== 'ocsf') {
        r.fail('format', `must be json or ocsf, got ${JSON.stringify(v.format)}`);
      }
      return {
        url: r.url(r.requiredSecret(v, 'url'), 'url'),
        secret: r.secret(v, 'secret'),
        format: format as 'json' | 'ocsf',
        timeoutMs: r.duration(v.timeout, 'timeout'),
      };
    },
  }),
  slack: sinkSpec({
    keys: { url: text.optional(), url_file: text.optional(), ...httpKeys },
    env: {
      url: 'GOVTRAIL_SLACK_WEBHOOK_URL',
      timeout: 'GOVTRAIL_SLACK_TIMEOUT',
      min_severity: 'GOVTRAIL_SLACK_MIN_SEVERITY',
    },
    build: (v, r) => ({
      url: r.url(r.requiredSecret(v, 'url'), 'url'),
      timeoutMs: r.duration(v.timeout, 'timeout'),
    }),
  }),
  pagerduty: sinkSpec({
    keys: {
      routing_key: text.optional(),
      routing_key_file: text.optional(),
      host: text.optional(),
      url: text.optional(),
      ...httpKeys,
    },
    env: {
      routing_key: 'GOVTRAIL_PAGERDUTY_ROUTING_KEY',
      host: 'GOVTRAIL_PAGERDUTY_HOST',
      url: 'GOVTRAIL_PAGERDUTY_URL',
      timeout: 'GOVTRAIL_PAGERDUTY_TIMEOUT',
      min_severity: 'GOVTRAIL_PAGERDUTY_MIN_SEVERITY',
    },
    build: (v, r) => {
      const routingKey = r.requiredSecret(v, 'routing_key').trim();
      if (!ROUTING_KEY.test(routingKey)) {
        r.fail(
          v.routing_key_file === undefined ? 'routing_key' : 'routing_key_file',
          'must be the 32-character integration key of an Events API v2 integration',
        );
      }
      if (v.host !== undefined && v.url !== undefined)
        r.fail('host', `set either ${r.name('url')} or this, not both`);
      let url = PAGERDUTY_DEFAULT_URL;
      if (v.url !== undefined) url = r.url(v.url, 'url');
      else if (v.host !== undefined) {
        const host = v.host.trim();
        if (!/^[A-Za-z0-9.-]+(:\d{1,5})?$/.test(host)) {
          r.fail(
            'host',
            `must be a bare host name such as events.eu.pagerduty.com, got ${JSON.stringify(host)}`,
          );
        }
        url = `https://${host}/v2/enqueue`;
      }
      return { routingKey, url, timeoutMs: r.duration(v.timeout, 'timeout') };
    },
  }),
  teams: sinkSpec({
    keys: { url: text.optional(), url_file: text.optional(), ...httpKeys },
    env: {
      url: 'GOVTRAIL_TEAMS_WEBHOOK_URL',
      timeout: 'GOVTRAIL_TEAMS_TIMEOUT',
      min_severity: 'GOVTRAIL_TEAMS_MIN_SEVERITY',
    },
    build: (v, r) => {
      const key = v.url_file === undefined ? 'url' : 'url_file';
      const url = r.url(r.requiredSecret(v, 'url'), key);
      if (isRetiredTeamsConnector(new URL(url))) {
        r.fail(
          key,
          'is an Office 365 connector URL (webhook.office.com); connectors are retired: in Teams, create a ' +
            'Workflows webhook ("When a Teams webhook request is received" → "Post card in a chat or channel") ' +
            'and use its URL instead',
        );
      }
      return { url, timeoutMs: r.duration(v.timeout, 'timeout') };
    },
  }),
  splunk_hec: sinkSpec({
    keys: {
      url: text.optional(),
      token: text.optional(),
      token_file: text.optional(),
      host: text.optional(),
      source: text.optional(),
      sourcetype: text.optional(),
      index: text.optional(),
      ...httpKeys,
    },
    env: {
      url: 'GOVTRAIL_SPLUNK_HEC_URL',
      token: 'GOVTRAIL_SPLUNK_HEC_TOKEN',
      index: 'GOVTRAIL_SPLUNK_HEC_INDEX',
      sourcetype: 'GOVTRAIL_SPLUNK_HEC_SOURCETYPE',
      timeout: 'GOVTRAIL_SPLUNK_HEC_TIMEOUT',
      min_severity: 'GOVTRAIL_SPLUNK_HEC_MIN_SEVERITY',
    },
    build: (v, r) => {
      if (v.url === undefined) {
        return r.fail('url', 'is required (https://HOST:8088/services/collector/event)');
      }
      const url = new URL(r.url(v.url, 'url'));
      // A bare https://HOST:8088 means the event endpoint.
      if (url.pathname === '/' || url.pathname === '') url.pathname = '/services/collector/event';
      const token = r.requiredSecret(v, 'token').trim();
      const optional = (value: string | undefined) => nonEmpty(value)?.trim();
      return {
        url: url.href,
        token,
        host: optional(v.host),
        source: optional(v.source),
        sourcetype: optional(v.sourcetype),
        index: optional(v.index),
        timeoutMs: r.duration(v.timeout, 'timeout'),
      };
    },
  }),
  syslog: sinkSpec({
    keys: {
      url: text.optional(),
      protocol: text.optional(),
      host: text.optional(),
      port: z.union([z.number(), z.string()]).optional(),
      facility: z.union([z.number(), z.string()]).optional(),
      hostname: text.optional(),
      ca: text.optional(),
      ca_file: text.optional(),
      cert: text.optional(),
      cert_file: text.optional(),
      key: text.optional(),
      key_file: text.optional(),
      reject_unauthorized: z.union([z.boolean(), z.string()]).optional(),
      ...httpKeys,
    },
    env: {
      url: 'GOVTRAIL_SYSLOG_URL',
      facility: 'GOVTRAIL_SYSLOG_FACILITY',
      hostname: 'GOVTRAIL_SYSLOG_HOSTNAME',
      ca: 'GOVTRAIL_SYSLOG_CA',
      cert: 'GOVTRAIL_SYSLOG_CERT',
      key: 'GOVTRAIL_SYSLOG_KEY',
      reject_unauthorized: 'GOVTRAIL_SYSLOG_REJECT_UNAUTHORIZED',
      timeout: 'GOVTRAIL_SYSLOG_TIMEOUT',
      min_severity: 'GOVTRAIL_SYSLOG_MIN_SEVERITY',
    },
    build: (v, r) => {
      let protocol: string | undefined = v.protocol?.trim().toLowerCase();
      let host: string | undefined = nonEmpty(v.host)?.trim();
      let port: number | string | undefined = v.port;
      if (v.url !== undefined) {
        if (v.protocol !== undefined || v.host !== undefined || v.port !== undefined) {
          r.fail(
            'url',
            `set either this or ${r.name('protocol')}/${r.name('host')}/${r.name('port')}, not both`,
          );
        }
        let url: URL;
        try {
          url = new URL(v.url.trim());
        } catch {
          return r.fail('url', 'is not a URL (tcp://HOST:PORT, tls://HOST:PORT or udp://HOST:PORT)');
        }
        protocol = url.protocol.replace(/:$/, '');
        host = url.hostname.replace(/^\[(.*)\]$/, '$1');
        port = url.port === '' ? undefined : url.port;
      }
      protocol ??= 'tcp';
      if (protocol !== 'tcp' && protocol !== 'tls' && protocol !== 'udp') {
        r.fail(
          v.url === undefined ? 'protocol' : 'url',
          `protocol must be tcp, tls or udp, got ${JSON.stringify(protocol)}`,
        );
      }
      if (host === undefined || host === '') r.fail(v.url === undefined ? 'host' : 'url', 'needs a host');
      const portNumber = port === undefined ? (protocol === 'tls' ? 6514 : 514) : Number(port);
      if (!Number.isInteger(portNumber) || portNumber < 1 || portNumber > 65_535) {
        r.fail(v.url === undefined ? 'port' : 'url', `port must be 1–65535, got ${JSON.stringify(port)}`);
      }
      const facility = syslogFacility(v.facility);
      if (facility === undefined) {
        r.fail(
          'facility',
          `must be a facility name (kern, user, …, auth, authpriv, local0–local7) or number 0–23, got ${JSON.stringify(v.facility)}`,
        );
      }
      let rejectUnauthorized = true;
      if (v.reject_unauthorized !== undefined) {
        const raw = String(v.reject_unauthorized).trim().toLowerCase();
        if (raw !== 'true' && raw !== 'false') r.fail('reject_unauthorized', 'must be true or false');
        rejectUnauthorized = raw === 'true';
      }
      const ca = r.secret(v, 'ca');
      const cert = r.secret(v, 'cert');
      const key = r.secret(v, 'key');
      if (protocol !== 'tls' && (ca ?? cert ?? key) !== undefined) {
        r.fail(ca !== undefined ? 'ca' : cert !== undefined ? 'cert' : 'key', 'applies to protocol tls only');
      }
      if ((cert === undefined) !== (key === undefined)) {
        r.fail(cert === undefined ? 'cert' : 'key', 'a client certificate needs both cert and key');
      }
      return {
        protocol: protocol as 'tcp' | 'tls' | 'udp',
        host: host as string,
        port: portNumber,
        facility: facility as number,
        hostname: nonEmpty(v.hostname)?.trim(),
        ca,
        cert,
        key,
        rejectUnauthorized,
        timeoutMs: r.duration(v.timeout, 'timeout'),
      };
    },
  }),
  email: sinkSpec({
    keys: {
      host: text.optional(),
      port: z.union([z.number(), z.string()]).optional(),
      security: text.optional(),
      user: text.optional(),
      password: text.optional(),
      password_file: text.optional(),
      from: text.optional(),
      to: z.union([text, z.array(text)]).optional(),
      ca: text.optional(),
      ca_file: text.optional(),
      reject_unauthorized: z.union([z.boolean(), z.string()]).optional(),
      mode: text.optional(),
      ...httpKeys,
    },
    env: {
      host: 'GOVTRAIL_SMTP_HOST',
      mode: 'GOVTRAIL_EMAIL_MODE',
      port: 'GOVTRAIL_SMTP_PORT',
      security: 'GOVTRAIL_SMTP_SECURITY',
      user: 'GOVTRAIL_SMTP_USER',
      password: 'GOVTRAIL_SMTP_PASSWORD',
      from: 'GOVTRAIL_EMAIL_FROM',
      to: 'GOVTRAIL_EMAIL_TO',
      ca: 'GOVTRAIL_SMTP_CA',
      timeout: 'GOVTRAIL_SMTP_TIMEOUT',
      min_severity: 'GOVTRAIL_EMAIL_MIN_SEVERITY',
    },
    build: (v, r) => {
      const host = nonEmpty(v.host)?.trim();
      if (host === undefined) return r.fail('host', 'is required (the SMTP server)');
      const security = (v.security ?? 'starttls').trim().toLowerCase();
      if (security !== 'starttls' && security !== 'tls') {
        r.fail(
          'security',
          `must be starttls (port 587) or tls (port 465), got ${JSON.stringify(v.security)}`,
        );
      }
      const mode = (v.mode ?? 'alert').trim().toLowerCase();
      if (mode !== 'alert' && mode !== 'digest') {
        r.fail(
          'mode',
          `must be alert (one mail per alert) or digest (one mail per delivery pass), got ${JSON.stringify(v.mode)}`,
        );
      }
      const port = v.port === undefined ? (security === 'tls' ? 465 : 587) : Number(v.port);
      if (!Number.isInteger(port) || port < 1 || port > 65_535) {
        r.fail('port', `must be 1–65535, got ${JSON.stringify(v.port)}`);
      }
      const address = /^[^\s@<>]+@[^\s@<>]+$/;
      const from = nonEmpty(v.from)?.trim();
      if (from === undefined) return r.fail('from', 'is required (the sender address)');
      const bare = /<([^<>]+)>\s*$/.exec(from)?.[1] ?? from;
      if (!address.test(bare)) r.fail('from', `is not an address: ${JSON.stringify(from)}`);
      const to = (Array.isArray(v.to) ? v.to : (v.to ?? '').split(','))
        .map((t) => t.trim())
        .filter((t) => t !== '');
      if (to.length === 0) r.fail('to', 'needs at least one recipient');
      for (const t of to) if (!address.test(t)) r.fail('to', `is not an address: ${JSON.stringify(t)}`);
      const user = nonEmpty(v.user)?.trim();
      const password = r.secret(v, 'password');
      if ((user === undefined) !== (password === undefined)) {
        r.fail(user === undefined ? 'user' : 'password', 'authentication needs both user and password');
      }
      let rejectUnauthorized = true;
      if (v.reject_unauthorized !== undefined) {
        const raw = String(v.reject_unauthorized).trim().toLowerCase();
        if (raw !== 'true' && raw !== 'false') r.fail('reject_unauthorized', 'must be true or false');
        rejectUnauthorized = raw === 'true';
      }
      return {
        host,
        port,
        security: security as 'starttls' | 'tls',
        user,
        password,
        from,
        to,
        ca: r.secret(v, 'ca'),
        rejectUnauthorized,
        timeoutMs: r.duration(v.timeout, 'timeout'),
        mode: mode as 'alert' | 'digest',
      };
    },
  }),
};

/** Syslog facility names (RFC 5424 table 1, as syslog.h names them) → numbers. */
export const SYSLOG_FACILITIES: Readonly<Record<string, number>> = {
  kern: 0,
  user: 1,
  mail: 2,
  daemon: 3,
  auth: 4,
  syslog: 5,
  lpr: 6,
  news: 7,
  uucp: 8,
  cron: 9,
  authpriv: 10,
  ftp: 11,
  ntp: 12,
  security: 13,
  console: 14,
  local0: 16,
  local1: 17,
  local2: 18,
  local3: 19,
  local4: 20,
  local5: 21,
  local6: 22,
  local7: 23,
};

/** The default facility: local0, for site use, so a relay can route govtrail's messages apart. */
export const SYSLOG_DEFAULT_FACILITY = 16;

function syslogFacility(value: number | string | undefined): number | undefined {
  if (value === undefined) return SYSLOG_DEFAULT_FACILITY;
  const raw = String(value).trim().toLowerCase();
  if (/^\d+$/.test(raw)) {
    const n = Number(raw);
    return n <= 23 ? n : undefined;
  }
  return SYSLOG_FACILITIES[raw];
}

/** The PagerDuty endpoint of the US service region. */
const PAGERDUTY_DEFAULT_URL = 'https://events.pagerduty.com/v2/enqueue';

const SINK_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
const MAX_SINK_TIMEOUT_MS = 120_000;

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

function settingReader(o: {
  name: (key: string) => string;
  baseDir: string;
  secrets: string[];
}): SettingReader {
  const fail = (key: string, reason: string): never => {
    throw new ConfigError(o.name(key), reason);
  };
  const secret = (values: Readonly<Record<string, unknown>>, key: string): string | undefined => {
    const direct = values[key];
    const file = values[`${key}_file`];
    const directText = typeof direct === 'string' ? nonEmpty(direct) : undefined;
    const fileText = typeof file === 'string' ? nonEmpty(file) : undefined;
    if (directText !== undefined && fileText !== undefined) {
      fail(key, `set either this or ${o.name(`${key}_file`)}, not both`);
    }
    let value = directText;
    if (fileText !== undefined) {
      const p = path.resolve(o.baseDir, fileText);
      try {
        value = readFileSync(p, 'utf8').replace(/\r?\n$/, '');
      } catch (err) {
        fail(`${key}_file`, `cannot read ${p}: ${(err as Error).message}`);
      }
      if (value === undefined || value.trim() === '') fail(`${key}_file`, `${p} is empty`);
    }
    if (value !== undefined) o.secrets.push(value);
    return value;
  };
  return {
    name: o.name,
    fail,
    secret,
    requiredSecret(values, key) {
      const value = secret(values, key);
      if (value === undefined) return fail(key, `is required (or ${o.name(`${key}_file`)})`);
      return value;
    },
    url(value, key) {
      let url: URL;
      try {
        url = new URL(value.trim());
      } catch {
        return fail(key, 'is not a URL');
      }
      if (url.protocol !== 'https:' && !(url.protocol === 'http:' && isLoopbackHost(url.hostname))) {
        fail(key, 'must be an https:// URL (plain http only to a loopback host)');
      }
      o.secrets.push(value.trim());
      return url.href;
    },
    duration(value, key) {
      if (value === undefined) return undefined;
      const ms = parseDurationSetting(String(value));
      if (ms === undefined || ms <= 0 || ms > MAX_SINK_TIMEOUT_MS) {
        fail(key, `must be a duration from 1ms to 2m such as 10s, got ${JSON.stringify(value)}`);
      }
      return ms;
    },
  };
}

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
  const settings = SINK_SPECS[type as SinkType].parse(own, r);
  return { type, name, route, origin, secrets, ...settings } as SinkConfig;
}

/**
 * Every sink: the YAML `sinks:` list, then the short forms of the environment, with the log sink
 * first and NOTIFY last when the list does not configure them (both then let every alert through).
 */
function buildSinks(
  env: Env,
  doc: ConfigFile | undefined,
  cwd: string,
  tenantNames: readonly string[],
): SinkConfig[] {
  const configured: SinkConfig[] = [];
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
    configured.push(parseSink(raw as Record<string, unknown>, r, where, secrets));
  }
  for (const type of SINK_TYPES) {
    const vars = SINK_SPECS[type].env;
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
    configured.push(parseSink({ ...values, type }, r, first, secrets));
  }

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
  return sinks;
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
  const sinks = buildSinks(
    env,
    doc,
    cwd,
    tenants.map((t) => t.name),
  );
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
