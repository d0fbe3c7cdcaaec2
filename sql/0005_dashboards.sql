-- Dashboards (docs/dashboards.md): a daily rollup of the posture, the periods of one setting's
-- value, the run ledger for readers, and the indexes that keep them fast at millions of entries.
-- Every object here is read by govtrail_reader; the views of 0003 and 0004 are unchanged.

-- A setting's effective value as JSON, from a settings_snapshot row: booleans, enum names, the list
-- of client types ([] = all types, as an absent list means), durations as seconds ("3600s"), NULL
-- when unset. `setting` is a settings_snapshot column name (field_change.field); NULL for any other.
create function govtrail.setting_value(s govtrail.settings_snapshot, setting text)
returns jsonb language sql stable as $$
  select case setting
    when 'allowed_client_types' then to_jsonb(coalesce(s.allowed_client_types, '{}'::text[]))
    when 'audit_verbosity' then to_jsonb(s.audit_verbosity)
    when 'auto_discovery_enabled' then to_jsonb(s.auto_discovery_enabled)
    when 'default_tool_classification' then to_jsonb(s.default_tool_classification)
    when 'discovery_interval' then to_jsonb(trim_scale(extract(epoch from s.discovery_interval))::text || 's')
    when 'enabled' then to_jsonb(s.enabled)
    when 'inactivity_close_after' then to_jsonb(trim_scale(extract(epoch from s.inactivity_close_after))::text || 's')
    when 'inactivity_hide_after' then to_jsonb(trim_scale(extract(epoch from s.inactivity_hide_after))::text || 's')
    when 'prefer_code_mode_over_direct_tools' then to_jsonb(s.prefer_code_mode_over_direct_tools)
    when 'require_tool_approval' then to_jsonb(s.require_tool_approval)
    when 'retention_delete_after' then to_jsonb(trim_scale(extract(epoch from s.retention_delete_after))::text || 's')
    when 'surface_requestable_tools' then to_jsonb(s.surface_requestable_tools)
  end
$$;

-- Field changes by entry with their direction, read by id range (posture_daily, setting_periods):
-- the entries of a day or a range have their ids between the least and the greatest of them, so one
-- index range scan finds their changes without a probe per entry.
create index field_change_entry_direction on govtrail.field_change (tenant_id, entry_id) include (field, direction);
-- The deletions of a tenant by time (setting_periods): few rows, found without reading every entry.
create index history_entry_tenant_deletes on govtrail.history_entry (tenant_id, created_at, entry_id)
  where change_kind = 'CHANGE_KIND_HARD_DELETE';

-- One row per tenant, UTC day (from the day of its first entry to today) and setting: the value in
-- force at the end of the day, and the day's changes of that setting by direction. A plain view:
-- always current, nothing to refresh. A filter on day or day_start limits the days computed; each
-- day costs two index probes and one range scan of its field changes (about 5 ms a day at 1 M
-- entries, where a day holds some 2 000 entries).
create view govtrail.posture_daily as
with recursive tenants(tenant_id) as (
  select min(tenant_id) from govtrail.history_entry
  union all
  select (select min(e.tenant_id) from govtrail.history_entry e where e.tenant_id > k.tenant_id)
  from tenants k where k.tenant_id is not null
)
select
  k.tenant_id,
  (d.day_start at time zone 'UTC')::date as day,
  d.day_start,
  v.setting,
  case when s.is_deleted is false then govtrail.setting_value(s.snapshot, v.setting) end as value,
  case when s.is_deleted is false then govtrail.setting_value(s.snapshot, v.setting) #>> '{}' end as value_text,
  coalesce(s.is_deleted, false) as is_deleted,
  coalesce((c.counts -> v.setting ->> 0)::integer, 0) as loosened,
  coalesce((c.counts -> v.setting ->> 1)::integer, 0) as tightened,
  coalesce((c.counts -> v.setting ->> 2)::integer, 0) as changes
from tenants k
cross join lateral (
  select min(e.created_at) as first_at from govtrail.history_entry e where e.tenant_id = k.tenant_id
) f
cross join lateral generate_series(date_trunc('day', f.first_at, 'UTC'), date_trunc('day', now(), 'UTC'),
                                   interval '24 hours') d(day_start)
-- The settings_timeline row in force at the end of the day: the day's last entry with a snapshot or a
-- HARD_DELETE, found by walking the (tenant_id, created_at, entry_id) index backwards from midnight.
left join lateral (
  select e.change_kind = 'CHANGE_KIND_HARD_DELETE' as is_deleted, x as snapshot
  from govtrail.history_entry e
  left join govtrail.settings_snapshot x
    on x.tenant_id = e.tenant_id and x.entry_id = e.entry_id and e.change_kind is distinct from 'CHANGE_KIND_HARD_DELETE'
  where e.tenant_id = k.tenant_id and e.created_at < d.day_start + interval '24 hours'
    and (e.change_kind = 'CHANGE_KIND_HARD_DELETE'
         or exists (select from govtrail.settings_snapshot x1 where x1.tenant_id = e.tenant_id and x1.entry_id = e.entry_id))
  order by e.created_at desc, e.entry_id desc
  limit 1
) s on true
-- The day's field changes per field and direction. Its entries' ids lie between the least and the
-- greatest of them, so field_change is read by one range scan of field_change_entry_direction and
-- kept when its entry is one of the day's (the range may hold a few entries of other days: an id is
-- a KSUID, in time order to the second, but a backdated entry has an older createdAt than its id).
-- `entry_id || ''` keeps the planner from answering min/max by walking the primary key, which would
-- read every entry of the tenant.
left join lateral (
  select jsonb_object_agg(g.field, jsonb_build_array(g.loosened, g.tightened, g.changes)) as counts
  from (
    select fc.field,
           count(*) filter (where fc.direction = 'loosened') as loosened,
           count(*) filter (where fc.direction = 'tightened') as tightened,
           count(*) as changes
    from (select min(e.entry_id || '') as lo, max(e.entry_id || '') as hi from govtrail.history_entry e
          where e.tenant_id = k.tenant_id
            and e.created_at >= d.day_start and e.created_at < d.day_start + interval '24 hours') b
    join govtrail.field_change fc on fc.tenant_id = k.tenant_id and fc.entry_id between b.lo and b.hi
    where fc.entry_id in (select e.entry_id from govtrail.history_entry e
                          where e.tenant_id = k.tenant_id
                            and e.created_at >= d.day_start and e.created_at < d.day_start + interval '24 hours')
    group by fc.field
  ) g
) c on true
cross join lateral (values ('allowed_client_types'), ('audit_verbosity'), ('auto_discovery_enabled'),
  ('default_tool_classification'), ('discovery_interval'), ('enabled'), ('inactivity_close_after'),
  ('inactivity_hide_after'), ('prefer_code_mode_over_direct_tools'), ('require_tool_approval'),
  ('retention_delete_after'), ('surface_requestable_tools')) v(setting)
where k.tenant_id is not null;

-- The periods during which one setting kept one value, for a tenant, that overlap (from_at, to_at]:
-- one row per period, from the entry that set the value (valid_from, which may lie before from_at)
-- to the entry that changed it (valid_to, which may lie after to_at; NULL while it holds). A deletion
-- of the settings is a period of its own (is_deleted, value NULL). Reads the tables (security
-- definer) by index: the changes of the range by id range, never a probe per entry of the range.
-- Unknown setting names return no row.
create function govtrail.setting_periods(tenant text, setting text, from_at timestamptz, to_at timestamptz)
returns table (
  tenant_id text, setting text, valid_from timestamptz, valid_to timestamptz, value jsonb, value_text text,
  is_deleted boolean, entry_id text)
language sql stable security definer set search_path = pg_catalog, pg_temp
as $fn$
  -- The entries of the range, materialized: read twice, and a CTE keeps min/max from walking the
  -- primary key of the whole tenant.
  with win as materialized (
    select e.created_at, e.entry_id from govtrail.history_entry e
    where e.tenant_id = tenant and e.created_at > from_at and e.created_at <= to_at
  ), points as (
    -- Where a period may begin: the timeline row in force at from_at, ...
    (select e.created_at, e.entry_id, e.change_kind = 'CHANGE_KIND_HARD_DELETE' as is_deleted
     from govtrail.history_entry e
     where e.tenant_id = tenant and e.created_at <= from_at
       and (e.change_kind = 'CHANGE_KIND_HARD_DELETE'
            or exists (select from govtrail.settings_snapshot x where x.tenant_id = e.tenant_id and x.entry_id = e.entry_id))
     order by e.created_at desc, e.entry_id desc
     limit 1)
    union all
    -- The first timeline row of the range: when it is the tenant's first, its value may be a
    -- default, which field_change leaves out (the first entry diffs against an empty snapshot).
    (select e.created_at, e.entry_id, e.change_kind = 'CHANGE_KIND_HARD_DELETE'
     from govtrail.history_entry e
     where e.tenant_id = tenant and e.created_at > from_at and e.created_at <= to_at
       and (e.change_kind = 'CHANGE_KIND_HARD_DELETE'
            or exists (select from govtrail.settings_snapshot x where x.tenant_id = e.tenant_id and x.entry_id = e.entry_id))
     order by e.created_at, e.entry_id
     limit 1)
    union all
    -- Entries of the range that changed the setting.
    select w.created_at, w.entry_id, false from win w
    where w.entry_id in (select fc.entry_id
                         from (select min(w1.entry_id) as lo, max(w1.entry_id) as hi from win w1) b
                         join govtrail.field_change fc
                           on fc.tenant_id = tenant and fc.entry_id between b.lo and b.hi and fc.field = setting)
    union all
    -- ... and deletions in the range with the row that ends each (a re-creation diffs against the
    -- snapshot before the deletion: no field_change row when it restores the same value).
    select p.created_at, p.entry_id, p.is_deleted
    from govtrail.history_entry d
    cross join lateral (
      select d.created_at, d.entry_id, true as is_deleted
      union all
      (select n.created_at, n.entry_id, n.change_kind = 'CHANGE_KIND_HARD_DELETE'
       from govtrail.history_entry n
       where n.tenant_id = d.tenant_id and n.created_at >= d.created_at and n.created_at <= to_at
         and (n.created_at, n.entry_id) > (d.created_at, d.entry_id)
         and (n.change_kind = 'CHANGE_KIND_HARD_DELETE'
              or exists (select from govtrail.settings_snapshot x where x.tenant_id = n.tenant_id and x.entry_id = n.entry_id))
       order by n.created_at, n.entry_id
       limit 1)) p
    where d.tenant_id = tenant and d.change_kind = 'CHANGE_KIND_HARD_DELETE'
      and d.created_at > from_at and d.created_at <= to_at
  ), states as (
    -- The setting's state at each of those rows; then a period begins wherever it differs from the
    -- previous row's.
    select distinct on (p.created_at, p.entry_id) p.created_at, p.entry_id, p.is_deleted,
           case when not p.is_deleted then govtrail.setting_value(x, setting) end as value
    from points p
    left join govtrail.settings_snapshot x on x.tenant_id = tenant and x.entry_id = p.entry_id and not p.is_deleted
    order by p.created_at, p.entry_id
  ), periods as (
    select s.created_at, s.entry_id, s.is_deleted, s.value,
           lead(s.created_at) over w as next_from, row_number() over w as rn, count(*) over () as n
    from (select s.*, row_number() over w0 = 1
                      or s.is_deleted is distinct from lag(s.is_deleted) over w0
                      or s.value is distinct from lag(s.value) over w0 as starts_period
          from states s window w0 as (order by s.created_at, s.entry_id)) s
    where s.starts_period
    window w as (order by s.created_at, s.entry_id)
  )
  select tenant, setting, coalesce(first.created_at, p.created_at),
         case when p.rn < p.n then p.next_from else last.created_at end,
         p.value, p.value #>> '{}', p.is_deleted, coalesce(first.entry_id, p.entry_id)
  from periods p
  -- The first period may have begun before the range: walk back to the last row with another
  -- state (the walk is as long as the run of rows with this state before the range) ...
  left join lateral (
    select n.created_at, n.entry_id from govtrail.history_entry n
    left join govtrail.settings_snapshot x on x.tenant_id = n.tenant_id and x.entry_id = n.entry_id
    where p.rn = 1 and n.tenant_id = tenant and n.created_at <= p.created_at
      and (n.created_at, n.entry_id) < (p.created_at, p.entry_id)
      and (n.change_kind = 'CHANGE_KIND_HARD_DELETE' or x.entry_id is not null)
      and ((n.change_kind = 'CHANGE_KIND_HARD_DELETE') is distinct from p.is_deleted
           or case when n.change_kind is distinct from 'CHANGE_KIND_HARD_DELETE' then govtrail.setting_value(x, setting) end
              is distinct from p.value)
    order by n.created_at desc, n.entry_id desc limit 1
  ) prev on true
  -- ... the period began with the row after it (or with the tenant's first row).
  left join lateral (
    select n.created_at, n.entry_id from govtrail.history_entry n
    where p.rn = 1 and n.tenant_id = tenant
      and (prev.entry_id is null or (n.created_at, n.entry_id) > (prev.created_at, prev.entry_id))
      and n.created_at >= coalesce(prev.created_at, '-infinity')
      and (n.change_kind = 'CHANGE_KIND_HARD_DELETE'
           or exists (select from govtrail.settings_snapshot x where x.tenant_id = n.tenant_id and x.entry_id = n.entry_id))
    order by n.created_at, n.entry_id limit 1
  ) first on true
  -- The last period may end after the range: at the first later row with another state.
  left join lateral (
    select n.created_at from govtrail.history_entry n
    left join govtrail.settings_snapshot x on x.tenant_id = n.tenant_id and x.entry_id = n.entry_id
    where p.rn = p.n and n.tenant_id = tenant and n.created_at >= p.created_at
      and (n.created_at, n.entry_id) > (p.created_at, p.entry_id)
      and (n.change_kind = 'CHANGE_KIND_HARD_DELETE' or x.entry_id is not null)
      and ((n.change_kind = 'CHANGE_KIND_HARD_DELETE') is distinct from p.is_deleted
           or case when n.change_kind is distinct from 'CHANGE_KIND_HARD_DELETE' then govtrail.setting_value(x, setting) end
              is distinct from p.value)
    order by n.created_at, n.entry_id limit 1
  ) last on true
  where setting in ('allowed_client_types', 'audit_verbosity', 'auto_discovery_enabled', 'default_tool_classification',
                    'discovery_interval', 'enabled', 'inactivity_close_after', 'inactivity_hide_after',
                    'prefer_code_mode_over_direct_tools', 'require_tool_approval', 'retention_delete_after',
                    'surface_requestable_tools')
  order by 3, 8
$fn$;

-- The run ledger for readers: one row per sync or reconcile run (sync_run, every column but none
-- that the reader should not see: error messages are already scrubbed of secrets).
create view govtrail.run_log as
select r.run_id, r.tenant_id, r.kind, r.trigger, r.started_at, r.finished_at,
       extract(epoch from (r.finished_at - r.started_at)) as duration_seconds,
       r.status, r.stop_reason, r.error_code, r.error_message,
       r.pages_fetched, r.entries_fetched, r.entries_inserted, r.entries_rejected, r.warnings, r.http_retries,
       r.checkpoint_before, r.checkpoint_after,
       r.entries_matched, r.entries_new, r.entries_changed, r.entries_missing, r.entries_expired,
       r.entries_backdated, r.covered_from, r.covered_to
from govtrail.sync_run r;

grant select on govtrail.posture_daily, govtrail.run_log to govtrail_reader;
grant execute on function govtrail.setting_value(govtrail.settings_snapshot, text) to govtrail_reader;
-- setting_periods runs as its owner: only the reader, not every role, may call it.
revoke execute on function govtrail.setting_periods(text, text, timestamptz, timestamptz) from public;
grant execute on function govtrail.setting_periods(text, text, timestamptz, timestamptz) to govtrail_reader;

comment on function govtrail.setting_value(govtrail.settings_snapshot, text) is
  'Effective value of one setting (a settings_snapshot column name) as JSON: booleans, enum names, the client type list ([] = all types), durations as seconds ("3600s"); NULL when unset or unknown.';

comment on view govtrail.posture_daily is
  'One row per tenant, UTC day (from its first entry to today) and setting: the value in force at the end of the day and the day''s changes of that setting by direction. Filter on tenant_id and day or day_start.';
comment on column govtrail.posture_daily.tenant_id is 'The tenant.';
comment on column govtrail.posture_daily.day is 'The calendar day in UTC.';
comment on column govtrail.posture_daily.day_start is 'Midnight UTC starting the day: the time column for Grafana.';
comment on column govtrail.posture_daily.setting is 'The setting: a settings_snapshot column name, as in change_log.field (extra_fields.* are not rolled up).';
comment on column govtrail.posture_daily.value is 'Its effective value at the end of the day as JSON (see setting_value); NULL when unset, or when the settings were deleted at the end of the day.';
comment on column govtrail.posture_daily.value_text is 'value as text: strings without quotes, true/false, durations like 3600s, the client type list as a JSON array.';
comment on column govtrail.posture_daily.is_deleted is 'True when the settings were deleted (HARD_DELETE) at the end of the day.';
comment on column govtrail.posture_daily.loosened is 'Changes of this setting that day that weakened governance (change_log.direction = loosened).';
comment on column govtrail.posture_daily.tightened is 'Changes of this setting that day that strengthened governance (direction = tightened).';
comment on column govtrail.posture_daily.changes is 'All changes of this setting that day, loosened, tightened and changed.';

comment on function govtrail.setting_periods(text, text, timestamptz, timestamptz) is
  'Periods during which one setting kept one value that overlap (from_at, to_at]: valid_from (may precede from_at), valid_to (may follow to_at; NULL while current), value, value_text, is_deleted, and the entry that began the period.';

comment on view govtrail.run_log is
  'One row per run of the ledger (sync_run): syncs and reconciles with their status, counts, error and covered range.';
comment on column govtrail.run_log.run_id is 'The run (sync_run.run_id; history_entry.run_id and alert.run_id refer to it).';
comment on column govtrail.run_log.tenant_id is 'The tenant.';
comment on column govtrail.run_log.kind is 'sync or reconcile.';
comment on column govtrail.run_log.trigger is 'What started it: cli, schedule or demo.';
comment on column govtrail.run_log.started_at is 'When it started: the time column for Grafana.';
comment on column govtrail.run_log.finished_at is 'When it finished; NULL while running.';
comment on column govtrail.run_log.duration_seconds is 'finished_at - started_at in seconds; NULL while running.';
comment on column govtrail.run_log.status is 'running, succeeded, failed or skipped (another replica held the tenant''s lock).';
comment on column govtrail.run_log.stop_reason is 'Why a sync stopped paging: checkpoint or end_of_history.';
comment on column govtrail.run_log.error_code is 'Stable error code of a failed run (README, Error codes).';
comment on column govtrail.run_log.error_message is 'Its message, scrubbed of secrets.';
comment on column govtrail.run_log.pages_fetched is 'History pages fetched.';
comment on column govtrail.run_log.entries_fetched is 'Entries received.';
comment on column govtrail.run_log.entries_inserted is 'Entries stored.';
comment on column govtrail.run_log.entries_rejected is 'Entries that could not be stored as rows (rejected_entry).';
comment on column govtrail.run_log.warnings is 'Entries stored with a warning.';
comment on column govtrail.run_log.http_retries is 'HTTP requests retried.';
comment on column govtrail.run_log.checkpoint_before is 'Checkpoint entry id at the start.';
comment on column govtrail.run_log.checkpoint_after is 'Checkpoint entry id at the end.';
comment on column govtrail.run_log.entries_matched is 'Reconcile: served entries equal to the stored ones; NULL for a sync.';
comment on column govtrail.run_log.entries_new is 'Reconcile: new entries stored as a sync would.';
comment on column govtrail.run_log.entries_changed is 'Entries served with content other than stored (changed_at_source).';
comment on column govtrail.run_log.entries_missing is 'Reconcile: stored entries the source no longer serves (missing_at_source).';
comment on column govtrail.run_log.entries_expired is 'Reconcile: stored entries older than the oldest served (expired_at_source).';
comment on column govtrail.run_log.entries_backdated is 'Reconcile: entries served into the past (backdated).';
comment on column govtrail.run_log.covered_from is 'Reconcile: createdAt of the oldest entry served.';
comment on column govtrail.run_log.covered_to is 'Reconcile: createdAt of the newest entry served.';
