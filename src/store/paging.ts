/**
 * Keyset paging, once: a list of any length read a page at a time, each page asked for the rows
 * after the last row of the page before (its cursor; predicates.ts `andAfter` writes the
 * condition), so memory holds one page and no page costs more than the first.
 */

/**
 * The pages of a keyset-paged query, in order: `page(after)` gives up to `pageSize` rows after the
 * cursor (undefined: the first page, unless `first` is given); the walk ends with a page shorter than `pageSize`.
 */
export async function* keysetPages<Row, Cursor>(
  pageSize: number,
  page: (after: Cursor | undefined) => Promise<readonly Row[]>,
  cursorOf: (last: Row) => Cursor,
  /** Where the walk starts (default: at the first row). */
  first?: Cursor,
): AsyncGenerator<readonly Row[]> {
  let after: Cursor | undefined = first;
  for (;;) {
    const rows = await page(after);
    yield rows;
    const last = rows.at(-1);
    if (rows.length < pageSize || last === undefined) return;
    after = cursorOf(last);
  }
}
