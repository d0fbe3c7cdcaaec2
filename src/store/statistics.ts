/**
 * When a run refreshes the planner's statistics (ANALYZE), and of which tables.
 *
 * Without statistics the planner takes the tables for empty and picks plans orders of magnitude
 * slower (bench/RESULTS.md (g): a 20 000-entry evidence pack took 399 s instead of 11 s), and
 * autovacuum, which would fix that later, does not run everywhere (the embedded database has none;
 * servers may have it off). So a run does autovacuum's analyze decision itself, per table, from
 * the size of the change relative to the table: a table is analyzed when it has never been
 * analyzed (or was analyzed empty) and now has rows, or when the rows changed since its last
 * ANALYZE reach autovacuum's default threshold, 50 + 10 % of the table. The decision is made inside
 * the run's transaction, where the run's own changes are exact; the ANALYZE runs once committed.
 *
 * Onboarding a fleet of small tenants therefore costs a number of ANALYZEs that grows with the
 * logarithm of the data stored (one each time the tables grew by a tenth), not one per tenant.
 */
import { sql } from 'kysely';
import type { Logger } from '../runtime/logger.js';
import type { Session } from './database.js';

/** The tables the views, dashboards and exports join, whose statistics a run keeps current. */
export const ANALYZED_TABLES = [
  'history_entry',
  'history_annotation',
  'settings_snapshot',
  'field_change',
  'alert',
] as const;
export type AnalyzedTable = (typeof ANALYZED_TABLES)[number];

/** autovacuum_analyze_threshold's default: rows changed before any table is worth re-analyzing. */
export const ANALYZE_BASE_ROWS = 50;
/** autovacuum_analyze_scale_factor's default: the share of the table that must have changed. */
export const ANALYZE_SCALE = 0.1;

/** What the decision needs to know of one table. */
export interface TableChange {
  readonly table: AnalyzedTable;
  /**
   * The planner's row count from the last ANALYZE (or VACUUM); negative when the table has never
   * been analyzed (pg_class.reltuples).
   */
  readonly estimatedRows: number;
  /** Rows inserted, updated or deleted since the last ANALYZE, this transaction's included. */
  readonly changedRows: number;
}

/** Whether the table's statistics are stale enough for the run to ANALYZE it. */
export function needsAnalyze(change: TableChange): boolean {
  if (change.changedRows <= 0) return false;
  // Never analyzed, or analyzed while empty: the planner would take it for (nearly) empty.
  if (change.estimatedRows <= 0) return true;
  return change.changedRows >= ANALYZE_BASE_ROWS + ANALYZE_SCALE * change.estimatedRows;
}

/** The tables among `changes` to analyze, in ANALYZED_TABLES order. */
export function tablesToAnalyze(changes: readonly TableChange[]): AnalyzedTable[] {
  return changes.filter(needsAnalyze).map((c) => c.table);
}

/**
 * Each analyzed table's row estimate and rows changed since its last ANALYZE: the changes other
 * sessions have reported to the statistics system (n_mod_since_analyze) plus this transaction's own,
 * which are not reported before it ends. Call it inside the run's transaction, after its writes.
 * Changes of other sessions reach the statistics system up to a few seconds late; the count errs
 * low by them, never high.
 */
export async function readTableChanges(trx: Session): Promise<TableChange[]> {
  const { rows } = await sql<{ relname: string; reltuples: number; changed: number }>`
    select c.relname,
           c.reltuples::float8 as reltuples,
           (coalesce(pg_stat_get_mod_since_analyze(c.oid), 0)
             + pg_stat_get_xact_tuples_inserted(c.oid)
             + pg_stat_get_xact_tuples_updated(c.oid)
             + pg_stat_get_xact_tuples_deleted(c.oid))::float8 as changed
      from pg_class c
     where c.relnamespace = 'govtrail'::regnamespace
       and c.relname = any(${[...ANALYZED_TABLES]}::text[])`.execute(trx);
  const byName = new Map(rows.map((r) => [r.relname, r]));
  return ANALYZED_TABLES.flatMap((table) => {
    const r = byName.get(table);
    return r === undefined
      ? []
      : [{ table, estimatedRows: Number(r.reltuples), changedRows: Number(r.changed) }];
  });
}

/**
 * The tables to ANALYZE once the transaction commits (call it inside, after the run's writes).
 * Never fails the run: when the statistics cannot be read it logs why and returns none, the read
 * being fenced by a savepoint so the transaction stays usable.
 */
export async function staleTables(trx: Session, logger: Logger): Promise<AnalyzedTable[]> {
  await sql`savepoint govtrail_statistics`.execute(trx);
  try {
    const stale = tablesToAnalyze(await readTableChanges(trx));
    await sql`release savepoint govtrail_statistics`.execute(trx);
    return stale;
  } catch (err) {
    await sql`rollback to savepoint govtrail_statistics`.execute(trx);
    logger.warn({ err }, 'could not read table statistics; not refreshing them after this run');
    return [];
  }
}

/** The table whose ANALYZE takes longest (a column per setting: about 20 ms each, bench/RESULTS.md (o)). */
const SLOWEST: AnalyzedTable = 'settings_snapshot';

/**
 * ANALYZE of the given govtrail tables, each sampling at most 30 000 rows. With `alongside` (a
 * second connection of a server), settings_snapshot is analyzed there while the rest is analyzed
 * on `session`: after a backfill the two halves take about as long, and the server has the cores
 * (the run's process is idle by then). Otherwise in one statement.
 */
export async function analyzeTables(
  session: Session,
  tables: readonly AnalyzedTable[],
  alongside?: (work: (other: Session) => Promise<void>) => Promise<void>,
): Promise<void> {
  if (tables.length === 0) return;
  // The run's own changes reach the statistics system when this backend next goes idle, and at most
  // once a second: flushed after the ANALYZE they would count again as changes since it, and the
  // next small run would ANALYZE for nothing. So they are flushed first (PostgreSQL 15+).
  await sql`select pg_stat_force_next_flush()`.execute(session);
  const analyze = (s: Session, names: readonly AnalyzedTable[]) =>
    sql`analyze ${sql.join(names.map((t) => sql.table(`govtrail.${t}`)))}`.execute(s);
  const rest = tables.filter((t) => t !== SLOWEST);
  if (alongside === undefined || rest.length === tables.length || rest.length === 0) {
    await analyze(session, tables);
    return;
  }
  await Promise.all([
    alongside(async (other) => {
      await analyze(other, [SLOWEST]);
    }),
    analyze(session, rest),
  ]);
}
