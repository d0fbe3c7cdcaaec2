/**
 * Read-only queries of the source's integrity (docs/design/integrity.md) for the report: the last reconcile
 * and the open discrepancies per kind as exporter_health shows them, the coverage record of the
 * last successful reconcile, and the recorded findings newest first.
 */
import { sql } from 'kysely';
import type { Session } from '../database.js';
import type { DiscrepancyKind } from '../write/discrepancies.js';
import type { DiscrepancyRow } from './discrepancies.js';

/** The coverage record of a successful reconcile: "on D, every one of N entries from X to Y matched". */
export interface VerifiedRun {
  readonly runId: number;
  readonly finishedAt: Date;
  /** Entries served whose content hash equals the stored one. */
  readonly entriesMatched: number;
  /** Entries served (fetched minus rejected). */
  readonly entriesServed: number;
  /** Oldest and newest createdAt served, as PostgreSQL reads them and verbatim (nanoseconds). */
  readonly coveredFrom: Date | null;
  readonly coveredTo: Date | null;
  readonly coveredFromText: string | null;
  readonly coveredToText: string | null;
}

export interface SourceIntegrity {
  /** The latest reconcile that finished (succeeded or failed); skipped runs do not count. */
  readonly lastReconcileAt: Date | null;
  readonly lastReconcileStatus: string | null;
  readonly lastReconcileRunId: number | null;
  /** The latest successful reconcile; undefined when none succeeded. */
  readonly verified: VerifiedRun | undefined;
  /**
   * Open discrepancies per kind (exporter_health): what the last successful reconcile found to
   * hold, plus rewrites found by syncs since.
   */
  readonly open: Readonly<Record<DiscrepancyKind, number>>;
}

/** The source's integrity for one tenant, from exporter_health and the run ledger. */
export async function findSourceIntegrity(db: Session, tenantId: string): Promise<SourceIntegrity> {
  const { rows } = await sql<{
    last_reconcile_at: Date | null;
    last_reconcile_status: string | null;
    last_reconcile_run_id: string | number | null;
    open_changed_at_source: string | number | null;
    open_missing_at_source: string | number | null;
    open_expired_at_source: string | number | null;
    open_backdated: string | number | null;
    open_conflicting_ids: string | number | null;
  }>`
    select last_reconcile_at, last_reconcile_status, last_reconcile_run_id, open_changed_at_source,
           open_missing_at_source, open_expired_at_source, open_backdated, open_conflicting_ids
    from govtrail.exporter_health where tenant_id = ${tenantId}`.execute(db);
  const h = rows[0];
  // The same choice as exporter_health's last_verified_* columns, with the run id and the verbatim
  // coverage texts the view leaves out.
  const ok = await db
    .selectFrom('govtrail.sync_run')
    .select([
      'run_id',
      'finished_at',
      'entries_matched',
      'entries_fetched',
      'entries_rejected',
      'covered_from',
      'covered_to',
      'covered_from_text',
      'covered_to_text',
    ])
    .where('tenant_id', '=', tenantId)
    .where('kind', '=', 'reconcile')
    .where('status', '=', 'succeeded')
    .orderBy(sql`finished_at desc nulls last`)
    .orderBy('run_id', 'desc')
    .limit(1)
    .executeTakeFirst();
  const n = (v: string | number | null | undefined) => (v === null || v === undefined ? 0 : Number(v));
  return {
    lastReconcileAt: h?.last_reconcile_at ?? null,
    lastReconcileStatus: h?.last_reconcile_status ?? null,
    lastReconcileRunId: h?.last_reconcile_run_id == null ? null : Number(h.last_reconcile_run_id),
    verified:
      ok === undefined || ok.finished_at === null
        ? undefined
        : {
            runId: Number(ok.run_id),
            finishedAt: ok.finished_at,
            entriesMatched: n(ok.entries_matched),
            entriesServed: n(ok.entries_fetched) - n(ok.entries_rejected),
            coveredFrom: ok.covered_from,
            coveredTo: ok.covered_to,
            coveredFromText: ok.covered_from_text,
            coveredToText: ok.covered_to_text,
          },
    open: {
      changed_at_source: n(h?.open_changed_at_source),
      missing_at_source: n(h?.open_missing_at_source),
      expired_at_source: n(h?.open_expired_at_source),
      backdated: n(h?.open_backdated),
      conflicting_ids: n(h?.open_conflicting_ids),
    },
  };
}

/** The tenant's recorded discrepancies, newest first (by detection, then id), and how many there are in all. */
export async function findLatestDiscrepancies(
  db: Session,
  tenantId: string,
  limit: number,
): Promise<{ rows: DiscrepancyRow[]; total: number }> {
  const rows = await db
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
    .where('tenant_id', '=', tenantId)
    .orderBy('detected_at', 'desc')
    .orderBy('discrepancy_id', 'desc')
    .limit(limit)
    .execute();
  const count = await db
    .selectFrom('govtrail.source_discrepancy')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('tenant_id', '=', tenantId)
    .executeTakeFirst();
  return {
    rows: rows.map((r) => ({
      discrepancyId: Number(r.discrepancy_id),
      tenantId: r.tenant_id,
      entryId: r.entry_id,
      kind: r.kind as DiscrepancyKind,
      detectedAt: r.detected_at,
      runId: Number(r.run_id),
      entryCreatedAt: r.entry_created_at,
      storedSha256: r.stored_sha256,
      sourceSha256: r.source_sha256,
    })),
    total: Number(count?.n ?? 0),
  };
}
