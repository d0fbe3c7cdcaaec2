/**
 * Applies the numbered SQL files of sql/ in order. Each file runs in its own transaction, all of
 * them under one advisory lock so that replicas starting together migrate once. A file that fails
 * stops start-up (nothing of it is applied); an applied file that was edited afterwards is refused,
 * since migrations are forward-only.
 */
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { sql } from 'kysely';
import { GovtrailError } from '../errors.js';
import type { Logger } from '../logger.js';
import { packagePath } from '../paths.js';
import type { Database } from './database.js';

/** Advisory lock key of the migration runner ("govtrail" in ASCII, as a bigint). */
const MIGRATION_LOCK_KEY = 0x676f767472616966n;

export interface MigrationFile {
  readonly version: number;
  readonly name: string;
  readonly script: string;
  readonly checksum: string;
}

/** Reads sql/NNNN_name.sql files in version order. */
export function readMigrations(dir = packagePath('sql')): MigrationFile[] {
  const files = readdirSync(dir)
    .filter((f) => /^\d{4}_[\w-]+\.sql$/.test(f))
    .sort();
  const seen = new Set<number>();
  return files.map((file) => {
    const version = Number(file.slice(0, 4));
    if (seen.has(version))
      throw new GovtrailError('MIGRATION_FAILED', `two migrations share version ${version}`);
    seen.add(version);
    const script = readFileSync(path.join(dir, file), 'utf8');
    return { version, name: file, script, checksum: createHash('sha256').update(script).digest('hex') };
  });
}

export interface MigrateResult {
  readonly applied: readonly string[];
  readonly current: number;
}

/** Brings the schema up to date. Idempotent. */
export async function migrate(
  database: Database,
  logger: Logger,
  migrations = readMigrations(),
): Promise<MigrateResult> {
  return database.withSession(async (session) => {
    await sql`select pg_advisory_lock(${MIGRATION_LOCK_KEY.toString()}::bigint)`.execute(session);
    try {
      await database.executeScript(
        session,
        `create schema if not exists govtrail;
         create table if not exists govtrail.schema_migration (
           version integer primary key,
           name text not null,
           checksum text not null,
           applied_at timestamptz not null default now()
         );`,
      );
      const done = await session.selectFrom('govtrail.schema_migration').selectAll().execute();
      const byVersion = new Map(done.map((m) => [m.version, m]));
      const applied: string[] = [];
      for (const m of migrations) {
        const prior = byVersion.get(m.version);
        if (prior !== undefined) {
          if (prior.checksum !== m.checksum) {
            throw new GovtrailError(
              'MIGRATION_FAILED',
              `${m.name} was edited after it was applied (checksum differs): migrations are forward-only, add a new file instead`,
            );
          }
          continue;
        }
        try {
          await database.executeScript(session, 'begin');
          await database.executeScript(session, m.script);
          await session
            .insertInto('govtrail.schema_migration')
            .values({ version: m.version, name: m.name, checksum: m.checksum })
            .execute();
          await database.executeScript(session, 'commit');
        } catch (err) {
          await database.executeScript(session, 'rollback').catch(() => {});
          throw new GovtrailError('MIGRATION_FAILED', `${m.name} failed: ${(err as Error).message}`, {
            cause: err,
          });
        }
        logger.info({ migration: m.name }, 'applied migration');
        applied.push(m.name);
      }
      const current = migrations.at(-1)?.version ?? 0;
      return { applied, current };
    } finally {
      await sql`select pg_advisory_unlock(${MIGRATION_LOCK_KEY.toString()}::bigint)`
        .execute(session)
        .catch(() => {});
    }
  });
}
