/**
 * A run leaves the planner statistics current where autovacuum does not run (the embedded database;
 * servers with it off): without them the planner takes the tables for empty, and the views,
 * dashboards and exports pick plans that are orders of magnitude slower. It does so from the size
 * of the change relative to the table (store/statistics.ts), so that a fleet's onboarding does not
 * ANALYZE the whole store once per tenant (issue 18): a backfill into empty tables is analyzed, a
 * small tenant's backfill into a large store is not, and small changes are analyzed once they add
 * up to a tenth of the table.
 */
import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { type Sandbox, startSandbox } from '../../src/sandbox/index.js';
import type { Session } from '../../src/store/database.js';
import { createHarness, type Harness } from '../helpers/harness.js';

let h: Harness | undefined;
const extra: Sandbox[] = [];
afterEach(async () => {
  await h?.close();
  h = undefined;
  for (const s of extra.splice(0)) await s.close();
});

/** The planner's row estimate of a govtrail table (pg_class.reltuples). */
async function estimatedRows(db: Session, table: string): Promise<number> {
  const r = await sql<{ n: number }>`
    select reltuples::float8 as n from pg_class
    where oid = ${`govtrail.${table}`}::regclass`.execute(db);
  return Number(r.rows[0]?.n);
}

/** A tenant of its own sandbox serving `entries` entries, synced into the harness's database. */
async function syncSmallTenant(harness: Harness, name: string, entries: number, seed: number) {
  const sandbox = await startSandbox({ entries, seed });
  extra.push(sandbox);
  return harness.sync({
    tenant: {
      name,
      baseUrl: sandbox.baseUrl,
      clientId: sandbox.credentials.secret.clientId,
      clientSecret: sandbox.credentials.secret.clientSecret,
    },
  });
}

/**
 * Waits until the statistics system has been told of the changes committed so far (sessions report
 * them when idle, within seconds): a condition, not a timing. Fails after 60 s.
 */
async function untilReported(db: Session, table: string, atLeast: number): Promise<void> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const r = await sql<{ n: number }>`
      select n_mod_since_analyze::float8 as n from pg_stat_user_tables
      where relid = ${`govtrail.${table}`}::regclass`.execute(db);
    if (Number(r.rows[0]?.n) >= atLeast) return;
    if (Date.now() > deadline) throw new Error(`${table}: fewer than ${atLeast} changes reported`);
    await sql`select pg_stat_clear_snapshot()`.execute(db);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

describe('planner statistics', () => {
  it('a backfill into empty tables refreshes them; a small incremental run leaves them alone', async () => {
    h = await createHarness({ entries: 300, seed: 3 });
    const db = h.database.db;
    expect(await estimatedRows(db, 'history_entry')).toBeLessThanOrEqual(0);
    expect((await h.sync()).status).toBe('succeeded');
    expect(await estimatedRows(db, 'history_entry')).toBe(300);
    expect(await estimatedRows(db, 'field_change')).toBeGreaterThan(0);
    // Analyzed on a connection of its own on a server, beside the rest: analyzed all the same.
    expect(await estimatedRows(db, 'settings_snapshot')).toBeGreaterThan(0);
    expect(await estimatedRows(db, 'history_annotation')).toBeGreaterThan(0);

    h.sandbox.appendScenarios();
    const second = await h.sync();
    expect(second.status).toBe('succeeded');
    expect(second.counters.entriesInserted).toBeGreaterThan(0);
    // Fewer than 50 + 10 % of the table: not worth an ANALYZE.
    expect(second.counters.entriesInserted).toBeLessThan(80);
    expect(await estimatedRows(db, 'history_entry')).toBe(300);
  });

  it('the ANALYZE samples no whole JSON document: raw, extra_fields, old_value and new_value get no statistics', async () => {
    h = await createHarness({ entries: 300, seed: 3 });
    expect((await h.sync()).status).toBe('succeeded');
    const r = await sql<{ table: string; column: string }>`
      select tablename as table, attname as column from pg_stats
      where schemaname = 'govtrail'
        and tablename in ('history_entry', 'settings_snapshot', 'field_change')`.execute(h.database.db);
    const columns = r.rows.map((x) => `${x.table}.${x.column}`);
    // The other columns of those tables have theirs (the ANALYZE ran).
    expect(columns).toEqual(expect.arrayContaining(['history_entry.entry_id', 'field_change.field']));
    for (const c of [
      'history_entry.raw',
      'settings_snapshot.extra_fields',
      'field_change.old_value',
      'field_change.new_value',
    ])
      expect(columns).not.toContain(c);
  });

  it('a backfill of a few entries into empty tables still gets statistics', async () => {
    h = await createHarness({ entries: 20, seed: 4 });
    const db = h.database.db;
    const run = await h.sync();
    expect(run.status).toBe('succeeded');
    expect(run.counters.entriesInserted).toBe(20);
    expect(await estimatedRows(db, 'history_entry')).toBe(20);
  });

  it("a small tenant's backfill into a large store does not ANALYZE it; small changes do once they add up", async () => {
    h = await createHarness({ entries: 1000, seed: 5 });
    const db = h.database.db;
    expect((await h.sync()).status).toBe('succeeded');
    expect(await estimatedRows(db, 'history_entry')).toBe(1000);

    // 60 entries against a threshold of 50 + 100: the new tenant's first run leaves the store alone.
    const first = await syncSmallTenant(h, 'small-1', 60, 11);
    expect(first.status).toBe('succeeded');
    expect(first.isBackfill).toBe(true);
    expect(first.counters.entriesInserted).toBe(60);
    expect(await estimatedRows(db, 'history_entry')).toBe(1000);

    // A second one brings the changes since the last ANALYZE to 120 of 150: still alone.
    await untilReported(db, 'history_entry', 60);
    expect((await syncSmallTenant(h, 'small-2', 60, 12)).status).toBe('succeeded');
    expect(await estimatedRows(db, 'history_entry')).toBe(1000);

    // The third reaches 180 ≥ 150: the store is analyzed, with every tenant's rows counted.
    await untilReported(db, 'history_entry', 120);
    expect((await syncSmallTenant(h, 'small-3', 60, 13)).status).toBe('succeeded');
    expect(await estimatedRows(db, 'history_entry')).toBe(1180);
  });
});
