-- Descriptions for BI tools (Metabase, Superset, Grafana read pg_description): a comment on every
-- object granted to govtrail_reader and on each of its columns, then on the tables behind them.
-- Worded after docs/data-dictionary.md; keep both in step. Comments only: no object is created,
-- dropped or replaced, so nothing that depends on these views is touched.
-- test/integration/view-comments.test.ts fails when a reader-visible object or column has none.

comment on schema govtrail is
  'govtrail: audit-grade copy of the AI governance settings change history of each tenant, with change alerts. Analysts read the views, settings_as_of and source_discrepancy (role govtrail_reader).';

-- ---------------------------------------------------------------------------------------------
-- settings_timeline
comment on view govtrail.settings_timeline is
  'Settings history as SCD type 2: one row per entry with a snapshot and one per HARD_DELETE entry, contiguous periods [valid_from, valid_to). A deletion row has is_deleted true and every settings column NULL. Filter on valid_from: the whole tenant unfiltered is slow.';
comment on column govtrail.settings_timeline.tenant_id is
  'Tenant (configured tenant name).';
comment on column govtrail.settings_timeline.entry_id is
  'The history entry (metadata.id, a KSUID) that began this period.';
comment on column govtrail.settings_timeline.valid_from is
  'Start of the period, inclusive: the created_at of the entry. Grafana time column.';
comment on column govtrail.settings_timeline.valid_to is
  'End of the period, exclusive: the valid_from of the next row of the tenant. NULL while current. Equal to valid_from when a later entry has the same instant.';
comment on column govtrail.settings_timeline.is_current is
  'True for the newest row of the tenant (valid_to is NULL).';
comment on column govtrail.settings_timeline.is_deleted is
  'True when the period began with a HARD_DELETE: the settings did not exist, and every settings column is NULL.';
comment on column govtrail.settings_timeline.change_kind is
  'Change kind of the entry, as received: CHANGE_KIND_CREATE, CHANGE_KIND_PUT, CHANGE_KIND_HARD_DELETE; unknown values kept.';
comment on column govtrail.settings_timeline.actor_kind is
  'Who made the change (metadata.actor.kind): ACTOR_KIND_API, _SUPPORT, _INTERNAL, _WORKFLOW, _SLACK, ...; as received.';
comment on column govtrail.settings_timeline.actor_user_id is
  'metadata.actor.userId of the entry; NULL when empty (actors other than API and SUPPORT have none).';
comment on column govtrail.settings_timeline.tickets is
  'Display values (raw value when empty) of the TICKET annotations of the entry, in annotation order; empty array when none.';
comment on column govtrail.settings_timeline.reasons is
  'Display values (raw value when empty) of the REASON annotations of the entry, in order; empty array when none.';
comment on column govtrail.settings_timeline.allowed_client_types is
  'allowedClientTypes: MCP client types permitted (MCP_CLIENT_TYPE_PERSONAL, _SHARED, _SERVICE, _EPHEMERAL, ...). NULL when absent from the snapshot, and in a deleted period.';
comment on column govtrail.settings_timeline.allows_all_client_types is
  'True when allowed_client_types is empty or absent: an empty list permits every client type. NULL in a deleted period.';
comment on column govtrail.settings_timeline.audit_verbosity is
  'auditVerbosity: AUDIT_VERBOSITY_MINIMAL, _STANDARD, _FULL (unknown values kept). NULL when absent or in a deleted period.';
comment on column govtrail.settings_timeline.auto_discovery_enabled is
  'autoDiscoveryEnabled; absent on the wire means false. NULL in a deleted period.';
comment on column govtrail.settings_timeline.default_tool_classification is
  'defaultToolClassification for discovered tools: TOOL_CLASSIFICATION_READ, _WRITE, _DESTRUCTIVE, _SENSITIVE, _DANGEROUS (unknown values kept). NULL when absent or in a deleted period.';
comment on column govtrail.settings_timeline.discovery_interval is
  'discoveryInterval as an interval (wire "3600s" = 1 hour). NULL when unset or in a deleted period.';
comment on column govtrail.settings_timeline.inactivity_close_after is
  'defaultClientLifecycle.inactivityCloseAfter as an interval. NULL when unset or in a deleted period.';
comment on column govtrail.settings_timeline.inactivity_hide_after is
  'defaultClientLifecycle.inactivityHideAfter as an interval. NULL when unset or in a deleted period.';
comment on column govtrail.settings_timeline.retention_delete_after is
  'defaultClientLifecycle.retentionDeleteAfter as an interval. NULL when unset or in a deleted period.';
comment on column govtrail.settings_timeline.enabled is
  'enabled (deprecated upstream, still stored); absent means false. NULL in a deleted period.';
comment on column govtrail.settings_timeline.prefer_code_mode_over_direct_tools is
  'preferCodeModeOverDirectTools; absent means false. NULL in a deleted period.';
comment on column govtrail.settings_timeline.require_tool_approval is
  'requireToolApproval; absent means false. NULL in a deleted period.';
comment on column govtrail.settings_timeline.surface_requestable_tools is
  'surfaceRequestableTools; absent means false. NULL in a deleted period.';
comment on column govtrail.settings_timeline.settings_created_at is
  'createdAt of the settings object in the snapshot. NULL when absent or in a deleted period.';
comment on column govtrail.settings_timeline.settings_updated_at is
  'updatedAt of the settings object in the snapshot. NULL when absent or in a deleted period.';
comment on column govtrail.settings_timeline.extra_fields is
  'jsonb of every snapshot field this govtrail version does not map to a column ({} when none). NULL in a deleted period.';
comment on column govtrail.settings_timeline.created_at_text is
  'The createdAt of the entry verbatim from the wire (nanoseconds); NULL when the wire had none.';

-- ---------------------------------------------------------------------------------------------
-- settings_as_of
comment on function govtrail.settings_as_of(text, timestamptz) is
  'The settings_timeline row in force for tenant at time at (valid_from <= at < valid_to, or valid_to NULL). No row before the first snapshot of the tenant; the deletion row (is_deleted) inside a deleted period.';

-- ---------------------------------------------------------------------------------------------
-- settings_current
comment on view govtrail.settings_current is
  'One row per tenant: its current settings_timeline row, i.e. settings_as_of(tenant, infinity). is_deleted is true when the newest entry with a snapshot or a deletion is a HARD_DELETE.';
comment on column govtrail.settings_current.tenant_id is
  'Tenant (configured tenant name).';
comment on column govtrail.settings_current.entry_id is
  'The history entry (metadata.id, a KSUID) that set the current settings.';
comment on column govtrail.settings_current.valid_from is
  'When the current settings took effect: the created_at of that entry.';
comment on column govtrail.settings_current.valid_to is
  'Always NULL here (the period is still open).';
comment on column govtrail.settings_current.is_current is
  'Always true here.';
comment on column govtrail.settings_current.is_deleted is
  'True when the settings are currently deleted (the newest relevant entry is a HARD_DELETE); every settings column is then NULL.';
comment on column govtrail.settings_current.change_kind is
  'Change kind of the entry, as received: CHANGE_KIND_CREATE, CHANGE_KIND_PUT, CHANGE_KIND_HARD_DELETE; unknown values kept.';
comment on column govtrail.settings_current.actor_kind is
  'Who made the change (metadata.actor.kind): ACTOR_KIND_API, _SUPPORT, _INTERNAL, _WORKFLOW, _SLACK, ...; as received.';
comment on column govtrail.settings_current.actor_user_id is
  'metadata.actor.userId of the entry; NULL when empty (actors other than API and SUPPORT have none).';
comment on column govtrail.settings_current.tickets is
  'Display values (raw value when empty) of the TICKET annotations of the entry, in annotation order; empty array when none.';
comment on column govtrail.settings_current.reasons is
  'Display values (raw value when empty) of the REASON annotations of the entry, in order; empty array when none.';
comment on column govtrail.settings_current.allowed_client_types is
  'allowedClientTypes: MCP client types permitted (MCP_CLIENT_TYPE_PERSONAL, _SHARED, _SERVICE, _EPHEMERAL, ...). NULL when absent from the snapshot, or deleted.';
comment on column govtrail.settings_current.allows_all_client_types is
  'True when allowed_client_types is empty or absent: an empty list permits every client type. NULL when deleted.';
comment on column govtrail.settings_current.audit_verbosity is
  'auditVerbosity: AUDIT_VERBOSITY_MINIMAL, _STANDARD, _FULL (unknown values kept). NULL when absent or deleted.';
comment on column govtrail.settings_current.auto_discovery_enabled is
  'autoDiscoveryEnabled; absent on the wire means false. NULL when deleted.';
comment on column govtrail.settings_current.default_tool_classification is
  'defaultToolClassification for discovered tools: TOOL_CLASSIFICATION_READ, _WRITE, _DESTRUCTIVE, _SENSITIVE, _DANGEROUS (unknown values kept). NULL when absent or deleted.';
comment on column govtrail.settings_current.discovery_interval is
  'discoveryInterval as an interval (wire "3600s" = 1 hour). NULL when unset or deleted.';
comment on column govtrail.settings_current.inactivity_close_after is
  'defaultClientLifecycle.inactivityCloseAfter as an interval. NULL when unset or deleted.';
comment on column govtrail.settings_current.inactivity_hide_after is
  'defaultClientLifecycle.inactivityHideAfter as an interval. NULL when unset or deleted.';
comment on column govtrail.settings_current.retention_delete_after is
  'defaultClientLifecycle.retentionDeleteAfter as an interval. NULL when unset or deleted.';
comment on column govtrail.settings_current.enabled is
  'enabled (deprecated upstream, still stored); absent means false. NULL when deleted.';
comment on column govtrail.settings_current.prefer_code_mode_over_direct_tools is
  'preferCodeModeOverDirectTools; absent means false. NULL when deleted.';
comment on column govtrail.settings_current.require_tool_approval is
  'requireToolApproval; absent means false. NULL when deleted.';
comment on column govtrail.settings_current.surface_requestable_tools is
  'surfaceRequestableTools; absent means false. NULL when deleted.';
comment on column govtrail.settings_current.settings_created_at is
  'createdAt of the settings object in the snapshot. NULL when absent or deleted.';
comment on column govtrail.settings_current.settings_updated_at is
  'updatedAt of the settings object in the snapshot. NULL when absent or deleted.';
comment on column govtrail.settings_current.extra_fields is
  'jsonb of every snapshot field this govtrail version does not map to a column ({} when none). NULL when deleted.';
comment on column govtrail.settings_current.created_at_text is
  'The createdAt of the entry verbatim from the wire (nanoseconds); NULL when the wire had none.';

-- ---------------------------------------------------------------------------------------------
-- change_log
comment on view govtrail.change_log is
  'One row per field change of the settings, with who made it and why (tickets, reasons). Order by (changed_at, entry_id, field).';
comment on column govtrail.change_log.changed_at is
  'The created_at of the entry that made the change. Grafana time column.';
comment on column govtrail.change_log.tenant_id is
  'Tenant (configured tenant name).';
comment on column govtrail.change_log.entry_id is
  'The history entry (metadata.id, a KSUID) that made the change.';
comment on column govtrail.change_log.field is
  'The field changed: a settings_snapshot column name, or extra_fields.<wire name> for an unmapped field.';
comment on column govtrail.change_log.old_value is
  'Value before the change, as jsonb. NULL for the first snapshot of a tenant.';
comment on column govtrail.change_log.new_value is
  'Value after the change, as jsonb (JSON null when the field was unset).';
comment on column govtrail.change_log.direction is
  'loosened (governance weaker), tightened (stronger) or changed (neither can be said).';
comment on column govtrail.change_log.change_kind is
  'Change kind of the entry, as received: CHANGE_KIND_CREATE, CHANGE_KIND_PUT, CHANGE_KIND_HARD_DELETE; unknown values kept.';
comment on column govtrail.change_log.actor_kind is
  'Who made the change (metadata.actor.kind): ACTOR_KIND_API, _SUPPORT, _INTERNAL, _WORKFLOW, _SLACK, ...; as received.';
comment on column govtrail.change_log.actor_user_id is
  'metadata.actor.userId of the entry; NULL when empty (actors other than API and SUPPORT have none).';
comment on column govtrail.change_log.tickets is
  'Display values (raw value when empty) of the TICKET annotations of the entry, in order; empty array when none.';
comment on column govtrail.change_log.ticket_urls is
  'URLs of those tickets, aligned with tickets; an element is NULL where a ticket has no URL.';
comment on column govtrail.change_log.reasons is
  'Display values (raw value when empty) of the REASON annotations of the entry, in order; empty array when none.';
comment on column govtrail.change_log.syslog_event_id is
  'metadata.syslogEventId of the entry; NULL when empty.';
comment on column govtrail.change_log.trace_id is
  'metadata.traceId of the entry; NULL when empty.';
comment on column govtrail.change_log.created_at_text is
  'The createdAt of the entry verbatim from the wire (nanoseconds); NULL when the wire had none.';

-- ---------------------------------------------------------------------------------------------
-- changes_without_ticket
comment on view govtrail.changes_without_ticket is
  'One row per entry with no TICKET annotation, excluding entries annotated WORKFLOW or AUTOMATION (traced by those instead).';
comment on column govtrail.changes_without_ticket.changed_at is
  'The created_at of the entry. Grafana time column.';
comment on column govtrail.changes_without_ticket.tenant_id is
  'Tenant (configured tenant name).';
comment on column govtrail.changes_without_ticket.entry_id is
  'The history entry (metadata.id, a KSUID).';
comment on column govtrail.changes_without_ticket.change_kind is
  'Change kind of the entry, as received: CHANGE_KIND_CREATE, CHANGE_KIND_PUT, CHANGE_KIND_HARD_DELETE; unknown values kept.';
comment on column govtrail.changes_without_ticket.actor_kind is
  'Who made the change (metadata.actor.kind): ACTOR_KIND_API, _SUPPORT, _INTERNAL, _WORKFLOW, _SLACK, ...; as received.';
comment on column govtrail.changes_without_ticket.actor_user_id is
  'metadata.actor.userId of the entry; NULL when empty (actors other than API and SUPPORT have none).';
comment on column govtrail.changes_without_ticket.reasons is
  'Display values (raw value when empty) of the REASON annotations of the entry, in order; empty array when none.';
comment on column govtrail.changes_without_ticket.fields is
  'The fields the entry changed (change_log.field), sorted; empty array when it changed none.';
comment on column govtrail.changes_without_ticket.syslog_event_id is
  'metadata.syslogEventId of the entry; NULL when empty.';
comment on column govtrail.changes_without_ticket.trace_id is
  'metadata.traceId of the entry; NULL when empty.';

-- ---------------------------------------------------------------------------------------------
-- alert_log
comment on view govtrail.alert_log is
  'One row per alert raised by a rule, with the delivery status of each sink.';
comment on column govtrail.alert_log.created_at is
  'When the alert was raised. Grafana time column.';
comment on column govtrail.alert_log.alert_id is
  'Alert identity, increasing in the order alerts were raised.';
comment on column govtrail.alert_log.tenant_id is
  'Tenant (configured tenant name).';
comment on column govtrail.alert_log.entry_id is
  'The history entry that raised the alert; NULL for an alert not about one entry.';
comment on column govtrail.alert_log.changed_at is
  'The created_at of that entry; NULL when the alert has no entry.';
comment on column govtrail.alert_log.rule_id is
  'The rule that raised the alert (e.g. AIGOV-018).';
comment on column govtrail.alert_log.rule_version is
  'Version of that rule when it raised the alert.';
comment on column govtrail.alert_log.severity is
  'low, medium, high or critical.';
comment on column govtrail.alert_log.title is
  'One-line title of the alert.';
comment on column govtrail.alert_log.summary is
  'Human-readable summary of the alert.';
comment on column govtrail.alert_log.run_id is
  'The sync_run that raised the alert; NULL when raised outside a run.';
comment on column govtrail.alert_log.deliveries is
  'jsonb object sink -> status (pending, delivered, failed); {} when no sink was configured.';
comment on column govtrail.alert_log.delivered_sinks is
  'Sinks that delivered the alert, sorted; empty array when none.';
comment on column govtrail.alert_log.pending_sinks is
  'Sinks still due to deliver (will retry), sorted; empty array when none.';
comment on column govtrail.alert_log.failed_sinks is
  'Sinks that gave up, sorted; empty array when none.';
comment on column govtrail.alert_log.delivery_status is
  'failed if any sink gave up, else pending if any is still due, else delivered; none when no sink was configured.';
comment on column govtrail.alert_log.last_delivered_at is
  'Latest time a sink delivered the alert; NULL when none has.';
comment on column govtrail.alert_log.context is
  'jsonb details of the alert: diff, actor, tickets, links.';

-- ---------------------------------------------------------------------------------------------
-- exporter_health
comment on view govtrail.exporter_health is
  'One row per tenant known to the run ledger or holding entries: is the exporter keeping up (syncs), and does the store still equal the source (reconciles)? Open counts of 0 with last_verified_at NULL mean not checked, not clean.';
comment on column govtrail.exporter_health.tenant_id is
  'Tenant (configured tenant name).';
comment on column govtrail.exporter_health.last_success_at is
  'finished_at of the latest succeeded sync (reconciles do not count); NULL when none succeeded.';
comment on column govtrail.exporter_health.last_failure_at is
  'finished_at of the latest failed sync; NULL when none failed.';
comment on column govtrail.exporter_health.last_error is
  'error_code: error_message of the latest failed sync; NULL when none failed.';
comment on column govtrail.exporter_health.entries_stored is
  'Number of history entries stored for the tenant.';
comment on column govtrail.exporter_health.checkpoint_entry_id is
  'The newest entry stored by the last successful run (the checkpoint); NULL before the first one.';
comment on column govtrail.exporter_health.checkpoint_entry_created_at is
  'created_at of the checkpoint entry; NULL before the first successful run.';
comment on column govtrail.exporter_health.seconds_since_success is
  'Whole seconds from last_success_at to now; NULL when no sync succeeded.';
comment on column govtrail.exporter_health.last_run_status is
  'Status of the latest sync by start time: running, succeeded, failed or skipped; NULL when no sync ran.';
comment on column govtrail.exporter_health.last_run_started_at is
  'started_at of the latest sync; NULL when no sync ran.';
comment on column govtrail.exporter_health.last_reconcile_at is
  'finished_at of the latest reconcile that finished (skipped ones do not count); NULL when none ran.';
comment on column govtrail.exporter_health.last_reconcile_status is
  'Status of that reconcile: succeeded or failed; NULL when none ran.';
comment on column govtrail.exporter_health.last_reconcile_run_id is
  'run_id of that reconcile in the run ledger; NULL when none ran.';
comment on column govtrail.exporter_health.last_verified_at is
  'finished_at of the latest successful reconcile: when the store was last shown to equal the source. NULL when none succeeded.';
comment on column govtrail.exporter_health.last_verified_entries is
  'entries_matched of that reconcile: served entries identical to the stored ones. NULL when none succeeded.';
comment on column govtrail.exporter_health.last_verified_from is
  'createdAt of the oldest entry served to that reconcile (microseconds). NULL when none succeeded or the source served nothing.';
comment on column govtrail.exporter_health.last_verified_to is
  'createdAt of the newest entry served to that reconcile (microseconds). NULL when none succeeded or the source served nothing.';
comment on column govtrail.exporter_health.open_changed_at_source is
  'Entries rewritten at the source: entries_changed of the latest successful reconcile plus distinct entries found rewritten by later syncs. 0 when none.';
comment on column govtrail.exporter_health.open_missing_at_source is
  'Holes in the source history: entries_missing of the latest successful reconcile; 0 when none succeeded.';
comment on column govtrail.exporter_health.open_expired_at_source is
  'Entries past the source retention: entries_expired of the latest successful reconcile; 0 when none succeeded.';
comment on column govtrail.exporter_health.open_backdated is
  'Entries found backdated (and stored) by the latest successful reconcile; 0 when none succeeded. Returns to 0 at the next reconcile.';

-- ---------------------------------------------------------------------------------------------
-- source_discrepancy (a table readable by govtrail_reader)
comment on table govtrail.source_discrepancy is
  'Where the source and the store disagree: one row per finding of a reconcile or a sync. Append-only; whether a finding still holds is what the latest successful reconcile counts (exporter_health.open_*).';
comment on column govtrail.source_discrepancy.discrepancy_id is
  'Identity, in the order findings were recorded.';
comment on column govtrail.source_discrepancy.tenant_id is
  'Tenant (configured tenant name).';
comment on column govtrail.source_discrepancy.entry_id is
  'The entry (metadata.id, a KSUID), stored or served.';
comment on column govtrail.source_discrepancy.kind is
  'changed_at_source (same id, other content), missing_at_source (a hole in the source history), expired_at_source (past the source retention) or backdated (served, older than checkpoint minus lookback).';
comment on column govtrail.source_discrepancy.detected_at is
  'When it was recorded: the start of the transaction of the run that found it.';
comment on column govtrail.source_discrepancy.run_id is
  'The sync_run that found it: a reconcile, or a sync (changed_at_source only, inside its lookback window).';
comment on column govtrail.source_discrepancy.entry_created_at is
  'createdAt of the entry, as stored or as served.';
comment on column govtrail.source_discrepancy.stored_sha256 is
  'Hex sha256 content hash (canonical JSON) of the stored entry; NULL for backdated (nothing was stored).';
comment on column govtrail.source_discrepancy.source_sha256 is
  'Hex sha256 content hash (canonical JSON) of the served entry; NULL for missing_at_source and expired_at_source.';
comment on column govtrail.source_discrepancy.source_raw is
  'The served entry, whole, as jsonb; NULL for missing_at_source and expired_at_source.';

-- ---------------------------------------------------------------------------------------------
-- Functions govtrail_reader may execute through PUBLIC's default EXECUTE.
comment on function govtrail.reject_modification() is
  'Trigger function that makes the evidence tables append-only: rejects UPDATE, DELETE and TRUNCATE. Not for direct calls.';

-- =============================================================================================
-- The tables behind the views (not granted to govtrail_reader; documented for auditors).

comment on table govtrail.history_entry is
  'One row per history entry, exactly as received plus typed columns. Append-only: a trigger rejects UPDATE, DELETE and TRUNCATE.';
comment on column govtrail.history_entry.tenant_id is 'Tenant (configured tenant name); key (tenant_id, entry_id).';
comment on column govtrail.history_entry.entry_id is 'metadata.id (KSUID); byte order is time order.';
comment on column govtrail.history_entry.created_at is 'metadata.createdAt (microseconds).';
comment on column govtrail.history_entry.created_at_text is 'metadata.createdAt verbatim (nanoseconds); NULL when the wire had none.';
comment on column govtrail.history_entry.change_kind is 'CHANGE_KIND_CREATE, _PUT or _HARD_DELETE; unknown values kept as received.';
comment on column govtrail.history_entry.actor_kind is 'metadata.actor.kind (ACTOR_KIND_API, _SUPPORT, _INTERNAL, _WORKFLOW, _SLACK, ...), as received.';
comment on column govtrail.history_entry.actor_user_id is 'metadata.actor.userId; NULL when empty.';
comment on column govtrail.history_entry.syslog_event_id is 'metadata.syslogEventId; NULL when empty.';
comment on column govtrail.history_entry.trace_id is 'metadata.traceId; NULL when empty.';
comment on column govtrail.history_entry.raw is 'The whole entry exactly as received.';
comment on column govtrail.history_entry.run_id is 'The sync_run that stored it.';
comment on column govtrail.history_entry.loaded_at is 'When it was stored.';
comment on column govtrail.history_entry.seq is 'Storage order: the order of the tamper-evidence chain.';
comment on column govtrail.history_entry.row_hash is 'Tamper-evidence chain: sha256 over the previous row_hash of the tenant (by seq) and this row canonical content.';
comment on column govtrail.history_entry.content_sha256 is 'sha256 of the canonical JSON of the entry (the content hash compared with the source). NULL for rows stored before migration 0004.';

comment on table govtrail.history_annotation is
  'One row per annotation of an entry (metadata.annotations). Append-only.';
comment on column govtrail.history_annotation.tenant_id is 'Tenant of the entry.';
comment on column govtrail.history_annotation.entry_id is 'The entry annotated.';
comment on column govtrail.history_annotation.ordinal is '0-based position in metadata.annotations.';
comment on column govtrail.history_annotation.key is 'Annotation key (ticket_id, reason, ...), as received.';
comment on column govtrail.history_annotation.kind is 'ANNOTATION_KIND_TICKET, _REASON, _WORKFLOW, _AUTOMATION, _BATCH, _CORRELATION, _GENERIC, ...; as received.';
comment on column govtrail.history_annotation.raw_value is 'Raw value, as received.';
comment on column govtrail.history_annotation.display_value is 'Display value, as received.';
comment on column govtrail.history_annotation.display_label is 'Display label, as received.';
comment on column govtrail.history_annotation.display_url is 'Display URL, as received.';

comment on table govtrail.settings_snapshot is
  'The flattened snapshot of an entry (1:1 with history_entry; no row when the entry has no snapshot). Append-only.';
comment on column govtrail.settings_snapshot.tenant_id is 'Tenant of the entry.';
comment on column govtrail.settings_snapshot.entry_id is 'The entry; references history_entry.';
comment on column govtrail.settings_snapshot.allowed_client_types is 'allowedClientTypes (MCP_CLIENT_TYPE_*); NULL when absent.';
comment on column govtrail.settings_snapshot.allows_all_client_types is 'True when allowedClientTypes is empty or absent (an empty list permits every type).';
comment on column govtrail.settings_snapshot.audit_verbosity is 'auditVerbosity (AUDIT_VERBOSITY_*); NULL when absent.';
comment on column govtrail.settings_snapshot.auto_discovery_enabled is 'autoDiscoveryEnabled; absent means false.';
comment on column govtrail.settings_snapshot.default_tool_classification is 'defaultToolClassification (TOOL_CLASSIFICATION_*); NULL when absent.';
comment on column govtrail.settings_snapshot.discovery_interval is 'discoveryInterval as an interval; NULL when unset.';
comment on column govtrail.settings_snapshot.inactivity_close_after is 'defaultClientLifecycle.inactivityCloseAfter as an interval; NULL when unset.';
comment on column govtrail.settings_snapshot.inactivity_hide_after is 'defaultClientLifecycle.inactivityHideAfter as an interval; NULL when unset.';
comment on column govtrail.settings_snapshot.retention_delete_after is 'defaultClientLifecycle.retentionDeleteAfter as an interval; NULL when unset.';
comment on column govtrail.settings_snapshot.enabled is 'enabled (deprecated upstream); absent means false.';
comment on column govtrail.settings_snapshot.prefer_code_mode_over_direct_tools is 'preferCodeModeOverDirectTools; absent means false.';
comment on column govtrail.settings_snapshot.require_tool_approval is 'requireToolApproval; absent means false.';
comment on column govtrail.settings_snapshot.surface_requestable_tools is 'surfaceRequestableTools; absent means false.';
comment on column govtrail.settings_snapshot.settings_created_at is 'createdAt of the settings object; NULL when absent.';
comment on column govtrail.settings_snapshot.settings_updated_at is 'updatedAt of the settings object; NULL when absent.';
comment on column govtrail.settings_snapshot.extra_fields is 'Every snapshot field this version does not map to a column ({} when none).';

comment on table govtrail.field_change is
  'One row per field that differs from the chronologically previous snapshot of the tenant. Recomputed for the following entry when an entry arrives late.';
comment on column govtrail.field_change.tenant_id is 'Tenant of the entry.';
comment on column govtrail.field_change.entry_id is 'The entry that made the change.';
comment on column govtrail.field_change.field is 'settings_snapshot column name, or extra_fields.<wire name>.';
comment on column govtrail.field_change.old_value is 'Value before, as jsonb; NULL for the first snapshot of a tenant.';
comment on column govtrail.field_change.new_value is 'Value after, as jsonb.';
comment on column govtrail.field_change.direction is 'loosened (governance weaker), tightened (stronger) or changed (neither can be said).';

comment on table govtrail.checkpoint is
  'One row per tenant: the newest entry stored by the last successful run.';
comment on column govtrail.checkpoint.tenant_id is 'Tenant; key.';
comment on column govtrail.checkpoint.entry_id is 'The newest entry stored by the last successful run.';
comment on column govtrail.checkpoint.entry_created_at is 'created_at of that entry.';
comment on column govtrail.checkpoint.entry_created_at_key is 'That time in UTC with nine fractional digits: the stop rule compares at nanosecond precision.';
comment on column govtrail.checkpoint.run_id is 'The run that wrote the checkpoint.';
comment on column govtrail.checkpoint.updated_at is 'When the checkpoint was written.';

comment on table govtrail.sync_run is
  'The run ledger: one row per attempted sync or reconcile of one tenant. A NULL count means not counted by that kind of run.';
comment on column govtrail.sync_run.run_id is 'Identity of the run.';
comment on column govtrail.sync_run.tenant_id is 'Tenant.';
comment on column govtrail.sync_run.trigger is 'What started the run: cli, schedule or demo.';
comment on column govtrail.sync_run.started_at is 'When the run started.';
comment on column govtrail.sync_run.finished_at is 'When it finished; NULL while running.';
comment on column govtrail.sync_run.status is 'running, succeeded, failed or skipped (tenant lock busy).';
comment on column govtrail.sync_run.pages_fetched is 'History pages fetched.';
comment on column govtrail.sync_run.entries_fetched is 'Entries received from the source.';
comment on column govtrail.sync_run.entries_inserted is 'Entries stored by this run.';
comment on column govtrail.sync_run.entries_rejected is 'Entries that could not be stored as rows (kept in rejected_entry).';
comment on column govtrail.sync_run.warnings is 'Tolerated anomalies in the received entries.';
comment on column govtrail.sync_run.http_retries is 'HTTP requests retried.';
comment on column govtrail.sync_run.checkpoint_before is 'Checkpoint entry_id when the run started; NULL when none.';
comment on column govtrail.sync_run.checkpoint_after is 'Checkpoint entry_id the run left; NULL when none.';
comment on column govtrail.sync_run.stop_reason is 'Why paging stopped: checkpoint or end_of_history; NULL when not finished normally.';
comment on column govtrail.sync_run.error_code is 'Error code of a failed run; NULL otherwise.';
comment on column govtrail.sync_run.error_message is 'Error message of a failed run; NULL otherwise.';
comment on column govtrail.sync_run.kind is 'sync (default; every row from before migration 0004) or reconcile.';
comment on column govtrail.sync_run.entries_matched is 'Reconcile: served entries whose content hash equals the stored one. NULL for a sync.';
comment on column govtrail.sync_run.entries_new is 'Reconcile: served, not stored, newer than checkpoint minus lookback (stored now, no discrepancy). NULL for a sync.';
comment on column govtrail.sync_run.entries_changed is 'Both kinds: served entries whose stored version has another content hash (a sync counts only its lookback window).';
comment on column govtrail.sync_run.entries_missing is 'Reconcile: stored, not served, newer than the oldest entry served (holes). NULL for a sync.';
comment on column govtrail.sync_run.entries_expired is 'Reconcile: stored, not served, older than the oldest entry served (retention ran out). NULL for a sync.';
comment on column govtrail.sync_run.entries_backdated is 'Reconcile: served, not stored, older than checkpoint minus lookback; stored and flagged. NULL for a sync.';
comment on column govtrail.sync_run.covered_from is 'Reconcile: createdAt of the oldest entry served (microseconds); NULL when nothing was served.';
comment on column govtrail.sync_run.covered_to is 'Reconcile: createdAt of the newest entry served (microseconds); NULL when nothing was served.';
comment on column govtrail.sync_run.covered_from_text is 'covered_from verbatim from the wire (nanoseconds).';
comment on column govtrail.sync_run.covered_to_text is 'covered_to verbatim from the wire (nanoseconds).';

comment on table govtrail.rejected_entry is
  'Entries that could not be stored as rows: kept, never silently dropped.';
comment on column govtrail.rejected_entry.rejected_id is 'Identity.';
comment on column govtrail.rejected_entry.tenant_id is 'Tenant.';
comment on column govtrail.rejected_entry.run_id is 'The run that received it.';
comment on column govtrail.rejected_entry.received_at is 'When it was received.';
comment on column govtrail.rejected_entry.reason is 'Why it could not be stored as a row.';
comment on column govtrail.rejected_entry.raw is 'The entry as received.';
comment on column govtrail.rejected_entry.raw_sha256 is 'sha256 of the raw entry; unique per tenant, so an entry served again on every run is kept once.';

comment on table govtrail.alert is
  'The alert outbox: one row per alert raised by a rule.';
comment on column govtrail.alert.alert_id is 'Identity.';
comment on column govtrail.alert.tenant_id is 'Tenant.';
comment on column govtrail.alert.entry_id is 'The entry that raised it; NULL when not about one entry.';
comment on column govtrail.alert.rule_id is 'The rule that raised it.';
comment on column govtrail.alert.rule_version is 'Version of that rule.';
comment on column govtrail.alert.severity is 'low, medium, high or critical.';
comment on column govtrail.alert.title is 'One-line title.';
comment on column govtrail.alert.summary is 'Human-readable summary.';
comment on column govtrail.alert.context is 'jsonb details: diff, actor, tickets, links.';
comment on column govtrail.alert.dedupe_key is 'rule_id:tenant_id:entry_id, unique: an alert is raised once.';
comment on column govtrail.alert.run_id is 'The sync_run that raised it; NULL when raised outside a run.';
comment on column govtrail.alert.created_at is 'When it was raised.';

comment on table govtrail.alert_delivery is
  'One row per alert and sink: the delivery state. Key (alert_id, sink).';
comment on column govtrail.alert_delivery.alert_id is 'The alert.';
comment on column govtrail.alert_delivery.sink is 'The sink (configured name).';
comment on column govtrail.alert_delivery.status is 'pending, delivered or failed (gave up).';
comment on column govtrail.alert_delivery.attempts is 'Delivery attempts made.';
comment on column govtrail.alert_delivery.first_attempt_at is 'When the first attempt was made; NULL before it.';
comment on column govtrail.alert_delivery.next_attempt_at is 'When the next attempt is due (while pending).';
comment on column govtrail.alert_delivery.last_error is 'Error of the latest failed attempt; NULL when none.';
comment on column govtrail.alert_delivery.delivered_at is 'When it was delivered; NULL until then.';

comment on table govtrail.owner_removal is
  'Audit of DeleteEntitlementOwner calls: one row per requested removal.';
comment on column govtrail.owner_removal.removal_id is 'Identity.';
comment on column govtrail.owner_removal.requested_at is 'When the removal was requested.';
comment on column govtrail.owner_removal.tenant_id is 'Tenant.';
comment on column govtrail.owner_removal.app_id is 'App of the resource.';
comment on column govtrail.owner_removal.resource_type_id is 'Resource type.';
comment on column govtrail.owner_removal.resource_id is 'Resource.';
comment on column govtrail.owner_removal.role_slug is 'Owner role removed.';
comment on column govtrail.owner_removal.entitlement_app_id is 'App of the entitlement.';
comment on column govtrail.owner_removal.entitlement_id is 'Entitlement.';
comment on column govtrail.owner_removal.dry_run is 'True for a rehearsal that called nothing.';
comment on column govtrail.owner_removal.outcome is 'deleted, absent, failed, or dry_run (rehearsal).';
comment on column govtrail.owner_removal.http_status is 'HTTP status of the call; NULL when none was made.';
comment on column govtrail.owner_removal.error is 'Error of a failed call; NULL otherwise.';

-- schema_migration is created by the migration runner (src/store/migrate.ts) before any file runs;
-- guarded so that the file also applies where the sql/ files are run by hand.
do $$
begin
  if to_regclass('govtrail.schema_migration') is not null then
    comment on table govtrail.schema_migration is
      'The migrations of sql/ applied to this database.';
    comment on column govtrail.schema_migration.version is 'Migration number (NNNN of the file name).';
    comment on column govtrail.schema_migration.name is 'File name.';
    comment on column govtrail.schema_migration.checksum is 'sha256 of the file: an applied migration edited afterwards is refused.';
    comment on column govtrail.schema_migration.applied_at is 'When it was applied.';
  end if;
end
$$;
