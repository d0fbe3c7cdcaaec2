-- govtrail core tables: the history feed as relational rows, the checkpoint and the run ledger.
-- Forward-only: never edit a migration that has shipped; add a new file instead.

create schema if not exists govtrail;

-- The run ledger: one row per attempted run of one tenant.
create table govtrail.sync_run (
  run_id            bigint generated always as identity primary key,
  tenant_id         text not null,
  trigger           text not null,
  started_at        timestamptz not null default now(),
  finished_at       timestamptz,
  status            text not null default 'running'
                    check (status in ('running', 'succeeded', 'failed', 'skipped')),
  pages_fetched     integer not null default 0,
  entries_fetched   integer not null default 0,
  entries_inserted  integer not null default 0,
  entries_rejected  integer not null default 0,
  warnings          integer not null default 0,
  http_retries      integer not null default 0,
  checkpoint_before text collate "C",
  checkpoint_after  text collate "C",
  stop_reason       text check (stop_reason in ('checkpoint', 'end_of_history')),
  error_code        text,
  error_message     text
);
create index sync_run_tenant_started on govtrail.sync_run (tenant_id, started_at desc, run_id desc);

-- One row per history entry, exactly as received plus typed columns. Append-only.
create table govtrail.history_entry (
  tenant_id        text not null,
  entry_id         text collate "C" not null,
  created_at       timestamptz not null,
  created_at_text  text,             -- NULL when the wire had none (created_at then comes from the KSUID)
  change_kind      text,
  actor_kind       text,
  actor_user_id    text,
  syslog_event_id  text,
  trace_id         text,
  raw              jsonb not null,
  run_id           bigint not null references govtrail.sync_run (run_id),
  loaded_at        timestamptz not null default now(),
  -- Storage order, for the tamper-evidence chain (row_hash covers the previous row of the tenant in this order).
  seq              bigint generated always as identity,
  row_hash         bytea not null,
  primary key (tenant_id, entry_id)
);
create index history_entry_tenant_time on govtrail.history_entry (tenant_id, created_at, entry_id);
create unique index history_entry_tenant_seq on govtrail.history_entry (tenant_id, seq);
create index history_entry_run on govtrail.history_entry (run_id);

create table govtrail.history_annotation (
  tenant_id      text not null,
  entry_id       text collate "C" not null,
  ordinal        integer not null,
  key            text,
  kind           text,
  raw_value      text,
  display_value  text,
  display_label  text,
  display_url    text,
  primary key (tenant_id, entry_id, ordinal),
  foreign key (tenant_id, entry_id) references govtrail.history_entry (tenant_id, entry_id)
);
create index history_annotation_kind on govtrail.history_annotation (tenant_id, kind);

create table govtrail.settings_snapshot (
  tenant_id                          text not null,
  entry_id                           text collate "C" not null,
  allowed_client_types               text[],
  allows_all_client_types            boolean not null,
  audit_verbosity                    text,
  auto_discovery_enabled             boolean,
  default_tool_classification        text,
  discovery_interval                 interval,
  inactivity_close_after             interval,
  inactivity_hide_after              interval,
  retention_delete_after             interval,
  enabled                            boolean,
  prefer_code_mode_over_direct_tools boolean,
  require_tool_approval              boolean,
  surface_requestable_tools          boolean,
  settings_created_at                timestamptz,
  settings_updated_at                timestamptz,
  extra_fields                       jsonb not null default '{}'::jsonb,
  primary key (tenant_id, entry_id),
  foreign key (tenant_id, entry_id) references govtrail.history_entry (tenant_id, entry_id)
);

-- The newest entry stored by the last successful run of each tenant.
create table govtrail.checkpoint (
  tenant_id             text primary key,
  entry_id              text collate "C" not null,
  entry_created_at      timestamptz not null,
  entry_created_at_key  text not null, -- UTC, nine fractional digits: the stop rule compares at nanosecond precision
  run_id                bigint not null references govtrail.sync_run (run_id),
  updated_at            timestamptz not null default now()
);

-- Entries that could not be stored as rows: kept, never silently dropped.
create table govtrail.rejected_entry (
  rejected_id  bigint generated always as identity primary key,
  tenant_id    text not null,
  run_id       bigint not null references govtrail.sync_run (run_id),
  received_at  timestamptz not null default now(),
  reason       text not null,
  raw          jsonb,
  -- The same malformed entry is served again on every run inside the lookback window: keep it once.
  raw_sha256   text not null
);
create index rejected_entry_tenant on govtrail.rejected_entry (tenant_id, received_at);
create unique index rejected_entry_once on govtrail.rejected_entry (tenant_id, raw_sha256);

-- Evidence tables are append-only: govtrail never updates or deletes them, and neither may anyone else
-- without first disabling this trigger (which the tamper-evidence chain then exposes).
create function govtrail.reject_modification() returns trigger
language plpgsql as $$
begin
  raise exception 'govtrail.% is append-only: % is not allowed', tg_table_name, tg_op
    using errcode = 'insufficient_privilege';
end;
$$;

create trigger history_entry_append_only before update or delete on govtrail.history_entry
  for each row execute function govtrail.reject_modification();
create trigger history_entry_no_truncate before truncate on govtrail.history_entry
  for each statement execute function govtrail.reject_modification();
create trigger history_annotation_append_only before update or delete on govtrail.history_annotation
  for each row execute function govtrail.reject_modification();
create trigger history_annotation_no_truncate before truncate on govtrail.history_annotation
  for each statement execute function govtrail.reject_modification();
create trigger settings_snapshot_append_only before update or delete on govtrail.settings_snapshot
  for each row execute function govtrail.reject_modification();
create trigger settings_snapshot_no_truncate before truncate on govtrail.settings_snapshot
  for each statement execute function govtrail.reject_modification();
