-- No planner statistics for the columns no query filters, joins, groups or sorts on: of
-- history_entry the two hashes (read only to be compared in govtrail), the verbatim created_at text
-- (the typed created_at orders and filters) and loaded_at; of history_annotation the values and
-- labels, which views and exports only show (kind, which they filter on, keeps its statistics). Each ANALYZE after a large run sorted a
-- 30 000-row sample of each: after a 100 000-entry backfill, ANALYZE of history_entry's other
-- columns took 290 ms and of these 360 ms more, history_annotation's four text values 200 ms of its
-- 290 ms (bench/RESULTS.md (o), "The backfill"). As with
-- 0014, a column without statistics is still stored, indexed and read as before; only the
-- planner's estimates for a predicate on it fall back to defaults.
alter table govtrail.history_entry
  alter column row_hash set statistics 0,
  alter column content_sha256 set statistics 0,
  alter column created_at_text set statistics 0,
  alter column loaded_at set statistics 0;
alter table govtrail.history_annotation
  alter column raw_value set statistics 0,
  alter column display_value set statistics 0,
  alter column display_label set statistics 0,
  alter column display_url set statistics 0;
