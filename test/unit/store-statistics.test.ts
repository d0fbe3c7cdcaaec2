/**
 * The ANALYZE decision of a run (store/statistics.ts): autovacuum's threshold, 50 + 10 % of the
 * table, with never-analyzed or empty tables analyzed as soon as they hold anything.
 */
import { describe, expect, it } from 'vitest';
import { needsAnalyze, tablesToAnalyze } from '../../src/store/statistics.js';

const change = (estimatedRows: number, changedRows: number) =>
  ({ table: 'history_entry', estimatedRows, changedRows }) as const;

describe('needsAnalyze', () => {
  it('analyzes a never-analyzed or empty table as soon as it has changes', () => {
    expect(needsAnalyze(change(-1, 1))).toBe(true);
    expect(needsAnalyze(change(0, 1))).toBe(true);
    expect(needsAnalyze(change(-1, 0))).toBe(false);
  });

  it('otherwise waits for 50 + 10 % of the table to have changed', () => {
    expect(needsAnalyze(change(1000, 149))).toBe(false);
    expect(needsAnalyze(change(1000, 150))).toBe(true);
    expect(needsAnalyze(change(30, 52))).toBe(false);
    expect(needsAnalyze(change(30, 53))).toBe(true);
    expect(needsAnalyze(change(1_000_000, 60))).toBe(false);
    expect(needsAnalyze(change(1_000_000, 100_050))).toBe(true);
  });

  it('lists the tables to analyze in the order given', () => {
    expect(
      tablesToAnalyze([
        { table: 'history_entry', estimatedRows: 1000, changedRows: 60 },
        { table: 'field_change', estimatedRows: -1, changedRows: 3 },
        { table: 'alert', estimatedRows: 10, changedRows: 60 },
      ]),
    ).toEqual(['field_change', 'alert']);
  });
});
