/**
 * Which of the two roles of docs/deploy.md a connection is: the schema owner (or a superuser), who
 * can alter tables and switch the append-only triggers off, or a writer, who cannot; and whether
 * the login holds the grants the commands need.
 */
import { sql } from 'kysely';
import { ConfigError, GovtrailError } from '../core/errors.js';
import type { Session } from './database.js';

/**
 * True when the login could act as the owner: it is, or is a member of (inherited or not, so it
 * could `set role`), a role that is a superuser, bypasses row security, may create roles (and so
 * grant itself any non-superuser role), or owns schema govtrail or one of its tables. Every role
 * of the login counts, not only the one in use: `session_user`, not `current_user`.
 */
export async function connectedAsOwner(db: Session): Promise<boolean> {
  const { rows } = await sql<{ owner: boolean }>`
    select exists (
      select from pg_roles r
      where pg_has_role(session_user, r.oid, 'MEMBER')
        and (r.rolsuper or r.rolbypassrls or r.rolcreaterole
             or r.oid in (select n.nspowner from pg_namespace n where n.nspname = 'govtrail')
             or r.oid in (select c.relowner from pg_class c
                          join pg_namespace n on n.oid = c.relnamespace
                          where n.nspname = 'govtrail'))) as owner`.execute(db);
  return rows[0]?.owner === true;
}

/**
 * With GOVTRAIL_REQUIRE_WRITER_ROLE set, refuses a connection that is or could become the owner:
 * the worker, sync and reconcile must run as a role that cannot alter tables or disable triggers
 * (docs/design/integrity.md).
 */
export async function requireWriterRole(db: Session, required: boolean): Promise<void> {
  if (!required) return;
  if (await connectedAsOwner(db))
    throw new ConfigError(
      'GOVTRAIL_REQUIRE_WRITER_ROLE',
      'DATABASE_URL connects as a login that owns schema govtrail or is (or is a member of) a superuser, BYPASSRLS or CREATEROLE role, which can disable the append-only triggers: connect as a login granted only govtrail_writer (docs/deploy.md), and run `govtrail migrate` as the owner',
    );
}

/** What every command but `migrate` needs on an existing schema (sql/0009). */
const NEEDED: readonly { readonly table: string; readonly privilege: string }[] = [
  { table: 'schema_migration', privilege: 'SELECT' },
  { table: 'sync_run', privilege: 'SELECT' },
  { table: 'sync_run', privilege: 'INSERT' },
  { table: 'sync_run', privilege: 'UPDATE' },
  { table: 'history_entry', privilege: 'SELECT' },
  { table: 'history_entry', privilege: 'INSERT' },
  { table: 'checkpoint', privilege: 'UPDATE' },
];

/**
 * Refuses, as a DATABASE error naming the missing grant, a login that cannot use an existing
 * schema govtrail (no grant of govtrail_writer, or a NOINHERIT login that does not get the role's
 * privileges), instead of failing on the first statement. Read from the catalogues, which need no
 * privilege. Nothing to check before the schema exists (the first `migrate` creates it).
 */
export async function requireGrants(db: Session): Promise<void> {
  const { rows } = await sql<{ login: string; usage: boolean | null; missing: string[] | null }>`
    select current_user as login,
           (select has_schema_privilege(n.oid, 'USAGE') from pg_namespace n where n.nspname = 'govtrail') as usage,
           (select array_agg(w.privilege || ' on govtrail.' || w.tbl order by w.ord)
            from unnest(${NEEDED.map((n) => n.table)}::text[], ${NEEDED.map((n) => n.privilege)}::text[])
                 with ordinality as w(tbl, privilege, ord)
            join pg_class c on c.relname = w.tbl
            join pg_namespace n on n.oid = c.relnamespace and n.nspname = 'govtrail'
            where not has_table_privilege(c.oid, w.privilege)) as missing`.execute(db);
  const row = rows[0];
  if (row === undefined || row.usage === null) return;
  const hint = `grant govtrail_writer to "${row.login}" (docs/deploy.md); a NOINHERIT login does not use the privileges of its roles: make it INHERIT`;
  if (!row.usage)
    throw new GovtrailError('DATABASE', `the login "${row.login}" has no USAGE on schema govtrail: ${hint}`);
  if (row.missing !== null && row.missing.length > 0)
    throw new GovtrailError('DATABASE', `the login "${row.login}" lacks ${row.missing.join(', ')}: ${hint}`);
}
