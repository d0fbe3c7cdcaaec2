/**
 * Read queries over the analyst views of sql/0003_views.sql (settings_timeline, change_log, …), for
 * the settings, changes, export and report commands. Everything orders by (created_at, entry_id).
 */
import { sql } from 'kysely';
import type { Session } from '../database.js';
import { keysetPages } from '../paging.js';
import { andAfter, andBound } from '../predicates.js';

/** The tenants that have stored entries, by name. */
export async function listTenants(db: Session): Promise<string[]> {
  const { rows } = await sql<{ tenant_id: string }>`
    select distinct tenant_id from govtrail.history_entry order by tenant_id`.execute(db);
  return rows.map((r) => r.tenant_id);
}

/** A settings_timeline row; settings columns keyed by their column name. */
export interface TimelineRow {
  readonly tenantId: string;
  readonly entryId: string;
  readonly validFrom: Date;
  readonly validTo: Date | null;
  readonly isDeleted: boolean;
  readonly changeKind: string | null;
  readonly actorKind: string | null;
  readonly actorUserId: string | null;
  readonly tickets: string[];
  readonly settings: Record<string, unknown>;
}

interface RawTimelineRow {
  tenant_id: string;
  entry_id: string;
  valid_from: Date;
  valid_to: Date | null;
  is_deleted: boolean;
  change_kind: string | null;
  actor_kind: string | null;
  actor_user_id: string | null;
  tickets: string[] | null;
  settings: Record<string, unknown>;
}

/**
 * to_jsonb prints an interval as PostgreSQL text (`336:00:00`, `1 day 02:00:00`); give it back in
 * the wire's duration form (`1209600s`) so that formatValue and JSON output read like the API.
 */
function intervalToDuration(v: unknown): unknown {
  if (typeof v !== 'string') return v;
  const m = /^(?:(-?\d+) days? ?)?(?:(-?)(\d+):(\d{2}):(\d{2}(?:\.\d+)?))?$/.exec(v);
  if (m === null || v === '') return v;
  const days = Number(m[1] ?? 0);
  const sign = m[2] === '-' ? -1 : 1;
  const secs = sign * (Number(m[3] ?? 0) * 3600 + Number(m[4] ?? 0) * 60 + Number(m[5] ?? 0));
  return `${Number((days * 86_400 + secs).toFixed(9))}s`;
}

const INTERVAL_COLUMNS = new Set([
  'discovery_interval',
  'inactivity_close_after',
  'inactivity_hide_after',
  'retention_delete_after',
]);

function timelineRow(r: RawTimelineRow): TimelineRow {
  return {
    tenantId: r.tenant_id,
    entryId: r.entry_id,
    validFrom: r.valid_from,
    validTo: r.valid_to,
    isDeleted: r.is_deleted,
    changeKind: r.change_kind,
    actorKind: r.actor_kind,
    actorUserId: r.actor_user_id,
    tickets: r.tickets ?? [],
    settings: Object.fromEntries(
      Object.entries(r.settings).map(([k, v]) => [k, INTERVAL_COLUMNS.has(k) ? intervalToDuration(v) : v]),
    ),
  };
}

const NON_SETTINGS = [
  'tenant_id',
  'entry_id',
  'valid_from',
  'valid_to',
  'is_current',
  'is_deleted',
  'change_kind',
  'actor_kind',
  'actor_user_id',
  'tickets',
  'reasons',
  'created_at_text',
];

/** The settings in force at `at` (settings_as_of), or undefined before the first snapshot. */
export async function findSettingsAsOf(
  db: Session,
  tenantId: string,
  at: Date | 'now',
): Promise<TimelineRow | undefined> {
  const when = at === 'now' ? 'infinity' : at.toISOString();
  const { rows } = await sql<RawTimelineRow>`
    select t.tenant_id, t.entry_id, t.valid_from, t.valid_to, t.is_deleted, t.change_kind, t.actor_kind,
           t.actor_user_id, t.tickets, to_jsonb(t) - ${NON_SETTINGS}::text[] as settings
    from govtrail.settings_as_of(${tenantId}, ${when}::timestamptz) t`.execute(db);
  const r = rows[0];
  return r === undefined ? undefined : timelineRow(r);
}

/** Timeline rows overlapping [from, to), oldest first. */
export async function findTimeline(
  db: Session,
  tenantId: string,
  range: { from?: Date; to?: Date },
): Promise<TimelineRow[]> {
  const { rows } = await sql<RawTimelineRow>`
    select t.tenant_id, t.entry_id, t.valid_from, t.valid_to, t.is_deleted, t.change_kind, t.actor_kind,
           t.actor_user_id, t.tickets, to_jsonb(t) - ${NON_SETTINGS}::text[] as settings
    from govtrail.settings_timeline t
    where t.tenant_id = ${tenantId}
      ${andBound('t.valid_from', '<', range.to)}
      ${range.from === undefined ? sql`` : sql`and (t.valid_to is null or t.valid_to > ${range.from}::timestamptz)`}
    order by t.valid_from, t.entry_id`.execute(db);
  return rows.map(timelineRow);
}

/** A change_log row. */
export interface ChangeLogRow {
  readonly changedAt: Date;
  readonly changedAtText: string;
  readonly tenantId: string;
  readonly entryId: string;
  readonly field: string;
  readonly oldValue: unknown;
  readonly newValue: unknown;
  readonly direction: string;
  readonly changeKind: string | null;
  readonly actorKind: string | null;
  readonly actorUserId: string | null;
  readonly tickets: string[];
  readonly ticketUrls: (string | null)[];
  readonly reasons: string[];
  readonly syslogEventId: string | null;
  readonly traceId: string | null;
}

export interface ChangeFilter {
  readonly tenantId: string;
  readonly since?: Date | undefined;
  readonly until?: Date | undefined;
  readonly field?: string | undefined;
}

interface ChangeCursor {
  /** changed_at as PostgreSQL prints it: a Date would drop the microseconds and repeat rows. */
  readonly changedAtKey: string;
  readonly entryId: string;
  readonly field: string;
}

interface RawChange {
  changed_at: Date;
  changed_at_key: string;
  created_at_text: string | null;
  tenant_id: string;
  entry_id: string;
  field: string;
  old_value: unknown;
  new_value: unknown;
  direction: string;
  change_kind: string | null;
  actor_kind: string | null;
  actor_user_id: string | null;
  tickets: string[] | null;
  ticket_urls: (string | null)[] | null;
  reasons: string[] | null;
  syslog_event_id: string | null;
  trace_id: string | null;
}

function changeRow(r: RawChange): ChangeLogRow {
  return {
    changedAt: r.changed_at,
    changedAtText: r.created_at_text ?? r.changed_at.toISOString(),
    tenantId: r.tenant_id,
    entryId: r.entry_id,
    field: r.field,
    oldValue: r.old_value,
    newValue: r.new_value,
    direction: r.direction,
    changeKind: r.change_kind,
    actorKind: r.actor_kind,
    actorUserId: r.actor_user_id,
    tickets: r.tickets ?? [],
    ticketUrls: r.ticket_urls ?? [],
    reasons: r.reasons ?? [],
    syslogEventId: r.syslog_event_id,
    traceId: r.trace_id,
  };
}

/**
 * change_log rows in (changed_at, entry_id, field) order, one keyset page at a time, so that an
 * export of millions of rows never holds more than one page in memory. `until` is exclusive.
 */
export async function* iterateChanges(
  db: Session,
  filter: ChangeFilter,
  pageSize = 2000,
): AsyncGenerator<ChangeLogRow> {
  const pages = keysetPages(
    pageSize,
    (after: ChangeCursor | undefined) => findChangesPage(db, filter, after, pageSize),
    (last) => ({ changedAtKey: last.changed_at_key, entryId: last.entry_id, field: last.field }),
  );
  for await (const page of pages) for (const p of page) yield changeRow(p);
}

async function findChangesPage(
  db: Session,
  filter: ChangeFilter,
  after: ChangeCursor | undefined,
  limit: number,
): Promise<RawChange[]> {
  const { rows } = await sql<RawChange>`
    select c.*, c.changed_at::text as changed_at_key from govtrail.change_log c
    where c.tenant_id = ${filter.tenantId}
      ${andBound('c.changed_at', '>=', filter.since)}
      ${andBound('c.changed_at', '<', filter.until)}
      ${andBound('c.field', '=', filter.field, 'text')}
      -- The first conjunct repeats the second's leading column so it bounds the index scan.
      ${andBound('c.changed_at', '>=', after?.changedAtKey)}
      ${andAfter('(c.changed_at, c.entry_id, c.field)', after, (c) => sql`(${c.changedAtKey}::timestamptz, ${c.entryId}::text collate "C", ${c.field}::text)`)}
    order by c.changed_at, c.entry_id, c.field
    limit ${limit}`.execute(db);
  return rows;
}

/** Field changes per ISO week (Monday, UTC) and direction, for the report's bar chart. */
export async function countChangesPerWeek(
  db: Session,
  filter: ChangeFilter,
): Promise<{ week: Date; direction: string; n: number }[]> {
  const { rows } = await sql<{ week: Date; direction: string; n: number }>`
    select date_trunc('week', c.changed_at at time zone 'UTC') at time zone 'UTC' as week, c.direction,
           count(*)::int as n
    from govtrail.change_log c
    where c.tenant_id = ${filter.tenantId}
      ${andBound('c.changed_at', '>=', filter.since)}
      ${andBound('c.changed_at', '<', filter.until)}
    group by 1, 2 order by 1, 2`.execute(db);
  return rows;
}

/** Alerts per severity in a time range (by the alert's creation time). */
export async function countAlertsBySeverity(
  db: Session,
  filter: ChangeFilter,
): Promise<{ severity: string; n: number; undelivered: number }[]> {
  const { rows } = await sql<{ severity: string; n: number; undelivered: number }>`
    select l.severity, count(*)::int as n,
           count(*) filter (where l.delivery_status in ('pending', 'failed'))::int as undelivered
    from govtrail.alert_log l
    where l.tenant_id = ${filter.tenantId}
      ${andBound('coalesce(l.changed_at, l.created_at)', '>=', filter.since)}
      ${andBound('coalesce(l.changed_at, l.created_at)', '<', filter.until)}
    group by l.severity`.execute(db);
  return rows;
}

export interface ExporterHealth {
  readonly tenantId: string;
  readonly lastSuccessAt: Date | null;
  readonly lastFailureAt: Date | null;
  readonly lastError: string | null;
  readonly entriesStored: number;
  readonly checkpointEntryId: string | null;
  readonly secondsSinceSuccess: number | null;
  readonly lastRunStatus: string | null;
}

export async function findExporterHealth(db: Session, tenantId: string): Promise<ExporterHealth | undefined> {
  const { rows } = await sql<{
    tenant_id: string;
    last_success_at: Date | null;
    last_failure_at: Date | null;
    last_error: string | null;
    entries_stored: number;
    checkpoint_entry_id: string | null;
    seconds_since_success: number | null;
    last_run_status: string | null;
  }>`select * from govtrail.exporter_health where tenant_id = ${tenantId}`.execute(db);
  const r = rows[0];
  if (r === undefined) return undefined;
  return {
    tenantId: r.tenant_id,
    lastSuccessAt: r.last_success_at,
    lastFailureAt: r.last_failure_at,
    lastError: r.last_error,
    entriesStored: r.entries_stored,
    checkpointEntryId: r.checkpoint_entry_id,
    secondsSinceSuccess: r.seconds_since_success,
    lastRunStatus: r.last_run_status,
  };
}

/** The direction of each field change of the given entries, keyed `entryId|field`. */
export async function findChangeDirections(
  db: Session,
  tenantId: string,
  entryIds: readonly string[],
): Promise<Map<string, string>> {
  if (entryIds.length === 0) return new Map();
  const { rows } = await sql<{ entry_id: string; field: string; direction: string }>`
    select f.entry_id, f.field, f.direction from govtrail.field_change f
    where f.tenant_id = ${tenantId} and f.entry_id = any(${[...entryIds]}::text[])`.execute(db);
  return new Map(rows.map((r) => [`${r.entry_id}|${r.field}`, r.direction]));
}

/** The newest and oldest entry times of a tenant. */
export async function findEntryRange(
  db: Session,
  tenantId: string,
): Promise<{ first: Date; last: Date } | undefined> {
  const { rows } = await sql<{ first: Date | null; last: Date | null }>`
    select min(created_at) as first, max(created_at) as last
    from govtrail.history_entry where tenant_id = ${tenantId}`.execute(db);
  const r = rows[0];
  return r?.first && r.last ? { first: r.first, last: r.last } : undefined;
}

/** The number of field changes in a range (the report shows only the newest of them). */
export async function countChanges(db: Session, filter: ChangeFilter): Promise<number> {
  const { rows } = await sql<{ n: number }>`
    select count(*)::int as n from govtrail.change_log c
    where c.tenant_id = ${filter.tenantId}
      ${andBound('c.changed_at', '>=', filter.since)}
      ${andBound('c.changed_at', '<', filter.until)}`.execute(db);
  return rows[0]?.n ?? 0;
}

/** The newest `limit` changes of a range, newest first. */
export async function findLatestChanges(
  db: Session,
  filter: ChangeFilter,
  limit: number,
): Promise<ChangeLogRow[]> {
  const { rows } = await sql<RawChange>`
    select c.*, c.changed_at::text as changed_at_key from govtrail.change_log c
    where c.tenant_id = ${filter.tenantId}
      ${andBound('c.changed_at', '>=', filter.since)}
      ${andBound('c.changed_at', '<', filter.until)}
    order by c.changed_at desc, c.entry_id desc, c.field desc
    limit ${limit}`.execute(db);
  return rows.map(changeRow);
}
