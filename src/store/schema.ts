/**
 * Kysely table types of schema `govtrail` (docs/design/data-model.md). Keep in step with sql/.
 */
import type { ColumnType, Generated } from 'kysely';

type Timestamp = ColumnType<Date, Date | string, Date | string>;
type GeneratedTimestamp = ColumnType<Date, Date | string | undefined, Date | string>;
type Json = ColumnType<unknown, string, string>;

export interface SyncRunTable {
  run_id: Generated<number>;
  tenant_id: string;
  trigger: string;
  started_at: GeneratedTimestamp;
  finished_at: Timestamp | null;
  status: Generated<string>;
  slot: Timestamp | null;
  pages_fetched: Generated<number>;
  entries_fetched: Generated<number>;
  entries_inserted: Generated<number>;
  entries_rejected: Generated<number>;
  warnings: Generated<number>;
  http_retries: Generated<number>;
  checkpoint_before: string | null;
  checkpoint_after: string | null;
  stop_reason: string | null;
  error_code: string | null;
  error_message: string | null;
  /** `sync` or `reconcile` (0004). */
  kind: Generated<string>;
  /** pg_backend_pid() of the session that opened the run (0015). */
  opened_by_pid: Generated<number | null>;
  entries_matched: number | null;
  entries_new: number | null;
  entries_changed: number | null;
  entries_missing: number | null;
  entries_expired: number | null;
  entries_backdated: number | null;
  entries_conflicting: number | null;
  covered_from: Timestamp | null;
  covered_to: Timestamp | null;
  covered_from_text: string | null;
  covered_to_text: string | null;
}

export interface HistoryEntryTable {
  tenant_id: string;
  entry_id: string;
  created_at: Timestamp;
  created_at_text: string | null;
  change_kind: string | null;
  actor_kind: string | null;
  actor_user_id: string | null;
  syslog_event_id: string | null;
  trace_id: string | null;
  raw: Json;
  run_id: number;
  loaded_at: GeneratedTimestamp;
  seq: Generated<number>;
  row_hash: Buffer | Uint8Array;
  /** sha256 of the canonical JSON of raw (0004); NULL for rows stored before it. */
  content_sha256: Buffer | Uint8Array | null;
  /** sha256 of the entry's bytes as served (0041); NULL before it or when the page was not scanned. */
  served_sha256: Buffer | Uint8Array | null;
}

export interface HistoryAnnotationTable {
  tenant_id: string;
  entry_id: string;
  ordinal: number;
  key: string | null;
  kind: string | null;
  raw_value: string | null;
  display_value: string | null;
  display_label: string | null;
  display_url: string | null;
}

export interface SettingsSnapshotTable {
  tenant_id: string;
  entry_id: string;
  allowed_client_types: string[] | null;
  allows_all_client_types: boolean;
  audit_verbosity: string | null;
  auto_discovery_enabled: boolean | null;
  default_tool_classification: string | null;
  discovery_interval: string | null;
  inactivity_close_after: string | null;
  inactivity_hide_after: string | null;
  retention_delete_after: string | null;
  enabled: boolean | null;
  prefer_code_mode_over_direct_tools: boolean | null;
  require_tool_approval: boolean | null;
  surface_requestable_tools: boolean | null;
  settings_created_at: Timestamp | null;
  settings_updated_at: Timestamp | null;
  extra_fields: Json;
}

export interface CheckpointTable {
  tenant_id: string;
  entry_id: string;
  entry_created_at: Timestamp;
  entry_created_at_key: string;
  run_id: number;
  updated_at: GeneratedTimestamp;
}

export interface RejectedEntryTable {
  rejected_id: Generated<number>;
  tenant_id: string;
  run_id: number;
  received_at: GeneratedTimestamp;
  reason: string;
  raw: Json | null;
  raw_sha256: string;
}

export interface FieldChangeTable {
  tenant_id: string;
  entry_id: string;
  field: string;
  old_value: Json | null;
  new_value: Json | null;
  direction: string;
}

export interface AlertTable {
  alert_id: Generated<number>;
  tenant_id: string;
  entry_id: string | null;
  rule_id: string;
  rule_version: number;
  severity: string;
  title: string;
  summary: string;
  context: Json;
  dedupe_key: string;
  run_id: number | null;
  created_at: GeneratedTimestamp;
}

export interface AlertDeliveryTable {
  alert_id: number;
  sink: string;
  status: Generated<string>;
  attempts: Generated<number>;
  first_attempt_at: Timestamp | null;
  next_attempt_at: GeneratedTimestamp;
  last_error: string | null;
  delivered_at: Timestamp | null;
}

export interface OwnerRemovalTable {
  removal_id: Generated<number>;
  requested_at: GeneratedTimestamp;
  tenant_id: string;
  app_id: string;
  resource_type_id: string;
  resource_id: string;
  role_slug: string;
  entitlement_app_id: string;
  entitlement_id: string;
  dry_run: boolean;
  outcome: string;
  http_status: number | null;
  error: string | null;
}

export interface SourceDiscrepancyTable {
  discrepancy_id: Generated<number>;
  tenant_id: string;
  entry_id: string;
  kind: string;
  detected_at: GeneratedTimestamp;
  run_id: number;
  entry_created_at: Timestamp | null;
  stored_sha256: string | null;
  source_sha256: string | null;
  source_raw: Json | null;
}

export interface SchemaMigrationTable {
  version: number;
  name: string;
  checksum: string;
  applied_at: GeneratedTimestamp;
}

/** The tenant registry (0007): configured tenants and their status; never a secret. */
export interface TenantTable {
  tenant_id: string;
  status: Generated<string>;
  base_url: string | null;
  client_id: string | null;
  page_size: number | null;
  /** An interval; read as text. */
  lookback: string | null;
  first_seen_at: GeneratedTimestamp;
  last_loaded_at: Timestamp | null;
  status_changed_at: GeneratedTimestamp;
  enabled_at: Timestamp | null;
  enabled_by: string | null;
  disabled_at: Timestamp | null;
  disabled_by: string | null;
  retired_at: Timestamp | null;
  retired_by: string | null;
}

/** Signed anchors written, for numbering and chaining the next (0017); append-only. */
export interface AnchorLogTable {
  directory_id: string;
  tenant_id: string;
  sequence: number;
  file_name: string;
  sha256: string;
  entries: number;
  anchored_at: Timestamp;
}

/** Operator decisions about a tenant (0016): append-only; inserting one sets the tenant's status. */
export interface TenantDecisionTable {
  decision_id: Generated<number>;
  tenant_id: string;
  status: string;
  /** Set by the database's trigger. */
  previous_status: Generated<string>;
  forced: Generated<boolean>;
  decided_by: string;
  database_role: Generated<string>;
  decided_at: GeneratedTimestamp;
}

/** The handling of an alert (0025): append-only; alert_state folds it. */
export interface AlertEventTable {
  event_id: Generated<number>;
  alert_id: number;
  kind: string;
  actor: string;
  at: GeneratedTimestamp;
  note: string | null;
  assignee: string | null;
  until: Timestamp | null;
  automatic: Generated<boolean>;
  repeat_count: number | null;
  details: Json | null;
}

/** Per tenant and control, the periods of one status under a baseline (0020). */
export interface ControlPeriodTable {
  tenant_id: string;
  baseline_id: string;
  baseline_sha256: string;
  control_id: string;
  status: string;
  valid_from: Timestamp;
  valid_to: Timestamp | null;
  valid_from_key: string;
  valid_to_key: string | null;
  entry_id: string | null;
  actor_kind: string | null;
  actor_user_id: string | null;
  ticket: string | null;
  value: Json | null;
}

/** A tenant's membership of a group (0030); `member` false keeps a removal set by an operator. */
export interface TenantGroupTable {
  tenant_id: string;
  group_name: string;
  member: boolean;
  set_by: string;
  set_at: GeneratedTimestamp;
}

/** A tenant's label (0030). */
export interface TenantLabelTable {
  tenant_id: string;
  key: string;
  value: string | null;
  set_by: string;
  set_at: GeneratedTimestamp;
}

export interface DB {
  'govtrail.sync_run': SyncRunTable;
  'govtrail.history_entry': HistoryEntryTable;
  'govtrail.history_annotation': HistoryAnnotationTable;
  'govtrail.settings_snapshot': SettingsSnapshotTable;
  'govtrail.checkpoint': CheckpointTable;
  'govtrail.rejected_entry': RejectedEntryTable;
  'govtrail.field_change': FieldChangeTable;
  'govtrail.alert': AlertTable;
  'govtrail.alert_delivery': AlertDeliveryTable;
  'govtrail.owner_removal': OwnerRemovalTable;
  'govtrail.schema_migration': SchemaMigrationTable;
  'govtrail.source_discrepancy': SourceDiscrepancyTable;
  'govtrail.tenant': TenantTable;
  'govtrail.tenant_decision': TenantDecisionTable;
  'govtrail.anchor_log': AnchorLogTable;
  'govtrail.alert_event': AlertEventTable;
  'govtrail.control_period': ControlPeriodTable;
  'govtrail.tenant_group': TenantGroupTable;
  'govtrail.tenant_label': TenantLabelTable;
}
