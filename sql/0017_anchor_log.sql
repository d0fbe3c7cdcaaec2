-- The order of a tenant's anchors comes from the database, not from clocks (integrity.md,
-- "Signed anchors"): an anchor is numbered and chained under a per-tenant lock taken in the
-- database, so replicas whose clocks disagree, or that anchor the same tenant at once, never fork
-- the chain of anchors. This log records each anchor written (its number, file and sha256) so the
-- next one, written by any replica, names it. It is a convenience, not evidence: the anchors
-- themselves, signed and kept outside the database, are what verify trusts. Append-only.

create table govtrail.anchor_log (
  directory_id text not null,
  tenant_id   text not null,
  sequence    integer not null check (sequence >= 1),
  file_name   text not null,
  sha256      text not null,
  entries     bigint not null,
  anchored_at timestamptz not null,
  primary key (directory_id, tenant_id, sequence)
);

create trigger anchor_log_append_only before update or delete on govtrail.anchor_log
  for each row execute function govtrail.reject_modification();
create trigger anchor_log_no_truncate before truncate on govtrail.anchor_log
  for each statement execute function govtrail.reject_modification();

grant select, insert on govtrail.anchor_log to govtrail_writer;

comment on table govtrail.anchor_log is
  'One row per signed anchor written (govtrail anchor, the worker): its number in the tenant''s anchor chain, file name, sha256 and entry count, so that the next anchor, written by any replica under the same per-tenant lock, names it. Not evidence (the signed files are). Append-only.';
comment on column govtrail.anchor_log.directory_id is 'The anchor directory (the id in its .govtrail-anchors file, the same on every replica that mounts it): each directory holds its own chain of anchors.';
comment on column govtrail.anchor_log.tenant_id is 'The tenant anchored.';
comment on column govtrail.anchor_log.sequence is 'Number of the anchor in the tenant''s chain of anchors in that directory, from 1; key with directory_id and tenant_id.';
comment on column govtrail.anchor_log.file_name is 'The statement file''s name in the tenant''s anchor directory.';
comment on column govtrail.anchor_log.sha256 is 'sha256 (hex) of the statement file: what the next anchor names as previous_sha256.';
comment on column govtrail.anchor_log.entries is 'Entries of the tenant the anchor states.';
comment on column govtrail.anchor_log.anchored_at is 'When, by the database''s clock.';
