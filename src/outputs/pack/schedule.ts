/**
 * The schedule interval behind runs.csv's gap rule ("no successful run for longer than two
 * intervals"), derived from the worker's cron expression. Pure apart from cron-parser.
 *
 * A cron expression need not fire at a constant rate (`0 9-17 * * 1-5` is hourly on weekdays and
 * silent at night and at weekends). The interval is the *longest* wait between two consecutive fire
 * times over a reference year, so a pause the schedule itself prescribes is never flagged as a gap;
 * for the usual `*\/N * * * *` it is simply N minutes.
 */
import { type CronExpression, CronExpressionParser } from 'cron-parser';

const DAY_MS = 86_400_000;
/** A leap year starting on a Monday, so weekly and yearly patterns are all seen. */
const REFERENCE_YEAR_START = Date.UTC(2024, 0, 1);
const REFERENCE_DAYS = 366;

/**
 * The longest wait in milliseconds between consecutive fire times of `expression` (UTC), or
 * undefined when it fires fewer than twice a year (or is not a valid expression).
 */
export function scheduleIntervalMs(expression: string): number | undefined {
  let cron: CronExpression;
  try {
    cron = CronExpressionParser.parse(expression, { tz: 'UTC' });
  } catch {
    return undefined;
  }
  const { fields } = cron;
  const sorted = (values: ReadonlyArray<number | string>) => values.map(Number).sort((a, b) => a - b);
  // The times of day the schedule fires on a day it fires at all, in ms after midnight, ascending.
  const times: number[] = [];
  for (const h of sorted(fields.hour.values))
    for (const m of sorted(fields.minute.values))
      for (const s of sorted(fields.second.values)) times.push((h * 3600 + m * 60 + s) * 1000);
  const first = times[0];
  const last = times.at(-1);
  if (first === undefined || last === undefined) return undefined;

  let longest = 0;
  for (let i = 1; i < times.length; i++)
    longest = Math.max(longest, (times[i] as number) - (times[i - 1] as number));

  // Which days fire is cron-parser's own decision (day of month, month, day of week, `L`, `#`):
  // ask its matcher once per day, at the day's first fire time.
  let days = 0;
  let previousDay: number | undefined;
  for (let d = 0; d < REFERENCE_DAYS; d++) {
    const day = REFERENCE_YEAR_START + d * DAY_MS;
    if (!cron.includesDate(new Date(day + first))) continue;
    days++;
    if (previousDay !== undefined) longest = Math.max(longest, day + first - (previousDay + last));
    previousDay = day;
  }
  if (days === 0 || (days === 1 && times.length === 1)) return undefined;
  return longest;
}
