-- Conformance (docs/design/conformance.md): the baseline texts govtrail has judged by, which
-- baseline judges each tenant, the periods of constant status of every control, the record of
-- `govtrail baseline check`, and the views analysts read.

-- Every distinct baseline text ever loaded, with the time it was first loaded (the approval time
-- of an exception that gives none). Append-only, like the evidence tables: a report or an evidence
-- pack can always show the exact policy a period was judged by.
create table govtrail.baseline_text (
  baseline_id      text not null,
  sha256           text not null check (sha256 ~ '^[0-9a-f]{64}$'),
  text             text not null,
  first_loaded_at  timestamptz not null default now(),
  primary key (baseline_id, sha256)
);
create trigger baseline_text_append_only before update or delete on govtrail.baseline_text
  for each row execute function govtrail.reject_modification();
create trigger baseline_text_no_truncate before truncate on govtrail.baseline_text
  for each statement execute function govtrail.reject_modification();

-- The registry records which baseline judges each tenant (NULL: none configured, or never judged).
alter table govtrail.tenant
  add column baseline_id text,
  add column baseline_sha256 text,
  add column baseline_judged_at timestamptz;

-- One row per maximal interval of constant status of one control of one tenant, judged by the
-- tenant's baseline. Derived from the history by the pure judge (src/core/conformance/) and
-- maintained by every run in its transaction: a run rewrites the rows from its earliest stored
-- entry on, a change of baseline rewrites the tenant's rows. Rows may begin in the future: an
-- exception's expiry is known in advance. valid_*_key keep the nanoseconds that decide order.
create table govtrail.control_period (
  tenant_id         text not null,
  baseline_id       text not null,
  baseline_sha256   text not null,
  control_id        text not null,
  status            text not null check (status in ('pass', 'fail', 'excepted', 'deleted')),
  valid_from        timestamptz not null,
  valid_to          timestamptz,
  valid_from_key    text collate "C" not null,
  valid_to_key      text collate "C",
  entry_id          text collate "C",
  actor_kind        text,
  actor_user_id     text,
  ticket            text,
  value             jsonb,
  primary key (tenant_id, control_id, valid_from_key),
  check (valid_to_key is null or valid_to_key > valid_from_key)
);
-- A run rewrites a tenant's rows from an instant on.
create index control_period_tenant_from on govtrail.control_period (tenant_id, valid_from_key);

-- The record of `govtrail baseline check`: the statuses it saw, so the next check can say what
-- changed. Append-only.
create table govtrail.baseline_check (
  check_id         bigint generated always as identity primary key,
  tenant_id        text not null,
  baseline_id      text not null,
  baseline_sha256  text not null,
  checked_at       timestamptz not null default now(),
  statuses         jsonb not null
);
create index baseline_check_tenant on govtrail.baseline_check (tenant_id, baseline_id, check_id desc);
create trigger baseline_check_append_only before update or delete on govtrail.baseline_check
  for each row execute function govtrail.reject_modification();
create trigger baseline_check_no_truncate before truncate on govtrail.baseline_check
  for each statement execute function govtrail.reject_modification();

grant update, delete on govtrail.control_period to govtrail_writer;

-- The status of every control now: the period in force at now() (a later row is a scheduled
-- expiry). One index probe per tenant and control.
create view govtrail.control_status_current as
select p.tenant_id, p.baseline_id, p.baseline_sha256, p.control_id, p.status, p.valid_from as since,
       p.valid_to as until, p.entry_id, p.actor_kind, p.actor_user_id, p.ticket, p.value, p.valid_from_key as since_key
from (select distinct tenant_id, control_id from govtrail.control_period) k
cross join lateral (
  select c.* from govtrail.control_period c
  where c.tenant_id = k.tenant_id and c.control_id = k.control_id and c.valid_from <= now()
  order by c.valid_from_key desc limit 1) p;

-- One row per tenant, control and UTC day (from the day of the control's first period to today):
-- the share of the day spent in each status, today up to now. Time before the first snapshot is
-- unknown; deleted counts as failing in compliant_share.
create view govtrail.compliance_daily as
with first as (
  select tenant_id, control_id, min(valid_from) as first_at
  from govtrail.control_period group by tenant_id, control_id
)
select
  f.tenant_id,
  (d.day_start at time zone 'UTC')::date as day,
  d.day_start,
  f.control_id,
  coalesce(s.pass, 0) / d.span as pass_share,
  coalesce(s.fail, 0) / d.span as fail_share,
  coalesce(s.excepted, 0) / d.span as excepted_share,
  coalesce(s.deleted, 0) / d.span as deleted_share,
  greatest(d.span - coalesce(s.pass, 0) - coalesce(s.fail, 0) - coalesce(s.excepted, 0) - coalesce(s.deleted, 0), 0)
    / d.span as unknown_share,
  (coalesce(s.pass, 0) + coalesce(s.excepted, 0)) / d.span as compliant_share
from first f
cross join lateral (
  select g.day_start, extract(epoch from least(g.day_start + interval '24 hours', now()) - g.day_start) as span
  from generate_series(date_trunc('day', f.first_at, 'UTC'), date_trunc('day', now(), 'UTC'), interval '24 hours') g(day_start)
) d
left join lateral (
  select sum(x.secs) filter (where x.status = 'pass') as pass,
         sum(x.secs) filter (where x.status = 'fail') as fail,
         sum(x.secs) filter (where x.status = 'excepted') as excepted,
         sum(x.secs) filter (where x.status = 'deleted') as deleted
  from (
    select p.status,
           extract(epoch from least(coalesce(p.valid_to, 'infinity'), d.day_start + interval '24 hours', now())
                              - greatest(p.valid_from, d.day_start)) as secs
    from govtrail.control_period p
    where p.tenant_id = f.tenant_id and p.control_id = f.control_id
      and p.valid_from < least(d.day_start + interval '24 hours', now())
      and (p.valid_to is null or p.valid_to > d.day_start)
  ) x where x.secs > 0
) s on true
where d.span > 0;

grant select on govtrail.baseline_text, govtrail.control_period, govtrail.baseline_check,
  govtrail.control_status_current, govtrail.compliance_daily to govtrail_reader;

comment on table govtrail.baseline_text is
  'Every distinct baseline text govtrail has loaded, with its sha256 and when it was first loaded (the approval time of an exception that gives none). Append-only: a trigger rejects UPDATE, DELETE and TRUNCATE.';
comment on column govtrail.baseline_text.baseline_id is 'The baseline''s id (its `baseline:` key).';
comment on column govtrail.baseline_text.sha256 is 'Hex sha256 of the file''s bytes; with baseline_id, the identity of the policy.';
comment on column govtrail.baseline_text.text is 'The file''s text, exactly as loaded.';
comment on column govtrail.baseline_text.first_loaded_at is 'When this text was first loaded.';

comment on column govtrail.tenant.baseline_id is 'Id of the baseline that judges the tenant (control_period); NULL when none has.';
comment on column govtrail.tenant.baseline_sha256 is 'sha256 of that baseline''s text (baseline_text); NULL as baseline_id.';
comment on column govtrail.tenant.baseline_judged_at is 'When a run last judged the tenant''s history against that baseline; NULL as baseline_id.';

comment on table govtrail.control_period is
  'One row per maximal interval of constant status of one control of one tenant, judged by the tenant''s baseline; the rows of a tenant and control tile its time from the first snapshot on. Maintained by every run in its transaction. A row may begin in the future when an exception''s expiry is known.';
comment on column govtrail.control_period.tenant_id is 'Tenant.';
comment on column govtrail.control_period.baseline_id is 'The baseline that judged the period (tenant.baseline_id).';
comment on column govtrail.control_period.baseline_sha256 is 'sha256 of that baseline''s text (baseline_text).';
comment on column govtrail.control_period.control_id is 'The control''s id in the baseline (AIG-01).';
comment on column govtrail.control_period.status is 'pass (meets the expectation), fail (does not), excepted (does not, but an exception for this tenant accepts exactly this value now), deleted (settings hard-deleted; counts as fail).';
comment on column govtrail.control_period.valid_from is 'First instant of the period (microseconds; valid_from_key keeps nanoseconds).';
comment on column govtrail.control_period.valid_to is 'First instant after the period; NULL while current.';
comment on column govtrail.control_period.valid_from_key is 'valid_from as UTC text with nine fractional digits (sorts as time).';
comment on column govtrail.control_period.valid_to_key is 'valid_to as UTC text with nine fractional digits; NULL while current.';
comment on column govtrail.control_period.entry_id is 'The entry that opened the period; NULL when an exception''s approval or expiry did.';
comment on column govtrail.control_period.actor_kind is 'Actor kind of that entry.';
comment on column govtrail.control_period.actor_user_id is 'Actor user id of that entry.';
comment on column govtrail.control_period.ticket is 'The first TICKET annotation of that entry; NULL when none.';
comment on column govtrail.control_period.value is 'The field''s effective value when the period opened (JSON; NULL for deleted).';

comment on table govtrail.baseline_check is
  'One row per tenant each time govtrail baseline check ran: the statuses it reported, so the next check can say what changed. Append-only.';
comment on column govtrail.baseline_check.check_id is 'Order of the checks.';
comment on column govtrail.baseline_check.tenant_id is 'Tenant.';
comment on column govtrail.baseline_check.baseline_id is 'The baseline checked against.';
comment on column govtrail.baseline_check.baseline_sha256 is 'sha256 of its text.';
comment on column govtrail.baseline_check.checked_at is 'When the check ran.';
comment on column govtrail.baseline_check.statuses is 'Control id → status seen ({"AIG-01": "fail"}).';

comment on view govtrail.control_status_current is
  'One row per tenant and control: the period of control_period in force now.';
comment on column govtrail.control_status_current.tenant_id is 'Tenant.';
comment on column govtrail.control_status_current.baseline_id is 'The baseline judging the tenant.';
comment on column govtrail.control_status_current.baseline_sha256 is 'sha256 of its text.';
comment on column govtrail.control_status_current.control_id is 'The control.';
comment on column govtrail.control_status_current.status is 'pass, fail, excepted or deleted.';
comment on column govtrail.control_status_current.since is 'When the current status began.';
comment on column govtrail.control_status_current.until is 'When it will end, if already known (an exception''s expiry); NULL otherwise.';
comment on column govtrail.control_status_current.entry_id is 'The entry that began it; NULL for an exception''s approval or expiry.';
comment on column govtrail.control_status_current.actor_kind is 'Actor kind of that entry.';
comment on column govtrail.control_status_current.actor_user_id is 'Actor user id of that entry.';
comment on column govtrail.control_status_current.ticket is 'First TICKET annotation of that entry.';
comment on column govtrail.control_status_current.value is 'The field''s effective value when the status began.';
comment on column govtrail.control_status_current.since_key is 'since with nine fractional digits.';

comment on view govtrail.compliance_daily is
  'One row per tenant, control and UTC day from the control''s first period to today: the share of the day (today: up to now) spent in each status. The five shares sum to 1.';
comment on column govtrail.compliance_daily.tenant_id is 'Tenant.';
comment on column govtrail.compliance_daily.day is 'The UTC day.';
comment on column govtrail.compliance_daily.day_start is 'Its first instant (a time column for Grafana).';
comment on column govtrail.compliance_daily.control_id is 'The control.';
comment on column govtrail.compliance_daily.pass_share is 'Share of the day passing.';
comment on column govtrail.compliance_daily.fail_share is 'Share of the day failing.';
comment on column govtrail.compliance_daily.excepted_share is 'Share of the day failing under an exception.';
comment on column govtrail.compliance_daily.deleted_share is 'Share of the day with the settings deleted.';
comment on column govtrail.compliance_daily.unknown_share is 'Share of the day before the tenant''s first snapshot.';
comment on column govtrail.compliance_daily.compliant_share is 'pass_share + excepted_share: the share in policy.';
