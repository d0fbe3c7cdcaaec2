/**
 * Repository of the evidence tables: history_entry, history_annotation, settings_snapshot and
 * rejected_entry. Entries go in with COPY — one `COPY … FROM STDIN` per table per batch, never a
 * statement per row; rejected entries with one multi-row `INSERT … SELECT FROM unnest(…)`.
 */
import { createHash } from 'node:crypto';
import { sql } from 'kysely';
import {
  canonicalJson,
  canonicalJsonbText,
  contentHash,
  rowAndContentHashOfText,
  toJsonbText,
} from '../../core/normalise/canonical.js';
import type { NormalisedEntry } from '../../core/normalise/types.js';
import { copyTables, type TableCopy } from '../copy.js';
import { CopyPayload, type CopyValue, encodeCopyRows, JsonUtf8 } from '../copy-format.js';
import type { Session } from '../database.js';

/**
 * Of the given ids, those already stored for the tenant, each with its content hash: one
 * primary-key probe per id. (The plainer `entry_id = any($ids)` is planned, while a backfill's rows
 * are uncommitted and the table has no statistics, as a scan of every row of the tenant — each batch
 * then cost more than the last: 0.5 s per batch at 300 000 rows.) A row stored before migration
 * 0004 has no content_sha256: its hash is computed from raw here, the one place that knows.
 */
export async function findStoredContent(
  db: Session,
  tenantId: string,
  ids: readonly string[],
): Promise<Map<string, Buffer>> {
  const versions = await findStoredVersions(db, tenantId, ids);
  return new Map([...versions].map(([id, v]) => [id, v.contentHash]));
}

/** A stored entry's content hash and the run that stored it. */
export interface StoredVersion {
  readonly contentHash: Buffer;
  readonly runId: number;
}

/** As {@link findStoredContent}, with the run that stored each entry. */
export async function findStoredVersions(
  db: Session,
  tenantId: string,
  ids: readonly string[],
): Promise<Map<string, StoredVersion>> {
  if (ids.length === 0) return new Map();
  const { rows } = await sql<{
    entry_id: string;
    content_sha256: Buffer | null;
    raw: unknown;
    run_id: number | string;
  }>`
    select i.id as entry_id, stored.content_sha256, stored.run_id,
           case when stored.content_sha256 is null then stored.raw end as raw
    from unnest(${ids as string[]}::text[]) as i(id)
    cross join lateral (
      select e.content_sha256, e.raw, e.run_id from govtrail.history_entry e
      where e.tenant_id = ${tenantId} and e.entry_id = i.id collate "C" limit 1) as stored`.execute(db);
  const out = new Map<string, StoredVersion>();
  for (const r of rows)
    out.set(r.entry_id, {
      contentHash: r.content_sha256 === null ? contentHash(r.raw) : Buffer.from(r.content_sha256),
      runId: Number(r.run_id),
    });
  return out;
}

/** Of the given ids, those already stored for the tenant. */
export async function findStoredEntryIds(
  db: Session,
  tenantId: string,
  ids: readonly string[],
): Promise<Set<string>> {
  return new Set((await findStoredContent(db, tenantId, ids)).keys());
}

/** row_hash of the tenant's last stored row (storage order), or null for a tenant with none. */
export async function findLastRowHash(db: Session, tenantId: string): Promise<Buffer | null> {
  const row = await db
    .selectFrom('govtrail.history_entry')
    .select('row_hash')
    .where('tenant_id', '=', tenantId)
    .orderBy('seq', 'desc')
    .limit(1)
    .executeTakeFirst();
  return row === undefined ? null : Buffer.from(row.row_hash);
}

export interface InsertEntriesResult {
  readonly inserted: number;
  /** row_hash of the last inserted row, to chain the next batch from. */
  readonly lastHash: Buffer | null;
}

// Columns loaded by COPY, in payload order. history_entry.seq (identity) and loaded_at (default) are
// left to the table: COPY numbers the rows in payload order, which is the order of `entries`.
const ENTRY_COLUMNS = [
  'tenant_id',
  'entry_id',
  'created_at',
  'created_at_text',
  'change_kind',
  'actor_kind',
  'actor_user_id',
  'syslog_event_id',
  'trace_id',
  'raw',
  'run_id',
  'row_hash',
  'content_sha256',
] as const;
const ANNOTATION_COLUMNS = [
  'tenant_id',
  'entry_id',
  'ordinal',
  'key',
  'kind',
  'raw_value',
  'display_value',
  'display_label',
  'display_url',
] as const;
/** The columns of settings_snapshot, in the order COPY writes them. */
export const SNAPSHOT_COLUMNS = [
  'tenant_id',
  'entry_id',
  'allowed_client_types',
  'allows_all_client_types',
  'audit_verbosity',
  'auto_discovery_enabled',
  'default_tool_classification',
  'discovery_interval',
  'inactivity_close_after',
  'inactivity_hide_after',
  'retention_delete_after',
  'enabled',
  'prefer_code_mode_over_direct_tools',
  'require_tool_approval',
  'surface_requestable_tools',
  'settings_created_at',
  'settings_updated_at',
  'extra_fields',
] as const;

/** The hash chain as rows are encoded: row_hash of the last row so far. */
interface Chain {
  hash: Buffer | null;
}

/** The tenant of a batch: every entry must have it (rows are stored under it). */
function batchTenant(entries: readonly NormalisedEntry[]): string {
  const tenantId = entries[0]?.entry.tenantId as string;
  for (const { entry } of entries) {
    if (entry.tenantId !== tenantId)
      throw new Error(`one batch of entries holds tenants ${tenantId} and ${entry.tenantId}`);
  }
  return tenantId;
}

/** history_entry rows in ENTRY_COLUMNS order, chaining row hashes from `chain.hash`. */
function* entryRows(
  tenantId: string,
  runId: number,
  entries: readonly NormalisedEntry[],
  chain: Chain,
): Generator<CopyValue[]> {
  for (const { entry } of entries) {
    // One serialisation for both the column and the hash, which covers what is stored as it reads
    // back (JSON of the jsonb text).
    const raw = canonicalJsonbText(entry.raw);
    const hashes = rowAndContentHashOfText(chain.hash, entry, raw.hashText);
    chain.hash = hashes.rowHash;
    yield [
      tenantId,
      entry.entryId,
      entry.createdAtKey, // timestamptz input, as the former created_at::timestamptz
      entry.createdAtText,
      entry.changeKind,
      entry.actorKind,
      entry.actorUserId,
      entry.syslogEventId,
      entry.traceId,
      // The bytes just hashed, unless jsonb's refused escapes made the stored text differ.
      raw.text === raw.hashText ? new JsonUtf8(hashes.canonicalRawUtf8) : raw.text,
      runId,
      chain.hash,
      hashes.contentHash,
    ];
  }
}

function* annotationRows(tenantId: string, entries: readonly NormalisedEntry[]): Generator<CopyValue[]> {
  for (const e of entries) {
    for (const an of e.annotations) {
      yield [
        tenantId,
        an.entryId,
        an.ordinal,
        an.key,
        an.kind,
        an.rawValue,
        an.displayValue,
        an.displayLabel,
        an.displayUrl,
      ];
    }
  }
}

function* snapshotRows(tenantId: string, entries: readonly NormalisedEntry[]): Generator<CopyValue[]> {
  for (const e of entries) {
    const x = e.snapshot;
    if (x === null) continue;
    yield [
      tenantId,
      x.entryId,
      x.allowedClientTypes,
      x.allowsAllClientTypes,
      x.auditVerbosity,
      x.autoDiscoveryEnabled,
      x.defaultToolClassification,
      x.discoveryInterval, // interval input, as the former ::interval casts
      x.inactivityCloseAfter,
      x.inactivityHideAfter,
      x.retentionDeleteAfter,
      x.enabled,
      x.preferCodeModeOverDirectTools,
      x.requireToolApproval,
      x.surfaceRequestableTools,
      x.settingsCreatedAt,
      x.settingsUpdatedAt,
      toJsonbText(x.extraFields),
    ];
  }
}

/**
 * Inserts new entries with their annotations and snapshots: `encodeEntries` then
 * `writeEncodedEntries`, one COPY per table. Rows are chained (row_hash) and numbered (seq) in the
 * order given. `entries` must all belong to one tenant, and hold no id twice nor an id already
 * stored for the tenant (the caller filters them out with `findStoredEntryIds`): COPY has no ON
 * CONFLICT, so such an id fails the whole COPY with a unique violation (23505) and with it the
 * caller's transaction — the run is rolled back and the next run retries; nothing is half-written
 * and the chain never breaks. Hence `inserted` is always `entries.length`.
 */
export async function insertEntries(
  db: Session,
  runId: number,
  entries: readonly NormalisedEntry[],
  previousHash: Buffer | null,
): Promise<InsertEntriesResult> {
  if (entries.length === 0) return { inserted: 0, lastHash: previousHash };
  const encoded = encodeEntries(runId, entries, previousHash);
  return { inserted: await writeEncodedEntries(db, encoded), lastHash: encoded.lastHash };
}

/** A batch of entries encoded beforehand for COPY, its hash chain computed: see `encodeEntries`. */
export interface EncodedEntries {
  /** How many entries (history_entry rows) the batch holds. */
  readonly count: number;
  /** row_hash of the batch's last row (the previous hash for an empty batch). */
  readonly lastHash: Buffer | null;
  readonly entries: CopyPayload;
  readonly annotations: CopyPayload;
  readonly snapshots: CopyPayload;
}

/**
 * What `insertEntries` sends, encoded ahead of time (for measuring the writes alone): the same
 * rows and hash chain, nothing written. `writeEncodedEntries` writes them.
 */
export function encodeEntries(
  runId: number,
  entries: readonly NormalisedEntry[],
  previousHash: Buffer | null,
): EncodedEntries {
  const tenantId = entries.length === 0 ? '' : batchTenant(entries);
  const chain: Chain = { hash: previousHash };
  const payload = encodeCopyRows(entryRows(tenantId, runId, entries, chain), ENTRY_COLUMNS.length);
  return {
    count: payload.rows,
    lastHash: chain.hash,
    entries: payload,
    annotations: encodeCopyRows(annotationRows(tenantId, entries), ANNOTATION_COLUMNS.length),
    snapshots: encodeCopyRows(snapshotRows(tenantId, entries), SNAPSHOT_COLUMNS.length),
  };
}

/**
 * Consecutive encoded parts of one batch (each chained on the one before) as one: their chunks in
 * order, so that `writeEncodedEntries` sends one COPY per table.
 */
export function joinEncodedEntries(parts: readonly EncodedEntries[]): EncodedEntries {
  const last = parts[parts.length - 1] as EncodedEntries;
  if (parts.length === 1) return last;
  const join = (pick: (p: EncodedEntries) => CopyPayload): CopyPayload =>
    new CopyPayload(
      parts.flatMap((p) => [...pick(p).chunks]),
      parts.reduce((n, p) => n + pick(p).rows, 0),
    );
  return {
    count: parts.reduce((n, p) => n + p.count, 0),
    lastHash: last.lastHash,
    entries: join((p) => p.entries),
    annotations: join((p) => p.annotations),
    snapshots: join((p) => p.snapshots),
  };
}

/**
 * Writes a batch from `encodeEntries`, as `insertEntries` would, and then the rows of `after` (rows
 * that refer to the batch's entries) in the same query; returns how many entries.
 */
export async function writeEncodedEntries(
  db: Session,
  encoded: EncodedEntries,
  after: readonly TableCopy[] = [],
): Promise<number> {
  // One query for the three tables and what goes with them: no round trip between them (copyTables).
  const [inserted] = await copyTables(db, [
    { table: 'govtrail.history_entry', columns: ENTRY_COLUMNS, rows: encoded.entries },
    { table: 'govtrail.history_annotation', columns: ANNOTATION_COLUMNS, rows: encoded.annotations },
    { table: 'govtrail.settings_snapshot', columns: SNAPSHOT_COLUMNS, rows: encoded.snapshots },
    ...after,
  ]);
  return inserted ?? 0;
}

export interface RejectedInput {
  readonly reason: string;
  readonly raw: unknown;
}

/** Keeps entries that cannot be stored as rows; the same raw entry is kept once per tenant. */
export async function insertRejected(
  db: Session,
  tenantId: string,
  runId: number,
  rejected: readonly RejectedInput[],
): Promise<number> {
  if (rejected.length === 0) return 0;
  const reasons = rejected.map((r) => r.reason);
  const raws = rejected.map((r) => toJsonbText(r.raw));
  const shas = rejected.map((r) => createHash('sha256').update(canonicalJson(r.raw)).digest('hex'));
  const result = await sql`
    insert into govtrail.rejected_entry (tenant_id, run_id, reason, raw, raw_sha256)
    select ${tenantId}, ${runId}, r.reason, r.raw::jsonb, r.sha
    from unnest(${reasons}::text[], ${raws}::text[], ${shas}::text[]) as r(reason, raw, sha)
    on conflict (tenant_id, raw_sha256) do nothing`.execute(db);
  return Number(result.numAffectedRows ?? 0n);
}

export interface StoredEntryKey {
  readonly entryId: string;
  readonly createdAt: Date;
  readonly createdAtText: string | null;
}

/** The tenant's newest stored entry by (created_at, entry_id). */
export async function findNewestEntry(db: Session, tenantId: string): Promise<StoredEntryKey | undefined> {
  const row = await db
    .selectFrom('govtrail.history_entry')
    .select(['entry_id', 'created_at', 'created_at_text'])
    .where('tenant_id', '=', tenantId)
    .orderBy('created_at', 'desc')
    .orderBy('entry_id', 'desc')
    .limit(1)
    .executeTakeFirst();
  return row === undefined
    ? undefined
    : { entryId: row.entry_id, createdAt: row.created_at, createdAtText: row.created_at_text };
}

export async function countEntries(db: Session, tenantId: string): Promise<number> {
  const row = await db
    .selectFrom('govtrail.history_entry')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('tenant_id', '=', tenantId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}
