-- "No child row without its entry", checked once per statement instead of once per row
-- (docs/design/data-model.md, "Child rows and their entry").
--
-- history_annotation, settings_snapshot and field_change each declared a foreign key to
-- history_entry (tenant_id, entry_id). PostgreSQL checks such a key row by row: every child row
-- runs a query that probes the entry's primary key and takes a KEY SHARE lock on the entry (a
-- heap write and a WAL record per row). A 100 000-entry backfill writes about 145 000 annotations,
-- 100 000 snapshots and 128 000 field changes: 370 000 such checks, about 1.9 s of the server's
-- CPU (bench/RESULTS.md (l), (o)). The lock protects nothing here: history_entry is append-only
-- (a trigger refuses UPDATE, DELETE and TRUNCATE), so an entry a child row found stays.
--
-- The constraints are replaced by one AFTER … FOR EACH STATEMENT trigger per table and event: it
-- reads the rows the statement added (a transition table) and probes history_entry's primary key
-- for each, without a lock, and fails the statement with foreign_key_violation (23503) naming the
-- first row without its entry. The guarantee is the same for every writer who cannot disable
-- triggers (govtrail_writer, govtrail_reader); the schema owner, who could disable these triggers,
-- could as well have dropped the constraints. The relationship stays documented where BI tools and
-- analysts look: the columns' comments and the data dictionary name the referenced key.

-- Security definer, as the constraint's own check was: the probe sees every entry, whatever
-- row-level security would show the session (0030).
create function govtrail.child_rows_have_entry() returns trigger
language plpgsql security definer set search_path = pg_catalog, pg_temp
as $$
declare
  orphan record;
begin
  -- LATERAL … LIMIT 1: one primary-key probe per added row, whatever the planner thinks of the
  -- sizes (a hash join would read all of history_entry once per statement).
  select a.tenant_id, a.entry_id into orphan
  from added a
  left join lateral (
    select true as present from govtrail.history_entry e
    where e.tenant_id = a.tenant_id and e.entry_id = a.entry_id
    limit 1) e on true
  where e.present is null
  limit 1;
  if found then
    raise exception 'insert or update on table "%" violates "no child row without its entry"', tg_table_name
      using errcode = 'foreign_key_violation',
            detail = format('Key (tenant_id, entry_id)=(%s, %s) is not present in table "history_entry".',
                            orphan.tenant_id, orphan.entry_id),
            schema = 'govtrail', table = tg_table_name;
  end if;
  return null;
end;
$$;
revoke all on function govtrail.child_rows_have_entry() from public;

alter table govtrail.history_annotation drop constraint history_annotation_tenant_id_entry_id_fkey;
alter table govtrail.settings_snapshot drop constraint settings_snapshot_tenant_id_entry_id_fkey;
alter table govtrail.field_change drop constraint field_change_tenant_id_entry_id_fkey;

-- A trigger with a transition table takes one event; UPDATE is refused earlier by each table's
-- append-only trigger, and is checked all the same should that trigger be off.
create trigger history_annotation_has_entry after insert on govtrail.history_annotation
  referencing new table as added for each statement execute function govtrail.child_rows_have_entry();
create trigger history_annotation_has_entry_update after update on govtrail.history_annotation
  referencing new table as added for each statement execute function govtrail.child_rows_have_entry();
create trigger settings_snapshot_has_entry after insert on govtrail.settings_snapshot
  referencing new table as added for each statement execute function govtrail.child_rows_have_entry();
create trigger settings_snapshot_has_entry_update after update on govtrail.settings_snapshot
  referencing new table as added for each statement execute function govtrail.child_rows_have_entry();
create trigger field_change_has_entry after insert on govtrail.field_change
  referencing new table as added for each statement execute function govtrail.child_rows_have_entry();
create trigger field_change_has_entry_update after update on govtrail.field_change
  referencing new table as added for each statement execute function govtrail.child_rows_have_entry();

comment on function govtrail.child_rows_have_entry() is
  'Trigger function: fails a statement that adds a history_annotation, settings_snapshot or field_change row whose (tenant_id, entry_id) is not in history_entry (SQLSTATE 23503). Not for direct calls.';

comment on column govtrail.history_annotation.entry_id is
  'The entry annotated; (tenant_id, entry_id) references history_entry (checked per statement: no row without its entry).';
comment on column govtrail.settings_snapshot.entry_id is
  'The entry; (tenant_id, entry_id) references history_entry (checked per statement: no row without its entry).';
comment on column govtrail.field_change.entry_id is
  'The entry that made the change; (tenant_id, entry_id) references history_entry (checked per statement: no row without its entry).';
