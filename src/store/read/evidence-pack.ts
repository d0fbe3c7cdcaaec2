/**
 * The evidence pack's read queries over the public views and the run ledger. Every list is walked
 * in keyset pages in a stable order, so a period of any length holds one page in memory; all of
 * them run inside the pack's one read-only snapshot transaction.
 */
import { sql } from 'kysely';
import type { Session } from '../database.js';
import type { DiscrepancyKind, DiscrepancyRow } from '../write/discrepancies.js';
import { SNAPSHOT_COLUMNS } from '../write/entries.js';

export interface PeriodFilter {
  readonly tenantId: string;
  /** First instant included. */
  readonly from: Date;
  /** First instant excluded. */
  readonly to: Date;
}

// ---------------------------------------------------------------------------------------------
// settings_timeline
// ---------------------------------------------------------------------------------------------

/** The settings columns of settings_timeline: settings_snapshot's, in the view's order. */
const SETTINGS_COLUMNS = SNAPSHOT_COLUMNS.filter((c) => c !== 'tenant_id' && c !== 'entry_id');

const INTERVAL_COLUMNS: ReadonlySet<string> = new Set([
  'discovery_interval',
  'inactivity_close_after',
  'inactivity_hide_after',
  'retention_delete_after',
]);

/** One settings_timeline row as the pack reads it. */
export interface TimelineEntry {
  readonly entryId: string;
  readonly validFrom: Date;
  readonly validTo: Date | null;
  /** valid_from and valid_to in microseconds since the epoch: exact, unlike a Date. */
  readonly validFromUs: number;
  readonly validToUs: number | null;
  /** created_at as the source sent it (up to nanoseconds). */
  readonly validFromText: string;
  /** valid_from as PostgreSQL prints it, to resume a keyset walk without losing microseconds. */
  readonly validFromKey: string;
  readonly isDeleted: boolean;
  readonly changeKind: string | null;
  readonly actorKind: string | null;
  readonly actorUserId: string | null;
  readonly tickets: string[];
  readonly reasons: string[];
  /**
   * Settings columns by name; durations in the wire's form (`3600s`), timestamps as ISO text, as
   * `govtrail settings --format json` shows them.
   */
  readonly settings: Record<string, unknown>;
  /** Direction of each field this entry changed (field_change), by field. */
  readonly directions: Record<string, string>;
}

interface RawTimeline {
  entry_id: string;
  valid_from: Date;
  valid_to: Date | null;
  valid_from_us: number | string;
  valid_to_us: number | string | null;
  valid_from_key: string;
  created_at_text: string | null;
  is_deleted: boolean;
  change_kind: string | null;
  actor_kind: string | null;
  actor_user_id: string | null;
  tickets: string[] | null;
  reasons: string[] | null;
  settings: Record<string, unknown>;
  directions: Record<string, string> | null;
}

// Durations go out as seconds (numeric, exact) and come back in the wire's form; timestamps as
// jsonb text. The same values `govtrail settings` prints.
const TIMELINE_SELECT = sql`
  t.entry_id, t.valid_from, t.valid_to, t.valid_from::text as valid_from_key, t.created_at_text,
  (extract(epoch from t.valid_from) * 1000000)::bigint as valid_from_us,
  (extract(epoch from t.valid_to) * 1000000)::bigint as valid_to_us,
  t.is_deleted, t.change_kind, t.actor_kind, t.actor_user_id, t.tickets, t.reasons,
  jsonb_build_object(${sql.raw(
    SETTINGS_COLUMNS.map((c) =>
      INTERVAL_COLUMNS.has(c) ? `'${c}', extract(epoch from t.${c})::text` : `'${c}', t.${c}`,
    ).join(', '),
  )}) as settings,
  (select jsonb_object_agg(f.field, f.direction) from govtrail.field_change f
    where f.tenant_id = t.tenant_id and f.entry_id = t.entry_id) as directions`;

function timelineEntry(r: RawTimeline): TimelineEntry {
  const settings: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(r.settings)) {
    settings[k] = INTERVAL_COLUMNS.has(k) && typeof v === 'string' ? `${Number(Number(v).toFixed(9))}s` : v;
  }
  return {
    entryId: r.entry_id,
    validFrom: r.valid_from,
    validTo: r.valid_to,
    validFromUs: Number(r.valid_from_us),
    validToUs: r.valid_to_us === null ? null : Number(r.valid_to_us),
    validFromText: r.created_at_text ?? r.valid_from.toISOString(),
    validFromKey: r.valid_from_key,
    isDeleted: r.is_deleted,
    changeKind: r.change_kind,
    actorKind: r.actor_kind,
    actorUserId: r.actor_user_id,
    tickets: r.tickets ?? [],
    reasons: r.reasons ?? [],
    settings,
    directions: r.directions ?? {},
  };
}

/**
 * The settings_timeline rows of the period, oldest first: the row in force at `from` (when it
 * began earlier), then every row beginning in [from, to).
 */
export async function* iterateTimeline(
  db: Session,
  filter: PeriodFilter,
  pageSize = 1000,
): AsyncGenerator<TimelineEntry> {
  // The row in force at `from` through settings_as_of (a backwards index walk); filtering the view
  // on valid_to instead would compute valid_to for every earlier row of the tenant.
  const first = await sql<RawTimeline>`
    select ${TIMELINE_SELECT} from govtrail.settings_as_of(${filter.tenantId}, ${filter.from}::timestamptz) t
    where t.valid_from < ${filter.from}`.execute(db);
  for (const r of first.rows) yield timelineEntry(r);
  let after: { key: string; entryId: string } | undefined;
  for (;;) {
    const { rows } = await sql<RawTimeline>`
      select ${TIMELINE_SELECT} from govtrail.settings_timeline t
      where t.tenant_id = ${filter.tenantId}
        and t.valid_from >= ${filter.from} and t.valid_from < ${filter.to}
        and (${after?.key ?? null}::timestamptz is null or t.valid_from >= ${after?.key ?? null}::timestamptz)
        and (${after?.key ?? null}::timestamptz is null
             or (t.valid_from, t.entry_id) > (${after?.key ?? null}::timestamptz, ${after?.entryId ?? null}::text collate "C"))
      order by t.valid_from, t.entry_id
      limit ${pageSize}`.execute(db);
    for (const r of rows) yield timelineEntry(r);
    const last = rows.at(-1);
    if (rows.length < pageSize || last === undefined) return;
    after = { key: last.valid_from_key, entryId: last.entry_id };
  }
}

/**
 * The settings_timeline rows before `row` (by valid_from, entry_id), newest first: to find when the
 * values in force at a period's start were set.
 */
export async function* iterateTimelineBefore(
  db: Session,
  tenantId: string,
  row: Pick<TimelineEntry, 'entryId' | 'validFromKey'>,
  pageSize = 1000,
): AsyncGenerator<TimelineEntry> {
  let before = { key: row.validFromKey, entryId: row.entryId };
  for (;;) {
    const { rows } = await sql<RawTimeline>`
      select ${TIMELINE_SELECT} from govtrail.settings_timeline t
      where t.tenant_id = ${tenantId}
        and t.valid_from <= ${before.key}::timestamptz
        and (t.valid_from, t.entry_id) < (${before.key}::timestamptz, ${before.entryId}::text collate "C")
      order by t.valid_from desc, t.entry_id desc
      limit ${pageSize}`.execute(db);
    for (const r of rows) yield timelineEntry(r);
    const last = rows.at(-1);
    if (rows.length < pageSize || last === undefined) return;
    before = { key: last.valid_from_key, entryId: last.entry_id };
  }
}

/**
 * The settings in force at `at` (settings_as_of), or just before it (`at` minus one microsecond,
 * the last instant of a period that excludes `at`); undefined before the first snapshot.
 */
export async function findSettingsInForce(
  db: Session,
  tenantId: string,
  at: Date,
  justBefore: boolean,
): Promise<TimelineEntry | undefined> {
  const { rows } = await sql<RawTimeline>`
    select ${TIMELINE_SELECT}
    from govtrail.settings_as_of(${tenantId},
      ${at}::timestamptz - ${justBefore ? '1 microsecond' : '0'}::interval) t`.execute(db);
  const r = rows[0];
  return r === undefined ? undefined : timelineEntry(r);
}

/**
 * The extra_fields keys of the snapshots the period's timeline shows (those of the period's entries
 * and of the one in force at its start), by name: they become `extra_fields.<name>` settings.
 */
export async function listExtraFieldNames(db: Session, filter: PeriodFilter): Promise<string[]> {
  const { rows } = await sql<{ name: string }>`
    select distinct x.name from (
      select jsonb_object_keys(s.extra_fields) as name
      from govtrail.history_entry e
      join govtrail.settings_snapshot s on s.tenant_id = e.tenant_id and s.entry_id = e.entry_id
      where e.tenant_id = ${filter.tenantId} and e.created_at >= ${filter.from} and e.created_at < ${filter.to}
        and e.change_kind is distinct from 'CHANGE_KIND_HARD_DELETE'
        and jsonb_typeof(s.extra_fields) = 'object'
      union all
      select jsonb_object_keys(t.extra_fields)
      from govtrail.settings_as_of(${filter.tenantId}, ${filter.from}::timestamptz) t
      where jsonb_typeof(t.extra_fields) = 'object'
    ) x
    order by 1`.execute(db);
  return rows.map((r) => r.name);
}

// ---------------------------------------------------------------------------------------------
// changes_without_ticket
// ---------------------------------------------------------------------------------------------

export interface UnticketedEntry {
  readonly changedAt: Date;
  readonly changedAtText: string;
  readonly entryId: string;
  readonly changeKind: string | null;
  readonly actorKind: string | null;
  readonly actorUserId: string | null;
  readonly fields: string[];
  readonly reasons: string[];
  readonly syslogEventId: string | null;
  readonly traceId: string | null;
}

/** changes_without_ticket rows of the period, oldest first by (changed_at, entry_id). */
export async function* iterateChangesWithoutTicket(
  db: Session,
  filter: PeriodFilter,
  pageSize = 2000,
): AsyncGenerator<UnticketedEntry> {
  let after: { key: string; entryId: string } | undefined;
  for (;;) {
    const { rows } = await sql<{
      changed_at: Date;
      changed_at_key: string;
      created_at_text: string | null;
      entry_id: string;
      change_kind: string | null;
      actor_kind: string | null;
      actor_user_id: string | null;
      fields: string[] | null;
      reasons: string[] | null;
      syslog_event_id: string | null;
      trace_id: string | null;
    }>`
      select w.changed_at, w.changed_at::text as changed_at_key, e.created_at_text, w.entry_id, w.change_kind,
             w.actor_kind, w.actor_user_id, w.fields, w.reasons, w.syslog_event_id, w.trace_id
      from govtrail.changes_without_ticket w
      join govtrail.history_entry e on e.tenant_id = w.tenant_id and e.entry_id = w.entry_id
      where w.tenant_id = ${filter.tenantId}
        and w.changed_at >= ${filter.from} and w.changed_at < ${filter.to}
        and (${after?.key ?? null}::timestamptz is null or w.changed_at >= ${after?.key ?? null}::timestamptz)
        and (${after?.key ?? null}::timestamptz is null
             or (w.changed_at, w.entry_id) > (${after?.key ?? null}::timestamptz, ${after?.entryId ?? null}::text collate "C"))
      order by w.changed_at, w.entry_id
      limit ${pageSize}`.execute(db);
    for (const r of rows)
      yield {
        changedAt: r.changed_at,
        changedAtText: r.created_at_text ?? r.changed_at.toISOString(),
        entryId: r.entry_id,
        changeKind: r.change_kind,
        actorKind: r.actor_kind,
        actorUserId: r.actor_user_id,
        fields: r.fields ?? [],
        reasons: r.reasons ?? [],
        syslogEventId: r.syslog_event_id,
        traceId: r.trace_id,
      };
    const last = rows.at(-1);
    if (rows.length < pageSize || last === undefined) return;
    after = { key: last.changed_at_key, entryId: last.entry_id };
  }
}

// ---------------------------------------------------------------------------------------------
// alert_log
// ---------------------------------------------------------------------------------------------

export interface PackAlert {
  readonly alertId: number;
  readonly createdAt: Date;
  /** The time of the change it is about; null for an alert without an entry. */
  readonly changedAt: Date | null;
  readonly entryId: string | null;
  readonly ruleId: string;
  readonly ruleVersion: number;
  readonly severity: string;
  readonly title: string;
  readonly summary: string;
  readonly deliveryStatus: string;
  readonly deliveredSinks: string[];
  readonly pendingSinks: string[];
  readonly failedSinks: string[];
  readonly lastDeliveredAt: Date | null;
}

/**
 * alert_log rows about the period: the change's time in [from, to), or for an alert without an
 * entry its creation time (as the report counts them). Oldest first, by that time and alert id.
 */
export async function* iterateAlerts(
  db: Session,
  filter: PeriodFilter,
  pageSize = 2000,
): AsyncGenerator<PackAlert> {
  let after: { key: string; alertId: number } | undefined;
  for (;;) {
    const { rows } = await sql<{
      alert_id: number | string;
      created_at: Date;
      changed_at: Date | null;
      at_key: string;
      entry_id: string | null;
      rule_id: string;
      rule_version: number;
      severity: string;
      title: string;
      summary: string;
      delivery_status: string;
      delivered_sinks: string[] | null;
      pending_sinks: string[] | null;
      failed_sinks: string[] | null;
      last_delivered_at: Date | null;
    }>`
      select l.alert_id, l.created_at, l.changed_at, coalesce(l.changed_at, l.created_at)::text as at_key,
             l.entry_id, l.rule_id, l.rule_version, l.severity, l.title, l.summary, l.delivery_status,
             l.delivered_sinks, l.pending_sinks, l.failed_sinks, l.last_delivered_at
      from govtrail.alert_log l
      where l.tenant_id = ${filter.tenantId}
        and coalesce(l.changed_at, l.created_at) >= ${filter.from}
        and coalesce(l.changed_at, l.created_at) < ${filter.to}
        and (${after?.key ?? null}::timestamptz is null
             or (coalesce(l.changed_at, l.created_at), l.alert_id) > (${after?.key ?? null}::timestamptz, ${after?.alertId ?? null}::bigint))
      order by coalesce(l.changed_at, l.created_at), l.alert_id
      limit ${pageSize}`.execute(db);
    for (const r of rows)
      yield {
        alertId: Number(r.alert_id),
        createdAt: r.created_at,
        changedAt: r.changed_at,
        entryId: r.entry_id,
        ruleId: r.rule_id,
        ruleVersion: r.rule_version,
        severity: r.severity,
        title: r.title,
        summary: r.summary,
        deliveryStatus: r.delivery_status,
        deliveredSinks: r.delivered_sinks ?? [],
        pendingSinks: r.pending_sinks ?? [],
        failedSinks: r.failed_sinks ?? [],
        lastDeliveredAt: r.last_delivered_at,
      };
    const last = rows.at(-1);
    if (rows.length < pageSize || last === undefined) return;
    after = { key: last.at_key, alertId: Number(last.alert_id) };
  }
}

// ---------------------------------------------------------------------------------------------
// sync_run
// ---------------------------------------------------------------------------------------------

export interface LedgerRun {
  readonly runId: number;
  readonly kind: string;
  readonly trigger: string;
  readonly status: string;
  readonly startedAt: Date;
  readonly finishedAt: Date | null;
  readonly pagesFetched: number;
  readonly entriesFetched: number;
  readonly entriesInserted: number;
  readonly entriesRejected: number;
  readonly warnings: number;
  readonly httpRetries: number;
  readonly stopReason: string | null;
  readonly errorCode: string | null;
  readonly errorMessage: string | null;
  readonly coveredFromText: string | null;
  readonly coveredToText: string | null;
}

/** The tenant's runs started in [from, to), oldest first by (started_at, run_id). */
export async function* iterateRuns(
  db: Session,
  filter: PeriodFilter,
  pageSize = 2000,
): AsyncGenerator<LedgerRun> {
  let after: { key: string; runId: number } | undefined;
  for (;;) {
    const { rows } = await sql<{
      run_id: number | string;
      kind: string;
      trigger: string;
      status: string;
      started_at: Date;
      started_key: string;
      finished_at: Date | null;
      pages_fetched: number;
      entries_fetched: number;
      entries_inserted: number;
      entries_rejected: number;
      warnings: number;
      http_retries: number;
      stop_reason: string | null;
      error_code: string | null;
      error_message: string | null;
      covered_from_text: string | null;
      covered_to_text: string | null;
    }>`
      select r.run_id, r.kind, r.trigger, r.status, r.started_at, r.started_at::text as started_key, r.finished_at,
             r.pages_fetched, r.entries_fetched, r.entries_inserted, r.entries_rejected, r.warnings,
             r.http_retries, r.stop_reason, r.error_code, r.error_message, r.covered_from_text, r.covered_to_text
      from govtrail.sync_run r
      where r.tenant_id = ${filter.tenantId}
        and r.started_at >= ${filter.from} and r.started_at < ${filter.to}
        and (${after?.key ?? null}::timestamptz is null
             or (r.started_at, r.run_id) > (${after?.key ?? null}::timestamptz, ${after?.runId ?? null}::bigint))
      order by r.started_at, r.run_id
      limit ${pageSize}`.execute(db);
    for (const r of rows)
      yield {
        runId: Number(r.run_id),
        kind: r.kind,
        trigger: r.trigger,
        status: r.status,
        startedAt: r.started_at,
        finishedAt: r.finished_at,
        pagesFetched: Number(r.pages_fetched),
        entriesFetched: Number(r.entries_fetched),
        entriesInserted: Number(r.entries_inserted),
        entriesRejected: Number(r.entries_rejected),
        warnings: Number(r.warnings),
        httpRetries: Number(r.http_retries),
        stopReason: r.stop_reason,
        errorCode: r.error_code,
        errorMessage: r.error_message,
        coveredFromText: r.covered_from_text,
        coveredToText: r.covered_to_text,
      };
    const last = rows.at(-1);
    if (rows.length < pageSize || last === undefined) return;
    after = { key: last.started_key, runId: Number(last.run_id) };
  }
}

/** When the tenant's last successful run (sync or reconcile) that started before `at` finished. */
export async function findLastSuccessBefore(db: Session, tenantId: string, at: Date): Promise<Date | null> {
  const { rows } = await sql<{ finished_at: Date | null }>`
    select max(r.finished_at) as finished_at from govtrail.sync_run r
    where r.tenant_id = ${tenantId} and r.status = 'succeeded' and r.started_at < ${at}`.execute(db);
  return rows[0]?.finished_at ?? null;
}

// ---------------------------------------------------------------------------------------------
// source_discrepancy and verify findings
// ---------------------------------------------------------------------------------------------

/** A discrepancy as listDiscrepancies gives it, with the version the source served. */
export interface PackDiscrepancy extends Omit<DiscrepancyRow, 'tenantId'> {
  /** The version the source served (null for missing and expired). */
  readonly sourceRaw: unknown;
}

/** Discrepancies recorded for entries created in [from, to), by id (detection order). */
export async function* iterateDiscrepancies(
  db: Session,
  filter: PeriodFilter,
  pageSize = 500,
): AsyncGenerator<PackDiscrepancy> {
  let after = 0;
  for (;;) {
    const { rows } = await sql<{
      discrepancy_id: number | string;
      entry_id: string;
      kind: DiscrepancyKind;
      detected_at: Date;
      run_id: number | string;
      entry_created_at: Date | null;
      stored_sha256: string | null;
      source_sha256: string | null;
      source_raw: unknown;
    }>`
      select d.discrepancy_id, d.entry_id, d.kind, d.detected_at, d.run_id, d.entry_created_at,
             d.stored_sha256, d.source_sha256, d.source_raw
      from govtrail.source_discrepancy d
      where d.tenant_id = ${filter.tenantId}
        and d.entry_created_at >= ${filter.from} and d.entry_created_at < ${filter.to}
        and d.discrepancy_id > ${after}
      order by d.discrepancy_id
      limit ${pageSize}`.execute(db);
    for (const r of rows)
      yield {
        discrepancyId: Number(r.discrepancy_id),
        entryId: r.entry_id,
        kind: r.kind,
        detectedAt: r.detected_at,
        runId: Number(r.run_id),
        entryCreatedAt: r.entry_created_at,
        storedSha256: r.stored_sha256,
        sourceSha256: r.source_sha256,
        sourceRaw: r.source_raw,
      };
    const last = rows.at(-1);
    if (rows.length < pageSize || last === undefined) return;
    after = Number(last.discrepancy_id);
  }
}

/** How many discrepancies are recorded for the tenant in all. */
export async function countDiscrepancies(db: Session, tenantId: string): Promise<number> {
  const { rows } = await sql<{ n: number | string }>`
    select count(*) as n from govtrail.source_discrepancy where tenant_id = ${tenantId}`.execute(db);
  return Number(rows[0]?.n ?? 0);
}

/** created_at of the given entries, by entry id. */
export async function findEntryTimes(
  db: Session,
  tenantId: string,
  entryIds: readonly string[],
): Promise<Map<string, Date>> {
  if (entryIds.length === 0) return new Map();
  const { rows } = await sql<{ entry_id: string; created_at: Date }>`
    select entry_id, created_at from govtrail.history_entry
    where tenant_id = ${tenantId} and entry_id = any(${[...entryIds]}::text[])`.execute(db);
  return new Map(rows.map((r) => [r.entry_id, r.created_at]));
}
