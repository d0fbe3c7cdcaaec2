/**
 * Argument parsers shared by every command, for commander's `argParser`: a bad value becomes an
 * InvalidArgumentError, which commander reports as one line naming the option, and the CLI turns
 * into exit code 2 (never a stack trace, never a SQL error from a value that reached a query).
 */
import { existsSync, statSync } from 'node:fs';
import path from 'node:path';
import { type Command, InvalidArgumentError } from 'commander';
import { GovtrailError } from '../core/errors.js';
import { parseTimestamp } from '../core/normalise/time.js';

/** A whole number in [min, max]: `-5`, `abc`, `1.5` and `` are refused. */
export function integerArg(min: number, max: number = Number.MAX_SAFE_INTEGER): (text: string) => number {
  return (text) => {
    const n = Number(text.trim());
    if (text.trim() === '' || !Number.isSafeInteger(n) || n < min || n > max) {
      const range = max === Number.MAX_SAFE_INTEGER ? `of at least ${min}` : `from ${min} to ${max}`;
      throw new InvalidArgumentError(`expected a whole number ${range}, got ${JSON.stringify(text)}`);
    }
    return n;
  };
}

/** A group or tenant name as an option value: refused when it could never name one. */
export function nameArg(kind: string): (text: string) => string {
  return (text) => {
    if (!/^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/.test(text))
      throw new InvalidArgumentError(
        `a ${kind} name is 1–128 characters of letters, digits, ".", "_", ":" or "-", got ${JSON.stringify(text)}`,
      );
    return text;
  };
}

/**
 * The tenant selection shared by every command that works on tenants: `-t, --tenant NAME` or
 * `-g, --group G` (exclusive; app/select-tenants.ts reads them). `what` completes "… only this
 * tenant" in the help, e.g. "sync".
 */
export function tenantSelection(command: Command, what: string, defaultTenant?: string): Command {
  return command
    .option(
      '-t, --tenant <name>',
      `${what} only this tenant${defaultTenant === undefined ? '' : ` (${defaultTenant})`}`,
    )
    .option(
      '-g, --group <name>',
      `${what} the tenants of this group instead (their membership now: govtrail tenants list --group NAME)`,
      nameArg('group'),
    );
}

/** A whole number of at least 1 (a limit, a count). */
export const positiveIntegerArg = integerArg(1);

/** The time an option names: RFC 3339, or a plain date (midnight UTC); undefined when it is not one. */
export function parseTime(text: string): Date | undefined {
  return parseTimestamp(/^\d{4}-\d{2}-\d{2}$/.test(text) ? `${text}T00:00:00Z` : text)?.date;
}

/** argParser of a time option: RFC 3339, or a plain date (midnight UTC). */
export function timeArg(text: string): Date {
  const t = parseTime(text);
  if (t === undefined) {
    throw new InvalidArgumentError(
      `not a time: ${JSON.stringify(text)} (use RFC 3339, e.g. 2025-06-01T12:00:00Z, or a date)`,
    );
  }
  return t;
}

/** Parses a time option inside an action (where argParser cannot be used); a USAGE error otherwise. */
export function parseTimeOption(option: string, text: string): Date {
  const t = parseTime(text);
  if (t === undefined) {
    throw new GovtrailError(
      'USAGE',
      `${option}: not a time: ${JSON.stringify(text)} (use RFC 3339, e.g. 2025-06-01T12:00:00Z, or a date)`,
    );
  }
  return t;
}

/**
 * Checks the file an export is about to write: a name is given, its directory exists, and it is not
 * itself a directory. The export writes FILE.partial and renames it, so these would otherwise
 * surface only at the end, as a stack trace.
 * @throws GovtrailError `USAGE` naming the option
 */
export function checkOutputFile(option: string, out: string): void {
  if (out.trim() === '') throw new GovtrailError('USAGE', `${option}: a file name is required`);
  const file = path.resolve(out);
  const dir = path.dirname(file);
  if (!existsSync(dir) || !statSync(dir).isDirectory()) {
    throw new GovtrailError('USAGE', `${option}: directory ${JSON.stringify(dir)} does not exist`);
  }
  if (existsSync(file) && statSync(file).isDirectory()) {
    throw new GovtrailError('USAGE', `${option}: ${JSON.stringify(file)} is a directory, not a file`);
  }
}

/**
 * commander's report of a value an argParser refused (`error: option '--limit <n>' argument '-3'
 * is invalid. expected …`) in govtrail's own one-line form (`govtrail: --limit: expected …`), so
 * that every bad argument reads alike whether an argParser or the action refused it. Other
 * commander messages pass unchanged.
 */
export function formatCommanderError(message: string): string {
  const m =
    /^error: option '(-[^' ]+(?:, --[^' ]+)?)(?: [<[][^']*)?' argument '[^\n]*' is invalid\. ([^\n]*)\n?$/.exec(
      message,
    );
  if (m === null) return message;
  const flag = (m[1] as string).split(', ').at(-1) as string;
  return `govtrail: ${flag}: ${m[2]}\n`;
}
