/**
 * Bulk loading with `COPY … FROM STDIN` (text format, see copy-format.ts) on the connection of a
 * Kysely session, on both back ends: the statement goes through Kysely with the payload as its one
 * parameter, and database.ts's connections stream it on the session's own connection.
 */
import { CompiledQuery } from 'kysely';
import {
  CopyBuilder,
  CopyPayload,
  CopyScript,
  type CopyValue,
  copyStatement,
  streamRows,
} from './copy-format.js';
import type { Session } from './database.js';

/**
 * Loads rows into `table` with COPY on the session's connection (inside its transaction, if any),
 * and returns how many rows were loaded. `rows` are values in the order of `columns` — iterated
 * once, lazily, and encoded while the data is sent — or a payload encoded beforehand for those
 * columns. Columns left out take their defaults (identity, default expressions); rows are stored in
 * the order given. All or nothing: a database error (a unique violation, a value the column
 * rejects) rejects with the database's error and loads no row; so does an error thrown while
 * iterating or encoding `rows`.
 */
export async function copyRows(
  db: Session,
  table: string,
  columns: readonly string[],
  rows: Iterable<readonly CopyValue[]> | CopyPayload,
): Promise<number> {
  let payload: CopyPayload;
  if (rows instanceof CopyPayload) {
    payload = rows;
    if (payload.rows === 0) return 0;
  } else {
    const it = rows[Symbol.iterator]();
    const first = it.next();
    if (first.done === true) return 0;
    const builder = new CopyBuilder(columns.length);
    payload = new CopyPayload(streamRows(builder, first.value, it), () => builder.rows);
  }
  await db.executeQuery(CompiledQuery.raw(copyStatement(table, columns), [payload]));
  // COPY is all or nothing: it succeeded, so every row is in.
  return payload.rows;
}

/** One table's rows for copyTables: a payload encoded beforehand for `columns`. */
export interface TableCopy {
  readonly table: string;
  readonly columns: readonly string[];
  readonly rows: CopyPayload;
}

/**
 * Loads several tables with COPY, as one query on the session's connection, for use inside a
 * transaction (the run's): on a server the statements and all their data go out at once, without
 * a round trip between tables. Returns the rows loaded into each table, in order; a table without
 * rows gets no statement. A failure rejects with the database's error and leaves the transaction
 * failed, so that once it rolls back no table keeps any row of the call.
 */
export async function copyTables(db: Session, tables: readonly TableCopy[]): Promise<number[]> {
  const present = tables.filter((t) => t.rows.rows > 0);
  if (present.length === 0) return tables.map(() => 0);
  const script = new CopyScript(
    present.map((t) => ({ text: copyStatement(t.table, t.columns), payload: t.rows })),
  );
  await db.executeQuery(CompiledQuery.raw(script.text, [script]));
  // Each COPY is all or nothing and the query succeeded: every row of every table is in.
  return tables.map((t) => t.rows.rows);
}
