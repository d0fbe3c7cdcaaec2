/**
 * Which of the two roles of docs/deploy.md a connection is: the schema owner (or a superuser), who
 * can alter tables and switch the append-only triggers off, or a writer, who cannot.
 */
import { sql } from 'kysely';
import { ConfigError } from '../core/errors.js';
import type { Session } from './database.js';

/** True when the session's role owns schema govtrail (directly or through a role) or is a superuser. */
export async function connectedAsOwner(db: Session): Promise<boolean> {
  const { rows } = await sql<{ owner: boolean }>`
    select coalesce((select rolsuper from pg_roles where rolname = current_user), false)
        or coalesce((select pg_has_role(current_user, n.nspowner, 'USAGE')
                     from pg_namespace n where n.nspname = 'govtrail'), false) as owner`.execute(db);
  return rows[0]?.owner === true;
}

/**
 * With GOVTRAIL_REQUIRE_WRITER_ROLE set, refuses a connection as the owner: the worker must run as
 * a role that cannot alter tables or disable triggers (docs/design/integrity.md).
 */
export async function requireWriterRole(db: Session, required: boolean): Promise<void> {
  if (!required) return;
  if (await connectedAsOwner(db))
    throw new ConfigError(
      'GOVTRAIL_REQUIRE_WRITER_ROLE',
      'DATABASE_URL connects as the owner of schema govtrail (or a superuser), which can disable the append-only triggers: connect as a login granted govtrail_writer (docs/deploy.md), and run `govtrail migrate` as the owner',
    );
}
