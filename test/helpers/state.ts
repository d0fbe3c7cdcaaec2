/**
 * What the database holds for a tenant, in a shape tests compare with the sandbox's truth.
 */
import { sql } from 'kysely';
import type { Database } from '../../src/store/database.js';

export interface StoredState {
  /** entry_id → raw, in no particular order. */
  readonly entries: Map<string, unknown>;
  readonly annotationCounts: Map<string, number>;
  readonly snapshotIds: Set<string>;
  readonly checkpoint: { entry_id: string; run_id: number } | undefined;
  readonly runs: Array<{
    run_id: number;
    status: string;
    entries_inserted: number;
    entries_rejected: number;
    error_code: string | null;
    stop_reason: string | null;
  }>;
}

export async function storedState(database: Database, tenantId: string): Promise<StoredState> {
  const db = database.db;
  const entries = await sql<{ entry_id: string; raw: unknown }>`
    select entry_id, raw from govtrail.history_entry where tenant_id = ${tenantId}`.execute(db);
  const annotations = await sql<{ entry_id: string; n: number }>`
    select entry_id, count(*)::int as n from govtrail.history_annotation where tenant_id = ${tenantId} group by entry_id`.execute(
    db,
  );
  const snapshots = await sql<{ entry_id: string }>`
    select entry_id from govtrail.settings_snapshot where tenant_id = ${tenantId}`.execute(db);
  const checkpoint = await sql<{ entry_id: string; run_id: number }>`
    select entry_id, run_id from govtrail.checkpoint where tenant_id = ${tenantId}`.execute(db);
  const runs = await sql<StoredState['runs'][number]>`
    select run_id, status, entries_inserted, entries_rejected, error_code, stop_reason
    from govtrail.sync_run where tenant_id = ${tenantId} order by run_id`.execute(db);
  return {
    entries: new Map(entries.rows.map((r) => [r.entry_id, r.raw])),
    annotationCounts: new Map(annotations.rows.map((r) => [r.entry_id, r.n])),
    snapshotIds: new Set(snapshots.rows.map((r) => r.entry_id)),
    checkpoint: checkpoint.rows[0],
    runs: runs.rows,
  };
}

type Wire = { metadata?: { id?: string; annotations?: unknown[] | null } | null; snapshot?: unknown };

/**
 * Differences between the stored state and the truth: missing or extra entries, a raw that differs,
 * a partial entry (annotations or snapshot missing). Empty when they agree row for row.
 */
export function compareWithTruth(state: StoredState, truth: readonly unknown[]): string[] {
  const problems: string[] = [];
  const seen = new Set<string>();
  for (const t of truth as Wire[]) {
    const id = t?.metadata?.id;
    if (typeof id !== 'string' || id === '') continue;
    seen.add(id);
    if (!state.entries.has(id)) {
      problems.push(`missing ${id}`);
      continue;
    }
    if (JSON.stringify(sortKeys(state.entries.get(id))) !== JSON.stringify(sortKeys(t)))
      problems.push(`raw differs ${id}`);
    const wantAnn = Array.isArray(t.metadata?.annotations) ? t.metadata.annotations.length : 0;
    if ((state.annotationCounts.get(id) ?? 0) !== wantAnn)
      problems.push(`annotations of ${id}: ${state.annotationCounts.get(id) ?? 0} != ${wantAnn}`);
    const wantSnap = typeof t.snapshot === 'object' && t.snapshot !== null;
    if (state.snapshotIds.has(id) !== wantSnap) problems.push(`snapshot of ${id}`);
  }
  for (const id of state.entries.keys()) if (!seen.has(id)) problems.push(`extra ${id}`);
  return problems;
}

/** Partial entries: an entry whose stored annotations or snapshot disagree with its own raw. */
export function partialEntries(state: StoredState): string[] {
  const bad: string[] = [];
  for (const [id, raw] of state.entries) {
    const t = raw as Wire;
    const wantAnn = Array.isArray(t.metadata?.annotations) ? t.metadata.annotations.length : 0;
    const wantSnap = typeof t.snapshot === 'object' && t.snapshot !== null;
    if ((state.annotationCounts.get(id) ?? 0) !== wantAnn || state.snapshotIds.has(id) !== wantSnap)
      bad.push(id);
  }
  return bad;
}

function sortKeys(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(sortKeys);
  if (v === null || typeof v !== 'object') return v;
  return Object.fromEntries(
    Object.keys(v)
      .sort()
      .map((k) => [k, sortKeys((v as Record<string, unknown>)[k])]),
  );
}
