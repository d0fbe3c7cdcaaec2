/**
 * Findings against the source (table source_discrepancy) recorded for the entries of a period, and
 * the creation times of the entries `verify` names.
 * Read by the evidence pack inside its one read-only snapshot transaction; walked in keyset
 * pages in a stable order, so a period of any length holds one page in memory.
 */
import { type Selectable, sql } from 'kysely';
import type { Session } from '../database.js';
import { keysetPages } from '../paging.js';
import type { SourceDiscrepancyTable } from '../schema.js';
import type { DiscrepancyKind } from '../write/discrepancies.js';
import type { PeriodFilter } from './period.js';

/** A discrepancy as listDiscrepancies gives it, with the version the source served. */
export interface PackDiscrepancy extends Omit<DiscrepancyRow, 'tenantId'> {
  /** The version the source served (null for missing and expired). */
  readonly sourceRaw: unknown;
}

/** The columns of source_discrepancy (store/schema.ts) a PackDiscrepancy is made of. */
type DiscrepancyPageRow = Omit<
  Selectable<SourceDiscrepancyTable>,
  'tenant_id' | 'kind' | 'discrepancy_id' | 'run_id'
> & { kind: DiscrepancyKind; discrepancy_id: number | string; run_id: number | string };

/** Discrepancies recorded for entries created in [from, to), by id (detection order). */
export async function* iterateDiscrepancies(
  db: Session,
  filter: PeriodFilter,
  pageSize = 500,
): AsyncGenerator<PackDiscrepancy> {
  const pages = keysetPages(
    pageSize,
    (after: number | undefined) =>
      sql<DiscrepancyPageRow>`
      select d.discrepancy_id, d.entry_id, d.kind, d.detected_at, d.run_id, d.entry_created_at,
             d.stored_sha256, d.source_sha256, d.source_raw
      from govtrail.source_discrepancy d
      where d.tenant_id = ${filter.tenantId}
        and d.entry_created_at >= ${filter.from} and d.entry_created_at < ${filter.to}
        and d.discrepancy_id > ${after ?? 0}
      order by d.discrepancy_id
      limit ${pageSize}`
        .execute(db)
        .then((r) => r.rows),
    (last) => Number(last.discrepancy_id),
  );
  for await (const rows of pages) {
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

/** One stored discrepancy row, for reports and the CLI. */
export interface DiscrepancyRow {
  readonly discrepancyId: number;
  readonly tenantId: string;
  readonly entryId: string;
  readonly kind: DiscrepancyKind;
  readonly detectedAt: Date;
  readonly runId: number;
  readonly entryCreatedAt: Date | null;
  readonly storedSha256: string | null;
  readonly sourceSha256: string | null;
}

/** The tenant's discrepancies found by one run (or by every run when runId is undefined), oldest first. */
export async function listDiscrepancies(
  db: Session,
  options: { tenantId?: string; runId?: number; limit?: number } = {},
): Promise<DiscrepancyRow[]> {
  let q = db
    .selectFrom('govtrail.source_discrepancy')
    .select([
      'discrepancy_id',
      'tenant_id',
      'entry_id',
      'kind',
      'detected_at',
      'run_id',
      'entry_created_at',
      'stored_sha256',
      'source_sha256',
    ])
    .orderBy('discrepancy_id');
  if (options.tenantId !== undefined) q = q.where('tenant_id', '=', options.tenantId);
  if (options.runId !== undefined) q = q.where('run_id', '=', options.runId);
  if (options.limit !== undefined) q = q.limit(options.limit);
  const rows = await q.execute();
  return rows.map((r) => ({
    discrepancyId: Number(r.discrepancy_id),
    tenantId: r.tenant_id,
    entryId: r.entry_id,
    kind: r.kind as DiscrepancyKind,
    detectedAt: r.detected_at,
    runId: Number(r.run_id),
    entryCreatedAt: r.entry_created_at,
    storedSha256: r.stored_sha256,
    sourceSha256: r.source_sha256,
  }));
}
