-- The writer role (0009) meets the fleet's tables (0007, 0008): the registry is upserted from the
-- configuration, and a scheduled attempt that fails with retries left inside its slot removes its
-- own ledger row (the failure is recorded once, by the last attempt). Nothing else may delete from
-- the run ledger: a trigger lets only a row still `running` go, as the owner's DELETE is refused too.
grant update on govtrail.tenant to govtrail_writer;
grant delete on govtrail.sync_run to govtrail_writer;

create or replace function govtrail.sync_run_delete_guard() returns trigger
language plpgsql as $$
begin
  if old.status <> 'running' then
    raise exception 'govtrail.sync_run is append-only: run % is %, only a running attempt that will be retried may be removed', old.run_id, old.status
      using errcode = 'insufficient_privilege';
  end if;
  return old;
end
$$;

create trigger sync_run_delete_guard before delete on govtrail.sync_run
  for each row execute function govtrail.sync_run_delete_guard();

comment on function govtrail.sync_run_delete_guard() is
  'Trigger function that keeps the run ledger append-only: DELETE of a sync_run row is rejected unless the run is still running (a scheduled attempt that failed with retries left removes its own row). Not for direct calls.';
