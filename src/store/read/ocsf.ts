/**
 * Read queries of `govtrail export ocsf`: the history entries of a period with everything their
 * Entity Management event tells (annotations, field changes, the previous snapshot), and the alerts
 * of a period. Both walk keyset pages in (time, id) order, so an export of any size holds one page
 * in memory.
 */
import { sql } from 'kysely';
import type { AlertMessage } from '../../core/alert.js';
import type { Direction, FieldChange } from '../../core/diff.js';
import type { OcsfEntryInput } from '../../core/ocsf/mapping.js';
import type { WireSettings } from '../../core/wire.js';
import { type AlertRow, alertMessageOf } from '../alert-row.js';
import type { Session } from '../database.js';
import { keysetPages } from '../paging.js';
import { andAfter, andBound } from '../predicates.js';

export interface PeriodFilter {
  readonly tenantId: string;
  /** First instant included. */
  readonly from: Date;
  /** First instant excluded. */
  readonly to: Date;
}

interface RawEntry {
  tenant_id: string;
  entry_id: string;
  created_at: Date;
  created_at_key: string;
  created_at_text: string | null;
  change_kind: string | null;
  actor_kind: string | null;
  actor_user_id: string | null;
  syslog_event_id: string | null;
  trace_id: string | null;
  loaded_at: Date | null;
  snapshot: WireSettings | null;
  previous_snapshot: WireSettings | null;
  annotations: RawAnnotation[];
  changes: { field: string; oldValue: unknown; newValue: unknown; direction: Direction }[];
}

interface RawAnnotation {
  key: string | null;
  kind: string | null;
  rawValue: string | null;
  displayValue: string | null;
  displayLabel: string | null;
  displayUrl: string | null;
}

/**
 * The entries with created_at in [from, to), oldest first by (created_at, entry_id), each with its
 * annotations (by ordinal), its field changes and the snapshot of the tenant's previous entry (the
 * one its field changes diff against).
 */
export async function* iterateOcsfEntries(
  db: Session,
  filter: PeriodFilter,
  pageSize = 500,
): AsyncGenerator<OcsfEntryInput> {
  const pages = keysetPages(
    pageSize,
    (after: { key: string; entryId: string } | undefined) =>
      sql<RawEntry>`
      select e.tenant_id, e.entry_id, e.created_at, e.created_at::text as created_at_key, e.created_at_text,
             e.change_kind, e.actor_kind, e.actor_user_id, e.syslog_event_id, e.trace_id, e.loaded_at,
             case when jsonb_typeof(e.raw->'snapshot') = 'object' then e.raw->'snapshot' end as snapshot,
             (select case when jsonb_typeof(p.raw->'snapshot') = 'object' then p.raw->'snapshot' end
                from govtrail.history_entry p
               where p.tenant_id = e.tenant_id and (p.created_at, p.entry_id) < (e.created_at, e.entry_id)
               order by p.created_at desc, p.entry_id desc
               limit 1) as previous_snapshot,
             coalesce((select jsonb_agg(jsonb_build_object(
                         'key', a.key, 'kind', a.kind, 'rawValue', a.raw_value, 'displayValue', a.display_value,
                         'displayLabel', a.display_label, 'displayUrl', a.display_url) order by a.ordinal)
                         from govtrail.history_annotation a
                        where a.tenant_id = e.tenant_id and a.entry_id = e.entry_id), '[]'::jsonb) as annotations,
             coalesce((select jsonb_agg(jsonb_build_object(
                         'field', f.field, 'oldValue', f.old_value, 'newValue', f.new_value,
                         'direction', f.direction) order by f.field)
                         from govtrail.field_change f
                        where f.tenant_id = e.tenant_id and f.entry_id = e.entry_id), '[]'::jsonb) as changes
      from govtrail.history_entry e
      where e.tenant_id = ${filter.tenantId}
        and e.created_at >= ${filter.from} and e.created_at < ${filter.to}
        -- The first conjunct repeats the second's leading column so it bounds the index scan.
        ${andBound('e.created_at', '>=', after?.key)}
        ${andAfter('(e.created_at, e.entry_id)', after, (c) => sql`(${c.key}::timestamptz, ${c.entryId}::text collate "C")`)}
      order by e.created_at, e.entry_id
      limit ${pageSize}`
        .execute(db)
        .then((r) => r.rows),
    (last) => ({ key: last.created_at_key, entryId: last.entry_id }),
  );
  for await (const rows of pages) {
    for (const r of rows) yield entryInput(r);
  }
}

function entryInput(r: RawEntry): OcsfEntryInput {
  return {
    entry: {
      tenantId: r.tenant_id,
      entryId: r.entry_id,
      createdAt: r.created_at,
      createdAtText: r.created_at_text,
      changeKind: r.change_kind,
      actorKind: r.actor_kind,
      actorUserId: r.actor_user_id,
      syslogEventId: r.syslog_event_id,
      traceId: r.trace_id,
    },
    annotations: r.annotations,
    snapshot: r.snapshot,
    previousSnapshot: r.previous_snapshot,
    changes: r.changes.map(
      (c): FieldChange => ({
        field: c.field,
        oldValue: c.oldValue,
        newValue: c.newValue,
        direction: c.direction,
      }),
    ),
    ...(r.loaded_at !== null ? { loadedAt: r.loaded_at } : {}),
  };
}

type RawAlert = AlertRow & { created_at_key: string };

/** The alerts of a tenant raised (created_at) in [from, to), oldest first by (created_at, alert_id). */
export async function* iterateOcsfAlerts(
  db: Session,
  filter: PeriodFilter,
  pageSize = 500,
): AsyncGenerator<AlertMessage> {
  const pages = keysetPages(
    pageSize,
    (after: { key: string; alertId: string } | undefined) =>
      sql<RawAlert>`
      select a.alert_id::text as alert_id, a.tenant_id, a.entry_id, a.rule_id, a.rule_version, a.severity,
             a.title, a.summary, a.context, a.dedupe_key, a.created_at, a.created_at::text as created_at_key
      from govtrail.alert a
      where a.tenant_id = ${filter.tenantId}
        and a.created_at >= ${filter.from} and a.created_at < ${filter.to}
        ${andBound('a.created_at', '>=', after?.key)}
        ${andAfter('(a.created_at, a.alert_id)', after, (c) => sql`(${c.key}::timestamptz, ${c.alertId}::bigint)`)}
      order by a.created_at, a.alert_id
      limit ${pageSize}`
        .execute(db)
        .then((r) => r.rows),
    (last) => ({ key: last.created_at_key, alertId: String(last.alert_id) }),
  );
  for await (const rows of pages) {
    for (const r of rows) {
      yield alertMessageOf(r);
    }
  }
}
