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

/** Health of each tenant from its most recent finished syncs (a reconcile's outcome is in /metrics and exporter_health). */
export async function readTenantHealth(db: Session, tenants: readonly string[]): Promise<TenantHealth[]> {
  const out: TenantHealth[] = [];
  for (const tenant of tenants) {
    const rows = await db
      .selectFrom('govtrail.sync_run')
      .select(['run_id', 'status', 'finished_at', 'error_code'])
      .where('tenant_id', '=', tenant)
      .where('kind', '=', 'sync')
      .where('status', 'in', ['succeeded', 'failed'])
      .orderBy('run_id', 'desc')
      .limit(STREAK_WINDOW)
      .execute();
    let streak = 0;
    for (const r of rows) {
      if (r.status !== 'failed') break;
      streak++;
    }
    const last = rows[0];
    out.push({
      tenant,
      lastRun:
        last === undefined
          ? null
          : {
              runId: last.run_id,
              status: last.status as 'succeeded' | 'failed',
              finishedAt: last.finished_at === null ? null : new Date(last.finished_at).toISOString(),
              errorCode: last.error_code,
            },
      consecutiveFailures: streak,
    });
  }
  return out;
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
