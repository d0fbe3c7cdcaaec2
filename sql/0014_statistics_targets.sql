-- No planner statistics for whole JSON documents: no query compares or filters on the value of
-- history_entry.raw, settings_snapshot.extra_fields or field_change.old_value/new_value as a whole
-- (views read fields out of them, and an expression has no column statistics to use), yet
-- ANALYZE sorted a 30 000-row sample of each. After a 100 000-entry backfill the run's ANALYZE
-- of its five tables took 775 ms with them and 612 ms without (bench/RESULTS.md (m)).
alter table govtrail.history_entry alter column raw set statistics 0;
alter table govtrail.settings_snapshot alter column extra_fields set statistics 0;
alter table govtrail.field_change
  alter column old_value set statistics 0,
  alter column new_value set statistics 0;
