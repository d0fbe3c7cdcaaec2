/**
 * The chronological walk over a tenant's stored entries (history_entry with its annotations and
 * snapshot) that the change step diffs and the findings read.
 */
import { type Selectable, sql } from 'kysely';
import type { AnnotationRow } from '../../core/normalise/types.js';
import type { WireSettings } from '../../core/wire.js';
import type { Session } from '../database.js';
import type { HistoryEntryTable } from '../schema.js';

/**
 * A place in a tenant's history: created_at as PostgreSQL's exact text (microseconds; a JS Date
 * would round to milliseconds and make keyset paging skip or repeat rows) and the entry id.
 */
export interface Position {
  readonly posAt: string;
  readonly entryId: string;
}

/** One stored entry as the change walk reads it. */
export interface ChronoEntry extends Position {
  readonly entryId: string;
  readonly createdAt: Date;
  readonly createdAtText: string | null;
  readonly runId: number;
  readonly changeKind: string | null;
  readonly actorKind: string | null;
  readonly actorUserId: string | null;
  readonly syslogEventId: string | null;
  readonly traceId: string | null;
  readonly snapshot: WireSettings | null;
  readonly annotations: readonly AnnotationRow[];
}

/** history_entry's columns (types from store/schema.ts) and what CHRONO_COLUMNS computes. */
type ChronoRow = Pick<
  Selectable<HistoryEntryTable>,
  | 'entry_id'
  | 'created_at'
  | 'created_at_text'
  | 'run_id'
  | 'change_kind'
  | 'actor_kind'
  | 'actor_user_id'
  | 'syslog_event_id'
  | 'trace_id'
> & {
  pos_at: string;
  snapshot: WireSettings | null;
  annotations: Array<Omit<AnnotationRow, 'tenantId' | 'entryId'>>;
};

const CHRONO_COLUMNS = sql`
  e.entry_id, e.created_at::text as pos_at, e.created_at, e.created_at_text, e.run_id, e.change_kind, e.actor_kind, e.actor_user_id,
  e.syslog_event_id, e.trace_id,
  case when jsonb_typeof(e.raw->'snapshot') = 'object' then e.raw->'snapshot' end as snapshot,
  coalesce((select jsonb_agg(jsonb_build_object(
              'ordinal', a.ordinal, 'key', a.key, 'kind', a.kind, 'rawValue', a.raw_value,
              'displayValue', a.display_value, 'displayLabel', a.display_label, 'displayUrl', a.display_url)
              order by a.ordinal)
            from govtrail.history_annotation a
            where a.tenant_id = e.tenant_id and a.entry_id = e.entry_id), '[]'::jsonb) as annotations`;

function toChrono(tenantId: string, r: ChronoRow): ChronoEntry {
  return {
    entryId: r.entry_id,
    posAt: r.pos_at,
    createdAt: r.created_at,
    createdAtText: r.created_at_text,
    runId: Number(r.run_id),
    changeKind: r.change_kind,
    actorKind: r.actor_kind,
    actorUserId: r.actor_user_id,
    syslogEventId: r.syslog_event_id,
    traceId: r.trace_id,
    snapshot: r.snapshot,
    annotations: r.annotations.map((a) => ({ ...a, tenantId, entryId: r.entry_id })),
  };
}

/** Position of the oldest entry a run inserted, by (created_at, entry_id). */
export async function findOldestOfRun(
  db: Session,
  tenantId: string,
  runId: number,
): Promise<(Position & { createdAt: Date }) | undefined> {
  const { rows } = await sql<{ pos_at: string; created_at: Date; entry_id: string }>`
    select e.created_at::text as pos_at, e.created_at, e.entry_id from govtrail.history_entry e
    where e.tenant_id = ${tenantId} and e.run_id = ${runId}
    order by e.created_at, e.entry_id limit 1`.execute(db);
  const r = rows[0];
  return r === undefined ? undefined : { posAt: r.pos_at, createdAt: r.created_at, entryId: r.entry_id };
}

/** The entry just before a position, by (created_at, entry_id). */
export async function findEntryBefore(
  db: Session,
  tenantId: string,
  at: Position,
): Promise<ChronoEntry | undefined> {
  const { rows } = await sql<ChronoRow>`
    select ${CHRONO_COLUMNS} from govtrail.history_entry e
    where e.tenant_id = ${tenantId} and (e.created_at, e.entry_id) < (${at.posAt}::timestamptz, ${at.entryId}::text collate "C")
    order by e.created_at desc, e.entry_id desc limit 1`.execute(db);
  return rows[0] === undefined ? undefined : toChrono(tenantId, rows[0]);
}

/** Stored entries by id, as the change walk reads them (for the alerts of findings against the source). */
export async function findChronoEntries(
  db: Session,
  tenantId: string,
  ids: readonly string[],
): Promise<Map<string, ChronoEntry>> {
  if (ids.length === 0) return new Map();
  const { rows } = await sql<ChronoRow>`
    select ${CHRONO_COLUMNS} from unnest(${ids as string[]}::text[]) as i(id)
    join govtrail.history_entry e on e.tenant_id = ${tenantId} and e.entry_id = i.id collate "C"`.execute(db);
  return new Map(rows.map((r) => [r.entry_id, toChrono(tenantId, r)]));
}

/** created_at keys of entries in [from, before), oldest first: the burst window before a position. */
export async function findEntryTimesBetween(
  db: Session,
  tenantId: string,
  from: Date,
  before: Position,
): Promise<Array<{ createdAt: Date; createdAtText: string | null }>> {
  const { rows } = await sql<{ created_at: Date; created_at_text: string | null }>`
    select e.created_at, e.created_at_text from govtrail.history_entry e
    where e.tenant_id = ${tenantId} and e.created_at >= ${from}::timestamptz
      and (e.created_at, e.entry_id) < (${before.posAt}::timestamptz, ${before.entryId}::text collate "C")
    order by e.created_at, e.entry_id`.execute(db);
  return rows.map((r) => ({ createdAt: r.created_at, createdAtText: r.created_at_text }));
}

/**
 * Streams the tenant's entries from a position on (inclusive), oldest first, in batches, so that
 * memory stays flat however long the history is.
 */
export async function* streamEntriesFrom(
  db: Session,
  tenantId: string,
  from: Position,
  batchSize = 2000,
): AsyncGenerator<ChronoEntry> {
  let rows = (
    await sql<ChronoRow>`
      select ${CHRONO_COLUMNS} from govtrail.history_entry e
      where e.tenant_id = ${tenantId} and (e.created_at, e.entry_id) >= (${from.posAt}::timestamptz, ${from.entryId}::text collate "C")
      order by e.created_at, e.entry_id limit ${batchSize}`.execute(db)
  ).rows;
  while (rows.length > 0) {
    for (const r of rows) yield toChrono(tenantId, r);
    if (rows.length < batchSize) return;
    const last = rows[rows.length - 1] as ChronoRow;
    rows = (
      await sql<ChronoRow>`
        select ${CHRONO_COLUMNS} from govtrail.history_entry e
        where e.tenant_id = ${tenantId} and (e.created_at, e.entry_id) > (${last.pos_at}::timestamptz, ${last.entry_id}::text collate "C")
        order by e.created_at, e.entry_id limit ${batchSize}`.execute(db)
    ).rows;
  }
}
