/**
 * A backfill leaves the planner statistics current (ANALYZE once committed): without them the
 * planner takes the tables for empty, and the views, dashboards and exports pick plans that are
 * orders of magnitude slower where autovacuum does not run (the embedded database; servers with it off).
 */
import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import type { Session } from '../../src/store/database.js';
import { createHarness, type Harness } from '../helpers/harness.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

/** The planner's row estimate of a govtrail table (pg_class.reltuples). */
async function estimatedRows(db: Session, table: string): Promise<number> {
  const r = await sql<{ n: number }>`
    select reltuples::float8 as n from pg_class
    where oid = ${`govtrail.${table}`}::regclass`.execute(db);
  return Number(r.rows[0]?.n);
}

describe('planner statistics', () => {
  it('a backfill refreshes them; a small incremental run leaves them alone', async () => {
    h = await createHarness({ entries: 300, seed: 3 });
    const db = h.database.db;
    expect(await estimatedRows(db, 'history_entry')).toBeLessThanOrEqual(0);
    expect((await h.sync()).status).toBe('succeeded');
    expect(await estimatedRows(db, 'history_entry')).toBe(300);
    expect(await estimatedRows(db, 'field_change')).toBeGreaterThan(0);

    h.sandbox.appendScenarios();
    const second = await h.sync();
    expect(second.status).toBe('succeeded');
    expect(second.counters.entriesInserted).toBeGreaterThan(0);
    // Below ANALYZE_AFTER_INSERTS: autovacuum's business, not the run's.
    expect(await estimatedRows(db, 'history_entry')).toBe(300);
  });
});
