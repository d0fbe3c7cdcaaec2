/**
 * The reading of a tenant's history that the conformance judge needs (docs/design/conformance.md):
 * the entries that set the settings, with their snapshot and tickets, in keyset pages.
 */
import { type Selectable, sql } from 'kysely';
import type { JudgedEntry } from '../../core/conformance/judge.js';
import { parseTimestamp } from '../../core/normalise/time.js';
import type { WireSettings } from '../../core/wire.js';
import type { Session } from '../database.js';
import type { HistoryEntryTable, SettingsSnapshotTable } from '../schema.js';

/** The nanosecond key of a timestamptz, computed in SQL (microseconds, padded). */
export const UTC_KEY = (column: string) =>
  sql.raw(`to_char(${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US') || '000Z'`);

/**
 * The instant of the earliest entry a run stored that set the settings (a snapshot or a hard
 * delete), as a nanosecond key; undefined when the run stored none. created_at is the key rounded
 * to the microsecond, so the earliest key lies among the rows of the least created_at.
 */
export async function earliestSettingEntryKey(
  db: Session,
  tenantId: string,
  runId: number,
): Promise<string | undefined> {
  const { rows } = await sql<{ created_at_text: string | null; utc_key: string }>`
    with setting as (
      select e.created_at, e.created_at_text
      from govtrail.history_entry e
      where e.run_id = ${runId} and e.tenant_id = ${tenantId}
        and (e.change_kind = 'CHANGE_KIND_HARD_DELETE'
             or exists (select from govtrail.settings_snapshot s where s.tenant_id = e.tenant_id and s.entry_id = e.entry_id)))
    select s.created_at_text, ${UTC_KEY('s.created_at')} as utc_key
    from setting s where s.created_at = (select min(created_at) from setting)`.execute(db);
  let least: string | undefined;
  for (const r of rows) {
    const key = parseTimestamp(r.created_at_text)?.key ?? r.utc_key;
    if (least === undefined || key < least) least = key;
  }
  return least;
}

/**
 * An entry and its settings snapshot as SETTING_JOIN reads them: the columns of history_entry and
 * settings_snapshot (types from store/schema.ts; a snapshot column is NULL when there is none, and
 * the durations come as wire text) and what the query computes.
 */
type SettingRow = Pick<
  Selectable<HistoryEntryTable>,
  'entry_id' | 'created_at_text' | 'actor_kind' | 'actor_user_id'
> &
  Nullable<
    Pick<
      Selectable<SettingsSnapshotTable>,
      | 'allowed_client_types'
      | 'audit_verbosity'
      | 'auto_discovery_enabled'
      | 'default_tool_classification'
      | 'discovery_interval'
      | 'inactivity_close_after'
      | 'inactivity_hide_after'
      | 'retention_delete_after'
      | 'enabled'
      | 'prefer_code_mode_over_direct_tools'
      | 'require_tool_approval'
      | 'surface_requestable_tools'
    >
  > & {
    pos_at: string;
    /** The key from created_at, computed only when there is no created_at_text. */
    utc_key: string | null;
    deleted: boolean;
    has_snapshot: boolean;
    extra_fields: Record<string, unknown> | null;
  };

/** Every column of T may be NULL (an outer join that found no row). */
type Nullable<T> = { [K in keyof T]: T[K] | null };

/** A duration column as its wire text (`"3600s"`), as the diff and the judge read durations. */
const WIRE_DURATION = (column: string) =>
  sql.raw(`case when ${column} is not null then trim_scale(extract(epoch from ${column}))::text || 's' end`);

// The settings are read from settings_snapshot's typed columns (the normaliser's own reading of the
// wire, proto3 defaults included), not by parsing each entry's raw JSON: a fifth of the cost.
const META_COLUMNS = sql`
  e.entry_id, e.created_at::text as pos_at, e.created_at_text,
  case when e.created_at_text is null then ${UTC_KEY('e.created_at')} end as utc_key,
  e.actor_kind, e.actor_user_id,
  e.change_kind = 'CHANGE_KIND_HARD_DELETE' as deleted,
  s.entry_id is not null as has_snapshot`;

/** The typed columns of settings_snapshot the judge reads, each as the row field wireOf expects. */
const VALUE_COLUMNS: Readonly<Record<string, ReturnType<typeof sql.raw>>> = {
  allowed_client_types: sql.raw('s.allowed_client_types'),
  audit_verbosity: sql.raw('s.audit_verbosity'),
  auto_discovery_enabled: sql.raw('s.auto_discovery_enabled'),
  default_tool_classification: sql.raw('s.default_tool_classification'),
  discovery_interval: WIRE_DURATION('s.discovery_interval'),
  inactivity_close_after: WIRE_DURATION('s.inactivity_close_after'),
  inactivity_hide_after: WIRE_DURATION('s.inactivity_hide_after'),
  retention_delete_after: WIRE_DURATION('s.retention_delete_after'),
  enabled: sql.raw('s.enabled'),
  prefer_code_mode_over_direct_tools: sql.raw('s.prefer_code_mode_over_direct_tools'),
  require_tool_approval: sql.raw('s.require_tool_approval'),
  surface_requestable_tools: sql.raw('s.surface_requestable_tools'),
  extra_fields: sql.raw(`case when s.extra_fields <> '{}'::jsonb then s.extra_fields end`),
};

/**
 * The select list for the fields a baseline judges (every field when none is given): a baseline
 * of six controls reads six columns of each entry, not fourteen.
 */
function settingColumns(fields: readonly string[] | undefined) {
  const wanted =
    fields === undefined
      ? Object.keys(VALUE_COLUMNS)
      : [...new Set(fields.map((f) => (f.startsWith('extra_fields.') ? 'extra_fields' : f)))];
  const parts = wanted.flatMap((f) => {
    const column = VALUE_COLUMNS[f];
    return column === undefined ? [] : [sql`${column} as ${sql.ref(f)}`];
  });
  return parts.length === 0 ? META_COLUMNS : sql`${META_COLUMNS}, ${sql.join(parts)}`;
}

const SETTING_COLUMNS = settingColumns(undefined);

const SETTING_JOIN = sql`left join lateral (
  select * from govtrail.settings_snapshot x where x.tenant_id = e.tenant_id and x.entry_id = e.entry_id) s on true`;

/** Entries that set the settings: a snapshot, or a hard delete (for the few queries that filter in SQL). */
const SETTING_FILTER = sql`(e.change_kind = 'CHANGE_KIND_HARD_DELETE' or s.entry_id is not null)`;

/** The snapshot as the wire would have carried it, rebuilt from the typed columns. */
function wireOf(r: SettingRow): WireSettings {
  const w: Record<string, unknown> = {};
  if (r.extra_fields != null) {
    for (const [k, v] of Object.entries(r.extra_fields)) {
      if (!k.startsWith('defaultClientLifecycle.')) w[k] = v;
    }
  }
  const set = (key: string, v: unknown) => {
    if (v !== null && v !== undefined) w[key] = v;
  };
  set('allowedClientTypes', r.allowed_client_types);
  set('auditVerbosity', r.audit_verbosity);
  set('autoDiscoveryEnabled', r.auto_discovery_enabled);
  set('defaultToolClassification', r.default_tool_classification);
  set('discoveryInterval', r.discovery_interval);
  set('enabled', r.enabled);
  set('preferCodeModeOverDirectTools', r.prefer_code_mode_over_direct_tools);
  set('requireToolApproval', r.require_tool_approval);
  set('surfaceRequestableTools', r.surface_requestable_tools);
  const lifecycle: Record<string, unknown> = {};
  if (r.inactivity_close_after != null) lifecycle['inactivityCloseAfter'] = r.inactivity_close_after;
  if (r.inactivity_hide_after != null) lifecycle['inactivityHideAfter'] = r.inactivity_hide_after;
  if (r.retention_delete_after != null) lifecycle['retentionDeleteAfter'] = r.retention_delete_after;
  if (r.extra_fields != null) {
    for (const [k, v] of Object.entries(r.extra_fields)) {
      if (k.startsWith('defaultClientLifecycle.')) lifecycle[k.slice('defaultClientLifecycle.'.length)] = v;
    }
  }
  if (Object.keys(lifecycle).length > 0) w['defaultClientLifecycle'] = lifecycle;
  return w as WireSettings;
}

function toJudged(r: SettingRow): JudgedEntry {
  return {
    key: parseTimestamp(r.created_at_text)?.key ?? (r.utc_key as string),
    entryId: r.entry_id,
    snapshot: r.deleted ? null : wireOf(r),
    actorKind: r.actor_kind,
    actorUserId: r.actor_user_id,
    // Tickets are looked up afterwards for the few entries that open a period (ticketsOf).
    ticket: null,
  };
}

/** The first TICKET annotation of each of `entryIds` that has one. */
export async function ticketsOf(
  db: Session,
  tenantId: string,
  entryIds: readonly string[],
): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (let i = 0; i < entryIds.length; i += CHUNK) {
    const part = entryIds.slice(i, i + CHUNK);
    const { rows } = await sql<{ entry_id: string; ticket: string | null }>`
      select distinct on (a.entry_id) a.entry_id, coalesce(nullif(a.display_value, ''), a.raw_value) as ticket
      from govtrail.history_annotation a
      where a.tenant_id = ${tenantId} and a.entry_id = any(${part}::text[]) and a.kind = 'ANNOTATION_KIND_TICKET'
      order by a.entry_id, a.ordinal`.execute(db);
    for (const r of rows) if (r.ticket !== null) out.set(r.entry_id, r.ticket);
  }
  return out;
}

function byKey(a: JudgedEntry, b: JudgedEntry): number {
  return a.key < b.key ? -1 : a.key > b.key ? 1 : a.entryId < b.entryId ? -1 : a.entryId > b.entryId ? 1 : 0;
}

/**
 * Reads the tenant's entries that set the settings, from the instant `fromKey` on (all when null),
 * in (key, entryId) order, a page at a time. A page always ends with every entry of its last
 * microsecond, so entries that differ below a microsecond are ordered by their nanoseconds.
 * `db` must be a transaction (the read is a cursor).
 */
export async function readSettingEntries(
  db: Session,
  tenantId: string,
  fromKey: string | null,
  onPage: (entries: JudgedEntry[]) => void | Promise<void>,
  options: { readonly pageSize?: number; readonly fields?: readonly string[] } = {},
): Promise<number> {
  const pageSize = options.pageSize ?? 5000;
  const columns = settingColumns(options.fields);
  // One cursor over the whole range, fetched a page at a time: the history is scanned (or
  // sorted) once. Paging by keyset instead re-planned each page, and inside a backfill's
  // transaction, where the statistics still describe empty tables, each page read the whole
  // tenant (0.25 s a page at 100 000 entries: quadratic in the history). The caller's transaction
  // holds the cursor. The range starts a microsecond early: created_at is the key rounded.
  const cursor = sql.raw(`govtrail_judge_${++cursorCount}`);
  await sql`declare ${cursor} no scroll cursor for
    select ${columns}
    from govtrail.history_entry e ${SETTING_JOIN}
    where e.tenant_id = ${tenantId}
      and (${fromKey}::timestamptz is null or e.created_at >= ${fromKey}::timestamptz - interval '1 microsecond')
    order by e.created_at, e.entry_id`.execute(db);
  let total = 0;
  // Rows of the last microsecond read, held back until the microsecond is complete, so that
  // entries that differ below a microsecond are ordered by their nanoseconds.
  let held: SettingRow[] = [];
  const emit = async (rows: SettingRow[]) => {
    // Entries that neither carry a snapshot nor delete the settings leave them as they are.
    let page = rows.filter((r) => r.deleted || r.has_snapshot).map(toJudged);
    if (fromKey !== null) page = page.filter((e) => e.key >= fromKey);
    page.sort(byKey);
    total += page.length;
    if (page.length > 0) await onPage(page);
  };
  try {
    for (;;) {
      const { rows } =
        await sql<SettingRow>`fetch forward ${sql.raw(String(pageSize))} from ${cursor}`.execute(db);
      const all = held.length === 0 ? rows : [...held, ...rows];
      if (rows.length < pageSize) {
        await emit(all);
        break;
      }
      const lastAt = (all[all.length - 1] as SettingRow).pos_at;
      let cut = all.length;
      while (cut > 0 && (all[cut - 1] as SettingRow).pos_at === lastAt) cut--;
      held = all.slice(cut);
      await emit(all.slice(0, cut));
    }
  } finally {
    await sql`close ${cursor}`.execute(db);
  }
  return total;
}

/** Cursor names of this process, unique within any transaction. */
let cursorCount = 0;

/** Rows written by one statement. */
export const CHUNK = 5000;

/** The tenant's first and newest entries that set the settings, as keys; undefined when none. */
export async function settingBounds(
  db: Session,
  tenantId: string,
): Promise<{ readonly firstKey: string; readonly latest: JudgedEntry } | undefined> {
  const first: JudgedEntry[] = [];
  const { rows } = await sql<SettingRow>`
    (select ${SETTING_COLUMNS} from govtrail.history_entry e ${SETTING_JOIN}
     where e.tenant_id = ${tenantId} and ${SETTING_FILTER} order by e.created_at, e.entry_id limit 1)
    union all
    (select ${SETTING_COLUMNS} from govtrail.history_entry e ${SETTING_JOIN}
     where e.tenant_id = ${tenantId} and ${SETTING_FILTER} order by e.created_at desc, e.entry_id desc limit 1)`.execute(
    db,
  );
  for (const r of rows) first.push(toJudged(r));
  const [a, z] = first;
  if (a === undefined || z === undefined) return undefined;
  return { firstKey: a.key, latest: z };
}

/** When a run last judged the tenant (registry), as a nanosecond key; undefined when never or unregistered. */
export async function lastJudgedKey(db: Session, tenantId: string): Promise<string | undefined> {
  const { rows } = await sql<{ key: string | null }>`
    select ${UTC_KEY('baseline_judged_at')} as key from govtrail.tenant where tenant_id = ${tenantId}`.execute(
    db,
  );
  return rows[0]?.key ?? undefined;
}

/** Created-at text and change kind of the entries of `ids` that run `runId` stored. */
export async function runEntryFacts(
  db: Session,
  tenantId: string,
  runId: number,
  ids: readonly string[],
): Promise<Map<string, { changedAt: string | null; changeKind: string | null }>> {
  if (ids.length === 0) return new Map();
  const { rows } = await sql<{
    entry_id: string;
    created_at_text: string | null;
    change_kind: string | null;
  }>`
    select entry_id, created_at_text, change_kind from govtrail.history_entry
    where tenant_id = ${tenantId} and run_id = ${runId} and entry_id = any(${[...ids]}::text[])`.execute(db);
  return new Map(rows.map((r) => [r.entry_id, { changedAt: r.created_at_text, changeKind: r.change_kind }]));
}
