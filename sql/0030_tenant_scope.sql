-- Many customers in one store (data-model.md "Tenant groups and scoped readers"; integrity.md
-- "Readers who see only their tenants"): tenants carry groups and labels, and a login granted
-- govtrail_scoped_reader sees, through predicates PostgreSQL evaluates itself, only the tenants of
-- its scope in every view, function and table a reader may read. govtrail_reader keeps seeing all.

-- Groups and labels of tenants. A configuration load writes the groups and labels the configuration
-- declares (set_by 'configuration'); an operator's change (govtrail tenants group / label) is kept
-- against later loads, as a status is: `member` false / `value` NULL record an operator's removal.
create table govtrail.tenant_group (
  tenant_id   text not null references govtrail.tenant (tenant_id),
  group_name  text not null,
  member      boolean not null,
  set_by      text not null,
  set_at      timestamptz not null default now(),
  primary key (tenant_id, group_name)
);
create index tenant_group_members on govtrail.tenant_group (group_name, tenant_id) where member;

create table govtrail.tenant_label (
  tenant_id  text not null references govtrail.tenant (tenant_id),
  key        text not null,
  value      text,
  set_by     text not null,
  set_at     timestamptz not null default now(),
  primary key (tenant_id, key)
);

-- Every change of a group membership or a label, by whom and when: append-only, written by a
-- trigger, so a change made with plain SQL is recorded as well as one made by govtrail.
create table govtrail.tenant_change (
  change_id   bigint generated always as identity primary key,
  tenant_id   text not null,
  changed_at  timestamptz not null default now(),
  changed_by  text not null,
  kind        text not null check (kind in ('group', 'label')),
  name        text not null,
  old_value   text,
  new_value   text
);
create index tenant_change_tenant on govtrail.tenant_change (tenant_id, changed_at);

create function govtrail.tenant_change_record() returns trigger
language plpgsql as $$
begin
  if tg_table_name = 'tenant_group' then
    if tg_op = 'INSERT' or old.member is distinct from new.member then
      insert into govtrail.tenant_change (tenant_id, changed_by, kind, name, old_value, new_value)
      values (new.tenant_id, new.set_by, 'group', new.group_name,
              case when tg_op = 'UPDATE' and old.member then 'member' end,
              case when new.member then 'member' end);
    end if;
  elsif tg_op = 'INSERT' or old.value is distinct from new.value then
    insert into govtrail.tenant_change (tenant_id, changed_by, kind, name, old_value, new_value)
    values (new.tenant_id, new.set_by, 'label', new.key,
            case when tg_op = 'UPDATE' then old.value end, new.value);
  end if;
  return new;
end
$$;
create trigger tenant_group_changes after insert or update on govtrail.tenant_group
  for each row execute function govtrail.tenant_change_record();
create trigger tenant_label_changes after insert or update on govtrail.tenant_label
  for each row execute function govtrail.tenant_change_record();
-- Rows are never deleted (a removal is member false / value NULL): the history stays complete.
create trigger tenant_group_no_delete before delete on govtrail.tenant_group
  for each row execute function govtrail.reject_modification();
create trigger tenant_label_no_delete before delete on govtrail.tenant_label
  for each row execute function govtrail.reject_modification();
create trigger tenant_change_append_only before update or delete on govtrail.tenant_change
  for each row execute function govtrail.reject_modification();
create trigger tenant_change_no_truncate before truncate on govtrail.tenant_change
  for each statement execute function govtrail.reject_modification();
grant update on govtrail.tenant_group, govtrail.tenant_label to govtrail_writer;

-- The scoped readers. NOLOGIN, holding the same read privileges as govtrail_reader (mirrored by
-- apply_reader_scope below) but never a member of it: a scoped login can SET ROLE only to
-- govtrail_scoped_reader itself, which is scoped to nothing.
do $$
begin
  if not exists (select from pg_roles where rolname = 'govtrail_scoped_reader') then
    begin
      create role govtrail_scoped_reader nologin;
    exception when duplicate_object or unique_violation then
      null; -- another database's migration created it at the same moment
    end;
  end if;
end
$$;
grant usage on schema govtrail to govtrail_scoped_reader;

-- What each scoped login may see, in this database: tenants by name, and groups (whose members are
-- read when a query runs, so a tenant added to a group later is visible without a new grant).
-- Written by `govtrail readers grant | revoke` as the owner; neither writer nor readers may touch it.
create table govtrail.reader_scope (
  login       text not null,
  tenant_id   text,
  group_name  text,
  granted_at  timestamptz not null default now(),
  granted_by  text not null,
  check ((tenant_id is null) <> (group_name is null))
);
create unique index reader_scope_tenant on govtrail.reader_scope (login, tenant_id) where tenant_id is not null;
create unique index reader_scope_group on govtrail.reader_scope (login, group_name) where group_name is not null;
revoke all on govtrail.reader_scope from govtrail_writer;

-- The tenants role `who` may see: NULL when it is not scoped (a superuser, or a role that does not
-- inherit govtrail_scoped_reader's privileges); else its tenants and its groups' current members,
-- possibly none. Runs as the owner to read reader_scope, so it answers only for the session's own
-- login or a role that login could SET ROLE to: anyone else's scope is the empty array.
create function govtrail.scoped_tenants(who name) returns text[]
language plpgsql stable security definer set search_path = pg_catalog, pg_temp
as $$
declare
  super boolean;
begin
  select r.rolsuper into super from pg_roles r where r.rolname = who;
  if not found then return '{}'::text[]; end if;
  if super or not pg_has_role(who, 'govtrail_scoped_reader', 'USAGE') then return null; end if;
  if who <> session_user and not pg_has_role(session_user, who, 'MEMBER') then return '{}'::text[]; end if;
  return array(
    select s.tenant_id from govtrail.reader_scope s where s.login = who and s.tenant_id is not null
    union
    select g.tenant_id from govtrail.reader_scope s
    join govtrail.tenant_group g on g.group_name = s.group_name and g.member
    where s.login = who);
end
$$;

-- The tenants this session may see: the scope of the current role and of the login (session_user)
-- together, so that neither a security-definer function (current_user is its owner) nor SET ROLE
-- widens a scoped login's view. NULL = every tenant. Both are PL/pgSQL so that their queries are
-- planned once per session, not once per statement (a SQL function's body is planned at each call:
-- about 12 ms added to every dashboard query under load, measured against the unscoped views).
create function govtrail.visible_tenants() returns text[]
language plpgsql stable
as $$
declare
  c text[] := govtrail.scoped_tenants(current_user);
  s text[] := govtrail.scoped_tenants(session_user);
begin
  if c is null then return s; end if;
  if s is null then return c; end if;
  return array(select unnest(c) intersect select unnest(s));
end
$$;

-- The predicate: is tenant t within scope (NULL scope = everything)? Written with `scope` used once
-- so that the planner inlines it: `tenant_in_scope(tenant_id, (select visible_tenants()))` then
-- computes the scope once per query (an InitPlan) and costs one array lookup per row.
create function govtrail.tenant_in_scope(t text, scope text[]) returns boolean
language sql immutable
as $$ select array_position(coalesce(scope, array[t]), t) is not null $$;

-- The same for one tenant, for a function's body.
create function govtrail.tenant_visible(t text) returns boolean
language sql stable
as $$ select govtrail.tenant_in_scope(t, govtrail.visible_tenants()) $$;

-- Applies the scope to everything a reader may read (and is run again by `govtrail migrate` after
-- every later migration, in the migration's transaction, so a view added or replaced later is
-- covered without anyone remembering to):
--  * every view of schema govtrail with a tenant_id column becomes a security_barrier view over its
--    own definition filtered by tenant_in_scope (its OID, columns, comments and grants stay);
--  * every table with a tenant_id column a reader may read gets row-level security with the same
--    predicate (the owner, who owns the views, is not subject to it; the writer is not scoped);
--  * govtrail_scoped_reader is granted what govtrail_reader is granted.
-- Returns the number of objects it changed. Security-definer functions that read tables are not
-- covered by it: each checks tenant_visible itself (setting_periods below), and
-- test/integration/reader-scope.test.ts calls every function a reader may execute.
create function govtrail.apply_reader_scope() returns integer
language plpgsql
as $$
declare
  r record;
  body text;
  changed integer := 0;
begin
  for r in
    select c.oid, c.relname
    from pg_class c join pg_namespace n on n.oid = c.relnamespace
    where n.nspname = 'govtrail' and c.relkind = 'v'
      and exists (select from pg_attribute a where a.attrelid = c.oid and a.attname = 'tenant_id' and not a.attisdropped)
      and not exists (
        select from pg_rewrite w join pg_depend d on d.classid = 'pg_rewrite'::regclass and d.objid = w.oid
        where w.ev_class = c.oid and d.refclassid = 'pg_proc'::regclass
          and d.refobjid = 'govtrail.visible_tenants()'::regprocedure)
    order by c.oid
  loop
    body := rtrim(pg_get_viewdef(r.oid), E'; \n\t');
    execute format(
      'create or replace view govtrail.%I with (security_barrier) as select v.* from (%s) v '
      'where govtrail.tenant_in_scope(v.tenant_id, (select govtrail.visible_tenants()))',
      r.relname, body);
    changed := changed + 1;
  end loop;
  for r in
    select c.oid, c.relname, c.relrowsecurity
    from pg_class c join pg_namespace n on n.oid = c.relnamespace
    where n.nspname = 'govtrail' and c.relkind in ('r', 'p')
      and exists (select from pg_attribute a where a.attrelid = c.oid and a.attname = 'tenant_id' and not a.attisdropped)
      and (has_table_privilege('govtrail_reader', c.oid, 'select')
           or has_table_privilege('govtrail_scoped_reader', c.oid, 'select'))
      and not exists (select from pg_policy p where p.polrelid = c.oid and p.polname = 'tenant_scope')
  loop
    execute format('alter table govtrail.%I enable row level security', r.relname);
    execute format(
      'create policy tenant_scope on govtrail.%I for all to public '
      'using (govtrail.tenant_in_scope(tenant_id, (select govtrail.visible_tenants()))) with check (true)',
      r.relname);
    changed := changed + 1;
  end loop;
  -- Mirror govtrail_reader's grants (SELECT on relations, EXECUTE granted to it by name).
  for r in
    select c.oid, c.relname
    from pg_class c join pg_namespace n on n.oid = c.relnamespace
    where n.nspname = 'govtrail' and c.relkind in ('r', 'v', 'm', 'p', 'f')
      and exists (select from aclexplode(c.relacl) x
                  where x.grantee = 'govtrail_reader'::regrole and x.privilege_type = 'SELECT')
      and not has_table_privilege('govtrail_scoped_reader', c.oid, 'select')
  loop
    execute format('grant select on govtrail.%I to govtrail_scoped_reader', r.relname);
    changed := changed + 1;
  end loop;
  for r in
    select p.oid
    from pg_proc p join pg_namespace n on n.oid = p.pronamespace
    where n.nspname = 'govtrail'
      and exists (select from aclexplode(p.proacl) x
                  where x.grantee = 'govtrail_reader'::regrole and x.privilege_type = 'EXECUTE')
      and not exists (select from aclexplode(p.proacl) x
                      where x.grantee = 'govtrail_scoped_reader'::regrole and x.privilege_type = 'EXECUTE')
  loop
    execute format('grant execute on function %s to govtrail_scoped_reader', r.oid::regprocedure);
    changed := changed + 1;
  end loop;
  return changed;
end
$$;
revoke execute on function govtrail.apply_reader_scope() from public;

-- setting_periods runs as its owner (it reads the tables by index), so no view predicate reaches
-- it: it becomes a security-definer wrapper that returns nothing for a tenant out of the session's
-- scope, around the unchanged function, which no reader may execute any more.
alter function govtrail.setting_periods(text, text, timestamptz, timestamptz) rename to setting_periods_unscoped;
revoke execute on function govtrail.setting_periods_unscoped(text, text, timestamptz, timestamptz)
  from public, govtrail_reader;
create function govtrail.setting_periods(tenant text, setting text, from_at timestamptz, to_at timestamptz)
returns table (
  tenant_id text, setting text, valid_from timestamptz, valid_to timestamptz, value jsonb, value_text text,
  is_deleted boolean, entry_id text)
language sql stable security definer set search_path = pg_catalog, pg_temp
as $fn$
  select p.* from govtrail.setting_periods_unscoped(tenant, setting, from_at, to_at) p
  where govtrail.tenant_visible(tenant)
$fn$;
revoke execute on function govtrail.setting_periods(text, text, timestamptz, timestamptz) from public;
grant execute on function govtrail.setting_periods(text, text, timestamptz, timestamptz) to govtrail_reader;

select govtrail.apply_reader_scope();

comment on function govtrail.setting_periods(text, text, timestamptz, timestamptz) is
  'Periods during which one setting kept one value that overlap (from_at, to_at]: valid_from (may precede from_at), valid_to (may follow to_at; NULL while current), value, value_text, is_deleted, and the entry that began the period. No rows for a tenant outside the scope of a scoped reader.';
comment on function govtrail.setting_periods_unscoped(text, text, timestamptz, timestamptz) is
  'The body of setting_periods, without the reader scope check. Not executable by readers.';
comment on function govtrail.scoped_tenants(name) is
  'Tenants a role may see: NULL when it is not a scoped reader (every tenant), else the tenants and current group members of its reader_scope rows. Answers only for the session''s own login or a role it may SET ROLE to; anyone else gets the empty array.';
comment on function govtrail.visible_tenants() is
  'Tenants this session may see: the scopes of current_user and session_user intersected; NULL = every tenant (not a scoped reader).';
comment on function govtrail.tenant_in_scope(text, text[]) is
  'True when tenant t is in scope (a NULL scope is every tenant). The predicate of every scoped view and row-level security policy.';
comment on function govtrail.tenant_visible(text) is
  'True when this session may see tenant t (tenant_in_scope(t, visible_tenants())).';
comment on function govtrail.tenant_change_record() is
  'Trigger function that records each change of tenant_group and tenant_label in tenant_change. Not for direct calls.';
comment on function govtrail.apply_reader_scope() is
  'Applies the reader scope to every view and reader-readable table with a tenant_id column and mirrors govtrail_reader''s grants to govtrail_scoped_reader; run by govtrail migrate after each migration. Owner only.';
comment on table govtrail.tenant_group is
  'Group memberships of tenants: one row per tenant and group ever named; member false records an operator''s removal, which configuration loads keep. Never deleted.';
comment on table govtrail.tenant_label is
  'Labels of tenants (key = value): value NULL records an operator''s removal, which configuration loads keep. Never deleted.';
comment on table govtrail.tenant_change is
  'Every change of a tenant''s groups and labels, by whom (configuration or user@host) and when. Append-only.';
comment on table govtrail.reader_scope is
  'The scope of each login granted govtrail_scoped_reader: tenant names and group names (whose current members it sees). Written by govtrail readers grant / revoke as the owner.';
