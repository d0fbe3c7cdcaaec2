/**
 * What every sink type's settings.ts is built from: a reader that takes one sink's keys and names
 * them in errors as the operator wrote them (`<file>: sinks[1].url` or `GOVTRAIL_SLACK_WEBHOOK_URL`),
 * and {@link defineSinkSettings}, which ties a type's keys, its environment short form and its
 * validation together. Loads zod and node:fs only: reading settings opens no connection and loads
 * no sink's I/O module.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { ConfigError } from '../../core/errors.js';
import { nonEmpty, parseDurationSetting } from '../../core/setting-values.js';
import { isLoopbackHost } from '../../source/client-config.js';

/** Default time allowed for one delivery, connection to last body byte. */
export const DEFAULT_SINK_TIMEOUT_MS = 10_000;

/** The longest `timeout` a sink may set. */
const MAX_SINK_TIMEOUT_MS = 120_000;

/** Reads one sink's keys, naming them in errors as the operator wrote them. */
export interface SettingReader {
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

/** The settings of one sink type: its short form and how its keys become settings `S`. */
export interface SinkSettingsSpec<S> {
  /**
   * The short form: key → environment variable. Setting any of them (or a secret's `_FILE`
   * variant) configures one sink of the type, named after it.
   */
  readonly env: Readonly<Record<string, string>> | undefined;
  /** Checks the type's own keys (the common ones are read before) and builds its settings. */
  parse(values: Readonly<Record<string, unknown>>, r: SettingReader): S;
}

/**
 * A sink type's settings: `keys` are the keys it accepts besides the common ones (any other key is
 * an error), `env` its short form, `build` the checks and conversions beyond the keys' shapes.
 */
export function defineSinkSettings<S, K extends z.ZodRawShape>(o: {
  keys: K;
  env?: Readonly<Record<string, string>>;
  build: (v: z.output<z.ZodObject<K>>, r: SettingReader) => S;
}): SinkSettingsSpec<S> {
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

/** Fails on the first issue of a zod error, with `unknownKey` as the reason for a key not allowed. */
export function failOnIssue(error: z.ZodError, r: SettingReader, unknownKey: string): never {
  const issue = error.issues[0];
  if (issue?.code === 'unrecognized_keys') r.fail(String(issue.keys[0]), unknownKey);
  r.fail(issue?.path.join('.') ?? '', issue?.message ?? 'invalid');
}

/** A key holding text. */
export const text = z.string();
/** A key holding a number, or text to read as one. */
export const numberKey = z.union([z.number(), z.string()]);
/** A key holding true or false, or text to read as one. */
export const booleanKey = z.union([z.boolean(), z.string()]);
/** The `timeout` every sink may set: a duration such as `10s`, or seconds. */
export const timeoutKeys = { timeout: z.union([z.string(), z.number()]).optional() };

/** `reject_unauthorized`: true unless the key says false. */
export function rejectUnauthorizedSetting(value: boolean | string | undefined, r: SettingReader): boolean {
  if (value === undefined) return true;
  const raw = String(value).trim().toLowerCase();
  if (raw !== 'true' && raw !== 'false') r.fail('reject_unauthorized', 'must be true or false');
  return raw === 'true';
}

/**
 * A reader whose messages name each key with `name`, which resolves `*_file` paths against
 * `baseDir`, and which adds every secret it reads to `secrets` (for the logger's redaction).
 */
export function settingReader(o: {
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
