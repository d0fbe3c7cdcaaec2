-- The served digest of an entry (integrity.md "The served digest"; sync.md S12): sha256 of the
-- entry's bytes exactly as the listing served them, its slice of the page's body. A re-served
-- entry whose bytes are the same as those stored needs no parsing, canonical copy or content hash
-- to be known unchanged: reconcile and every sync's lookback window compare this first, and fall
-- back to the content hash when it differs (other spacing or key order, or a real change) or is
-- NULL (rows stored before this migration, or by a source whose page could not be scanned).
--
-- Not part of the hash chain: it is a shortcut over content_sha256, never evidence on its own
-- (`reconcile --deep` does not read it). No planner statistics: only ever compared in govtrail.
alter table govtrail.history_entry add column served_sha256 bytea;
alter table govtrail.history_entry alter column served_sha256 set statistics 0;
comment on column govtrail.history_entry.served_sha256 is
  'sha256 of the entry''s bytes exactly as the history listing served them (its slice of the page body), compared before the content hash when the entry is served again. Not in the hash chain; NULL for rows stored before migration 0041 or from a page that could not be scanned.';

-- open_run (0040) also returns each newest stored entry's served digest, for the quiet close.
create or replace function govtrail.open_run(
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
  -- The newest stored entries with their content hash and served digest: what a run with nothing
  -- new is served again.
  select coalesce(json_agg(json_build_object('id', e.entry_id, 'sha', encode(e.content_sha256, 'hex'),
                                             'served', encode(e.served_sha256, 'hex'), 'run', e.run_id)
                           order by e.created_at desc, e.entry_id desc), '[]'::json)
    into recent
    from (select h.entry_id, h.content_sha256, h.served_sha256, h.run_id, h.created_at
            from govtrail.history_entry h
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

