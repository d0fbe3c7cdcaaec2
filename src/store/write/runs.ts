/**
 * Repository of the run ledger (sync_run) and the checkpoint.
 */
import { createHash } from 'node:crypto';
import { sql } from 'kysely';
import { redact } from '../../core/redact.js';
import type { Session } from '../database.js';

export type RunTrigger = 'cli' | 'schedule' | 'demo';
/** What a ledger row records: a sync, or a reconcile against the whole source history. */
export type RunKind = 'sync' | 'reconcile';
export type RunStatus = 'running' | 'succeeded' | 'failed' | 'skipped';

export async function writeCheckpoint(
  db: Session,
  tenantId: string,
  cp: { entryId: string; createdAt: Date; createdAtKey: string; runId: number },
): Promise<void> {
  await db
    .insertInto('govtrail.checkpoint')
    .values({
      tenant_id: tenantId,
      entry_id: cp.entryId,
      entry_created_at: cp.createdAtKey,
      entry_created_at_key: cp.createdAtKey,
      run_id: cp.runId,
    })
    .onConflict((oc) =>
      oc.column('tenant_id').doUpdateSet({
        entry_id: cp.entryId,
        entry_created_at: cp.createdAtKey,
        entry_created_at_key: cp.createdAtKey,
        run_id: cp.runId,
        updated_at: sql<Date>`now()`,
      }),
    )
    .execute();
}

/**
 * Removes a run still `running` that the job engine will try again inside its slot (its transaction
 * rolled back, so nothing refers to it): the attempt that ends the job records the outcome once.
 */
export async function discardRun(db: Session, runId: number): Promise<void> {
  await db
    .deleteFrom('govtrail.sync_run')
    .where('run_id', '=', runId)
    .where('status', '=', 'running')
    .execute();
}

export interface RunCounters {
  pagesFetched: number;
  entriesFetched: number;
  entriesInserted: number;
  entriesRejected: number;
  warnings: number;
  httpRetries: number;
  /** Re-served stored entries whose content hash matched. */
  entriesMatched: number;
  /** Re-served stored entries whose content hash differed (changed_at_source). */
  entriesChanged: number;
}

/**
 * What a reconcile adds to its ledger row (docs/design/integrity.md): its counts and the range it covered.
 */
export interface ReconcileLedger {
  readonly entriesNew: number;
  readonly entriesMissing: number;
  readonly entriesExpired: number;
  readonly entriesBackdated: number;
  /** Ids served with more than one content in the listing (conflicting_ids). */
  readonly entriesConflicting: number;
  /** Oldest and newest createdAt served, verbatim and as keys (null when nothing was served). */
  readonly coveredFrom: { readonly text: string; readonly key: string } | null;
  readonly coveredTo: { readonly text: string; readonly key: string } | null;
}

export async function finishRun(
  db: Session,
  runId: number,
  outcome: {
    status: 'succeeded' | 'failed';
    counters: RunCounters;
    checkpointAfter: string | null;
    stopReason: 'checkpoint' | 'end_of_history' | null;
    errorCode?: string | null;
    errorMessage?: string | null;
    /** Only for a reconcile. */
    reconcile?: ReconcileLedger | undefined;
  },
): Promise<void> {
  const r = outcome.reconcile;
  await db
    .updateTable('govtrail.sync_run')
    .set({
      status: outcome.status,
      finished_at: sql<Date>`clock_timestamp()` as unknown as Date,
      pages_fetched: outcome.counters.pagesFetched,
      entries_fetched: outcome.counters.entriesFetched,
      entries_inserted: outcome.counters.entriesInserted,
      entries_rejected: outcome.counters.entriesRejected,
      warnings: outcome.counters.warnings,
      http_retries: outcome.counters.httpRetries,
      checkpoint_after: outcome.checkpointAfter,
      stop_reason: outcome.stopReason,
      error_code: outcome.errorCode ?? null,
      // Redacted where it is recorded too: the message may not come from a GovtrailError.
      error_message: outcome.errorMessage == null ? null : redact(outcome.errorMessage),
      entries_changed: outcome.counters.entriesChanged,
      ...(r === undefined
        ? {}
        : {
            entries_matched: outcome.counters.entriesMatched,
            entries_new: r.entriesNew,
            entries_missing: r.entriesMissing,
            entries_expired: r.entriesExpired,
            entries_backdated: r.entriesBackdated,
            entries_conflicting: r.entriesConflicting,
            covered_from: r.coveredFrom?.key ?? null,
            covered_to: r.coveredTo?.key ?? null,
            covered_from_text: r.coveredFrom?.text ?? null,
            covered_to_text: r.coveredTo?.text ?? null,
          }),
    })
    .where('run_id', '=', runId)
    .execute();
}

export async function unlockTenant(db: Session, tenantId: string): Promise<void> {
  await sql`select pg_advisory_unlock(${tenantLockKey(tenantId)}::bigint)`.execute(db);
}

/** A stable signed 64-bit key per tenant: first 8 bytes of sha256("govtrail:tenant:" + id). */
export function tenantLockKey(tenantId: string): string {
  // Computed in JS so the key does not depend on PostgreSQL's internal hashtext().
  const digest = createHash('sha256').update(`govtrail:tenant:${tenantId}`).digest();
  return digest.readBigInt64BE(0).toString();
}
