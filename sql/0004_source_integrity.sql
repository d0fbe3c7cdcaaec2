-- Proof against the source (integrity.md): content hashes of stored entries, the discrepancies
-- found between the source and the store, reconcile runs in the ledger, and their health columns.

-- The content hash of each entry: sha256 of its canonical JSON as jsonb reads it back (the same
-- text the row hash covers). Compared with what the source serves now. NULL for rows stored before
-- this migration: govtrail computes theirs from raw when it needs them. Adding a column rewrites
-- no row and fires no trigger: the append-only trigger and the hash chain are untouched.
alter table govtrail.history_entry add column content_sha256 bytea;

-- The ledger records reconcile runs beside syncs. Reconcile fills the counts below and the time
-- range it covered; a sync fills entries_changed (re-served entries of its lookback window whose
-- content changed at the source). NULL = not counted by that kind of run.
alter table govtrail.sync_run
  add column kind text not null default 'sync' check (kind in ('sync', 'reconcile')),
  add column entries_matched integer,
  add column entries_new integer,
  add column entries_changed integer,
  add column entries_missing integer,
  add column entries_expired integer,
  add column entries_backdated integer,
  add column covered_from timestamptz,
  add column covered_to timestamptz,
  add column covered_from_text text,
  add column covered_to_text text;
create index sync_run_tenant_kind on govtrail.sync_run (tenant_id, kind, status, finished_at desc);

-- Where the source and the store disagree. Append-only, like the history it is evidence about:
-- a finding is a fact of the moment it was made (what was stored, what was served, by which run),
-- and whether it still holds is what the next reconcile says (its ledger counts), not an update.
create table govtrail.source_discrepancy (
  discrepancy_id    bigint generated always as identity primary key,
  tenant_id         text not null,
  entry_id          text collate "C" not null,
  kind              text not null
                    check (kind in ('changed_at_source', 'missing_at_source', 'expired_at_source', 'backdated')),
  detected_at       timestamptz not null default now(),
  run_id            bigint not null references govtrail.sync_run (run_id),
  entry_created_at  timestamptz,
  -- Content hashes (hex sha256 of canonical JSON); NULL where that side is absent.
  stored_sha256     text,
  source_sha256     text,
  -- The version served (NULL for missing and expired).
  source_raw        jsonb,
  -- Seeing the same rewrite again (each sync of the lookback window, each reconcile) adds nothing;
  -- a further rewrite of the entry is a new source hash, hence a new row.
  constraint source_discrepancy_once unique nulls not distinct (tenant_id, entry_id, kind, source_sha256)
);
create index source_discrepancy_tenant_kind on govtrail.source_discrepancy (tenant_id, kind, run_id);
create index source_discrepancy_detected on govtrail.source_discrepancy (tenant_id, detected_at);

create trigger source_discrepancy_append_only before update or delete on govtrail.source_discrepancy
  for each row execute function govtrail.reject_modification();
create trigger source_discrepancy_no_truncate before truncate on govtrail.source_discrepancy
  for each statement execute function govtrail.reject_modification();

-- exporter_health: sync health now reads only sync runs, and gains the source's integrity. The open
-- discrepancies per kind are those the last successful reconcile found to hold, plus rewrites found
-- by syncs since.
create or replace view govtrail.exporter_health as
select
  k.tenant_id,
  ok.finished_at as last_success_at,
  bad.finished_at as last_failure_at,
  case when bad.run_id is null then null
       else concat_ws(': ', bad.error_code, bad.error_message) end as last_error,
  (select count(*) from govtrail.history_entry e where e.tenant_id = k.tenant_id) as entries_stored,
  c.entry_id as checkpoint_entry_id,
  c.entry_created_at as checkpoint_entry_created_at,
  extract(epoch from (now() - ok.finished_at))::bigint as seconds_since_success,
  last.status as last_run_status,
  last.started_at as last_run_started_at,
  rc.finished_at as last_reconcile_at,
  rc.status as last_reconcile_status,
  rc.run_id as last_reconcile_run_id,
  rc_ok.finished_at as last_verified_at,
  rc_ok.entries_matched as last_verified_entries,
  rc_ok.covered_from as last_verified_from,
  rc_ok.covered_to as last_verified_to,
  coalesce(rc_ok.entries_changed, 0) + coalesce(since.changed, 0) as open_changed_at_source,
  coalesce(rc_ok.entries_missing, 0) as open_missing_at_source,
  coalesce(rc_ok.entries_expired, 0) as open_expired_at_source,
  coalesce(rc_ok.entries_backdated, 0) as open_backdated
from (
  with recursive tenants(tenant_id) as (
    select min(tenant_id) from govtrail.history_entry
    union all
    select (select min(e.tenant_id) from govtrail.history_entry e where e.tenant_id > t.tenant_id)
    from tenants t where t.tenant_id is not null
  )
  select tenant_id from tenants where tenant_id is not null
  union
  select tenant_id from govtrail.sync_run
) k
left join govtrail.checkpoint c on c.tenant_id = k.tenant_id
left join lateral (
  select r.run_id, r.finished_at from govtrail.sync_run r
  where r.tenant_id = k.tenant_id and r.kind = 'sync' and r.status = 'succeeded'
  order by r.finished_at desc nulls last, r.run_id desc limit 1) ok on true
left join lateral (
  select r.run_id, r.finished_at, r.error_code, r.error_message from govtrail.sync_run r
  where r.tenant_id = k.tenant_id and r.kind = 'sync' and r.status = 'failed'
  order by r.finished_at desc nulls last, r.run_id desc limit 1) bad on true
left join lateral (
  select r.status, r.started_at from govtrail.sync_run r
  where r.tenant_id = k.tenant_id and r.kind = 'sync'
  order by r.started_at desc, r.run_id desc limit 1) last on true
left join lateral (
  select r.run_id, r.status, r.finished_at from govtrail.sync_run r
  where r.tenant_id = k.tenant_id and r.kind = 'reconcile' and r.status in ('succeeded', 'failed')
  order by r.finished_at desc nulls last, r.run_id desc limit 1) rc on true
left join lateral (
  select r.run_id, r.finished_at, r.entries_matched, r.entries_changed, r.entries_missing,
         r.entries_expired, r.entries_backdated, r.covered_from, r.covered_to
  from govtrail.sync_run r
  where r.tenant_id = k.tenant_id and r.kind = 'reconcile' and r.status = 'succeeded'
  order by r.finished_at desc nulls last, r.run_id desc limit 1) rc_ok on true
left join lateral (
  select count(distinct d.entry_id) as changed from govtrail.source_discrepancy d
  where d.tenant_id = k.tenant_id and d.kind = 'changed_at_source'
    and d.run_id > coalesce(rc_ok.run_id, 0)) since on true;

grant select on govtrail.source_discrepancy to govtrail_reader;
