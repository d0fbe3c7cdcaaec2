/**
 * The tenants: one from the environment (`GOVTRAIL_CLIENT_ID`, …), or the `tenants:` list of the
 * GOVTRAIL_CONFIG file, each checked and given the defaults of page size and lookback.
 */
import path from 'node:path';
import { z } from 'zod';
import { suggestion } from '../core/did-you-mean.js';
import { ConfigError } from '../core/errors.js';
import { type Env, nonEmpty, parseDurationSetting } from '../core/setting-values.js';
import {
  clampPageSize,
  DEFAULT_PAGE_SIZE,
  isLoopbackHost,
  type TenantConfig,
} from '../source/client-config.js';
import type { ConfigFile } from './config-file.js';
import { durationSetting, secretOrFile } from './env.js';

const TENANT_NAME = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/;
/** A group name: as a tenant name (it is written on the command line and in SQL, never interpolated). */
export const GROUP_NAME = TENANT_NAME;
/** A label key: letters, digits and `._:/-`, up to 63 characters. */
export const LABEL_KEY = /^[A-Za-z0-9][A-Za-z0-9._:/-]{0,62}$/;
/** Longest label value. */
export const LABEL_VALUE_MAX = 256;

/** Why a group name is refused, or undefined when it is fine. */
export function groupNameProblem(name: string): string | undefined {
  return GROUP_NAME.test(name)
    ? undefined
    : `a group name is 1–128 characters of letters, digits, ".", "_", ":" or "-", got ${JSON.stringify(name)}`;
}

/** Why a label key or value is refused, or undefined when they are fine. */
export function labelProblem(key: string, value: string): string | undefined {
  if (!LABEL_KEY.test(key))
    return `a label key is 1–63 characters of letters, digits, ".", "_", ":", "/" or "-", got ${JSON.stringify(key)}`;
  if (value.length > LABEL_VALUE_MAX || /[\u0000-\u001f\u007f]/.test(value))
    return `the value of label ${key} must be at most ${LABEL_VALUE_MAX} characters without control characters`;
  return undefined;
}

/** A group of the `groups:` map of GOVTRAIL_CONFIG. */
export interface GroupConfig {
  readonly name: string;
  /**
   * The baseline file its tenants are judged by (absolute: resolved against the configuration
   * file's directory). A tenant's own baseline wins over its group's; GOVTRAIL_BASELINE applies
   * when neither names one.
   */
  readonly baseline?: string;
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
    clientSecretFile: string;
    name: string;
    pageSize: string;
    lookback: string;
  },
  defaults: { pageSize: number; lookbackMs: number },
  baseDir: string,
): TenantConfig {
  const clientId = nonEmpty(values[keys.clientId])?.trim();
  if (clientId === undefined) throw new ConfigError(keys.clientId, 'is required');
  const clientSecret = secretOrFile(values, keys.clientSecret, baseDir, keys.clientSecretFile);
  if (clientSecret === undefined) {
    throw new ConfigError(keys.clientSecret, `is required (or ${keys.clientSecretFile})`);
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
    if (!Number.isInteger(n)) {
      throw new ConfigError(keys.pageSize, `must be a whole number (clamped to 10–100), got ${pageSizeRaw}`);
    }
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
  clientSecretFile: 'GOVTRAIL_CLIENT_SECRET_FILE',
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
    /** The baseline file that judges this tenant (config/baseline.ts reads it). */
    baseline: z.string().optional(),
    groups: z.array(z.string()).optional(),
    labels: z.record(z.string(), z.union([z.string(), z.number(), z.boolean()])).optional(),
  })
  .strict();

/** The `groups:` and `labels:` of one tenant entry, checked. */
function membershipOf(
  where: string,
  groups: readonly string[] | undefined,
  labels: Readonly<Record<string, string | number | boolean>> | undefined,
): { groups: readonly string[]; labels: Readonly<Record<string, string>> } {
  for (const g of groups ?? []) {
    const problem = groupNameProblem(g);
    if (problem !== undefined) throw new ConfigError('GOVTRAIL_CONFIG', `${where}.groups: ${problem}`);
  }
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(labels ?? {})) {
    const problem = labelProblem(k, String(v));
    if (problem !== undefined) throw new ConfigError('GOVTRAIL_CONFIG', `${where}.labels: ${problem}`);
    out[k] = String(v);
  }
  return { groups: Object.freeze([...new Set(groups ?? [])]), labels: Object.freeze(out) };
}

const yamlGroupSchema = z.object({ baseline: z.string().min(1).optional() }).strict();

/**
 * The `groups:` map of the file: each group's settings, its baseline path resolved against the
 * file's directory. Empty when the file has none.
 */
export function readGroups(doc: ConfigFile | undefined): ReadonlyMap<string, GroupConfig> {
  const groups = new Map<string, GroupConfig>();
  if (doc?.groups === undefined) return groups;
  for (const [name, raw] of Object.entries(doc.groups)) {
    const where = `${doc.file}: groups.${name}`;
    const problem = groupNameProblem(name);
    if (problem !== undefined) throw new ConfigError('GOVTRAIL_CONFIG', `${where}: ${problem}`);
    const g = yamlGroupSchema.safeParse(raw ?? {});
    if (!g.success) {
      const issue = g.error.issues[0];
      const keyPath = issue?.code === 'unrecognized_keys' ? issue.keys.join(', ') : issue?.path.join('.');
      throw new ConfigError('GOVTRAIL_CONFIG', `${where}: ${keyPath ? `${keyPath}: ` : ''}${issue?.message}`);
    }
    const baseline =
      g.data.baseline === undefined ? undefined : path.resolve(path.dirname(doc.file), g.data.baseline);
    groups.set(name, Object.freeze(baseline === undefined ? { name } : { name, baseline }));
  }
  return groups;
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
      if (issue?.code === 'unrecognized_keys') {
        const known = Object.keys(yamlTenantSchema.shape);
        const keys = issue.keys.map((k) => `${k}${suggestion(k, known)}`).join(', ');
        throw new ConfigError('GOVTRAIL_CONFIG', `${where}: ${keys}: not a key of a tenant`);
      }
      const keyPath = issue?.path.join('.');
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
      clientSecretFile: `${where}.client_secret_file`,
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
      [keys.clientSecretFile]: flat.client_secret_FILE,
      [keys.name]: flat.name,
      [keys.pageSize]: flat.page_size,
      [keys.lookback]: flat.lookback,
    };
    const tenant = buildTenant(values, keys, defaults, baseDir);
    if (v.groups === undefined && v.labels === undefined) return tenant;
    return Object.freeze({ ...tenant, ...membershipOf(where, v.groups, v.labels) });
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

/** A page size: a whole number, clamped to what the API serves (10–100). */
function pageSizeSetting(env: Env, name: string): number {
  const raw = nonEmpty(env[name]);
  if (raw === undefined) return DEFAULT_PAGE_SIZE;
  const n = Number(raw.trim());
  if (!Number.isInteger(n)) {
    throw new ConfigError(name, `must be a whole number (clamped to 10–100), got ${JSON.stringify(raw)}`);
  }
  return clampPageSize(n);
}

/** Page size and lookback of tenants that do not set their own (GOVTRAIL_PAGE_SIZE, GOVTRAIL_LOOKBACK). */
export function tenantDefaults(env: Env): { pageSize: number; lookbackMs: number } {
  return {
    pageSize: pageSizeSetting(env, 'GOVTRAIL_PAGE_SIZE'),
    lookbackMs: durationSetting(env, 'GOVTRAIL_LOOKBACK', 15 * 60_000),
  };
}

/**
 * The tenants of the file's `tenants:` list, or the one of the environment, or none. Refuses
 * GOVTRAIL_CLIENT_ID beside a file that lists tenants.
 */
export function readTenants(env: Env, doc: ConfigFile | undefined, cwd: string): TenantConfig[] {
  if (doc?.tenants !== undefined) {
    const tenants = buildFileTenants(doc.file, doc.tenants, tenantDefaults(env));
    if (nonEmpty(env['GOVTRAIL_CLIENT_ID']) !== undefined) {
      throw new ConfigError(
        'GOVTRAIL_CLIENT_ID',
        'is set together with GOVTRAIL_CONFIG: list every tenant in the file instead',
      );
    }
    return tenants;
  }
  if (
    nonEmpty(env['GOVTRAIL_CLIENT_ID']) !== undefined ||
    nonEmpty(env['GOVTRAIL_CLIENT_SECRET']) !== undefined
  ) {
    return [buildTenant(env, ENV_TENANT_KEYS, tenantDefaults(env), cwd)];
  }
  return [];
}
