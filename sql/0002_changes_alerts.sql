-- Field-level changes, the alert outbox and the remediation audit.

-- One row per field that differs from the chronologically previous snapshot of the tenant.
-- Not append-only: when an entry arrives late, the diff of the entry after it is recomputed.
create table govtrail.field_change (
  tenant_id  text not null,
  entry_id   text collate "C" not null,
  field      text not null,
  old_value  jsonb,
  new_value  jsonb,
  direction  text not null check (direction in ('loosened', 'tightened', 'changed')),
  primary key (tenant_id, entry_id, field),
  foreign key (tenant_id, entry_id) references govtrail.history_entry (tenant_id, entry_id)
);
create index field_change_field on govtrail.field_change (tenant_id, field);

create table govtrail.alert (
  alert_id      bigint generated always as identity primary key,
  tenant_id     text not null,
  entry_id      text collate "C",
  rule_id       text not null,
  rule_version  integer not null,
  severity      text not null check (severity in ('low', 'medium', 'high', 'critical')),
  title         text not null,
  summary       text not null,
  context       jsonb not null,
  dedupe_key    text not null unique,
  run_id        bigint references govtrail.sync_run (run_id),
  created_at    timestamptz not null default now()
);
create index alert_tenant_created on govtrail.alert (tenant_id, created_at desc);

create table govtrail.alert_delivery (
  alert_id         bigint not null references govtrail.alert (alert_id),
  sink             text not null,
  status           text not null default 'pending' check (status in ('pending', 'delivered', 'failed')),
  attempts         integer not null default 0,
  first_attempt_at timestamptz,
  next_attempt_at  timestamptz not null default now(),
  last_error       text,
  delivered_at     timestamptz,
  primary key (alert_id, sink)
);
create index alert_delivery_due on govtrail.alert_delivery (next_attempt_at) where status = 'pending';

create table govtrail.owner_removal (
  removal_id          bigint generated always as identity primary key,
  requested_at        timestamptz not null default now(),
  tenant_id           text not null,
  app_id              text not null,
  resource_type_id    text not null,
  resource_id         text not null,
  role_slug           text not null,
  entitlement_app_id  text not null,
  entitlement_id      text not null,
  dry_run             boolean not null,
  outcome             text not null check (outcome in ('deleted', 'absent', 'failed', 'dry_run')),
  http_status         integer,
  error               text
);
