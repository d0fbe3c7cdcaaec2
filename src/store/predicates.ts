/**
 * SQL fragments the queries of store/ share: an optional bound of a filter, and the keyset
 * condition of a page after the last row of the page before (see paging.ts).
 */
import { type RawBuilder, sql } from 'kysely';

/** A comparison an optional bound makes. */
export type BoundOp = '>=' | '>' | '<' | '<=' | '=';

/**
 * `and <column> <op> <value>` when the value is given, nothing when it is absent: one optional
 * bound of a filter (since, until, a field, a tenant). `column` is SQL text written in the query's
 * module, never input.
 */
export function andBound(
  column: string,
  op: BoundOp,
  value: Date | string | number | undefined,
  type: 'timestamptz' | 'text' | 'bigint' = 'timestamptz',
): RawBuilder<unknown> {
  if (value === undefined) return sql``;
  return sql`and ${sql.raw(column)} ${sql.raw(op)} ${value}::${sql.raw(type)}`;
}

/**
 * `and <columns> > <values>` for the page after a cursor, nothing for the first page: keyset paging
 * by the row comparison of the sort columns. `values` builds the cursor's row (with its casts); the
 * caller repeats the leading column's bound (andBound) where it lets an index scan start there.
 */
export function andAfter<C>(
  columns: string,
  cursor: C | undefined,
  values: (cursor: C) => RawBuilder<unknown>,
): RawBuilder<unknown> {
  if (cursor === undefined) return sql``;
  return sql`and ${sql.raw(columns)} > ${values(cursor)}`;
}
