/**
 * govtrail's own SQL against the job engine's tables (pg-boss, schema `govtrail_boss`): the dead
 * letters counted by the queue they failed on, and the grants that let the writer role run a
 * worker. Run on pg-boss's own connection (its `executeSql`), so the worker layer passes that in.
 */

/** What runs one statement: pg-boss's `getDb()`. */
export interface SqlRunner {
  executeSql(text: string, values?: unknown[]): Promise<{ rows: unknown[] }>;
}

/** Jobs of the shared dead-letter queue `deadQueue`, counted by the queue they failed on. */
export async function countDeadLetters(
  db: SqlRunner,
  schema: string,
  deadQueue: string,
): Promise<(queue: string) => number> {
  const { rows } = await db.executeSql(
    `select source_name as name, count(*)::int as n from ${schema}.job where name = $1 group by source_name`,
    [deadQueue],
  );
  return (name: string): number =>
    Number((rows as Array<{ name: string | null; n: number }>).find((r) => r.name === name)?.n ?? 0);
}

/** The statements that let `role` use the engine's schema: its tables, sequences and functions. */
export function engineGrants(schema: string, role: string): readonly string[] {
  return [
    `grant usage on schema ${schema} to ${role}`,
    `grant select, insert, update, delete on all tables in schema ${schema} to ${role}`,
    `grant usage, select on all sequences in schema ${schema} to ${role}`,
    `grant execute on all functions in schema ${schema} to ${role}`,
  ];
}
