/**
 * Tamper evidence: recomputes each tenant's row_hash chain in storage (`seq`) order, in keyset
 * pages, and checks the child rows (annotations, snapshot) and the run ledger against the entries.
 * Read-only.
 */
import { sql } from 'kysely';
import { contentHash, rowHash } from '../normalise/canonical.js';
import { normaliseEntry } from '../normalise/entry.js';
import type { Session } from './database.js';

export type TamperKind =
  | 'hash_mismatch'
  | 'missing_predecessor'
  | 'annotation_mismatch'
  | 'snapshot_mismatch'
  | 'run_count_mismatch'
  /** content_sha256 (0004) does not match raw: reconcile would report a rewrite that is not one. */
  | 'content_hash_mismatch';

export interface TamperFinding {
  readonly tenantId: string;
  readonly kind: TamperKind;
  readonly seq: number | null;
  readonly entryId: string | null;
  readonly detail: string;
}

export interface VerifyResult {
  readonly tenants: number;
  readonly rowsVerified: number;
  /** Per tenant, the first broken link of the chain; then child-row and ledger findings. */
  readonly findings: readonly TamperFinding[];
}

export interface VerifyOptions {
  readonly tenantId?: string;
  readonly pageSize?: number;
  /** Child-row findings kept per tenant (the chain reports only its first break). */
  readonly maxFindingsPerTenant?: number;
}

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

interface SnapshotDb {
  entry_id: string;
  allowed_client_types: string[] | null;
  allows_all_client_types: boolean;
  audit_verbosity: string | null;
  auto_discovery_enabled: boolean | null;
  default_tool_classification: string | null;
  enabled: boolean | null;
  prefer_code_mode_over_direct_tools: boolean | null;
  require_tool_approval: boolean | null;
  surface_requestable_tools: boolean | null;
}

export async function verifyStore(db: Session, options: VerifyOptions = {}): Promise<VerifyResult> {
  const pageSize = options.pageSize ?? 1000;
  const maxFindings = options.maxFindingsPerTenant ?? 20;
  const tenants =
    options.tenantId !== undefined
      ? [options.tenantId]
      : (
          await sql<{ tenant_id: string }>`
            select tenant_id from govtrail.history_entry group by tenant_id
            union select tenant_id from govtrail.sync_run group by tenant_id
            order by 1`.execute(db)
        ).rows.map((r) => r.tenant_id);
  const findings: TamperFinding[] = [];
  let rowsVerified = 0;
  for (const tenantId of tenants) {
    const r = await verifyTenant(db, tenantId, pageSize, maxFindings);
    rowsVerified += r.rows;
    findings.push(...r.findings);
  }
  return { tenants: tenants.length, rowsVerified, findings };
}

async function verifyTenant(
  db: Session,
  tenantId: string,
  pageSize: number,
  maxFindings: number,
): Promise<{ rows: number; findings: TamperFinding[] }> {
  const findings: TamperFinding[] = [];
  let chainBroken = false;
  let childFindings = 0;
  let prevHash: Buffer | null = null;
  let prevSeq: bigint | null = null;
  let afterSeq = -1n;
  let rows = 0;
  const perRun = new Map<string, number>();
  for (;;) {
    const page = (
      await sql<EntryRowDb & { run_id: string; content_sha256: Uint8Array | null }>`
        select seq::text as seq, entry_id, created_at_text, raw::text as raw, row_hash, run_id::text as run_id,
               content_sha256
        from govtrail.history_entry
        where tenant_id = ${tenantId} and seq > ${afterSeq.toString()}::bigint
        order by history_entry.seq limit ${pageSize}`.execute(db)
    ).rows;
    if (page.length === 0) break;
    const ids = page.map((r) => r.entry_id);
    const annotations = (
      await sql<AnnotationDb>`
        select entry_id, ordinal, key, kind, raw_value, display_value, display_label, display_url
        from govtrail.history_annotation
        where tenant_id = ${tenantId} and entry_id = any(${ids}::text[])
        order by entry_id, ordinal`.execute(db)
    ).rows;
    const snapshots = (
      await sql<SnapshotDb>`
        select entry_id, allowed_client_types, allows_all_client_types, audit_verbosity, auto_discovery_enabled,
               default_tool_classification, enabled, prefer_code_mode_over_direct_tools, require_tool_approval,
               surface_requestable_tools
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

    for (const row of page) {
      rows++;
      const seq = BigInt(row.seq);
      perRun.set(row.run_id, (perRun.get(row.run_id) ?? 0) + 1);
      const raw = JSON.parse(row.raw) as unknown;
      const stored = Buffer.from(row.row_hash);
      if (!chainBroken) {
        const expected = rowHash(prevHash, {
          tenantId,
          entryId: row.entry_id,
          createdAtText: row.created_at_text,
          raw,
        });
        if (!expected.equals(stored)) {
          chainBroken = true;
          // A gap in seq right before a row that does not chain: a row was removed. Gaps alone are
          // normal (a rolled-back run consumes identity values); a gap followed by a good hash is fine.
          const gap = prevSeq !== null && seq !== prevSeq + 1n;
          findings.push({
            tenantId,
            kind: gap ? 'missing_predecessor' : 'hash_mismatch',
            seq: Number(seq),
            entryId: row.entry_id,
            detail: gap
              ? `row does not chain from the row before it (seq ${String(prevSeq)}, gap of ${String(seq - (prevSeq ?? 0n) - 1n)}): a predecessor was removed or the row was forged`
              : prevSeq === null
                ? 'first row of the tenant does not chain from the zero hash: the row was edited, forged, or rows before it were removed'
                : 'row_hash does not match the row: the row was edited or forged',
          });
        }
      }
      prevHash = stored;
      prevSeq = seq;

      if (childFindings >= maxFindings) continue;
      if (row.content_sha256 !== null && !contentHash(raw).equals(Buffer.from(row.content_sha256))) {
        childFindings++;
        findings.push({
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
      );
      if (problem !== undefined) {
        childFindings++;
        findings.push({ ...problem, tenantId, seq: Number(seq), entryId: row.entry_id });
      }
    }
    afterSeq = BigInt(page[page.length - 1]?.seq ?? '0');
    if (page.length < pageSize) break;
  }

  // Every row belongs to a run that says it inserted exactly that many rows.
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
  return { rows, findings };
}

function checkChildren(
  tenantId: string,
  entryId: string,
  raw: unknown,
  annotations: readonly AnnotationDb[],
  snapshot: SnapshotDb | undefined,
): { kind: TamperKind; detail: string } | undefined {
  const n = normaliseEntry(tenantId, raw);
  if (!n.ok || n.value.entry.entryId !== entryId)
    return { kind: 'hash_mismatch', detail: 'stored raw no longer normalises to this entry' };
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
  if (s !== null && snapshot !== undefined) {
    const fields = [
      ['allows_all_client_types', s.allowsAllClientTypes, snapshot.allows_all_client_types],
      ['audit_verbosity', s.auditVerbosity, snapshot.audit_verbosity],
      ['auto_discovery_enabled', s.autoDiscoveryEnabled, snapshot.auto_discovery_enabled],
      ['default_tool_classification', s.defaultToolClassification, snapshot.default_tool_classification],
      ['enabled', s.enabled, snapshot.enabled],
      [
        'prefer_code_mode_over_direct_tools',
        s.preferCodeModeOverDirectTools,
        snapshot.prefer_code_mode_over_direct_tools,
      ],
      ['require_tool_approval', s.requireToolApproval, snapshot.require_tool_approval],
      ['surface_requestable_tools', s.surfaceRequestableTools, snapshot.surface_requestable_tools],
      [
        'allowed_client_types',
        s.allowedClientTypes === null ? null : JSON.stringify(s.allowedClientTypes),
        snapshot.allowed_client_types === null ? null : JSON.stringify(snapshot.allowed_client_types),
      ],
    ] as const;
    for (const [name, a, b] of fields)
      if (a !== b) return { kind: 'snapshot_mismatch', detail: `snapshot ${name} differs from the entry` };
  }
  return undefined;
}
