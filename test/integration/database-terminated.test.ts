/**
 * A session whose backend is terminated (pg_terminate_backend, a server restart) while it is
 * checked out and idle in a transaction, as a run's session is while it pages the source: the
 * process carries on, that session's next query fails, and the pool serves fresh sessions.
 */
import { sql } from 'kysely';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { createTestDatabase, NEEDS_SERVER, onServer, type TestDatabase } from '../helpers/database.js';

let t: TestDatabase | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

describe.skipIf(!onServer)(`a terminated session (${NEEDS_SERVER})`, () => {
  it('fails its own next query without an unhandled error event, and the pool carries on', async () => {
    t = await createTestDatabase();
    const { database, url } = t;
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
    expect(failed).toBeInstanceOf(Error);
    const { rows } = await sql<{ one: number }>`select 1 as one`.execute(database.db);
    expect(rows[0]?.one).toBe(1);
  });
});
