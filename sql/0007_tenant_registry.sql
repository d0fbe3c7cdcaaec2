-- The tenant registry (issue 18): one row per tenant govtrail knows, with the non-secret settings of
-- the configuration that last listed it and the operator's decision about it (active, disabled,
-- retired). Configuration loads (`govtrail tenants sync`, the worker's start and reload) add and
-- update rows but never change a status an operator set. Secrets are never stored here: they stay in
-- the environment or in files (GOVTRAIL_CLIENT_SECRET[_FILE], client_secret[_file]).
-- exporter_health leaves out retired tenants, so they leave the dashboards' tenant list; their
-- history stays in every other view.

create table govtrail.tenant (
  tenant_id          text primary key,
  status             text not null default 'active'
                     check (status in ('active', 'disabled', 'retired')),
  -- From the configuration that last listed the tenant; NULL for a tenant found in the ledger when
  -- this migration ran and not listed by any configuration load since.
  base_url           text,
  client_id          text,
  page_size          integer,
  lookback           interval,
  first_seen_at      timestamptz not null default now(),
  last_loaded_at     timestamptz,
  status_changed_at  timestamptz not null default now(),
  enabled_at         timestamptz,
  enabled_by         text,
  disabled_at        timestamptz,
  disabled_by        text,
  retired_at         timestamptz,
  retired_by         text
);

-- Tenants already stored (history or ledger) are registered as active, so that one configured once
-- by mistake can be retired although no configuration lists it any more.
insert into govtrail.tenant (tenant_id, first_seen_at, status_changed_at, enabled_at, enabled_by)
select r.tenant_id, min(r.started_at), min(r.started_at), min(r.started_at), 'migration 0007'
from govtrail.sync_run r
group by r.tenant_id
on conflict (tenant_id) do nothing;

-- exporter_health as in 0004, without retired tenants.
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
    and d.run_id > coalesce(rc_ok.run_id, 0)) since on true
where not exists (
  select from govtrail.tenant rt where rt.tenant_id = k.tenant_id and rt.status = 'retired');

comment on view govtrail.exporter_health is
  'One row per tenant known to the run ledger or holding entries, except retired tenants (govtrail.tenant.status): is the exporter keeping up (syncs), and does the store still equal the source (reconciles)? Open counts of 0 with last_verified_at NULL mean not checked, not clean.';

-- Readers may see the registry (no secret is in it): which tenants are active, disabled or retired.
grant select on govtrail.tenant to govtrail_reader;

comment on table govtrail.tenant is
  'The tenant registry: one row per tenant govtrail knows, with the non-secret settings of the configuration that last listed it and its status. Configuration loads add tenants as active and never change a status an operator set (govtrail tenants disable / enable / retire). Secrets are never stored here.';
comment on column govtrail.tenant.tenant_id is
  'Tenant (configured tenant name, the tenant_id of every other table); key.';
comment on column govtrail.tenant.status is
  'active (synced), disabled (not synced until enabled; still in exporter_health) or retired (not synced; history kept; left out of exporter_health and the dashboards).';
comment on column govtrail.tenant.base_url is
  'Base URL of the tenant API from the configuration that last listed the tenant. NULL when no configuration load has listed it since migration 0007.';
comment on column govtrail.tenant.client_id is
  'OAuth client id (not secret) from that configuration; the client secret is never stored. NULL as base_url.';
comment on column govtrail.tenant.page_size is
  'History page size (10-100) from that configuration. NULL as base_url.';
comment on column govtrail.tenant.lookback is
  'Overlap window behind the checkpoint from that configuration. NULL as base_url.';
comment on column govtrail.tenant.first_seen_at is
  'When the tenant was registered (for tenants stored before migration 0007: their first run).';
comment on column govtrail.tenant.last_loaded_at is
  'When a configuration load (govtrail tenants sync, the worker start or reload, govtrail sync) last listed the tenant. NULL when none has.';
comment on column govtrail.tenant.status_changed_at is
  'When status last changed (registration counts as the first change).';
comment on column govtrail.tenant.enabled_at is
  'When the tenant last became active: registration or govtrail tenants enable.';
comment on column govtrail.tenant.enabled_by is
  'Who made it active: "configuration", "migration 0007", "run ledger" (registered by a status command from the run ledger), or the user@host that ran govtrail tenants enable.';
comment on column govtrail.tenant.disabled_at is
  'When govtrail tenants disable last disabled it; NULL when never.';
comment on column govtrail.tenant.disabled_by is
  'The user@host that ran govtrail tenants disable; NULL when never.';
comment on column govtrail.tenant.retired_at is
  'When govtrail tenants retire retired it; NULL when never.';
comment on column govtrail.tenant.retired_by is
  'The user@host that ran govtrail tenants retire; NULL when never.';
