/**
 * What /healthz and `govtrail status` read: that the database answers, each tenant's recent sync
 * outcomes, and the time of each tenant's checkpoint entry.
 */
import { sql } from 'kysely';
import type { Session } from '../database.js';

/** The failure streak and last outcome of one tenant's syncs. */
const STREAK_WINDOW = 20;

/** Throws unless the database answers a trivial query (health must not depend on having tenants). */
export async function pingDatabase(db: Session): Promise<void> {
  await sql`select 1`.execute(db);
}

/** The database's clock: freshness is judged by the clock the ledger was written with. */
export async function databaseNow(db: Session): Promise<Date> {
  const { rows } = await sql<{ now: Date }>`select now() as now`.execute(db);
  return rows[0]?.now ?? new Date();
}

/**
 * The database's clock minus this process's, in ms (half the round trip taken off): what the
 * engine adds to Date.now() so that slots are judged by one clock on every replica.
 */
export async function measureClockSkew(db: Session): Promise<number> {
  const before = Date.now();
  const { rows } = await sql<{ ms: number }>`
    select (extract(epoch from clock_timestamp()) * 1000)::float8 as ms`.execute(db);
  const after = Date.now();
  return Number(rows[0]?.ms ?? (before + after) / 2) - (before + after) / 2;
}

/** Health of each tenant from its most recent finished syncs (a reconcile's outcome is in /metrics and exporter_health). */
export async function readTenantHealth(db: Session, tenants: readonly string[]): Promise<TenantHealth[]> {
  return (await readFleetHealth(db, tenants)).map(({ lastSuccessAt: _, ...t }) => t);
}

/**
 * Health and freshness of every tenant in one statement, whatever the fleet's size: each tenant's
 * newest finished sync, its newest success, and the failures since (capped at STREAK_WINDOW).
 */
export async function readFleetHealth(
  db: Session,
  tenants: readonly string[],
): Promise<Array<TenantHealth & { readonly lastSuccessAt: Date | null }>> {
  if (tenants.length === 0) return [];
  const { rows } = await sql<{
    tenant: string;
    run_id: number | null;
    status: 'succeeded' | 'failed' | null;
    finished_at: Date | null;
    error_code: string | null;
    ok_at: Date | null;
    streak: number;
  }>`
    select t.tenant, last.run_id, last.status, last.finished_at, last.error_code, ok.finished_at as ok_at,
           (select count(*)::int from (
              select from govtrail.sync_run f
              where f.tenant_id = t.tenant and f.kind = 'sync' and f.status = 'failed'
                and f.run_id > coalesce(ok.run_id, 0)
              limit ${STREAK_WINDOW}) s) as streak
    from unnest(${[...tenants]}::text[]) with ordinality as t(tenant, ord)
    left join lateral (
      select r.run_id, r.status, r.finished_at, r.error_code from govtrail.sync_run r
      where r.tenant_id = t.tenant and r.kind = 'sync' and r.status in ('succeeded', 'failed')
      order by r.run_id desc limit 1) last on true
    left join lateral (
      select r.run_id, r.finished_at from govtrail.sync_run r
      where r.tenant_id = t.tenant and r.kind = 'sync' and r.status = 'succeeded'
      order by r.run_id desc limit 1) ok on true
    order by t.ord`.execute(db);
  return rows.map((r) => ({
    tenant: r.tenant,
    lastRun:
      r.run_id === null || r.status === null
        ? null
        : {
            runId: r.run_id,
            status: r.status,
            finishedAt: r.finished_at === null ? null : new Date(r.finished_at).toISOString(),
            errorCode: r.error_code,
          },
    consecutiveFailures: r.streak,
    lastSuccessAt: r.ok_at === null ? null : new Date(r.ok_at),
  }));
}

/** Creation time of each tenant's checkpoint entry (the newest stored entry). */
export async function readCheckpointTimes(
  db: Session,
  tenants: readonly string[],
): Promise<Map<string, Date>> {
  const out = new Map<string, Date>();
  if (tenants.length === 0) return out;
  const rows = await db
    .selectFrom('govtrail.checkpoint')
    .select(['tenant_id', 'entry_created_at'])
    .where('tenant_id', 'in', [...tenants])
    .execute();
  for (const r of rows) out.set(r.tenant_id, new Date(r.entry_created_at));
  return out;
}

export interface TenantHealth {
  readonly tenant: string;
  /** The newest run that did the work (skipped runs excluded); null before the first. */
  readonly lastRun: {
    readonly runId: number;
    readonly status: 'succeeded' | 'failed';
    readonly finishedAt: string | null;
    readonly errorCode: string | null;
  } | null;
  /** Failed runs in a row, newest first, up to the last success (capped at the lookback read). */
  readonly consecutiveFailures: number;
}
