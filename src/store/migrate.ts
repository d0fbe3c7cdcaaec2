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
import { GovtrailError } from '../core/errors.js';
import type { Logger } from '../runtime/logger.js';
import { packagePath } from '../runtime/paths.js';
import type { Database, Session } from './database.js';
import { requireGrants } from './roles.js';

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

/**
 * After each migration, in its transaction: scopes any view or reader-readable table that migration
 * added or replaced (sql/0030's govtrail.apply_reader_scope; absent before 0030), so that a scoped
 * reader never sees another tenant's rows through an object nobody remembered to scope
 * (docs/design/integrity.md, "Readers who see only their tenants").
 */
async function applyReaderScope(session: Session): Promise<void> {
  const { rows } = await sql<{ present: boolean }>`
    select to_regprocedure('govtrail.apply_reader_scope()') is not null as present`.execute(session);
  if (rows[0]?.present === true) await sql`select govtrail.apply_reader_scope()`.execute(session);
}

/** The oldest PostgreSQL the migrations run on (0004's NULLS NOT DISTINCT needs 15). */
export const MIN_SERVER_VERSION_NUM = 150000;

/** Refuses, before any DDL, a server older than {@link MIN_SERVER_VERSION_NUM}. */
async function requireServerVersion(session: Session): Promise<void> {
  const { rows } = await sql<{ num: number; version: string }>`
    select current_setting('server_version_num')::int as num, current_setting('server_version') as version`.execute(
    session,
  );
  const server = rows[0];
  if (server !== undefined && server.num < MIN_SERVER_VERSION_NUM) {
    throw new GovtrailError(
      'MIGRATION_FAILED',
      `PostgreSQL ${server.version} is too old: govtrail's schema needs PostgreSQL 15 or later (docs/deploy.md); nothing was changed`,
    );
  }
}

export interface MigrateResult {
  readonly applied: readonly string[];
  readonly current: number;
}

/**
 * Whether govtrail ever migrated this database (its migration ledger exists). Read-only; asks the
 * catalogue, which needs no USAGE on the schema, so that a login without grants gets the message
 * naming the missing grant (roles.ts) rather than a permission error here.
 */
export async function hasGovtrailSchema(session: Session): Promise<boolean> {
  const { rows } = await sql<{
    exists: boolean;
  }>`select exists (select from pg_class c join pg_namespace n on n.oid = c.relnamespace
                     where n.nspname = 'govtrail' and c.relname = 'schema_migration') as exists`.execute(
    session,
  );
  return rows[0]?.exists === true;
}

/**
 * The result of a migration run when every file is applied (checksums matching); undefined when
 * something is pending, or the ledger does not exist yet. Read-only.
 */
async function appliedState(
  session: Session,
  migrations: readonly MigrationFile[],
): Promise<MigrateResult | undefined> {
  const { rows } = await sql<{
    exists: boolean;
  }>`select exists (select from pg_class c join pg_namespace n on n.oid = c.relnamespace
                     where n.nspname = 'govtrail' and c.relname = 'schema_migration') as exists`.execute(
    session,
  );
  if (rows[0]?.exists !== true) return undefined;
  // A login without the writer's grants (or NOINHERIT) is told which grant it lacks.
  await requireGrants(session);
  const done = await session
    .selectFrom('govtrail.schema_migration')
    .select(['version', 'checksum'])
    .execute();
  const byVersion = new Map(done.map((m) => [m.version, m.checksum]));
  for (const m of migrations) if (byVersion.get(m.version) !== m.checksum) return undefined;
  return { applied: [], current: migrations.at(-1)?.version ?? 0 };
}

/**
 * Brings the schema up to date. Idempotent: an up-to-date schema is left untouched (no DDL runs),
 * so commands and the worker may run as the writer role; pending migrations need the owner
 * (`govtrail migrate`).
 */
export async function migrate(
  database: Database,
  logger: Logger,
  migrations = readMigrations(),
): Promise<MigrateResult> {
  return database.withSession(async (session) => {
    await sql`select pg_advisory_lock(${MIGRATION_LOCK_KEY.toString()}::bigint)`.execute(session);
    try {
      // Up to date: nothing to do, and no DDL — so a role that may not alter the schema (the
      // writer, docs/deploy.md) starts as well as the owner.
      const upToDate = await appliedState(session, migrations);
      if (upToDate !== undefined) return upToDate;
      await requireServerVersion(session);
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
          await applyReaderScope(session);
          await session
            .insertInto('govtrail.schema_migration')
            .values({ version: m.version, name: m.name, checksum: m.checksum })
            .execute();
          await database.executeScript(session, 'commit');
        } catch (err) {
          await database.executeScript(session, 'rollback').catch(() => {});
          const denied = (err as { code?: string }).code === '42501';
          throw new GovtrailError(
            'MIGRATION_FAILED',
            `${m.name} failed: ${(err as Error).message}${denied ? ' (the schema is behind: run `govtrail migrate` with the owner role, then start again as the writer)' : ''}`,
            { cause: err },
          );
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
