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
  rowAndContentHashOfText,
  toJsonbText,
} from '../../core/normalise/canonical.js';
import type { AnnotationRow, EntryRow, NormalisedEntry, SnapshotRow } from '../../core/normalise/types.js';
import { copyTables, type TableCopy } from '../copy.js';
import {
  CopyBuilder,
  CopyPayload,
  type CopyValue,
  copyShape,
  encodeCopyRows,
  JsonUtf8,
} from '../copy-format.js';
import type { Session } from '../database.js';
import type { HistoryAnnotationTable, HistoryEntryTable, SettingsSnapshotTable } from '../schema.js';

export interface InsertEntriesResult {
  readonly inserted: number;
  /** row_hash of the last inserted row, to chain the next batch from. */
  readonly lastHash: Buffer | null;
}

/** What one history_entry row is made of: the entry, and what encoding it computed. */
interface EntrySource {
  readonly tenantId: string;
  readonly runId: number;
  readonly entry: EntryRow;
  /** The raw column: the bytes hashed, or the stored text where jsonb's refused escapes differ. */
  readonly raw: CopyValue;
  readonly rowHash: Buffer;
  readonly contentHash: Buffer;
}

/**
 * history_entry as COPY loads it, in payload order. seq (identity) and loaded_at (default) are
 * left to the table: COPY numbers the rows in payload order, which is the order of `entries`.
 */
export const ENTRY_COPY = copyShape<HistoryEntryTable, EntrySource>([
  ['tenant_id', (s) => s.tenantId],
  ['entry_id', (s) => s.entry.entryId],
  ['created_at', (s) => s.entry.createdAtKey], // timestamptz input, as the former created_at::timestamptz
  ['created_at_text', (s) => s.entry.createdAtText],
  ['change_kind', (s) => s.entry.changeKind],
  ['actor_kind', (s) => s.entry.actorKind],
  ['actor_user_id', (s) => s.entry.actorUserId],
  ['syslog_event_id', (s) => s.entry.syslogEventId],
  ['trace_id', (s) => s.entry.traceId],
  ['raw', (s) => s.raw],
  ['run_id', (s) => s.runId],
  ['row_hash', (s) => s.rowHash],
  ['content_sha256', (s) => s.contentHash],
  // bytea's hex input form.
  ['served_sha256', (s) => (s.entry.servedDigest == null ? null : `\\x${s.entry.servedDigest}`)],
]);

/** history_annotation as COPY loads it. */
export const ANNOTATION_COPY = copyShape<
  HistoryAnnotationTable,
  AnnotationRow & { readonly tenantId: string }
>([
  ['tenant_id', (a) => a.tenantId],
  ['entry_id', (a) => a.entryId],
  ['ordinal', (a) => a.ordinal],
  ['key', (a) => a.key],
  ['kind', (a) => a.kind],
  ['raw_value', (a) => a.rawValue],
  ['display_value', (a) => a.displayValue],
  ['display_label', (a) => a.displayLabel],
  ['display_url', (a) => a.displayUrl],
]);

/** settings_snapshot as COPY loads it. */
export const SNAPSHOT_COPY = copyShape<SettingsSnapshotTable, SnapshotRow & { readonly tenantId: string }>([
  ['tenant_id', (x) => x.tenantId],
  ['entry_id', (x) => x.entryId],
  ['allowed_client_types', (x) => x.allowedClientTypes],
  ['allows_all_client_types', (x) => x.allowsAllClientTypes],
  ['audit_verbosity', (x) => x.auditVerbosity],
  ['auto_discovery_enabled', (x) => x.autoDiscoveryEnabled],
  ['default_tool_classification', (x) => x.defaultToolClassification],
  ['discovery_interval', (x) => x.discoveryInterval], // interval input, as the former ::interval casts
  ['inactivity_close_after', (x) => x.inactivityCloseAfter],
  ['inactivity_hide_after', (x) => x.inactivityHideAfter],
  ['retention_delete_after', (x) => x.retentionDeleteAfter],
  ['enabled', (x) => x.enabled],
  ['prefer_code_mode_over_direct_tools', (x) => x.preferCodeModeOverDirectTools],
  ['require_tool_approval', (x) => x.requireToolApproval],
  ['surface_requestable_tools', (x) => x.surfaceRequestableTools],
  ['settings_created_at', (x) => x.settingsCreatedAt],
  ['settings_updated_at', (x) => x.settingsUpdatedAt],
  ['extra_fields', (x) => toJsonbText(x.extraFields)],
]);

/** The columns of settings_snapshot, in the order COPY writes them. */
export const SNAPSHOT_COLUMNS = SNAPSHOT_COPY.columns;

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

/** One history_entry row (ENTRY_COPY), chained on `chain.hash`; returns the entry's content hash. */
function entryRow(
  tenantId: string,
  runId: number,
  entry: EntryRow,
  chain: Chain,
  write: (row: CopyValue[]) => void,
): Buffer {
  // One serialisation for both the column and the hash, which covers what is stored as it reads
  // back (JSON of the jsonb text).
  const raw = canonicalJsonbText(entry.raw);
  const hashes = rowAndContentHashOfText(chain.hash, entry, raw.hashText);
  chain.hash = hashes.rowHash;
  write(
    ENTRY_COPY.row({
      tenantId,
      runId,
      entry,
      // The bytes just hashed, unless jsonb's refused escapes made the stored text differ.
      raw: raw.text === raw.hashText ? new JsonUtf8(hashes.canonicalRawUtf8) : raw.text,
      rowHash: hashes.rowHash,
      contentHash: hashes.contentHash,
    }),
  );
  return hashes.contentHash;
}

/** history_entry rows (ENTRY_COPY), chaining row hashes from `chain.hash`. */
function* entryRows(
  tenantId: string,
  runId: number,
  entries: readonly NormalisedEntry[],
  chain: Chain,
): Generator<CopyValue[]> {
  let row: CopyValue[] = [];
  const keep = (r: CopyValue[]) => {
    row = r;
  };
  for (const { entry } of entries) {
    entryRow(tenantId, runId, entry, chain, keep);
    yield row;
  }
}

function* annotationRows(tenantId: string, entries: readonly NormalisedEntry[]): Generator<CopyValue[]> {
  for (const e of entries) for (const an of e.annotations) yield ANNOTATION_COPY.row({ ...an, tenantId });
}

function* snapshotRows(tenantId: string, entries: readonly NormalisedEntry[]): Generator<CopyValue[]> {
  for (const e of entries) if (e.snapshot !== null) yield SNAPSHOT_COPY.row({ ...e.snapshot, tenantId });
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
  const payload = encodeCopyRows(entryRows(tenantId, runId, entries, chain), ENTRY_COPY.columns.length);
  return {
    count: payload.rows,
    lastHash: chain.hash,
    entries: payload,
    annotations: encodeCopyRows(annotationRows(tenantId, entries), ANNOTATION_COPY.columns.length),
    snapshots: encodeCopyRows(snapshotRows(tenantId, entries), SNAPSHOT_COPY.columns.length),
  };
}

/** Chunks of a payload encoded beforehand grow to this size (as encodeCopyRows's do). */
const ENCODED_CHUNK_BYTES = 1 << 20;

/**
 * Encodes a batch of entries as they come, a few at a time, into the three COPY payloads
 * `encodeEntries` makes at once (the same bytes for the same entries in the same order): so that a
 * caller can let each entry's objects go as soon as it is encoded and keep only the bytes. Every
 * entry must belong to `tenantId`.
 */
export class EntryEncoder {
  readonly #chain: Chain;
  readonly #entries = new CopyBuilder(ENTRY_COPY.columns.length, ENCODED_CHUNK_BYTES);
  readonly #annotations = new CopyBuilder(ANNOTATION_COPY.columns.length, ENCODED_CHUNK_BYTES);
  readonly #snapshots = new CopyBuilder(SNAPSHOT_COPY.columns.length, ENCODED_CHUNK_BYTES);

  constructor(
    private readonly tenantId: string,
    private readonly runId: number,
    previousHash: Buffer | null,
  ) {
    this.#chain = { hash: previousHash };
  }

  /** row_hash of the last entry encoded (the previous hash before any). */
  get lastHash(): Buffer | null {
    return this.#chain.hash;
  }

  /** Entries encoded so far. */
  get count(): number {
    return this.#entries.rows;
  }

  /** Encodes one entry with its annotations and snapshot; returns its content hash. */
  add(e: NormalisedEntry): Buffer {
    const { tenantId } = this;
    if (e.entry.tenantId !== tenantId)
      throw new Error(`one batch of entries holds tenants ${tenantId} and ${e.entry.tenantId}`);
    const hash = entryRow(tenantId, this.runId, e.entry, this.#chain, (r) => this.#entries.row(r));
    for (const an of e.annotations) this.#annotations.row(ANNOTATION_COPY.row({ ...an, tenantId }));
    if (e.snapshot !== null) this.#snapshots.row(SNAPSHOT_COPY.row({ ...e.snapshot, tenantId }));
    return hash;
  }

  /** The payloads of every entry added. */
  finish(): EncodedEntries {
    return {
      count: this.#entries.rows,
      lastHash: this.#chain.hash,
      entries: this.#entries.finish(),
      annotations: this.#annotations.finish(),
      snapshots: this.#snapshots.finish(),
    };
  }
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
    { table: 'govtrail.history_entry', columns: ENTRY_COPY.columns, rows: encoded.entries },
    { table: 'govtrail.history_annotation', columns: ANNOTATION_COPY.columns, rows: encoded.annotations },
    { table: 'govtrail.settings_snapshot', columns: SNAPSHOT_COPY.columns, rows: encoded.snapshots },
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
