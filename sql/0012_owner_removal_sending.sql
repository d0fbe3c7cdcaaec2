-- owners delete records its intent before the DELETE is sent (outcome 'sending') and the outcome
-- after, as a second row: an interrupt while the request is in flight (the tenant may have acted
-- on it) still leaves a row. The table stays INSERT-only (data-model.md): the intent row is never
-- updated; a 'sending' row without a later row for the same owner is a call whose outcome is unknown.
alter table govtrail.owner_removal drop constraint owner_removal_outcome_check;
alter table govtrail.owner_removal add constraint owner_removal_outcome_check
  check (outcome in ('sending', 'deleted', 'absent', 'failed', 'dry_run'));

comment on table govtrail.owner_removal is
  'Audit of DeleteEntitlementOwner calls: a sending row before each call is sent, then a row with its outcome (dry runs: one dry_run row).';
comment on column govtrail.owner_removal.outcome is
  'sending (recorded before the call; alone, the outcome is unknown: interrupted), deleted, absent, failed, or dry_run (rehearsal).';
