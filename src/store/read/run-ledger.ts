import { sql } from 'kysely';
import type { Session } from '../database.js';
import { keysetPages } from '../paging.js';
import { andAfter } from '../predicates.js';
import type { RunKind, RunStatus } from '../write/runs.js';
import type { PeriodFilter } from './period.js';

export interface LedgerRun {
  readonly runId: number;
  readonly kind: string;
  readonly trigger: string;
  readonly status: string;
  readonly startedAt: Date;
  readonly finishedAt: Date | null;
  readonly pagesFetched: number;
  readonly entriesFetched: number;
  readonly entriesInserted: number;
  readonly entriesRejected: number;
  readonly warnings: number;
  readonly httpRetries: number;
  readonly stopReason: string | null;
  readonly errorCode: string | null;
  readonly errorMessage: string | null;
  readonly coveredFromText: string | null;
  readonly coveredToText: string | null;
}

/** The tenant's runs started in [from, to), oldest first by (started_at, run_id). */
export async function* iterateRuns(
  db: Session,
  filter: PeriodFilter,
  pageSize = 2000,
): AsyncGenerator<LedgerRun> {
  const pages = keysetPages(
    pageSize,
    (after: { key: string; runId: number } | undefined) =>
      sql<{
        run_id: number | string;
        kind: string;
        trigger: string;
        status: string;
        started_at: Date;
        started_key: string;
        finished_at: Date | null;
        pages_fetched: number;
        entries_fetched: number;
        entries_inserted: number;
        entries_rejected: number;
        warnings: number;
        http_retries: number;
        stop_reason: string | null;
        error_code: string | null;
        error_message: string | null;
        covered_from_text: string | null;
        covered_to_text: string | null;
      }>`
      select r.run_id, r.kind, r.trigger, r.status, r.started_at, r.started_at::text as started_key, r.finished_at,
             r.pages_fetched, r.entries_fetched, r.entries_inserted, r.entries_rejected, r.warnings,
             r.http_retries, r.stop_reason, r.error_code, r.error_message, r.covered_from_text, r.covered_to_text
      from govtrail.sync_run r
      where r.tenant_id = ${filter.tenantId}
        and r.started_at >= ${filter.from} and r.started_at < ${filter.to}
        ${andAfter('(r.started_at, r.run_id)', after, (c) => sql`(${c.key}::timestamptz, ${c.runId}::bigint)`)}
      order by r.started_at, r.run_id
      limit ${pageSize}`
        .execute(db)
        .then((r) => r.rows),
    (last) => ({ key: last.started_key, runId: Number(last.run_id) }),
  );
  for await (const rows of pages) {
    for (const r of rows)
      yield {
        runId: Number(r.run_id),
        kind: r.kind,
        trigger: r.trigger,
        status: r.status,
        startedAt: r.started_at,
        finishedAt: r.finished_at,
        pagesFetched: Number(r.pages_fetched),
        entriesFetched: Number(r.entries_fetched),
        entriesInserted: Number(r.entries_inserted),
        entriesRejected: Number(r.entries_rejected),
        warnings: Number(r.warnings),
        httpRetries: Number(r.http_retries),
        stopReason: r.stop_reason,
        errorCode: r.error_code,
        errorMessage: r.error_message,
        coveredFromText: r.covered_from_text,
        coveredToText: r.covered_to_text,
      };
  }
}

/** When the tenant's last successful run (sync or reconcile) that started before `at` finished. */
export async function findLastSuccessBefore(db: Session, tenantId: string, at: Date): Promise<Date | null> {
  const { rows } = await sql<{ finished_at: Date | null }>`
    select max(r.finished_at) as finished_at from govtrail.sync_run r
    where r.tenant_id = ${tenantId} and r.status = 'succeeded' and r.started_at < ${at}`.execute(db);
  return rows[0]?.finished_at ?? null;
}

/** Statuses of the tenant's most recent runs of a kind, newest first (skipped runs excluded). */
export async function recentRunStatuses(
  db: Session,
  tenantId: string,
  limit: number,
  kind: RunKind = 'sync',
): Promise<RunStatus[]> {
  const rows = await db
    .selectFrom('govtrail.sync_run')
    .select('status')
    .where('tenant_id', '=', tenantId)
    .where('kind', '=', kind)
    .where('status', 'in', ['succeeded', 'failed'])
    .orderBy('run_id', 'desc')
    .limit(limit)
    .execute();
  return rows.map((r) => r.status as RunStatus);
}
