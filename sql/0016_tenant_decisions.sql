-- Operator decisions about a tenant (govtrail tenants enable / disable / retire) are an append-only
-- record (docs/deploy.md, "Who decides"): one row per decision, with the operator's name as given,
-- the database role that made it (session_user, set here, not by the client) and when (the
-- database's clock). A decision is made by appending a row; the tenant's status and its
-- enabled/disabled/retired stamps follow from it (a trigger), and nothing else may change them: a
-- direct UPDATE of govtrail.tenant may refresh the configuration's settings but not the status.
-- Leaving `retired` needs a forced decision, which the record shows.

create table govtrail.tenant_decision (
  decision_id     bigint generated always as identity primary key,
  tenant_id       text not null references govtrail.tenant (tenant_id),
  status          text not null check (status in ('active', 'disabled', 'retired')),
  previous_status text not null check (previous_status in ('active', 'disabled', 'retired')),
  forced          boolean not null default false,
  decided_by      text not null,
  database_role   text not null default session_user,
  decided_at      timestamptz not null default clock_timestamp()
);
create index tenant_decision_tenant on govtrail.tenant_decision (tenant_id, decision_id);

-- Decisions made before this migration, from the stamps of the registry (oldest first).
insert into govtrail.tenant_decision
  (tenant_id, status, previous_status, forced, decided_by, database_role, decided_at)
select tenant_id, status, previous_status, false, decided_by, 'migration 0016', decided_at
from (
  select tenant_id, 'disabled' as status, 'active' as previous_status, disabled_by as decided_by, disabled_at as decided_at
  from govtrail.tenant where disabled_at is not null and disabled_by is not null
  union all
  select tenant_id, 'retired', 'active', retired_by, retired_at
  from govtrail.tenant where retired_at is not null and retired_by is not null
  union all
  select tenant_id, 'active', 'disabled', enabled_by, enabled_at
  from govtrail.tenant
  where enabled_at is not null and enabled_by is not null
    and enabled_by not in ('configuration', 'migration 0007', 'run ledger')
) d
order by decided_at;

-- A decision: stamped by the database, checked against the status in force, then applied.
create function govtrail.tenant_decision_apply() returns trigger
language plpgsql as $$
declare
  current_status text;
begin
  select t.status into current_status from govtrail.tenant t where t.tenant_id = new.tenant_id for update;
  if current_status is null then
    raise exception 'govtrail.tenant_decision: tenant % is not registered', new.tenant_id
      using errcode = 'foreign_key_violation';
  end if;
  if current_status = new.status then
    raise exception 'govtrail.tenant_decision: tenant % is % already', new.tenant_id, current_status
      using errcode = 'check_violation';
  end if;
  if current_status = 'retired' and new.status <> 'retired' and not new.forced then
    raise exception 'govtrail.tenant_decision: tenant % is retired; bringing it back needs a forced decision', new.tenant_id
      using errcode = 'insufficient_privilege';
  end if;
  new.previous_status := current_status;
  new.database_role := session_user;
  new.decided_at := clock_timestamp();
  update govtrail.tenant set
    status = new.status,
    status_changed_at = new.decided_at,
    enabled_at = case when new.status = 'active' then new.decided_at else enabled_at end,
    enabled_by = case when new.status = 'active' then new.decided_by else enabled_by end,
    disabled_at = case when new.status = 'disabled' then new.decided_at else disabled_at end,
    disabled_by = case when new.status = 'disabled' then new.decided_by else disabled_by end,
    retired_at = case when new.status = 'retired' then new.decided_at else retired_at end,
    retired_by = case when new.status = 'retired' then new.decided_by else retired_by end
  where tenant_id = new.tenant_id;
  return new;
end
$$;

create trigger tenant_decision_apply before insert on govtrail.tenant_decision
  for each row execute function govtrail.tenant_decision_apply();
create trigger tenant_decision_append_only before update or delete on govtrail.tenant_decision
  for each row execute function govtrail.reject_modification();
create trigger tenant_decision_no_truncate before truncate on govtrail.tenant_decision
  for each statement execute function govtrail.reject_modification();

-- The registry's status and stamps change only through a decision (the trigger above runs this
-- guard one level down); a configuration load registers tenants as active and refreshes settings.
create function govtrail.tenant_status_guard() returns trigger
language plpgsql as $$
begin
  if pg_trigger_depth() > 1 then
    return new;
  end if;
  if tg_op = 'INSERT' then
    if new.status <> 'active' or new.disabled_at is not null or new.disabled_by is not null
       or new.retired_at is not null or new.retired_by is not null then
      raise exception 'govtrail.tenant: a tenant is registered as active; disable or retire it with a decision (govtrail.tenant_decision)'
        using errcode = 'insufficient_privilege';
    end if;
    return new;
  end if;
  if new.tenant_id is distinct from old.tenant_id or new.status is distinct from old.status
     or new.status_changed_at is distinct from old.status_changed_at
     or new.first_seen_at is distinct from old.first_seen_at
     or new.enabled_at is distinct from old.enabled_at or new.enabled_by is distinct from old.enabled_by
     or new.disabled_at is distinct from old.disabled_at or new.disabled_by is distinct from old.disabled_by
     or new.retired_at is distinct from old.retired_at or new.retired_by is distinct from old.retired_by then
    raise exception 'govtrail.tenant: the status of tenant % and who set it change only by a decision (govtrail.tenant_decision, append-only)', old.tenant_id
      using errcode = 'insufficient_privilege';
  end if;
  return new;
end
$$;

create trigger tenant_status_guard before insert or update on govtrail.tenant
  for each row execute function govtrail.tenant_status_guard();
create trigger tenant_no_delete before delete on govtrail.tenant
  for each row execute function govtrail.reject_modification();
create trigger tenant_no_truncate before truncate on govtrail.tenant
  for each statement execute function govtrail.reject_modification();

grant select, insert on govtrail.tenant_decision to govtrail_writer;
grant select on govtrail.tenant_decision to govtrail_reader;

comment on table govtrail.tenant_decision is
  'Operator decisions about a tenant (govtrail tenants enable / disable / retire), one row each, append-only: a trigger rejects UPDATE, DELETE and TRUNCATE. Appending a row sets the tenant''s status in govtrail.tenant; nothing else may.';
comment on column govtrail.tenant_decision.decision_id is 'Order of the decisions; key.';
comment on column govtrail.tenant_decision.tenant_id is 'The tenant decided about (govtrail.tenant).';
comment on column govtrail.tenant_decision.status is 'The status decided: active, disabled or retired.';
comment on column govtrail.tenant_decision.previous_status is 'The status in force before the decision (set by the database).';
comment on column govtrail.tenant_decision.forced is 'True when a retired tenant was brought back (govtrail tenants enable --force).';
comment on column govtrail.tenant_decision.decided_by is 'The operator as the command gave it (user@host); not authenticated: see database_role.';
comment on column govtrail.tenant_decision.database_role is 'session_user of the connection that made the decision, set by the database ("migration 0016" for decisions recorded before it).';
comment on column govtrail.tenant_decision.decided_at is 'When the decision was made, by the database''s clock.';
comment on function govtrail.tenant_decision_apply() is
  'Trigger function that stamps a tenant decision (previous status, session_user, time), refuses leaving retired without force, and applies it to govtrail.tenant. Not for direct calls.';
comment on function govtrail.tenant_status_guard() is
  'Trigger function that keeps the status of govtrail.tenant and its stamps out of reach of direct INSERT and UPDATE: they change only through govtrail.tenant_decision. Not for direct calls.';
