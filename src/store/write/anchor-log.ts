/**
 * Repository of govtrail.anchor_log (sql/0017): the order of each tenant's signed anchors in one
 * anchor directory, kept in the database so that every replica numbers and chains them the same
 * way, whatever its clock. Not evidence: the signed files are.
 */
import { sql } from 'kysely';
import type { Session } from '../database.js';

/** Runs `fn` in a transaction holding the lock of one tenant's chain of anchors in one directory. */
export function withAnchorChainLock<T>(
  db: Session,
  directoryId: string,
  tenantId: string,
  fn: (trx: Session) => Promise<T>,
): Promise<T> {
  const run = async (trx: Session) => {
    const lock = `govtrail anchor ${directoryId} ${tenantId}`;
    await sql`select pg_advisory_xact_lock(hashtextextended(${lock}, 0))`.execute(trx);
    return fn(trx);
  };
  return db.isTransaction ? run(db) : db.transaction().execute(run);
}

/** The newest anchor logged for the tenant in the directory: its number and sha256. */
export async function lastLoggedAnchor(
  db: Session,
  directoryId: string,
  tenantId: string,
): Promise<{ sequence: number; sha256: string } | undefined> {
  return db
    .selectFrom('govtrail.anchor_log')
    .select(['sequence', 'sha256'])
    .where('directory_id', '=', directoryId)
    .where('tenant_id', '=', tenantId)
    .orderBy('sequence', 'desc')
    .limit(1)
    .executeTakeFirst();
}

/** Claims an anchor's number (the key refuses a second claim of the same number). */
export async function logAnchor(
  db: Session,
  row: {
    directoryId: string;
    tenantId: string;
    sequence: number;
    fileName: string;
    sha256: string;
    entries: number;
    anchoredAt: Date;
  },
): Promise<void> {
  await db
    .insertInto('govtrail.anchor_log')
    .values({
      directory_id: row.directoryId,
      tenant_id: row.tenantId,
      sequence: row.sequence,
      file_name: row.fileName,
      sha256: row.sha256,
      entries: row.entries,
      anchored_at: row.anchoredAt,
    })
    .execute();
}

/** The database's clock. */
export async function databaseClock(db: Session): Promise<Date> {
  const { rows } = await sql<{ now: Date }>`select clock_timestamp() as now`.execute(db);
  return rows[0]?.now ?? new Date();
}
