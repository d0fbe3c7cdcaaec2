/**
 * What analysts read, checked against what was received: every typed column of history_entry and
 * settings_snapshot of a page of entries is compared, by PostgreSQL itself (the same casts COPY
 * applied when the row was stored), with what the sync's normaliser makes of the stored `raw`.
 * The chain covers `raw` only; these checks cover the columns people query. Read-only.
 */
import { sql } from 'kysely';
import { toJsonbText } from '../../core/normalise/canonical.js';
import type { NormalisedEntry } from '../../core/normalise/types.js';
import type { Session } from '../database.js';

/** One stored row whose typed columns do not say what its raw says. */
export interface ColumnMismatch {
  readonly entryId: string;
  readonly table: 'history_entry' | 'settings_snapshot';
  /** Names of the columns that differ. */
  readonly columns: readonly string[];
}

/** A boolean as text for a `::boolean` cast (null stays null). */
function boolText(v: boolean | null): string | null {
  return v === null ? null : v ? 'true' : 'false';
}

/**
 * The history_entry rows of `entries` whose typed columns differ from the normalised entry. One
 * statement for the page: the expected values go in as arrays, the columns that differ come back.
 */
export async function findEntryColumnMismatches(
  db: Session,
  tenantId: string,
  entries: readonly NormalisedEntry[],
): Promise<ColumnMismatch[]> {
  if (entries.length === 0) return [];
  const e = entries.map((n) => n.entry);
  const { rows } = await sql<{ entry_id: string; differs: string[] }>`
    select entry_id, differs from (
      select x.entry_id, array_remove(array[
        case when h.created_at is distinct from x.created_at::timestamptz then 'created_at' end,
        case when h.created_at_text is distinct from x.created_at_text then 'created_at_text' end,
        case when h.change_kind is distinct from x.change_kind then 'change_kind' end,
        case when h.actor_kind is distinct from x.actor_kind then 'actor_kind' end,
        case when h.actor_user_id is distinct from x.actor_user_id then 'actor_user_id' end,
        case when h.syslog_event_id is distinct from x.syslog_event_id then 'syslog_event_id' end,
        case when h.trace_id is distinct from x.trace_id then 'trace_id' end
      ], null) as differs
      from unnest(${e.map((r) => r.entryId)}::text[], ${e.map((r) => r.createdAtKey)}::text[],
                  ${e.map((r) => r.createdAtText)}::text[], ${e.map((r) => r.changeKind)}::text[],
                  ${e.map((r) => r.actorKind)}::text[], ${e.map((r) => r.actorUserId)}::text[],
                  ${e.map((r) => r.syslogEventId)}::text[], ${e.map((r) => r.traceId)}::text[])
           as x(entry_id, created_at, created_at_text, change_kind, actor_kind, actor_user_id, syslog_event_id, trace_id)
      join govtrail.history_entry h on h.tenant_id = ${tenantId} and h.entry_id = x.entry_id collate "C"
    ) d where cardinality(differs) > 0`.execute(db);
  return rows.map((r) => ({ entryId: r.entry_id, table: 'history_entry', columns: r.differs }));
}

/**
 * The settings_snapshot rows of `entries` (those that have a snapshot and have one stored) whose
 * columns differ from the normalised snapshot. Presence is checked by the caller. extra_fields is
 * compared as text: jsonb equality compares numbers by value, so `4` respelled `4.0` would be equal,
 * while both sides are written by toJsonbText and so render alike unless a number's text was edited.
 */
export async function findSnapshotColumnMismatches(
  db: Session,
  tenantId: string,
  entries: readonly NormalisedEntry[],
): Promise<ColumnMismatch[]> {
  const s = entries.flatMap((n) => (n.snapshot === null ? [] : [n.snapshot]));
  if (s.length === 0) return [];
  const { rows } = await sql<{ entry_id: string; differs: string[] }>`
    select entry_id, differs from (
      select x.entry_id, array_remove(array[
        case when to_jsonb(s.allowed_client_types) is distinct from x.allowed_client_types::jsonb then 'allowed_client_types' end,
        case when s.allows_all_client_types is distinct from x.allows_all_client_types::boolean then 'allows_all_client_types' end,
        case when s.audit_verbosity is distinct from x.audit_verbosity then 'audit_verbosity' end,
        case when s.auto_discovery_enabled is distinct from x.auto_discovery_enabled::boolean then 'auto_discovery_enabled' end,
        case when s.default_tool_classification is distinct from x.default_tool_classification then 'default_tool_classification' end,
        case when s.discovery_interval is distinct from x.discovery_interval::interval then 'discovery_interval' end,
        case when s.inactivity_close_after is distinct from x.inactivity_close_after::interval then 'inactivity_close_after' end,
        case when s.inactivity_hide_after is distinct from x.inactivity_hide_after::interval then 'inactivity_hide_after' end,
        case when s.retention_delete_after is distinct from x.retention_delete_after::interval then 'retention_delete_after' end,
        case when s.enabled is distinct from x.enabled::boolean then 'enabled' end,
        case when s.prefer_code_mode_over_direct_tools is distinct from x.prefer_code_mode_over_direct_tools::boolean then 'prefer_code_mode_over_direct_tools' end,
        case when s.require_tool_approval is distinct from x.require_tool_approval::boolean then 'require_tool_approval' end,
        case when s.surface_requestable_tools is distinct from x.surface_requestable_tools::boolean then 'surface_requestable_tools' end,
        case when s.settings_created_at is distinct from x.settings_created_at::timestamptz then 'settings_created_at' end,
        case when s.settings_updated_at is distinct from x.settings_updated_at::timestamptz then 'settings_updated_at' end,
        case when s.extra_fields::text is distinct from x.extra_fields::jsonb::text then 'extra_fields' end
      ], null) as differs
      from unnest(${s.map((r) => r.entryId)}::text[],
                  ${s.map((r) => (r.allowedClientTypes === null ? null : toJsonbText(r.allowedClientTypes)))}::text[],
                  ${s.map((r) => boolText(r.allowsAllClientTypes))}::text[], ${s.map((r) => r.auditVerbosity)}::text[],
                  ${s.map((r) => boolText(r.autoDiscoveryEnabled))}::text[], ${s.map((r) => r.defaultToolClassification)}::text[],
                  ${s.map((r) => r.discoveryInterval)}::text[], ${s.map((r) => r.inactivityCloseAfter)}::text[],
                  ${s.map((r) => r.inactivityHideAfter)}::text[], ${s.map((r) => r.retentionDeleteAfter)}::text[],
                  ${s.map((r) => boolText(r.enabled))}::text[], ${s.map((r) => boolText(r.preferCodeModeOverDirectTools))}::text[],
                  ${s.map((r) => boolText(r.requireToolApproval))}::text[], ${s.map((r) => boolText(r.surfaceRequestableTools))}::text[],
                  ${s.map((r) => r.settingsCreatedAt)}::text[], ${s.map((r) => r.settingsUpdatedAt)}::text[],
                  ${s.map((r) => toJsonbText(r.extraFields))}::text[])
           as x(entry_id, allowed_client_types, allows_all_client_types, audit_verbosity, auto_discovery_enabled,
                default_tool_classification, discovery_interval, inactivity_close_after, inactivity_hide_after,
                retention_delete_after, enabled, prefer_code_mode_over_direct_tools, require_tool_approval,
                surface_requestable_tools, settings_created_at, settings_updated_at, extra_fields)
      join govtrail.settings_snapshot s on s.tenant_id = ${tenantId} and s.entry_id = x.entry_id collate "C"
    ) d where cardinality(differs) > 0`.execute(db);
  return rows.map((r) => ({ entryId: r.entry_id, table: 'settings_snapshot', columns: r.differs }));
}
