-- Tamper-proofing (integrity.md, "Proof against govtrail's own database"): every evidence table is
-- append-only, and a writer role may insert and read but neither alter tables nor disable triggers.
-- `govtrail migrate` runs as the schema owner; the worker and the other commands as a login role
-- granted govtrail_writer (docs/deploy.md).

-- field_change is recomputed for the entry after a late arrival (data-model.md): its rows may be
-- deleted only in the transaction that stored an earlier entry of the tenant, by a run still in
-- progress. Anything else (an UPDATE, a DELETE on its own, TRUNCATE) is refused.
create function govtrail.field_change_recompute_only() returns trigger
language plpgsql as $$
begin
  if tg_op = 'DELETE' and exists (
    select 1
    from govtrail.history_entry e
    join govtrail.sync_run r on r.tenant_id = e.tenant_id and r.status = 'running'
    join govtrail.history_entry p on p.run_id = r.run_id and p.tenant_id = e.tenant_id
    where e.tenant_id = old.tenant_id and e.entry_id = old.entry_id
      and (p.created_at, p.entry_id) < (e.created_at, e.entry_id)
      and p.xmin = pg_current_xact_id()::xid) then
    return old;
  end if;
  raise exception 'govtrail.field_change is append-only: % is allowed only to recompute the diff after a late arrival', tg_op
    using errcode = 'insufficient_privilege';
end;
$$;

create trigger field_change_append_only before update or delete on govtrail.field_change
  for each row execute function govtrail.field_change_recompute_only();
create trigger field_change_no_truncate before truncate on govtrail.field_change
  for each statement execute function govtrail.reject_modification();
create trigger rejected_entry_append_only before update or delete on govtrail.rejected_entry
  for each row execute function govtrail.reject_modification();
create trigger rejected_entry_no_truncate before truncate on govtrail.rejected_entry
  for each statement execute function govtrail.reject_modification();
create trigger alert_append_only before update or delete on govtrail.alert
  for each row execute function govtrail.reject_modification();
create trigger alert_no_truncate before truncate on govtrail.alert
  for each statement execute function govtrail.reject_modification();
create trigger owner_removal_append_only before update or delete on govtrail.owner_removal
  for each row execute function govtrail.reject_modification();
create trigger owner_removal_no_truncate before truncate on govtrail.owner_removal
  for each statement execute function govtrail.reject_modification();

-- The writer role (NOLOGIN: grant it to the worker's login role). Roles are cluster-wide: created
-- once, by whichever database migrates first, and never dropped here.
do $$
begin
  if not exists (select from pg_roles where rolname = 'govtrail_writer') then
    begin
      create role govtrail_writer nologin;
    exception when duplicate_object or unique_violation then
      null; -- another database's migration created it at the same moment
    end;
  end if;
end
$$;
grant usage on schema govtrail to govtrail_writer;
grant select, insert on all tables in schema govtrail to govtrail_writer;
-- What govtrail updates: the run ledger, the checkpoint, delivery state; field_change's recompute.
grant update on govtrail.sync_run, govtrail.checkpoint, govtrail.alert_delivery to govtrail_writer;
grant delete on govtrail.field_change to govtrail_writer;
grant usage, select on all sequences in schema govtrail to govtrail_writer;
-- Tables and sequences of later migrations (run by the owner) are granted the same way.
alter default privileges in schema govtrail grant select, insert on tables to govtrail_writer;
alter default privileges in schema govtrail grant usage, select on sequences to govtrail_writer;

comment on function govtrail.field_change_recompute_only() is
  'Trigger function that makes field_change append-only: rejects UPDATE and TRUNCATE, and DELETE except of the field changes of an entry after one stored by the current transaction (a late arrival recomputes its successor). Not for direct calls.';
comment on table govtrail.field_change is
  'One row per field that differs from the chronologically previous snapshot of the tenant. Append-only: a trigger rejects UPDATE and TRUNCATE, and DELETE except when a late arrival stored in the same transaction recomputes the diff of the entry after it.';
comment on table govtrail.rejected_entry is
  'Entries that could not be stored as rows: kept, never silently dropped. Append-only: a trigger rejects UPDATE, DELETE and TRUNCATE.';
comment on table govtrail.alert is
  'The alert outbox: one row per alert raised by a rule. Append-only: a trigger rejects UPDATE, DELETE and TRUNCATE (delivery state lives in alert_delivery).';
comment on table govtrail.owner_removal is
  'Audit of DeleteEntitlementOwner calls: one row per requested removal. Append-only: a trigger rejects UPDATE, DELETE and TRUNCATE.';
