/**
 * A session whose backend is terminated (pg_terminate_backend, a server restart) while it is
 * checked out and idle in a transaction, as a run's session is while it pages the source: the
 * process carries on, that session's next query fails, and the pool serves fresh sessions.
 */
import { sql } from 'kysely';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { createTestDatabase, NEEDS_SERVER, onServer, type TestDatabase } from '../helpers/database.js';
import { createHarness, type Harness } from '../helpers/harness.js';

let t: TestDatabase | undefined;
let h: Harness | undefined;
afterEach(async () => {
  await t?.close();
  await h?.close();
  t = undefined;
  h = undefined;
});

/** Terminates the backends of `database` idle in a transaction (a run paging the source); how many. */
async function terminateIdleInTransaction(url: string): Promise<number> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    const { rows } = await c.query<{ n: number }>(
      `select count(pg_terminate_backend(pid))::int as n from pg_stat_activity
       where datname = current_database() and pid <> pg_backend_pid() and state like 'idle in transaction%'`,
    );
    return rows[0]?.n ?? 0;
  } finally {
    await c.end();
  }
}

describe.skipIf(!onServer)(`a terminated session (${NEEDS_SERVER})`, () => {
  it('fails its own next query without an unhandled error event, and the pool carries on', async () => {
    t = await createTestDatabase();
    const { database, url } = t;
    // What would kill the process: an 'error' event nobody listens to, thrown as uncaught.
    const uncaught: unknown[] = [];
    const onUncaught = (err: unknown) => uncaught.push(err);
    process.on('uncaughtException', onUncaught);
    const failed = await database.withSession(async (s) => {
      await sql`begin`.execute(s);
      const { rows } = await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(s);
      const killer = new pg.Client({ connectionString: url });
      await killer.connect();
      try {
        await killer.query('select pg_terminate_backend($1)', [rows[0]?.pid]);
      } finally {
        await killer.end();
      }
      // The error event reaches the client while no query is in flight.
      await new Promise((resolve) => setTimeout(resolve, 300));
      return sql`select 1`.execute(s).then(
        () => undefined,
        (err: unknown) => err as Error,
      );
    });
    process.off('uncaughtException', onUncaught);
    expect(uncaught).toEqual([]);
    expect(failed).toBeInstanceOf(Error);
    const { rows } = await sql<{ one: number }>`select 1 as one`.execute(database.db);
    expect(rows[0]?.one).toBe(1);
  });

  it('a run whose session is terminated while it pages fails as DATABASE, is closed as failed, and the next run succeeds', async () => {
    h = await createHarness({ entries: 300, seed: 4 });
    const url = h.testDb.url as string;
    // The third page is slow: the run sits idle in its transaction meanwhile.
    h.sandbox.faults.add({ kind: 'slow', afterRequests: 2, delayMs: 2000 });
    const running = h.sync({ tenant: { pageSize: 50 } });
    let killed = 0;
    for (let i = 0; i < 60 && killed === 0; i++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      killed = await terminateIdleInTransaction(url);
    }
    expect(killed).toBe(1);
    const failed = await running;
    expect(failed.status).toBe('failed');
    expect(failed.error?.code).toBe('DATABASE');
    const ledger = async () =>
      (
        await sql<{ status: string; error_code: string | null }>`
          select status, error_code from govtrail.sync_run order by run_id`.execute(h?.database.db as never)
      ).rows;
    // Closed now, on another session: not left running for the next run to find.
    expect(await ledger()).toEqual([{ status: 'failed', error_code: 'DATABASE' }]);
    const next = await h.sync({ tenant: { pageSize: 50 } });
    expect(next.status).toBe('succeeded');
    expect(next.counters.entriesInserted).toBe(300);
    expect((await ledger()).map((r) => r.status)).toEqual(['failed', 'succeeded']);
  });
});
