-- A run opens in one round trip (sync.md "One run", steps 1-4; scaling.md "Round trips"): the
-- tenant lock, the orphaned runs closed, the slot already done (a retried attempt), the checkpoint,
-- whether the tenant ever succeeded, its newest stored entries, the baseline it was last judged by
-- and when (conformance.md), and the ledger row, in one call.
--
-- A function rather than one statement with CTEs: a statement sees the database as of its start,
-- which is before it took the lock, so it could miss what the lock's previous holder committed in
-- between. A volatile function's queries each see the database as of their own start: everything
-- after the lock sees what was committed before the lock was granted.
create function govtrail.open_run(
  p_tenant text,
  p_lock_key bigint,
  p_trigger text,
  p_kind text,
  p_slot timestamptz,
  p_done_slot boolean,
  p_record_skip boolean,
  p_recent integer,
  p_orphan_message text
) returns table (
  locked boolean,
  opened_run_id bigint,
  done_run_id bigint,
  orphans integer,
  cp_entry_id text,
  cp_created_at timestamptz,
  cp_created_at_key text,
  cp_run_id bigint,
  succeeded_before boolean,
  recent json,
  judged_baseline_id text,
  judged_baseline_sha256 text,
  judged_at_key text
)
language plpgsql volatile set search_path = pg_catalog, pg_temp as $$
begin
  locked := pg_try_advisory_lock(p_lock_key);
  orphans := 0;
  if not locked then
    if p_record_skip then
      insert into govtrail.sync_run (tenant_id, trigger, kind, status, finished_at, error_message)
      values (p_tenant, p_trigger, p_kind, 'skipped', now(), 'another process holds the tenant lock')
      returning sync_run.run_id into opened_run_id;
    end if;
    return next;
    return;
  end if;
  -- Holding the lock, no live process runs this tenant: a row still running was left by a dead
  -- one. (This update also waits for a run whose close is committing as it released the lock, so
  -- what follows sees that run's outcome.)
  update govtrail.sync_run r
     set status = 'failed', finished_at = now(), error_code = 'ABORTED', error_message = p_orphan_message
   where r.tenant_id = p_tenant and r.status = 'running';
  get diagnostics orphans = row_count;
  if p_done_slot then
    select r.run_id into done_run_id from govtrail.sync_run r
     where r.tenant_id = p_tenant and r.kind = p_kind and r.slot = p_slot and r.status = 'succeeded'
     limit 1;
    if done_run_id is not null then
      return next;
      return;
    end if;
  end if;
  select c.entry_id, c.entry_created_at, c.entry_created_at_key, c.run_id
    into cp_entry_id, cp_created_at, cp_created_at_key, cp_run_id
    from govtrail.checkpoint c where c.tenant_id = p_tenant;
  succeeded_before := cp_entry_id is not null or exists (
    select 1 from govtrail.sync_run r where r.tenant_id = p_tenant and r.status = 'succeeded');
  -- The newest stored entries with their content hash: what a run with nothing new is served again.
  select coalesce(json_agg(json_build_object('id', e.entry_id, 'sha', encode(e.content_sha256, 'hex'), 'run', e.run_id)
                           order by e.created_at desc, e.entry_id desc), '[]'::json)
    into recent
    from (select h.entry_id, h.content_sha256, h.run_id, h.created_at from govtrail.history_entry h
           where h.tenant_id = p_tenant order by h.created_at desc, h.entry_id desc limit p_recent) e;
  select p.baseline_id, p.baseline_sha256 into judged_baseline_id, judged_baseline_sha256
    from govtrail.control_period p where p.tenant_id = p_tenant limit 1;
  select to_char(t.baseline_judged_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US') || '000Z'
    into judged_at_key from govtrail.tenant t where t.tenant_id = p_tenant;
  insert into govtrail.sync_run (tenant_id, trigger, checkpoint_before, kind, slot)
  values (p_tenant, p_trigger, cp_entry_id, p_kind, p_slot)
  returning sync_run.run_id into opened_run_id;
  return next;
end
$$;

revoke execute on function govtrail.open_run(text, bigint, text, text, timestamptz, boolean, boolean, integer, text) from public;
grant execute on function govtrail.open_run(text, bigint, text, text, timestamptz, boolean, boolean, integer, text) to govtrail_writer;

comment on function govtrail.open_run(text, bigint, text, text, timestamptz, boolean, boolean, integer, text) is
  'Opens a run of a tenant in one call (sync.md "One run", steps 1-4): takes the tenant''s advisory lock (or records a skipped run), closes orphaned runs, finds a slot already done, reads the checkpoint, the newest stored entries and the baseline the tenant was last judged by, and inserts the ledger row. Called by govtrail; not for analysts.';
