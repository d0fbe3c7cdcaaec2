/**
 * Scoped readers (sql/0030, docs/design/integrity.md "Readers who see only their tenants"): a login
 * granted govtrail_scoped_reader sees only the tenants and group members of its govtrail.reader_scope
 * rows, enforced by PostgreSQL in every view, function and table a reader may read. These functions
 * write the scope and the role membership together, as the owner (the writer may not touch either).
 */
import { sql } from 'kysely';
import { GovtrailError } from '../../core/errors.js';
import type { Session } from '../database.js';

/** Runs fn in a transaction; a permission error becomes a usage error naming the role needed. */
async function asOwner<T>(db: Session, fn: (trx: Session) => Promise<T>): Promise<T> {
  try {
    return await db.transaction().execute(fn);
  } catch (err) {
    if ((err as { code?: string }).code === '42501')
      throw new GovtrailError(
        'USAGE',
        `readers: ${(err as Error).message}: run govtrail readers as the owner of schema govtrail (the role of govtrail migrate), which may grant roles`,
        { cause: err },
      );
    throw err;
  }
}

/** The role of scoped readers (sql/0030). */
export const SCOPED_READER_ROLE = 'govtrail_scoped_reader';

/** Why a login may not be made a scoped reader; undefined when it may. */
async function refusal(db: Session, login: string): Promise<string | undefined> {
  const { rows } = await sql<{
    exists: boolean;
    superuser: boolean;
    reader: boolean;
    writer: boolean;
    owner: boolean;
    bypass: boolean;
  }>`
    select r.rolname is not null as exists,
           coalesce(r.rolsuper, false) as superuser,
           coalesce(r.rolbypassrls, false) as bypass,
           r.rolname is not null and pg_has_role(r.rolname, 'govtrail_reader', 'MEMBER') as reader,
           r.rolname is not null and pg_has_role(r.rolname, 'govtrail_writer', 'MEMBER') as writer,
           r.rolname is not null and pg_has_role(r.rolname, n.nspowner, 'MEMBER') as owner
    from (select ${login}::text as name) x
    left join pg_roles r on r.rolname = x.name
    cross join (select nspowner from pg_namespace where nspname = 'govtrail') n`.execute(db);
  const r = rows[0];
  if (r === undefined || !r.exists)
    return `no role named ${JSON.stringify(login)} exists: create the login first (create role ... login password ...)`;
  if (r.superuser || r.bypass)
    return `${login} is a superuser or bypasses row-level security: it sees everything`;
  if (r.owner) return `${login} owns (or may act as the owner of) schema govtrail: it sees everything`;
  if (r.writer)
    return `${login} is a member of govtrail_writer, which reads every table: use a login of its own`;
  if (r.reader)
    return `${login} is a member of govtrail_reader, which sees every tenant and which it could SET ROLE to: revoke govtrail_reader from ${login} first`;
  return undefined;
}

/** What {@link grantReader} did. */
export type GrantOutcome =
  | { readonly outcome: 'refused'; readonly reason: string }
  | { readonly outcome: 'granted'; readonly added: readonly string[] };

/**
 * Scopes LOGIN to tenants and groups (added to any scope it has) and grants it
 * govtrail_scoped_reader, in one transaction. Refuses a login that would see everything anyway or
 * could SET ROLE to a role that does.
 */
export async function grantReader(
  db: Session,
  login: string,
  scope: { readonly tenants: readonly string[]; readonly groups: readonly string[]; readonly by: string },
): Promise<GrantOutcome> {
  return asOwner(db, async (trx) => {
    const reason = await refusal(trx, login);
    if (reason !== undefined) return { outcome: 'refused', reason };
    const added: string[] = [];
    for (const t of scope.tenants) {
      const { rows } = await sql`
        insert into govtrail.reader_scope (login, tenant_id, granted_by) values (${login}, ${t}, ${scope.by})
        on conflict (login, tenant_id) where tenant_id is not null do nothing returning 1`.execute(trx);
      if (rows.length > 0) added.push(`tenant ${t}`);
    }
    for (const g of scope.groups) {
      const { rows } = await sql`
        insert into govtrail.reader_scope (login, group_name, granted_by) values (${login}, ${g}, ${scope.by})
        on conflict (login, group_name) where group_name is not null do nothing returning 1`.execute(trx);
      if (rows.length > 0) added.push(`group ${g}`);
    }
    await sql`grant ${sql.id(SCOPED_READER_ROLE)} to ${sql.id(login)}`.execute(trx);
    return { outcome: 'granted', added };
  });
}

/** What {@link revokeReader} did. */
export interface RevokeOutcome {
  readonly removed: readonly string[];
  /** True when the login lost govtrail_scoped_reader (its scope here is now empty). */
  readonly roleRevoked: boolean;
}

/**
 * Removes tenants and groups from LOGIN's scope, or all of it when none is named; with an empty
 * scope left, revokes govtrail_scoped_reader too. Takes effect at the next statement of any open
 * session of the login: the scope is read by every query.
 */
export async function revokeReader(
  db: Session,
  login: string,
  scope: { readonly tenants: readonly string[]; readonly groups: readonly string[] },
): Promise<RevokeOutcome> {
  return asOwner(db, async (trx) => {
    const all = scope.tenants.length === 0 && scope.groups.length === 0;
    const { rows } = await sql<{ tenant_id: string | null; group_name: string | null }>`
      delete from govtrail.reader_scope
      where login = ${login}
        and (${all}::boolean
             or tenant_id = any(${[...scope.tenants]}::text[])
             or group_name = any(${[...scope.groups]}::text[]))
      returning tenant_id, group_name`.execute(trx);
    const removed = rows.map((r) =>
      r.tenant_id !== null ? `tenant ${r.tenant_id}` : `group ${r.group_name}`,
    );
    const { rows: left } =
      await sql`select 1 from govtrail.reader_scope where login = ${login} limit 1`.execute(trx);
    const { rows: role } = await sql`select 1 from pg_roles where rolname = ${login}`.execute(trx);
    let roleRevoked = false;
    if (left.length === 0 && role.length > 0) {
      await sql`revoke ${sql.id(SCOPED_READER_ROLE)} from ${sql.id(login)}`.execute(trx);
      roleRevoked = true;
    }
    return { removed, roleRevoked };
  });
}

/** One scoped login as `govtrail readers list` shows it. */
export interface ScopedReader {
  readonly login: string;
  readonly tenants: readonly string[];
  readonly groups: readonly string[];
  /** The tenants it sees now: its tenants and its groups' current members. */
  readonly visible: readonly string[];
  /** False when the login no longer holds govtrail_scoped_reader (it sees nothing). */
  readonly hasRole: boolean;
}

/** Every login with a scope in this database, with what it sees now. */
export async function listReaders(db: Session): Promise<ScopedReader[]> {
  return asOwner(db, (trx) => readersOf(trx));
}

async function readersOf(db: Session): Promise<ScopedReader[]> {
  const { rows } = await sql<{
    login: string;
    tenants: string[];
    groups: string[];
    visible: string[];
    has_role: boolean;
  }>`
    select s.login,
           coalesce(array_agg(s.tenant_id order by s.tenant_id) filter (where s.tenant_id is not null), '{}') as tenants,
           coalesce(array_agg(s.group_name order by s.group_name) filter (where s.group_name is not null), '{}') as groups,
           array(select x.t from (
             select s2.tenant_id as t from govtrail.reader_scope s2 where s2.login = s.login and s2.tenant_id is not null
             union
             select g.tenant_id from govtrail.reader_scope s2
             join govtrail.tenant_group g on g.group_name = s2.group_name and g.member
             where s2.login = s.login) x order by x.t) as visible,
           exists (select from pg_roles r where r.rolname = s.login
                   and pg_has_role(r.rolname, ${SCOPED_READER_ROLE}, 'USAGE')) as has_role
    from govtrail.reader_scope s
    group by s.login
    order by s.login`.execute(db);
  return rows.map((r) => ({
    login: r.login,
    tenants: r.tenants,
    groups: r.groups,
    visible: r.visible,
    hasRole: r.has_role,
  }));
}
