-- The job engine (pg-boss, schema govtrail_boss) runs each tenant once per schedule slot: the
-- ledger row of a scheduled run records which slot it ran for, so runs per tenant per slot can be
-- read from the ledger itself.
alter table govtrail.sync_run add column slot timestamptz;

comment on column govtrail.sync_run.slot is
  'The schedule slot (GOVTRAIL_SCHEDULE or GOVTRAIL_RECONCILE_SCHEDULE fire time, UTC) a scheduled run ran for; NULL for a run started by hand.';

create index sync_run_slot on govtrail.sync_run (slot, tenant_id) where slot is not null;
