/**
 * Readers of one setting each: a variable of the environment (or of the map standing in for it),
 * checked and converted, failing with a {@link ConfigError} that names it. Also `.env` and the
 * recording of the variables read (config/warnings.ts).
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parseEnv } from 'node:util';
import { z } from 'zod';
import { validateCron } from '../core/cron.js';
import { ConfigError } from '../core/errors.js';
import { type Env, nonEmpty, parseDurationSetting } from '../core/setting-values.js';

/**
 * Reads `NAME`, or the file named by `NAME_FILE` (trailing newline removed). `fileName` is the
 * name of the file setting where it is not `NAME_FILE` (a YAML key: `client_secret_file`).
 */
export function secretOrFile(
  env: Env,
  name: string,
  baseDir: string,
  fileName = `${name}_FILE`,
): string | undefined {
  const direct = nonEmpty(env[name]);
  const file = nonEmpty(env[fileName]);
  if (direct !== undefined && file !== undefined) {
    throw new ConfigError(name, `set either ${name} or ${fileName}, not both`);
  }
  if (file !== undefined) {
    const p = path.resolve(baseDir, file);
    try {
      return readFileSync(p, 'utf8').replace(/\r?\n$/, '');
    } catch (err) {
      throw new ConfigError(fileName, `cannot read ${p}: ${(err as Error).message}`);
    }
  }
  return direct;
}

/**
 * A cron expression of 5 or 6 fields, each within its range (steps included). The fallback is
 * govtrail's own default, checked by its tests rather than at every start: the cron parser's
 * first use costs a start 40 ms (its time library reads the system locale).
 */
export function cronSetting(env: Env, name: string, fallback: string): string {
  const value = nonEmpty(env[name])?.trim();
  if (value === undefined) return fallback;
  validateCron(value, name);
  return value;
}

export function intSetting(env: Env, name: string, fallback: number, min: number, max: number): number {
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
export function byteSizeSetting(env: Env, name: string, fallback: number): number {
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

export function durationSetting(env: Env, name: string, fallbackMs: number): number {
  const raw = nonEmpty(env[name]);
  if (raw === undefined) return fallbackMs;
  const ms = parseDurationSetting(raw);
  if (ms === undefined) {
    throw new ConfigError(name, `must be a duration such as 15m, 90s, 1h or 0, got ${JSON.stringify(raw)}`);
  }
  return ms;
}

export function boolSetting(env: Env, name: string, fallback: boolean): boolean {
  const raw = nonEmpty(env[name])?.trim().toLowerCase();
  if (raw === undefined) return fallback;
  if (['1', 'true', 'yes', 'on'].includes(raw)) return true;
  if (['0', 'false', 'no', 'off'].includes(raw)) return false;
  throw new ConfigError(name, `must be true or false, got ${JSON.stringify(raw)}`);
}

/** A runbook link template: an http(s) URL once `{rule_id}` is filled in. */
export function runbookUrlSetting(env: Env, name: string): string | undefined {
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

/** `env`, reporting the name of every variable looked up in it. */
export function recordReads(env: Env, onRead: (variable: string) => void): Env {
  return new Proxy(env, {
    get(target, name) {
      if (typeof name === 'string') onRead(name);
      return Reflect.get(target, name);
    },
  });
}
