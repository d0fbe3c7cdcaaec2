/**
 * The view settings_timeline: the settings in force over time, the rows of a period (and those
 * before it, walked back), the settings in force at an instant, and the extra fields a period names.
 * Read by the evidence pack inside its one read-only snapshot transaction; walked in keyset
 * pages in a stable order, so a period of any length holds one page in memory.
 */
import { sql } from 'kysely';
import type { Session } from '../database.js';
import { SNAPSHOT_COLUMNS } from '../write/entries.js';
import type { PeriodFilter } from './period.js';

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
