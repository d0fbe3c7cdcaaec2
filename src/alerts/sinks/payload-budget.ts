/**
 * Size budgets of destinations that refuse large messages (PagerDuty 512 KB, Teams about 28 KB).
 * A message is built at decreasing levels of detail until its JSON fits: long values are cut and
 * long lists shortened rather than the delivery failing. Pure.
 */
import { truncate } from '../../core/format.js';

/** How much detail one build may use: characters per value and items per list. */
export interface Detail {
  readonly text: number;
  readonly items: number;
}

/** From everything to the bare minimum; the last level is used even when it does not fit. */
export const DETAIL_LEVELS: readonly Detail[] = [
  { text: Number.POSITIVE_INFINITY, items: Number.POSITIVE_INFINITY },
  { text: 2000, items: 100 },
  { text: 500, items: 40 },
  { text: 120, items: 15 },
  { text: 40, items: 5 },
];

/** Bytes of `value` as UTF-8 JSON. */
export function jsonBytes(value: unknown): number {
  return Buffer.byteLength(JSON.stringify(value), 'utf8');
}

/**
 * Returns `build(detail)` at the most detailed level whose JSON is at most `budgetBytes`, together
 * with whether anything had to be cut.
 */
export function fitToBudget<T>(
  budgetBytes: number,
  build: (detail: Detail) => T,
): { readonly value: T; readonly cut: boolean } {
  let value: T | undefined;
  for (const [i, detail] of DETAIL_LEVELS.entries()) {
    value = build(detail);
    if (jsonBytes(value) <= budgetBytes) return { value, cut: i > 0 };
  }
  return { value: value as T, cut: true };
}

/** `text` cut to the level's length. */
export function clipText(text: string, detail: Detail): string {
  return Number.isFinite(detail.text) ? truncate(text, detail.text) : text;
}

/**
 * A JSON value with every string cut to the level's length and every list and object shortened to
 * its number of items (a marker says how many were left out), for free-form details.
 */
export function clipValue(value: unknown, detail: Detail, depth = 0): unknown {
  if (typeof value === 'string') return clipText(value, detail);
  if (value === null || typeof value !== 'object') return value;
  if (depth > 8) return '…';
  if (Array.isArray(value)) {
    const kept = value.slice(0, detail.items).map((v) => clipValue(v, detail, depth + 1));
    if (value.length > kept.length) kept.push(`… ${value.length - kept.length} more`);
    return kept;
  }
  const entries = Object.entries(value);
  const out: Record<string, unknown> = {};
  for (const [k, v] of entries.slice(0, detail.items)) out[k] = clipValue(v, detail, depth + 1);
  if (entries.length > detail.items) out['…'] = `${entries.length - detail.items} more`;
  return out;
}

/** The first `detail.items` of a list, and how many were left out. */
export function clipList<T>(list: readonly T[], detail: Detail): { kept: readonly T[]; omitted: number } {
  const kept = list.slice(0, detail.items);
  return { kept, omitted: list.length - kept.length };
}
