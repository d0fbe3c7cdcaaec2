-- Found by any run (integrity.md, sync.md S12): the `conflicting_ids` kind of source_discrepancy (one
-- id served with two contents in one listing), counted in the reconcile ledger and in
-- exporter_health. No row of an evidence table is changed: the kind check is widened (every existing
-- row still satisfies it), one nullable column is added to the ledger, and the view gains one column
-- at its end.

alter table govtrail.source_discrepancy drop constraint source_discrepancy_kind_check;
alter table govtrail.source_discrepancy add constraint source_discrepancy_kind_check
  check (kind in ('changed_at_source', 'missing_at_source', 'expired_at_source', 'backdated', 'conflicting_ids'));

-- Ids a reconcile saw served with more than one content (NULL for syncs and older reconciles).
alter table govtrail.sync_run add column entries_conflicting integer;

-- exporter_health as in 0007 (retired tenants left out), plus open_conflicting_ids: the ids the last successful reconcile saw
-- served twice with different contents, plus distinct ids recorded so by syncs since.
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
  coalesce(rc_ok.entries_backdated, 0) as open_backdated,
  coalesce(rc_ok.entries_conflicting, 0) + coalesce(since.conflicting, 0) as open_conflicting_ids
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
         r.entries_expired, r.entries_backdated, r.entries_conflicting, r.covered_from, r.covered_to
  from govtrail.sync_run r
  where r.tenant_id = k.tenant_id and r.kind = 'reconcile' and r.status = 'succeeded'
  order by r.finished_at desc nulls last, r.run_id desc limit 1) rc_ok on true
left join lateral (
  select count(distinct d.entry_id) filter (where d.kind = 'changed_at_source') as changed,
         count(distinct d.entry_id) filter (where d.kind = 'conflicting_ids') as conflicting
  from govtrail.source_discrepancy d
  where d.tenant_id = k.tenant_id and d.kind in ('changed_at_source', 'conflicting_ids')
    and d.run_id > coalesce(rc_ok.run_id, 0)) since on true
where not exists (
  select from govtrail.tenant rt where rt.tenant_id = k.tenant_id and rt.status = 'retired');

comment on column govtrail.exporter_health.open_conflicting_ids is
  'Ids the source serves with more than one content in one listing: entries_conflicting of the latest successful reconcile plus distinct ids found so by later syncs. 0 when none.';
comment on column govtrail.source_discrepancy.kind is
  'changed_at_source (same id, other content), missing_at_source (a hole in the source history), expired_at_source (past the source retention), backdated (served, older than checkpoint minus lookback) or conflicting_ids (one id served with two contents in one listing).';
comment on column govtrail.source_discrepancy.run_id is
  'The sync_run that found it: a reconcile, or a sync (changed_at_source inside its lookback window; backdated and conflicting_ids on any page it read).';
comment on column govtrail.source_discrepancy.stored_sha256 is
  'Hex sha256 content hash (canonical JSON) of the stored entry (for conflicting_ids: the version govtrail holds under that id); NULL for backdated (nothing was stored before).';
comment on column govtrail.source_discrepancy.source_sha256 is
  'Hex sha256 content hash (canonical JSON) of the served entry (for conflicting_ids: the other version served under that id); NULL for missing_at_source and expired_at_source.';
comment on column govtrail.source_discrepancy.source_raw is
  'The served entry, whole, as jsonb (for conflicting_ids: the other version); NULL for missing_at_source and expired_at_source.';
