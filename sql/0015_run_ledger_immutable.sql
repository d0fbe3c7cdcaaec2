-- The run ledger is immutable once a run has finished (integrity.md, "Proof against govtrail's own
-- database"). The writer may update a row only to close it: `running` to its outcome (succeeded or
-- failed, with finished_at), once; the identity of the run (tenant, kind, trigger, slot, start,
-- checkpoint before) never changes. A row may be deleted only while running, and only by the
-- session that opened it (the engine's attempt that will be retried discards its own row): the
-- backend's pid is recorded with the row. Applies to the owner too.

alter table govtrail.sync_run add column opened_by_pid integer default pg_backend_pid();

comment on column govtrail.sync_run.opened_by_pid is
  'pg_backend_pid() of the session that opened the run: only that session may discard the row while it is running (an engine attempt to be retried). NULL for runs opened before migration 0015.';

create or replace function govtrail.sync_run_update_guard() returns trigger
language plpgsql as $$
begin
  if old.status <> 'running' then
    raise exception 'govtrail.sync_run is immutable once finished: run % is %', old.run_id, old.status
      using errcode = 'insufficient_privilege';
  end if;
  if new.status not in ('succeeded', 'failed') or new.finished_at is null then
    raise exception 'govtrail.sync_run: a running run may only be closed (succeeded or failed, with finished_at), not set to %', new.status
      using errcode = 'insufficient_privilege';
  end if;
  if new.run_id is distinct from old.run_id or new.tenant_id is distinct from old.tenant_id
     or new.kind is distinct from old.kind or new.trigger is distinct from old.trigger
     or new.slot is distinct from old.slot or new.started_at is distinct from old.started_at
     or new.checkpoint_before is distinct from old.checkpoint_before
     or new.opened_by_pid is distinct from old.opened_by_pid then
    raise exception 'govtrail.sync_run: closing run % may not change what run it is', old.run_id
      using errcode = 'insufficient_privilege';
  end if;
  return new;
end
$$;

create trigger sync_run_update_guard before update on govtrail.sync_run
  for each row execute function govtrail.sync_run_update_guard();

create or replace function govtrail.sync_run_delete_guard() returns trigger
language plpgsql as $$
begin
  if old.status <> 'running' then
    raise exception 'govtrail.sync_run is append-only: run % is %, only a running attempt that will be retried may be removed', old.run_id, old.status
      using errcode = 'insufficient_privilege';
  end if;
  if old.opened_by_pid is distinct from pg_backend_pid() then
    raise exception 'govtrail.sync_run is append-only: run % may be removed only by the session that opened it', old.run_id
      using errcode = 'insufficient_privilege';
  end if;
  return old;
end
$$;

create trigger sync_run_no_truncate before truncate on govtrail.sync_run
  for each statement execute function govtrail.reject_modification();

comment on function govtrail.sync_run_update_guard() is
  'Trigger function that makes a finished run immutable: an UPDATE of sync_run is allowed only from running to succeeded or failed (with finished_at), once, without changing the run''s identity columns. Not for direct calls.';
comment on function govtrail.sync_run_delete_guard() is
  'Trigger function that keeps the run ledger append-only: DELETE of a sync_run row is rejected unless the run is still running and the deleting session opened it (an engine attempt to be retried discards its own row). Not for direct calls.';
