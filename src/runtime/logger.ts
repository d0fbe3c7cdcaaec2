/**
 * The pino root logger. JSON lines by default, pretty on a TTY. Secrets never reach the output:
 * known key names are redacted by path, and every secret value registered with
 * {@link registerSecret} is scrubbed from messages and string fields wherever it appears.
 */
import pino, { type Logger } from 'pino';
import { hasSecrets, redact, registerSecret as registerRedaction } from '../core/redact.js';

export type { Logger } from 'pino';

/** Key names whose values are never logged, at the top level or one level down. */
const SECRET_KEYS = [
  'authorization',
  'Authorization',
  'token',
  'accessToken',
  'access_token',
  'clientSecret',
  'client_secret',
  'clientAssertion',
  'client_assertion',
  'assertion',
  'secret',
  'password',
  'webhookSecret',
];

export const REDACT_PATHS = [
  ...SECRET_KEYS,
  ...SECRET_KEYS.map((k) => `*.${k}`),
  'headers.authorization',
  'req.headers.authorization',
  '*.headers.authorization',
];

/**
 * Registers a secret value (client secret, token, assertion, sink key or URL) so it is scrubbed from
 * every log line and every error text, in each of its forms (src/core/redact.ts). A short-lived secret
 * (an access token) passes `until` (epoch ms), after which it is forgotten.
 */
export function registerSecret(value: string | undefined, until?: number): void {
  registerRedaction(value, until);
}

/** Replaces every registered secret in a string, in each of its forms (src/core/redact.ts). */
export function scrubSecrets(text: string): string {
  return redact(text);
}

function scrubValue(value: unknown, depth: number): unknown {
  if (typeof value === 'string') return scrubSecrets(value);
  if (depth > 4 || value === null || typeof value !== 'object') return value;
  if (value instanceof Error) {
    return {
      type: value.name,
      message: scrubSecrets(value.message),
      code: (value as { code?: unknown }).code,
    };
  }
  if (Array.isArray(value)) return value.map((v) => scrubValue(v, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) out[k] = scrubValue(v, depth + 1);
  return out;
}

export interface LoggerOptions {
  level?: string;
  /** Pretty output; defaults to whether stderr is a TTY. */
  pretty?: boolean;
  /** Destination stream (tests capture lines through it). */
  destination?: pino.DestinationStream;
  /** A file the JSON lines are appended to instead of stderr, written synchronously (the demo off a terminal). */
  file?: string;
}

/** Creates the root logger. Logs go to stderr so that command output on stdout stays clean. */
export function createLogger(options: LoggerOptions = {}): Logger {
  const pretty =
    options.pretty ??
    (process.stderr.isTTY === true && options.destination === undefined && options.file === undefined);
  const base: pino.LoggerOptions = {
    level: options.level ?? 'info',
    base: null,
    redact: { paths: REDACT_PATHS, censor: '[REDACTED]' },
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label) => ({ level: label }) },
    serializers: { err: (e: unknown) => scrubValue(errorDetails(e), 0) },
    hooks: {
      logMethod(args, method) {
        if (hasSecrets()) {
          const scrubbed = args.map((a) => scrubValue(a, 0)) as Parameters<typeof method>;
          return method.apply(this, scrubbed);
        }
        return method.apply(this, args);
      },
    },
  };
  if (options.destination !== undefined) return pino(base, options.destination);
  if (options.file !== undefined) {
    return pino(base, pino.destination({ dest: options.file, sync: true, mkdir: true, append: true }));
  }
  if (pretty) {
    return pino({
      ...base,
      transport: {
        target: 'pino-pretty',
        options: {
          destination: 2,
          colorize: true,
          translateTime: 'SYS:HH:MM:ss',
          ignore: 'pid,hostname',
          // One line per record: an alert's nested context would otherwise fill a screen per alert.
          singleLine: true,
        },
      },
    });
  }
  return pino(base, pino.destination({ dest: 2, sync: false }));
}

function errorDetails(e: unknown): unknown {
  if (!(e instanceof Error)) return e;
  const out: Record<string, unknown> = { type: e.name, message: e.message };
  const code = (e as { code?: unknown }).code;
  if (code !== undefined) out['code'] = code;
  const status = (e as { status?: unknown }).status;
  if (status !== undefined) out['status'] = status;
  if (e.cause instanceof Error) out['cause'] = errorDetails(e.cause);
  if (e.stack) out['stack'] = e.stack;
  return out;
}

/** A logger that discards everything (library use and tests). */
export const silentLogger: Logger = pino({ level: 'silent' });
