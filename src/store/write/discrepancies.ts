/**
 * Repository of source_discrepancy (docs/design/integrity.md): where the source and the store disagree. The
 * table is append-only; a finding already recorded — same tenant, entry, kind and source hash — is
 * not recorded again, so a reconcile or sync that sees it again adds nothing.
 */
import { sql } from 'kysely';
import { toJsonbText } from '../../core/normalise/canonical.js';
import type { Session } from '../database.js';

export type DiscrepancyKind =
  | 'changed_at_source'
  | 'missing_at_source'
  | 'expired_at_source'
  | 'backdated'
  | 'conflicting_ids';

export const DISCREPANCY_KINDS: readonly DiscrepancyKind[] = [
  'changed_at_source',
  'missing_at_source',
  'expired_at_source',
  'backdated',
  'conflicting_ids',
];

/** One finding, as a run records it. */
export interface Discrepancy {
  readonly entryId: string;
  readonly kind: DiscrepancyKind;
  /** created_at of the entry as stored or served (a timestamptz input), when known. */
  readonly entryCreatedAt: string | null;
  /** Hex sha256 of the stored entry's canonical JSON; null when it is not stored. */
  readonly storedSha256: string | null;
  /** Hex sha256 of the served entry's canonical JSON; null when it is not served. */
  readonly sourceSha256: string | null;
  /** The served entry (null for missing and expired). */
  readonly sourceRaw: unknown;
}

/** A finding that was new, with the id it was stored under. */
export interface RecordedDiscrepancy extends Discrepancy {
  readonly discrepancyId: number;
}

/**
 * Records findings of a run in one statement; returns those that were new (a finding recorded
 * before, by this run or another, is skipped).
 */
export async function recordDiscrepancies(
  db: Session,
  tenantId: string,
  runId: number,
  found: readonly Discrepancy[],
): Promise<RecordedDiscrepancy[]> {
  if (found.length === 0) return [];
  const { rows } = await sql<{
    discrepancy_id: number;
    entry_id: string;
    kind: string;
    source_sha256: string | null;
  }>`
    insert into govtrail.source_discrepancy
      (tenant_id, entry_id, kind, run_id, entry_created_at, stored_sha256, source_sha256, source_raw)
    select ${tenantId}, d.entry_id, d.kind, ${runId}, d.created_at::timestamptz, d.stored, d.source, d.raw::jsonb
    from unnest(${found.map((d) => d.entryId)}::text[], ${found.map((d) => d.kind)}::text[],
                ${found.map((d) => d.entryCreatedAt)}::text[], ${found.map((d) => d.storedSha256)}::text[],
                ${found.map((d) => d.sourceSha256)}::text[],
                ${found.map((d) => (d.sourceRaw === null || d.sourceRaw === undefined ? null : toJsonbText(d.sourceRaw)))}::text[])
         with ordinality as d(entry_id, kind, created_at, stored, source, raw, n)
    order by d.n
    on conflict on constraint source_discrepancy_once do nothing
    returning discrepancy_id, entry_id, kind, source_sha256`.execute(db);
  const keyOf = (entryId: string, kind: string, source: string | null) =>
    `${entryId}\u0000${kind}\u0000${source}`;
  const idByKey = new Map(
    rows.map((r) => [keyOf(r.entry_id, r.kind, r.source_sha256), Number(r.discrepancy_id)]),
  );
  const out: RecordedDiscrepancy[] = [];
  for (const d of found) {
    const key = keyOf(d.entryId, d.kind, d.sourceSha256);
    const id = idByKey.get(key);
    if (id === undefined) continue;
    idByKey.delete(key); // the same finding given twice is recorded once
    out.push({ ...d, discrepancyId: id });
  }
  return out;
}
