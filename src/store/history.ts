/**
 * Repository of the evidence tables: history_entry, history_annotation, settings_snapshot and
 * rejected_entry. Inserts are set-based — one multi-row `INSERT … SELECT FROM unnest(…)` per table
 * per batch, never a statement per row — and idempotent on (tenant_id, entry_id).
 */
import { createHash } from 'node:crypto';
import { sql } from 'kysely';
import { canonicalJson, rowHash, toJsonbText } from '../normalise/canonical.js';
import type { NormalisedEntry } from '../normalise/types.js';
import type { Session } from './database.js';

/** Of the given ids, those already stored for the tenant. */
export async function findStoredEntryIds(
  db: Session,
  tenantId: string,
  ids: readonly string[],
): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const { rows } = await sql<{ entry_id: string }>`
    select entry_id from govtrail.history_entry
    where tenant_id = ${tenantId} and entry_id = any(${ids as string[]}::text[])`.execute(db);
  return new Set(rows.map((r) => r.entry_id));
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

/**
 * Inserts new entries with their annotations and snapshots. `entries` must not hold ids already
 * stored (the hash chain counts on every row being inserted); ON CONFLICT remains as a guard.
 * Rows are chained in the order given.
 */
export async function insertEntries(
  db: Session,
  runId: number,
  entries: readonly NormalisedEntry[],
  previousHash: Buffer | null,
): Promise<InsertEntriesResult> {
  if (entries.length === 0) return { inserted: 0, lastHash: previousHash };
  const tenantId = entries[0]?.entry.tenantId as string;
  const ids: string[] = [];
  const createdAt: string[] = [];
  const createdAtText: (string | null)[] = [];
  const changeKind: (string | null)[] = [];
  const actorKind: (string | null)[] = [];
  const actorUserId: (string | null)[] = [];
  const syslogEventId: (string | null)[] = [];
  const traceId: (string | null)[] = [];
  const raw: string[] = [];
  const hashes: string[] = [];
  let prev = previousHash;
  for (const { entry } of entries) {
    const rawText = toJsonbText(entry.raw);
    // Hash what is stored, as it reads back: JSON of the jsonb text.
    prev = rowHash(prev, {
      tenantId: entry.tenantId,
      entryId: entry.entryId,
      createdAtText: entry.createdAtText,
      raw: JSON.parse(rawText),
    });
    ids.push(entry.entryId);
    createdAt.push(entry.createdAtKey);
    createdAtText.push(entry.createdAtText);
    changeKind.push(entry.changeKind);
    actorKind.push(entry.actorKind);
    actorUserId.push(entry.actorUserId);
    syslogEventId.push(entry.syslogEventId);
    traceId.push(entry.traceId);
    raw.push(rawText);
    hashes.push(`\\x${prev.toString('hex')}`);
  }
  const result = await sql`
    insert into govtrail.history_entry
      (tenant_id, entry_id, created_at, created_at_text, change_kind, actor_kind, actor_user_id,
       syslog_event_id, trace_id, raw, run_id, row_hash)
    select ${tenantId}, e.entry_id, e.created_at::timestamptz, e.created_at_text, e.change_kind, e.actor_kind,
           e.actor_user_id, e.syslog_event_id, e.trace_id, e.raw::jsonb, ${runId}, e.row_hash::bytea
    from unnest(${ids}::text[], ${createdAt}::text[], ${createdAtText}::text[], ${changeKind}::text[],
                ${actorKind}::text[], ${actorUserId}::text[], ${syslogEventId}::text[], ${traceId}::text[],
                ${raw}::text[], ${hashes}::text[])
         with ordinality as e(entry_id, created_at, created_at_text, change_kind, actor_kind, actor_user_id,
                              syslog_event_id, trace_id, raw, row_hash, n)
    order by e.n
    on conflict (tenant_id, entry_id) do nothing`.execute(db);
  const inserted = Number(result.numAffectedRows ?? 0n);

  const a = {
    entryId: [] as string[],
    ordinal: [] as number[],
    key: [] as (string | null)[],
    kind: [] as (string | null)[],
    rawValue: [] as (string | null)[],
    displayValue: [] as (string | null)[],
    displayLabel: [] as (string | null)[],
    displayUrl: [] as (string | null)[],
  };
  for (const e of entries) {
    for (const an of e.annotations) {
      a.entryId.push(an.entryId);
      a.ordinal.push(an.ordinal);
      a.key.push(an.key);
      a.kind.push(an.kind);
      a.rawValue.push(an.rawValue);
      a.displayValue.push(an.displayValue);
      a.displayLabel.push(an.displayLabel);
      a.displayUrl.push(an.displayUrl);
    }
  }
  if (a.entryId.length > 0) {
    await sql`
      insert into govtrail.history_annotation
        (tenant_id, entry_id, ordinal, key, kind, raw_value, display_value, display_label, display_url)
      select ${tenantId}, * from unnest(${a.entryId}::text[], ${a.ordinal}::int[], ${a.key}::text[], ${a.kind}::text[],
                                       ${a.rawValue}::text[], ${a.displayValue}::text[], ${a.displayLabel}::text[],
                                       ${a.displayUrl}::text[])
      on conflict do nothing`.execute(db);
  }

  const s = {
    entryId: [] as string[],
    allowed: [] as (string | null)[],
    allowsAll: [] as boolean[],
    audit: [] as (string | null)[],
    autoDiscovery: [] as (boolean | null)[],
    classification: [] as (string | null)[],
    discovery: [] as (string | null)[],
    closeAfter: [] as (string | null)[],
    hideAfter: [] as (string | null)[],
    deleteAfter: [] as (string | null)[],
    enabled: [] as (boolean | null)[],
    codeMode: [] as (boolean | null)[],
    approval: [] as (boolean | null)[],
    requestable: [] as (boolean | null)[],
    created: [] as (string | null)[],
    updated: [] as (string | null)[],
    extra: [] as string[],
  };
  for (const e of entries) {
    const x = e.snapshot;
    if (x === null) continue;
    s.entryId.push(x.entryId);
    s.allowed.push(x.allowedClientTypes === null ? null : JSON.stringify(x.allowedClientTypes));
    s.allowsAll.push(x.allowsAllClientTypes);
    s.audit.push(x.auditVerbosity);
    s.autoDiscovery.push(x.autoDiscoveryEnabled);
    s.classification.push(x.defaultToolClassification);
    s.discovery.push(x.discoveryInterval);
    s.closeAfter.push(x.inactivityCloseAfter);
    s.hideAfter.push(x.inactivityHideAfter);
    s.deleteAfter.push(x.retentionDeleteAfter);
    s.enabled.push(x.enabled);
    s.codeMode.push(x.preferCodeModeOverDirectTools);
    s.approval.push(x.requireToolApproval);
    s.requestable.push(x.surfaceRequestableTools);
    s.created.push(x.settingsCreatedAt);
    s.updated.push(x.settingsUpdatedAt);
    s.extra.push(toJsonbText(x.extraFields));
  }
  if (s.entryId.length > 0) {
    await sql`
      insert into govtrail.settings_snapshot
        (tenant_id, entry_id, allowed_client_types, allows_all_client_types, audit_verbosity, auto_discovery_enabled,
         default_tool_classification, discovery_interval, inactivity_close_after, inactivity_hide_after,
         retention_delete_after, enabled, prefer_code_mode_over_direct_tools, require_tool_approval,
         surface_requestable_tools, settings_created_at, settings_updated_at, extra_fields)
      select ${tenantId}, x.entry_id,
             case when x.allowed is null then null
                  else array(select jsonb_array_elements_text(x.allowed::jsonb)) end,
             x.allows_all, x.audit, x.auto_discovery, x.classification, x.discovery::interval,
             x.close_after::interval, x.hide_after::interval, x.delete_after::interval, x.enabled, x.code_mode,
             x.approval, x.requestable, x.created::timestamptz, x.updated::timestamptz, x.extra::jsonb
      from unnest(${s.entryId}::text[], ${s.allowed}::text[], ${s.allowsAll}::boolean[], ${s.audit}::text[],
                  ${s.autoDiscovery}::boolean[], ${s.classification}::text[], ${s.discovery}::text[],
                  ${s.closeAfter}::text[], ${s.hideAfter}::text[], ${s.deleteAfter}::text[], ${s.enabled}::boolean[],
                  ${s.codeMode}::boolean[], ${s.approval}::boolean[], ${s.requestable}::boolean[],
                  ${s.created}::text[], ${s.updated}::text[], ${s.extra}::text[])
           as x(entry_id, allowed, allows_all, audit, auto_discovery, classification, discovery, close_after,
                hide_after, delete_after, enabled, code_mode, approval, requestable, created, updated, extra)
      on conflict do nothing`.execute(db);
  }
  return { inserted, lastHash: prev };
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
