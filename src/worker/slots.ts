/**
 * Schedule slots: the fire times of a cron expression (UTC, an optional seconds field), computed by
 * every replica on its own with cron-parser. A slot is the unit the job engine keys on: one job per
 * tenant, kind and slot, with an id derived from the three, so however many replicas plan a slot only
 * one insert of each job wins.
 */
import { createHash } from 'node:crypto';
import { CronExpressionParser } from 'cron-parser';
import { ConfigError } from '../core/errors.js';
import type { RunKind } from '../store/write/runs.js';

/** Throws {@link ConfigError} naming `setting` unless `expression` is a cron expression cron-parser accepts. */
export function validateSchedule(expression: string, setting: string): void {
  try {
    CronExpressionParser.parse(expression, { tz: 'UTC' });
  } catch (err) {
    throw new ConfigError(setting, `not a valid cron expression: ${expression} (${(err as Error).message})`);
  }
}

/** The latest fire time at or before `at`, or undefined when the expression never fired before it. */
export function slotAtOrBefore(expression: string, at: Date): Date | undefined {
  // prev() is strictly before currentDate: start one millisecond later so `at` itself counts.
  const cron = CronExpressionParser.parse(expression, { tz: 'UTC', currentDate: new Date(at.getTime() + 1) });
  return cron.hasPrev() ? cron.prev().toDate() : undefined;
}

/** The first fire time strictly after `at`, or undefined when there is none. */
export function slotAfter(expression: string, at: Date): Date | undefined {
  const cron = CronExpressionParser.parse(expression, { tz: 'UTC', currentDate: at });
  return cron.hasNext() ? cron.next().toDate() : undefined;
}

/**
 * A tenant's stable place in a slot's spread window (`GOVTRAIL_SPREAD`): a hash of its name mapped
 * onto [0, spreadMs), so a fleet's requests are spread over the window, and each tenant keeps its
 * place from slot to slot (and on every replica).
 */
export function spreadOffsetMs(tenant: string, spreadMs: number): number {
  if (spreadMs <= 0) return 0;
  const n = createHash('sha256').update(`govtrail:spread:${tenant}`).digest().readUInt32BE(0);
  return Math.floor((n / 2 ** 32) * spreadMs);
}

/**
 * The job id of one tenant's run of a kind in one slot: a UUID (version 8, name-based) of sha256 over
 * the three. Every replica derives the same id, and the job table's key lets only the first insert in.
 */
export function slotJobId(kind: RunKind, tenant: string, slot: Date): string {
  const digest = createHash('sha256').update(`govtrail:job:${kind}:${slot.toISOString()}:${tenant}`).digest();
  const bytes = Buffer.from(digest.subarray(0, 16));
  bytes[6] = ((bytes[6] as number) & 0x0f) | 0x80;
  bytes[8] = ((bytes[8] as number) & 0x3f) | 0x80;
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
