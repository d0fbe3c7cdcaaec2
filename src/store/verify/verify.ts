/**
 * Tamper evidence: recomputes each tenant's row_hash chain in storage (`seq`) order, in keyset
 * pages, and checks the child rows (annotations, snapshot), every typed column and the run ledger
 * against the entries, and field_change against a recomputed diff. Given trusted anchors
 * (src/outputs/anchor/check.ts), it also checks that the recomputed chain still reaches each anchored head
 * at the anchored entry count. Read-only.
 */
import { sql } from 'kysely';
import { DEFAULT_RANKS } from '../../core/diff.js';
import { parseJsonText } from '../../core/json-text.js';
import { contentHash, rowHash } from '../../core/normalise/canonical.js';
import { normaliseEntry } from '../../core/normalise/entry.js';
import { firstNonCanonicalNumber, jsonPathAt } from '../../core/normalise/number-text.js';
import type { NormalisedEntry } from '../../core/normalise/types.js';
import type { Session } from '../database.js';
import { findEntryColumnMismatches, findSnapshotColumnMismatches } from './columns.js';
import { verifyFieldChanges } from './field-changes.js';
import type {
  AnchorHead,
  TamperFinding,
  TamperKind,
  TenantCoverage,
  VerifyOptions,
  VerifyResult,
} from './findings.js';

interface EntryRowDb {
  seq: string;
  entry_id: string;
  created_at_text: string | null;
  raw: string;
  row_hash: Uint8Array;
}

interface AnnotationDb {
  entry_id: string;
  ordinal: number;
  key: string | null;
  kind: string | null;
  raw_value: string | null;
  display_value: string | null;
  display_label: string | null;
  display_url: string | null;
}

/** A stored snapshot's presence; its columns are compared in SQL (verify-columns.ts). */
interface SnapshotDb {
  entry_id: string;
}

export async function verifyStore(db: Session, options: VerifyOptions = {}): Promise<VerifyResult> {
  const pageSize = options.pageSize ?? 1000;
  const maxFindings = options.maxFindingsPerTenant ?? 20;
  const stored =
    options.tenantId !== undefined
      ? [options.tenantId]
      : (
          await sql<{ tenant_id: string }>`
            select tenant_id from govtrail.history_entry group by tenant_id
            union select tenant_id from govtrail.sync_run group by tenant_id
            order by 1`.execute(db)
        ).rows.map((r) => r.tenant_id);
  // A tenant anchored but with nothing left in the store is checked too: everything was deleted.
  const anchored = options.tenantId === undefined ? [...(options.anchors?.keys() ?? [])] : [];
  const tenants = [...new Set([...stored, ...anchored])].sort();
  const findings: TamperFinding[] = [];
  let rowsVerified = 0;
  let fieldChangesVerified = 0;
  let anchorsVerified = 0;
  const coverage: TenantCoverage[] = [];
  for (const tenantId of tenants) {
    const heads = options.anchors?.get(tenantId) ?? [];
    const r = await verifyTenant(db, tenantId, pageSize, maxFindings, heads);
    rowsVerified += r.rows;
    const newest = heads.reduce<AnchorHead | undefined>(
      (a, b) => (a === undefined || b.entries >= a.entries ? b : a),
      undefined,
    );
    coverage.push({
      tenantId,
      rows: r.rows,
      anchors: heads.length,
      anchoredEntries: newest?.entries ?? 0,
      newestAnchorAt: newest?.anchoredAt ?? null,
    });
    findings.push(...r.findings);
    const changes = await verifyFieldChanges(db, tenantId, options.ranks ?? DEFAULT_RANKS, {
      pageSize,
      maxFindings,
    });
    fieldChangesVerified += changes.rows;
    anchorsVerified += heads.length;
    for (const m of changes.mismatches)
      findings.push({
        tenantId,
        kind: 'field_change_mismatch',
        seq: null,
        entryId: m.entryId === '' ? null : m.entryId,
        detail: m.detail,
      });
  }
  return { tenants: tenants.length, rowsVerified, fieldChangesVerified, anchorsVerified, findings, coverage };
}

/** Where the store stands against one anchor: undefined when it reproduces the anchored head. */
function anchorDifference(
  anchor: AnchorHead,
  at: { entryId: string; recomputed: Buffer; stored: Buffer } | undefined,
): string | undefined {
  if (anchor.head === null) return undefined;
  if (at === undefined) return undefined;
  if (at.entryId !== anchor.head.entryId)
    return `entry ${anchor.entries} in storage order is ${at.entryId}, the anchor names ${anchor.head.entryId}: entries before it were inserted or deleted`;
  if (at.recomputed.toString('hex') !== anchor.head.rowHash)
    return at.stored.toString('hex') === anchor.head.rowHash
      ? `the chain recomputed from the stored rows does not reach the anchored head hash ${anchor.head.rowHash.slice(0, 16)}…: an entry before it was edited (its stored row_hash was left as it was)`
      : `the chain recomputed from the stored rows reaches ${at.recomputed.toString('hex').slice(0, 16)}…, the anchor states ${anchor.head.rowHash.slice(0, 16)}…: an entry up to it was edited and the chain recomputed`;
  return undefined;
}

/** What the check of one tenant carries from row to row and from page to page. */
interface TenantCheck {
  readonly tenantId: string;
  readonly maxFindings: number;
  readonly findings: TamperFinding[];
  /** Anchors not reached yet, fewest entries first. */
  readonly pendingAnchors: AnchorHead[];
  /** Only the first anchor that fails is reported. */
  anchorFailed: boolean;
  /** The chain as the rows give it now, whatever row_hash says: what anchors are checked against. */
  recomputed: Buffer | null;
  /** Only the first break of the stored chain is reported (every row after it would fail too). */
  chainBroken: boolean;
  prevHash: Buffer | null;
  prevSeq: bigint | null;
  /** Findings on content, children and columns, which stop at maxFindings. */
  childFindings: number;
  rows: number;
  /** Rows stored per run_id, compared with the run ledger at the end. */
  readonly perRun: Map<string, number>;
}

type EntryPageRow = EntryRowDb & { run_id: string; content_sha256: Uint8Array | null };

async function verifyTenant(
  db: Session,
  tenantId: string,
  pageSize: number,
  maxFindings: number,
  anchors: readonly AnchorHead[],
): Promise<{ rows: number; findings: TamperFinding[] }> {
  const check = startTenantCheck(tenantId, maxFindings, anchors);
  let afterSeq = -1n;
  for (;;) {
    const page = await loadEntryPage(db, tenantId, afterSeq, pageSize);
    if (page.length === 0) break;
    await checkEntryPage(db, check, page);
    afterSeq = BigInt(page[page.length - 1]?.seq ?? '0');
    if (page.length < pageSize) break;
  }
  checkAnchorsPastEnd(check);
  await checkRunCounts(db, check);
  return { rows: check.rows, findings: check.findings };
}

function startTenantCheck(
  tenantId: string,
  maxFindings: number,
  anchors: readonly AnchorHead[],
): TenantCheck {
  const check: TenantCheck = {
    tenantId,
    maxFindings,
    findings: [],
    pendingAnchors: [...anchors].sort((a, b) => a.entries - b.entries),
    anchorFailed: false,
    recomputed: null,
    chainBroken: false,
    prevHash: null,
    prevSeq: null,
    childFindings: 0,
    rows: 0,
    perRun: new Map(),
  };
  while (check.pendingAnchors[0] !== undefined && check.pendingAnchors[0].entries === 0) {
    const a = check.pendingAnchors.shift() as AnchorHead;
    checkAnchor(check, a, undefined);
  }
  return check;
}

/** Reports an anchor that fails (`detail` says how); after the first failure, no more. */
function checkAnchor(check: TenantCheck, anchor: AnchorHead, detail: string | undefined): void {
  if (detail === undefined || check.anchorFailed) return;
  check.anchorFailed = true;
  check.findings.push({
    tenantId: check.tenantId,
    kind: 'anchor_mismatch',
    seq: null,
    entryId: anchor.head?.entryId ?? null,
    detail: `anchor ${anchor.file} (${anchor.entries} entries, ${anchor.anchoredAt}) fails: ${detail}`,
  });
}

/** The tenant's entries after `afterSeq`, in storage order. */
async function loadEntryPage(
  db: Session,
  tenantId: string,
  afterSeq: bigint,
  pageSize: number,
): Promise<EntryPageRow[]> {
  return (
    await sql<EntryPageRow>`
        select seq::text as seq, entry_id, created_at_text, raw::text as raw, row_hash, run_id::text as run_id,
               content_sha256
        from govtrail.history_entry
        where tenant_id = ${tenantId} and seq > ${afterSeq.toString()}::bigint
        order by history_entry.seq limit ${pageSize}`.execute(db)
  ).rows;
}

/** The annotations (in order) and the snapshot rows of a page's entries, by entry id. */
async function loadChildren(
  db: Session,
  tenantId: string,
  ids: readonly string[],
): Promise<{ annByEntry: Map<string, AnnotationDb[]>; snapByEntry: Map<string, SnapshotDb> }> {
  const annotations = (
    await sql<AnnotationDb>`
        select entry_id, ordinal, key, kind, raw_value, display_value, display_label, display_url
        from govtrail.history_annotation
        where tenant_id = ${tenantId} and entry_id = any(${ids}::text[])
        order by entry_id, ordinal`.execute(db)
  ).rows;
  const snapshots = (
    await sql<SnapshotDb>`
        select entry_id
        from govtrail.settings_snapshot
        where tenant_id = ${tenantId} and entry_id = any(${ids}::text[])`.execute(db)
  ).rows;
  const annByEntry = new Map<string, AnnotationDb[]>();
  for (const a of annotations) {
    const list = annByEntry.get(a.entry_id);
    if (list === undefined) annByEntry.set(a.entry_id, [a]);
    else list.push(a);
  }
  const snapByEntry = new Map(snapshots.map((s) => [s.entry_id, s]));
  return { annByEntry, snapByEntry };
}

/** One page of entries: the chain and anchors row by row, then content, children and columns. */
async function checkEntryPage(db: Session, check: TenantCheck, page: readonly EntryPageRow[]): Promise<void> {
  const { tenantId } = check;
  const { annByEntry, snapByEntry } = await loadChildren(
    db,
    tenantId,
    page.map((r) => r.entry_id),
  );
  const normalised: NormalisedEntry[] = [];
  for (const row of page) {
    const seq = BigInt(row.seq);
    const raw = parseJsonText(row.raw);
    checkChainRow(check, row, seq, raw);
    if (check.childFindings >= check.maxFindings) continue;
    checkNumberText(check, row, seq);
    if (row.content_sha256 !== null && !contentHash(raw).equals(Buffer.from(row.content_sha256))) {
      check.childFindings++;
      check.findings.push({
        tenantId,
        kind: 'content_hash_mismatch',
        seq: Number(seq),
        entryId: row.entry_id,
        detail: 'content_sha256 does not match raw: the column was edited (the entry itself still chains)',
      });
      continue;
    }
    const problem = checkChildren(
      tenantId,
      row.entry_id,
      raw,
      annByEntry.get(row.entry_id) ?? [],
      snapByEntry.get(row.entry_id),
      normalised,
    );
    if (problem !== undefined) {
      check.childFindings++;
      check.findings.push({ ...problem, tenantId, seq: Number(seq), entryId: row.entry_id });
    }
  }
  await checkPageColumns(db, check, page, normalised, snapByEntry);
}

/**
 * Every number of the stored raw has the text govtrail writes for its value (number-text.ts): the
 * chain hashes raw as parsed, so this is what sees a number respelled (`4` → `4.0000000000000001`).
 */
function checkNumberText(check: TenantCheck, row: EntryPageRow, seq: bigint): void {
  const m = firstNonCanonicalNumber(row.raw);
  if (m === undefined) return;
  check.childFindings++;
  check.findings.push({
    tenantId: check.tenantId,
    kind: 'number_text_mismatch',
    seq: Number(seq),
    entryId: row.entry_id,
    detail: `raw ${jsonPathAt(row.raw, m.offset)} is stored as ${m.found}, govtrail writes ${m.expected ?? 'null'} for that value: the number's text was edited (the chain, which hashes the parsed value, cannot see it)`,
  });
}

/**
 * One row in the hash chain: the recomputed chain moves on (and meets the anchors that end at this
 * row), and the stored row_hash must chain from the stored hash before it.
 */
function checkChainRow(check: TenantCheck, row: EntryPageRow, seq: bigint, raw: unknown): void {
  const { tenantId, pendingAnchors } = check;
  check.rows++;
  check.perRun.set(row.run_id, (check.perRun.get(row.run_id) ?? 0) + 1);
  const stored = Buffer.from(row.row_hash);
  const recomputed = rowHash(check.recomputed, {
    tenantId,
    entryId: row.entry_id,
    createdAtText: row.created_at_text,
    raw,
  });
  check.recomputed = recomputed;
  while (pendingAnchors[0] !== undefined && pendingAnchors[0].entries === check.rows) {
    const a = pendingAnchors.shift() as AnchorHead;
    checkAnchor(check, a, anchorDifference(a, { entryId: row.entry_id, recomputed, stored }));
  }
  if (!check.chainBroken) {
    const expected = rowHash(check.prevHash, {
      tenantId,
      entryId: row.entry_id,
      createdAtText: row.created_at_text,
      raw,
    });
    if (!expected.equals(stored)) {
      check.chainBroken = true;
      check.findings.push(chainBreak(tenantId, row.entry_id, seq, check.prevSeq));
    }
  }
  check.prevHash = stored;
  check.prevSeq = seq;
}

/**
 * The finding for the first row that does not chain. A gap in seq right before it: a row was
 * removed. Gaps alone are normal (a rolled-back run consumes identity values); a gap followed by a
 * good hash is fine.
 */
function chainBreak(tenantId: string, entryId: string, seq: bigint, prevSeq: bigint | null): TamperFinding {
  const gap = prevSeq !== null && seq !== prevSeq + 1n;
  return {
    tenantId,
    kind: gap ? 'missing_predecessor' : 'hash_mismatch',
    seq: Number(seq),
    entryId,
    detail: gap
      ? `row does not chain from the row before it (seq ${String(prevSeq)}, gap of ${String(seq - (prevSeq ?? 0n) - 1n)}): a predecessor was removed or the row was forged`
      : prevSeq === null
        ? 'first row of the tenant does not chain from the zero hash: the row was edited, forged, or rows before it were removed'
        : 'row_hash does not match the row: the row was edited or forged',
  };
}

/** The typed columns of the page, compared by PostgreSQL with what raw normalises to. */
async function checkPageColumns(
  db: Session,
  check: TenantCheck,
  page: readonly EntryPageRow[],
  normalised: readonly NormalisedEntry[],
  snapByEntry: ReadonlyMap<string, SnapshotDb>,
): Promise<void> {
  const { tenantId } = check;
  const seqOf = new Map(page.map((r) => [r.entry_id, Number(r.seq)]));
  const mismatches = [
    ...(await findEntryColumnMismatches(db, tenantId, normalised)),
    ...(await findSnapshotColumnMismatches(
      db,
      tenantId,
      normalised.filter((n) => snapByEntry.has(n.entry.entryId)),
    )),
  ];
  for (const m of mismatches) {
    if (check.childFindings >= check.maxFindings) break;
    check.childFindings++;
    check.findings.push({
      tenantId,
      kind: 'column_mismatch',
      seq: seqOf.get(m.entryId) ?? null,
      entryId: m.entryId,
      detail: `${m.table}.${m.columns.join(', ')} ${m.columns.length === 1 ? 'differs' : 'differ'} from what the stored raw says: the column was edited (raw and the chain were not)`,
    });
  }
}

/** Anchors beyond the stored rows: the newest entries were deleted (or everything was). */
function checkAnchorsPastEnd(check: TenantCheck): void {
  const { pendingAnchors, rows } = check;
  for (const a of pendingAnchors)
    checkAnchor(
      check,
      a,
      `the store holds ${rows} entries of the tenant, the anchor ${a.entries}: ${a.entries - rows} ${a.entries - rows === 1 ? 'entry was' : 'entries were'} deleted from the end (or the chain was cut short)`,
    );
}

/** Every row belongs to a run that says it inserted exactly that many rows. */
async function checkRunCounts(db: Session, check: TenantCheck): Promise<void> {
  const { tenantId, perRun, findings } = check;
  const runs = (
    await sql<{ run_id: string; status: string; entries_inserted: number }>`
      select run_id::text as run_id, status, entries_inserted from govtrail.sync_run
      where tenant_id = ${tenantId}`.execute(db)
  ).rows;
  const ledger = new Map(runs.map((r) => [r.run_id, r]));
  for (const [runId, n] of perRun) {
    const run = ledger.get(runId);
    const claimed = run === undefined ? 0 : run.status === 'succeeded' ? run.entries_inserted : 0;
    if (claimed !== n)
      findings.push({
        tenantId,
        kind: 'run_count_mismatch',
        seq: null,
        entryId: null,
        detail: `run ${runId} (${run?.status ?? 'not in the ledger'}) recorded ${claimed} entries inserted, ${n} stored`,
      });
  }
  for (const run of runs) {
    if (run.status === 'succeeded' && run.entries_inserted > 0 && !perRun.has(run.run_id))
      findings.push({
        tenantId,
        kind: 'run_count_mismatch',
        seq: null,
        entryId: null,
        detail: `run ${run.run_id} recorded ${run.entries_inserted} entries inserted, 0 stored`,
      });
  }
}

function checkChildren(
  tenantId: string,
  entryId: string,
  raw: unknown,
  annotations: readonly AnnotationDb[],
  snapshot: SnapshotDb | undefined,
  normalised: NormalisedEntry[],
): { kind: TamperKind; detail: string } | undefined {
  const n = normaliseEntry(tenantId, raw);
  if (!n.ok || n.value.entry.entryId !== entryId)
    return { kind: 'hash_mismatch', detail: 'stored raw no longer normalises to this entry' };
  normalised.push(n.value);
  const want = n.value.annotations;
  if (want.length !== annotations.length)
    return {
      kind: 'annotation_mismatch',
      detail: `${annotations.length} annotations stored, the entry has ${want.length}`,
    };
  for (let i = 0; i < want.length; i++) {
    const w = want[i];
    const g = annotations[i];
    if (w === undefined || g === undefined) continue;
    const fields = [
      ['ordinal', w.ordinal, g.ordinal],
      ['key', w.key, g.key],
      ['kind', w.kind, g.kind],
      ['raw_value', w.rawValue, g.raw_value],
      ['display_value', w.displayValue, g.display_value],
      ['display_label', w.displayLabel, g.display_label],
      ['display_url', w.displayUrl, g.display_url],
    ] as const;
    for (const [name, a, b] of fields)
      if (a !== b)
        return {
          kind: 'annotation_mismatch',
          detail: `annotation ${w.ordinal}: ${name} differs from the entry`,
        };
  }
  const s = n.value.snapshot;
  if ((s === null) !== (snapshot === undefined))
    return {
      kind: 'snapshot_mismatch',
      detail:
        s === null
          ? 'a snapshot is stored but the entry has none'
          : 'the entry has a snapshot but none is stored',
    };
  // The snapshot's columns are compared in SQL (findSnapshotColumnMismatches), with the casts COPY used.
  return undefined;
}
