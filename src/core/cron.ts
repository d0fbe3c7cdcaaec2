/**
 * Checks a cron expression beyond what the cron parser validates: a step larger than its field's
 * range (`*\/70 * * * *`) is accepted there and then fires once per enclosing period (hourly)
 * instead of being refused. Such a schedule is a typo to report, not a schedule to run.
 */
import { CronExpressionParser } from 'cron-parser';
import { ConfigError } from './errors.js';

/** The fields of a 6-field expression (seconds first); a 5-field one starts at minutes. */
const FIELDS = [
  { name: 'second', min: 0, max: 59 },
  { name: 'minute', min: 0, max: 59 },
  { name: 'hour', min: 0, max: 23 },
  { name: 'day-of-month', min: 1, max: 31 },
  { name: 'month', min: 1, max: 12 },
  { name: 'day-of-week', min: 0, max: 7 },
] as const;

/**
 * Throws {@link ConfigError} naming `setting` unless `expression` is a usable schedule: 5 or 6
 * fields, each within its range (steps included), and one cron-parser reads. The one check of a
 * schedule, wherever it comes from (the environment, the YAML file, the job engine's options).
 */
export function validateCron(expression: string, setting: string): void {
  const fields = expression.split(/\s+/);
  if (fields.length < 5 || fields.length > 6) {
    throw new ConfigError(
      setting,
      `must be a cron expression of 5 or 6 fields, got ${JSON.stringify(expression)}`,
    );
  }
  const problem = cronProblem(expression);
  if (problem !== undefined) throw new ConfigError(setting, `${JSON.stringify(expression)}: ${problem}`);
}

/**
 * Why `expression` is not a usable schedule, or undefined when it is. The expression has 5 or 6
 * fields (the caller checks the count).
 */
export function cronProblem(expression: string): string | undefined {
  const parts = expression.trim().split(/\s+/);
  const fields = parts.length === 6 ? FIELDS : FIELDS.slice(1);
  for (const [i, text] of parts.entries()) {
    const field = fields[i];
    if (field === undefined) break;
    for (const item of text.split(',')) {
      const slash = item.indexOf('/');
      if (slash === -1) continue;
      const step = item.slice(slash + 1);
      const span = field.max - field.min;
      if (!/^\d+$/.test(step) || Number(step) < 1 || Number(step) > span) {
        return `the ${field.name} field's step "/${step}" must be a whole number from 1 to ${span} (the field runs ${field.min}–${field.max})`;
      }
    }
  }
  try {
    CronExpressionParser.parse(expression, { tz: 'UTC' });
  } catch {
    return 'a field holds a value out of its range or not understood';
  }
  return undefined;
}
