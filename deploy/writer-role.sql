-- The worker's database login: a role that can log in and holds govtrail_writer, nothing more — it
-- inserts and reads, updates only the run ledger, the checkpoint and delivery state, and can neither
-- alter a table nor disable the append-only triggers (sql/0009_tamper_roles.sql, docs/deploy.md).
-- Run as the database owner AFTER `govtrail migrate` (which creates govtrail_writer), with
--   psql -v ON_ERROR_STOP=1 -v password=… -f deploy/writer-role.sql
-- Idempotent: docker-compose.yml's writer-login service runs it on every `up`.

do $$
begin
  if not exists (select from pg_roles where rolname = 'govtrail_app') then
    create role govtrail_app login;
  end if;
end
$$;

alter role govtrail_app with login password :'password';
grant govtrail_writer to govtrail_app;
-- The worker's temporary tables (reconcile) and its connections; nothing else on the database.
grant connect, temporary on database govtrail to govtrail_app;
