import type { Session } from '../database.js';

export interface Checkpoint {
  readonly entryId: string;
  readonly createdAt: Date;
  /** UTC, nine fractional digits. */
  readonly createdAtKey: string;
  readonly runId: number;
}

export async function readCheckpoint(db: Session, tenantId: string): Promise<Checkpoint | undefined> {
  const row = await db
    .selectFrom('govtrail.checkpoint')
    .select(['entry_id', 'entry_created_at', 'entry_created_at_key', 'run_id'])
    .where('tenant_id', '=', tenantId)
    .executeTakeFirst();
  return row === undefined
    ? undefined
    : {
        entryId: row.entry_id,
        createdAt: row.entry_created_at,
        createdAtKey: row.entry_created_at_key,
        runId: row.run_id,
      };
}
