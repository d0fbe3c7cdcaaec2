/**
 * Repository of field_change (the chronological walk over stored entries that computes it:
 * store/read/chrono-entries.ts).
 */
import { sql } from 'kysely';
import type { FieldChange } from '../../core/diff.js';
import { toJsonbText } from '../../core/normalise/canonical.js';
import { copyRows, type TableCopy } from '../copy.js';
import { type CopyValue, encodeCopyRows } from '../copy-format.js';
import type { Session } from '../database.js';

export interface FieldChangeRow {
  readonly entryId: string;
  readonly change: FieldChange;
}

/**
 * Replaces the field changes of the given entries (a late arrival changes its successor's diff):
 * deletes theirs, then inserts. No upsert: field_change is append-only (0009), and its trigger lets
 * the delete through only in the transaction that stored the late arrival.
 */
export async function replaceFieldChanges(
  db: Session,
  tenantId: string,
  entryIds: readonly string[],
  rows: readonly FieldChangeRow[],
): Promise<void> {
  if (entryIds.length > 0) {
    await sql`delete from govtrail.field_change
              where tenant_id = ${tenantId} and entry_id = any(${entryIds as string[]}::text[])`.execute(db);
  }
  if (rows.length === 0) return;
  await sql`
    insert into govtrail.field_change (tenant_id, entry_id, field, old_value, new_value, direction)
    select ${tenantId}, f.entry_id, f.field, f.old_value::jsonb, f.new_value::jsonb, f.direction
    from unnest(${rows.map((r) => r.entryId)}::text[], ${rows.map((r) => r.change.field)}::text[],
                ${rows.map((r) => (r.change.oldValue === null || r.change.oldValue === undefined ? null : toJsonbText(r.change.oldValue)))}::text[],
                ${rows.map((r) => (r.change.newValue === null || r.change.newValue === undefined ? null : toJsonbText(r.change.newValue)))}::text[],
                ${rows.map((r) => r.change.direction)}::text[])
         as f(entry_id, field, old_value, new_value, direction)`.execute(db);
}

const FIELD_CHANGE_COLUMNS = [
  'tenant_id',
  'entry_id',
  'field',
  'old_value',
  'new_value',
  'direction',
] as const;

/** A value of old_value/new_value as jsonb text; null (and undefined) stay SQL NULL. */
function jsonbOrNull(value: unknown): string | null {
  return value === null || value === undefined ? null : toJsonbText(value);
}

function* fieldChangeRows(tenantId: string, rows: readonly FieldChangeRow[]): Generator<CopyValue[]> {
  for (const r of rows) {
    yield [
      tenantId,
      r.entryId,
      r.change.field,
      jsonbOrNull(r.change.oldValue),
      jsonbOrNull(r.change.newValue),
      r.change.direction,
    ];
  }
}

/**
 * Inserts the field changes of entries that have none stored yet, with one COPY: no delete, no
 * upsert (`replaceFieldChanges` is for entries whose changes are recomputed). Values are encoded as
 * there. A row whose (entry, field) is already stored, or given twice, fails the whole COPY with a
 * unique violation (23505) and with it the caller's transaction. Returns how many rows it inserted.
 */
export async function insertFieldChanges(
  db: Session,
  tenantId: string,
  rows: readonly FieldChangeRow[],
): Promise<number> {
  if (rows.length === 0) return 0;
  const { table, columns, rows: payload } = fieldChangeCopy(tenantId, rows);
  return copyRows(db, table, columns, payload);
}

/**
 * Field changes encoded for COPY into field_change (as insertFieldChanges writes them), for a
 * writer that sends them with other tables in one query (copyTables).
 */
export function fieldChangeCopy(tenantId: string, rows: readonly FieldChangeRow[]): TableCopy {
  return {
    table: 'govtrail.field_change',
    columns: FIELD_CHANGE_COLUMNS,
    rows: encodeCopyRows(fieldChangeRows(tenantId, rows), FIELD_CHANGE_COLUMNS.length),
  };
}
