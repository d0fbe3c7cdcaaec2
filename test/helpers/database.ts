/**
 * A fresh, migrated database per test file (or per test): a clone of the template on a server,
 * or an in-memory embedded database.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { inject } from 'vitest';
import { silentLogger } from '../../src/runtime/logger.js';
import { type Database, openDatabase } from '../../src/store/database.js';
import { migrate } from '../../src/store/migrate.js';

export interface TestDatabase {
  readonly database: Database;
  /** Connection URL when on a server (child processes connect with it); undefined when embedded. */
  readonly url: string | undefined;
  /** Drops the database. */
  close(): Promise<void>;
}

/** True when tests run on a real server, where two connections (two processes) are possible. */
export const onServer = inject('testDatabase') !== undefined;

/** Reason shown when a test needs a server. */
export const NEEDS_SERVER =
  'needs a PostgreSQL server (set TEST_DATABASE_URL): the embedded database is one session';

export async function createTestDatabase(): Promise<TestDatabase> {
  const target = inject('testDatabase');
  if (target === undefined) {
    const database = await openDatabase({ dataDir: 'memory://' });
    await migrate(database, silentLogger);
    return { database, url: undefined, close: () => database.close() };
  }
  const name = `govtrail_t_${process.pid}_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: target.serverUrl });
  await admin.connect();
  try {
    await admin.query(`create database ${name} template ${target.template}`);
  } finally {
    await admin.end();
  }
  const u = new URL(target.serverUrl);
  u.pathname = `/${name}`;
  const url = u.toString();
  const database = await openDatabase({ url });
  return {
    database,
    url,
    async close() {
      await database.close();
      const a = new pg.Client({ connectionString: target.serverUrl });
      await a.connect();
      try {
        await a.query(`drop database if exists ${name} with (force)`);
      } finally {
        await a.end();
      }
    },
  };
}
