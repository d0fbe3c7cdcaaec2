-- Two reader-readable tables added beside the reader scope (0030) had no tenant_id column, so the
-- scope could not reach them: a scoped login would have read every customer's alert handling and
-- every baseline text.
--
-- alert_event gets the tenant of its alert, set by the database on insert (the writer never names
-- it), and with it the scope's row-level security policy (apply_reader_scope(), run after this
-- migration). Nothing to backfill: alert_event came in the same release (0025).
alter table govtrail.alert_event add column tenant_id text;
create function govtrail.alert_event_tenant() returns trigger
language plpgsql as $$
begin
  select a.tenant_id into new.tenant_id from govtrail.alert a where a.alert_id = new.alert_id;
  return new;
end
$$;
revoke execute on function govtrail.alert_event_tenant() from public;
create trigger alert_event_tenant before insert on govtrail.alert_event
  for each row execute function govtrail.alert_event_tenant();
comment on column govtrail.alert_event.tenant_id is
  'The tenant of the alert (set by the database on insert): what the reader scope filters on.';

-- baseline_text is not a tenant's row: readers read the baselines through tenant_baseline, one row
-- per tenant and baseline that judged it (now, or in a stored control period), which the scope
-- filters like every view with a tenant_id.
revoke select on govtrail.baseline_text from govtrail_reader;
do $$
begin
  if exists (select from pg_roles where rolname = 'govtrail_scoped_reader') then
    execute 'revoke select on govtrail.baseline_text from govtrail_scoped_reader';
  end if;
end
$$;
create view govtrail.tenant_baseline as
select j.tenant_id, b.baseline_id, b.sha256 as baseline_sha256, b.text, b.first_loaded_at,
       (t.baseline_sha256 is not distinct from b.sha256 and t.baseline_id is not distinct from b.baseline_id)
         as judges_now
from (
  select tenant_id, baseline_id, baseline_sha256 from govtrail.tenant where baseline_sha256 is not null
  union
  select distinct tenant_id, baseline_id, baseline_sha256 from govtrail.control_period
) j
join govtrail.baseline_text b on b.baseline_id = j.baseline_id and b.sha256 = j.baseline_sha256
left join govtrail.tenant t on t.tenant_id = j.tenant_id;
grant select on govtrail.tenant_baseline to govtrail_reader;
comment on view govtrail.tenant_baseline is
  'The baseline texts that judge or judged each tenant: one row per tenant and baseline (the registry''s current one, and every one a stored control period names), with its text exactly as loaded.';
comment on column govtrail.tenant_baseline.judges_now is 'True for the baseline the registry says judges the tenant now.';
comment on column govtrail.tenant_baseline.tenant_id is 'The tenant.';
comment on column govtrail.tenant_baseline.baseline_id is 'The baseline''s id (its `baseline:` key).';
comment on column govtrail.tenant_baseline.baseline_sha256 is 'Hex sha256 of the file''s bytes.';
comment on column govtrail.tenant_baseline.text is 'The file''s text, exactly as loaded.';
comment on column govtrail.tenant_baseline.first_loaded_at is 'When this text was first loaded.';
