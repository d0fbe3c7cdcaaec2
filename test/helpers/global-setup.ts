/**
 * Chooses the test database once for the whole run:
 * 1. TEST_DATABASE_URL: a PostgreSQL server; a migrated template database is created here and
 *    every test file clones it (CREATE DATABASE … TEMPLATE), so files never share state;
 * 2. else a testcontainers PostgreSQL where a Docker engine answers;
 * 3. else the embedded database (PGlite), migrated per test file; tests that need two
 *    connections are skipped there with a visible reason.
 */
import { existsSync } from 'node:fs';
import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { silentLogger } from '../../src/runtime/logger.js';
import { openDatabase } from '../../src/store/database.js';
import { migrate } from '../../src/store/migrate.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Server URL (any database on it) and the template to clone; undefined → embedded. */
    testDatabase: { serverUrl: string; template: string } | undefined;
  }
}

function withDatabase(url: string, db: string): string {
  const u = new URL(url);
  u.pathname = `/${db}`;
  return u.toString();
}

async function dockerAvailable(): Promise<boolean> {
  return process.env['DOCKER_HOST'] !== undefined || existsSync('/var/run/docker.sock');
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  console.info(`tests run on Node.js ${process.version}`);
  let serverUrl = process.env['TEST_DATABASE_URL'];
  let stopContainer: (() => Promise<unknown>) | undefined;
  if (serverUrl === undefined && (await dockerAvailable())) {
    try {
      const { PostgreSqlContainer } = await import('@testcontainers/postgresql');
      const container = await new PostgreSqlContainer('postgres:15-alpine').start();
      serverUrl = container.getConnectionUri();
      stopContainer = () => container.stop();
    } catch (err) {
      console.warn(
        `testcontainers could not start PostgreSQL (${(err as Error).message}); using the embedded database`,
      );
    }
  }
  if (serverUrl === undefined) {
    console.warn(
      'TEST_DATABASE_URL is not set and no Docker engine answers: tests run on the embedded database',
    );
    project.provide('testDatabase', undefined);
    return async () => {};
  }
  const template = `govtrail_tpl_${process.pid}`;
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  await admin.query(`drop database if exists ${template}`);
  await admin.query(`create database ${template}`);
  const database = await openDatabase({ url: withDatabase(serverUrl, template) });
  try {
    await migrate(database, silentLogger);
  } finally {
    await database.close();
  }
  project.provide('testDatabase', { serverUrl, template });
  return async () => {
    // Clones may still be closing; drop whatever this run created.
    const { rows } = await admin.query<{ datname: string }>(
      `select datname from pg_database where datname like $1 or datname = $2`,
      [`govtrail_t_${process.pid}_%`, template],
    );
    for (const r of rows) await admin.query(`drop database if exists ${r.datname} with (force)`);
    await admin.end();
    await stopContainer?.();
  };
}
