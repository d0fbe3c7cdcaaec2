-- The dashboard login of the demo: a role that can log in and holds govtrail_reader, nothing more.
-- Run by docker-compose.yml's grafana-reader service as the database owner, with
--   psql -v ON_ERROR_STOP=1 -v password=… -f reader-role.sql
-- on every `docker compose --profile demo up`: idempotent, and indifferent to whether the worker
-- has migrated yet (sql/0003_views.sql creates govtrail_reader only when it is missing, and grants it
-- its privileges whenever it runs; a member gets them through the role).

do $$
begin
  if not exists (select from pg_roles where rolname = 'govtrail_reader') then
    create role govtrail_reader nologin;
  end if;
  if not exists (select from pg_roles where rolname = 'govtrail_grafana') then
    create role govtrail_grafana login;
  end if;
end
$$;

alter role govtrail_grafana with login password :'password';
grant govtrail_reader to govtrail_grafana;
-- Read-only even if a privilege were ever granted by mistake; a runaway panel is stopped; and no
-- JIT: the dashboard's queries take milliseconds, compiling them would take hundreds.
alter role govtrail_grafana set default_transaction_read_only = on;
alter role govtrail_grafana set statement_timeout = '30s';
alter role govtrail_grafana set jit = off;
