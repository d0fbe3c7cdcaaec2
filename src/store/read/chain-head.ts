/**
 * The state of a tenant's chain that a signed anchor states: the number of history_entry rows and
 * the newest row in storage order, read in one statement (one snapshot of the database).
 */
import { sql } from 'kysely';
import type { Session } from '../database.js';

/** A chain's length and head as an anchor records them. */
export interface ChainHead {
  /** history_entry rows of the tenant (the chain's length). */
  readonly entries: number;
  /** The newest row in storage order (the chain's head); null for an empty chain. */
  readonly head: {
    readonly seq: number;
    readonly entry_id: string;
    readonly created_at_text: string | null;
    /** row_hash of the head, hex. */
    readonly row_hash: string;
  } | null;
}

/** The state of a tenant's chain as one statement sees it (one snapshot of the database). */
export async function readChainHead(db: Session, tenantId: string): Promise<ChainHead> {
  const { rows } = await sql<{
    entries: string;
    seq: string | null;
    entry_id: string | null;
    created_at_text: string | null;
    row_hash: Uint8Array | null;
  }>`
    select (select count(*) from govtrail.history_entry where tenant_id = ${tenantId})::text as entries,
           h.seq::text as seq, h.entry_id, h.created_at_text, h.row_hash
    from (select 1) one
    left join lateral (select seq, entry_id, created_at_text, row_hash from govtrail.history_entry
                       where tenant_id = ${tenantId} order by seq desc limit 1) h on true`.execute(db);
  const r = rows[0];
  if (r === undefined || r.seq === null || r.entry_id === null || r.row_hash === null)
    return { entries: Number(r?.entries ?? 0), head: null };
  return {
    entries: Number(r.entries),
    head: {
      seq: Number(r.seq),
      entry_id: r.entry_id,
      created_at_text: r.created_at_text,
      row_hash: Buffer.from(r.row_hash).toString('hex'),
    },
  };
}
