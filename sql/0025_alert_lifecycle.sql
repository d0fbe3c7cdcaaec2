-- The lifecycle of an alert (alerts.md, "Handling an alert"): an INSERT-only table of what
-- happened to each alert (acknowledged, assigned, resolved, snoozed, reopened, noted, repeated),
-- a view of each alert's current state as a fold of those events, and the outbox of the
-- follow-ups the sinks receive for them.

create table govtrail.alert_event (
  event_id      bigint generated always as identity primary key,
  alert_id      bigint not null references govtrail.alert (alert_id),
  kind          text not null check (kind in
                  ('acknowledged', 'assigned', 'resolved', 'snoozed', 'reopened', 'noted', 'repeated')),
  actor         text not null check (actor <> ''),
  at            timestamptz not null default now(),
  note          text,
  assignee      text check (kind <> 'assigned' or assignee <> ''),
  until         timestamptz check ((kind = 'snoozed') = (until is not null)),
  automatic     boolean not null default false,
  repeat_count  integer check ((kind = 'repeated') = (repeat_count is not null)),
  details       jsonb
);
create index alert_event_alert on govtrail.alert_event (alert_id, event_id);

create trigger alert_event_append_only before update or delete on govtrail.alert_event
  for each row execute function govtrail.reject_modification();
create trigger alert_event_no_truncate before truncate on govtrail.alert_event
  for each statement execute function govtrail.reject_modification();

-- One row per lifecycle event and sink the alert was routed to: its delivery state, as
-- alert_delivery is for the alert itself. Updated by the delivery loop.
create table govtrail.alert_event_delivery (
  event_id         bigint not null references govtrail.alert_event (event_id),
  sink             text not null,
  status           text not null default 'pending' check (status in ('pending', 'delivered', 'failed')),
  attempts         integer not null default 0,
  first_attempt_at timestamptz,
  next_attempt_at  timestamptz not null default now(),
  last_error       text,
  delivered_at     timestamptz,
  primary key (event_id, sink)
);
create index alert_event_delivery_due on govtrail.alert_event_delivery (next_attempt_at) where status = 'pending';
grant update on govtrail.alert_event_delivery to govtrail_writer;

-- The current state of each alert: the same fold as src/core/alert-lifecycle.ts `replay` and
-- `stateAt` (a test compares them). resolved: a resolve after the last reopen; acknowledged: an
-- acknowledgement after the last reopen; the snooze in force: the last one after the last resolve
-- and reopen, counted while its until is in the future.
create view govtrail.alert_state as
with f as (
  select
    a.alert_id,
    max(e.event_id) filter (where e.kind = 'resolved') as last_resolved,
    max(e.event_id) filter (where e.kind = 'reopened') as last_reopened,
    max(e.event_id) filter (where e.kind = 'acknowledged') as last_acknowledged,
    max(e.event_id) filter (where e.kind = 'snoozed') as last_snoozed,
    max(e.event_id) filter (where e.kind = 'assigned') as last_assigned,
    count(e.event_id) filter (where e.kind = 'repeated') as repeats,
    max(e.at) as last_event_at
  from govtrail.alert a
  left join govtrail.alert_event e on e.alert_id = a.alert_id
  group by a.alert_id
), g as (
  select f.*,
    coalesce(f.last_resolved, 0) > coalesce(f.last_reopened, 0) as resolved,
    coalesce(f.last_acknowledged, 0) > coalesce(f.last_reopened, 0) as acknowledged,
    case when coalesce(f.last_snoozed, 0) > greatest(coalesce(f.last_resolved, 0), coalesce(f.last_reopened, 0))
         then (select s.until from govtrail.alert_event s where s.event_id = f.last_snoozed) end as snoozed_until
  from f
)
select
  a.alert_id,
  a.tenant_id,
  a.rule_id,
  a.severity,
  a.title,
  a.dedupe_key,
  a.created_at,
  case when g.resolved then 'resolved'
       when g.snoozed_until > now() then 'snoozed'
       when g.acknowledged then 'acknowledged'
       else 'open' end as state,
  (select e.assignee from govtrail.alert_event e where e.event_id = g.last_assigned) as assignee,
  (select e.actor from govtrail.alert_event e where e.event_id = g.last_acknowledged) as acknowledged_by,
  (select e.at from govtrail.alert_event e where e.event_id = g.last_acknowledged) as acknowledged_at,
  case when g.resolved then (select e.actor from govtrail.alert_event e where e.event_id = g.last_resolved) end as resolved_by,
  case when g.resolved then (select e.at from govtrail.alert_event e where e.event_id = g.last_resolved) end as resolved_at,
  case when g.resolved then (select e.note from govtrail.alert_event e where e.event_id = g.last_resolved) end as resolved_note,
  case when g.resolved then (select e.automatic from govtrail.alert_event e where e.event_id = g.last_resolved) end as resolved_automatically,
  g.snoozed_until,
  g.repeats::integer as repeats,
  g.last_event_at
from govtrail.alert a
join g using (alert_id);

grant select on govtrail.alert_event, govtrail.alert_state to govtrail_reader;

comment on table govtrail.alert_event is
  'What happened to each alert after it was raised, one row per event: acknowledged, assigned, resolved, snoozed, reopened, noted, repeated (a suppressed repeat folded into it). Append-only: a trigger rejects UPDATE, DELETE and TRUNCATE. The current state is the view alert_state.';
comment on column govtrail.alert_event.event_id is 'Order of events: the state is a fold of an alert''s events in this order.';
comment on column govtrail.alert_event.alert_id is 'The alert (govtrail.alert, alert_log.alert_id).';
comment on column govtrail.alert_event.kind is 'acknowledged, assigned, resolved, snoozed, reopened, noted or repeated.';
comment on column govtrail.alert_event.actor is 'Who: the --by given to govtrail alerts, else the operating-system user; govtrail for an automatic event.';
comment on column govtrail.alert_event.at is 'When, by the database clock.';
comment on column govtrail.alert_event.note is 'The note given (--note); for an automatic event, the reason.';
comment on column govtrail.alert_event.assignee is 'assigned: to whom.';
comment on column govtrail.alert_event.until is 'snoozed: until when; the alert counts as open again after it.';
comment on column govtrail.alert_event.automatic is 'True when govtrail recorded the event itself (a resolve when the condition ended, a snooze lifted by a more severe repeat, a suppressed repeat).';
comment on column govtrail.alert_event.repeat_count is 'repeated: how many repeats the alert has folded in, this one included.';
comment on column govtrail.alert_event.details is 'repeated: the suppressed repeat (entry_id, dedupe_key, severity, title); reopened automatically: the alert that lifted the snooze.';
comment on table govtrail.alert_event_delivery is
  'Delivery state of each lifecycle event to each sink its alert was routed to (the follow-up: PagerDuty acknowledge/resolve, a chat message, a webhook event). Updated by the delivery loop; not granted to readers.';

comment on view govtrail.alert_state is
  'The current handling state of each alert, a fold of its alert_event rows: open, acknowledged, snoozed (until a future time) or resolved, with who acknowledged and resolved it and when.';
comment on column govtrail.alert_state.alert_id is 'The alert (alert_log.alert_id).';
comment on column govtrail.alert_state.tenant_id is 'Tenant the alert is about.';
comment on column govtrail.alert_state.rule_id is 'Rule that raised it.';
comment on column govtrail.alert_state.severity is 'low, medium, high or critical.';
comment on column govtrail.alert_state.title is 'Title of the alert.';
comment on column govtrail.alert_state.dedupe_key is 'The alert''s dedupe key: PagerDuty''s dedup_key, the Jira issue''s label.';
comment on column govtrail.alert_state.created_at is 'When the alert was raised.';
comment on column govtrail.alert_state.state is 'open, acknowledged, snoozed or resolved. A snooze whose until has passed shows the state it would have without it.';
comment on column govtrail.alert_state.assignee is 'Whom it was last assigned to; null when never.';
comment on column govtrail.alert_state.acknowledged_by is 'Who last acknowledged it.';
comment on column govtrail.alert_state.acknowledged_at is 'When it was last acknowledged.';
comment on column govtrail.alert_state.resolved_by is 'Who resolved it (govtrail when automatic); null unless resolved.';
comment on column govtrail.alert_state.resolved_at is 'When it was resolved; null unless resolved.';
comment on column govtrail.alert_state.resolved_note is 'The note or reason given with the resolve.';
comment on column govtrail.alert_state.resolved_automatically is 'True when govtrail resolved it because the condition ended.';
comment on column govtrail.alert_state.snoozed_until is 'Until of the snooze last set and not since lifted (may be past).';
comment on column govtrail.alert_state.repeats is 'Suppressed repeats folded into the alert.';
comment on column govtrail.alert_state.last_event_at is 'Time of its latest event; null when nothing has happened to it.';
