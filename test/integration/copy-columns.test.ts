/**
 * What COPY loads covers every column of the evidence tables: the columns of history_entry,
 * history_annotation and settings_snapshot in the migrated database, but an identity and the few
 * left to their default on purpose (LEFT_TO_THE_TABLE), are exactly the columns of their COPY descriptions
 * (store/write/entries.ts, copyShape). A column added by a migration and forgotten in the
 * description fails here, naming it (CONTRIBUTING.md "Add a column to history_entry").
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { CopyShape } from '../../src/store/copy-format.js';
import { ANNOTATION_COPY, ENTRY_COPY, SNAPSHOT_COPY } from '../../src/store/write/entries.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';

let t: TestDatabase;

beforeAll(async () => {
  t = await createTestDatabase();
});

afterAll(async () => {
  await t?.close();
});

/** Columns COPY leaves to the table's default on purpose. */
const LEFT_TO_THE_TABLE: Readonly<Record<string, readonly string[]>> = { history_entry: ['loaded_at'] };

/** Columns of a table of schema govtrail that COPY must give: not an identity, not left to the table. */
async function loadedColumns(table: string): Promise<string[]> {
  const { rows } = await sql<{ column_name: string }>`
    select column_name from information_schema.columns
    where table_schema = 'govtrail' and table_name = ${table}
      and is_identity = 'NO' and is_generated = 'NEVER'
    order by column_name`.execute(t.database.db);
  const left = LEFT_TO_THE_TABLE[table] ?? [];
  return rows.map((r) => r.column_name).filter((c) => !left.includes(c));
}

it.each<[string, CopyShape<never>]>([
  ['history_entry', ENTRY_COPY],
  ['history_annotation', ANNOTATION_COPY],
  ['settings_snapshot', SNAPSHOT_COPY],
])('COPY into %s loads every column the table does not fill itself', async (table, shape) => {
  expect([...shape.columns].sort()).toEqual(await loadedColumns(table));
});
