/**
 * field_change checked against a freshly computed diff: the tenant's entries are walked in
 * chronological order ((created_at, entry_id), as the sync's change walk does) in keyset pages, each
 * entry's diff is recomputed from the stored raw snapshots with `diffSnapshots`, and compared with the
 * field_change rows stored for the page. Memory holds one page. Read-only.
 */
import { sql } from 'kysely';
import { diffSnapshots, type FieldChange, isDiffBase, type Ranks } from '../../core/diff.js';
import { canonicalJson } from '../../core/normalise/canonical.js';
import { firstNonCanonicalNumber, jsonPathAt } from '../../core/normalise/number-text.js';
import type { WireSettings } from '../../core/wire.js';
import type { Session } from '../database.js';

/** One field_change row that is not what the diff of the stored snapshots gives. */
export interface ChangeMismatch {
  readonly entryId: string;
  readonly detail: string;
}

export interface ChangeCheckResult {
  /** field_change rows of the tenant compared. */
  readonly rows: number;
  readonly mismatches: readonly ChangeMismatch[];
}

interface ChronoPageRow {
  entry_id: string;
  pos_at: string;
  snapshot: WireSettings | null;
}

interface StoredChange {
  entry_id: string;
  field: string;
  old_value: unknown;
  new_value: unknown;
  /** old_value and new_value as PostgreSQL renders them, for the text of their numbers. */
  old_text: string | null;
  new_text: string | null;
  direction: string;
}

/** A value of old_value/new_value as the store writes it: SQL NULL for null and undefined. */
function valueText(v: unknown): string {
  return v === null || v === undefined ? 'NULL' : canonicalJson(v);
}

function describeChange(c: { old: string; new: string; direction: string }): string {
  return `${c.old} → ${c.new} (${c.direction})`;
}

/** Compares one entry's stored field changes with the recomputed ones. */
function compareEntry(
  entryId: string,
  computed: readonly FieldChange[],
  stored: readonly StoredChange[],
): ChangeMismatch | undefined {
  const want = new Map(
    computed.map((c) => [
      c.field,
      { old: valueText(c.oldValue), new: valueText(c.newValue), direction: c.direction },
    ]),
  );
  const got = new Map(
    stored.map((c) => [
      c.field,
      { old: valueText(c.old_value), new: valueText(c.new_value), direction: c.direction },
    ]),
  );
  for (const [field, w] of want) {
    const g = got.get(field);
    if (g === undefined)
      return { entryId, detail: `field_change ${field} is missing: the diff gives ${describeChange(w)}` };
    if (g.old !== w.old || g.new !== w.new || g.direction !== w.direction)
      return {
        entryId,
        detail: `field_change ${field} says ${describeChange(g)}, the diff of the stored snapshots gives ${describeChange(w)}`,
      };
  }
  for (const [field, g] of got)
    if (!want.has(field))
      return {
        entryId,
        detail: `field_change ${field} (${describeChange(g)}) is stored, but the stored snapshots do not differ there`,
      };
  // Equal values, but each number must also have the one text govtrail writes (number-text.ts).
  for (const c of stored)
    for (const [column, text] of [
      ['old_value', c.old_text],
      ['new_value', c.new_text],
    ] as const) {
      const m = text === null ? undefined : firstNonCanonicalNumber(text);
      if (m !== undefined)
        return {
          entryId,
          detail: `field_change ${c.field} ${column} ${jsonPathAt(text as string, m.offset)} is stored as ${m.found}, govtrail writes ${m.expected ?? 'null'} for that value: the number's text was edited`,
        };
    }
  return undefined;
}

/**
 * Recomputes the diff of every entry of the tenant and compares it with field_change. Stops
 * collecting after `maxFindings` mismatches (the walk still counts every row).
 */
export async function verifyFieldChanges(
  db: Session,
  tenantId: string,
  ranks: Ranks,
  options: { pageSize?: number; maxFindings?: number } = {},
): Promise<ChangeCheckResult> {
  const pageSize = options.pageSize ?? 1000;
  const maxFindings = options.maxFindings ?? 20;
  const mismatches: ChangeMismatch[] = [];
  let base: WireSettings | null = null;
  let after: { posAt: string; entryId: string } | undefined;
  let compared = 0;
  for (;;) {
    const page = (
      await sql<ChronoPageRow>`
        select e.entry_id, e.created_at::text as pos_at,
               case when jsonb_typeof(e.raw->'snapshot') = 'object' then e.raw->'snapshot' end as snapshot
        from govtrail.history_entry e
        where e.tenant_id = ${tenantId} ${
          after === undefined
            ? sql``
            : sql`and (e.created_at, e.entry_id) > (${after.posAt}::timestamptz, ${after.entryId}::text collate "C")`
        }
        order by e.created_at, e.entry_id limit ${pageSize}`.execute(db)
    ).rows;
    if (page.length === 0) break;
    const stored = (
      await sql<StoredChange>`
        select f.entry_id, f.field, f.old_value, f.new_value, f.old_value::text as old_text,
               f.new_value::text as new_text, f.direction
        from unnest(${page.map((r) => r.entry_id)}::text[]) as i(id)
        join govtrail.field_change f on f.tenant_id = ${tenantId} and f.entry_id = i.id collate "C"`.execute(
        db,
      )
    ).rows;
    compared += stored.length;
    const byEntry = new Map<string, StoredChange[]>();
    for (const c of stored) {
      const list = byEntry.get(c.entry_id);
      if (list === undefined) byEntry.set(c.entry_id, [c]);
      else list.push(c);
    }
    for (const e of page) {
      // As the sync's walk: the diff base is the latest earlier entry with a snapshot.
      const computed = diffSnapshots(base, e.snapshot, ranks);
      if (mismatches.length < maxFindings) {
        const m = compareEntry(e.entry_id, computed, byEntry.get(e.entry_id) ?? []);
        if (m !== undefined) mismatches.push(m);
      }
      if (isDiffBase(e.snapshot)) base = e.snapshot;
    }
    const last = page[page.length - 1] as ChronoPageRow;
    after = { posAt: last.pos_at, entryId: last.entry_id };
    if (page.length < pageSize) break;
  }
  // A row whose entry is not in the history (possible only with foreign keys switched off).
  const total = Number(
    (
      await sql<{
        n: string;
      }>`select count(*)::text as n from govtrail.field_change where tenant_id = ${tenantId}`.execute(db)
    ).rows[0]?.n ?? '0',
  );
  if (total !== compared && mismatches.length < maxFindings)
    mismatches.push({
      entryId: '',
      detail: `${total - compared} field_change row(s) belong to no stored entry`,
    });
  return { rows: compared, mismatches };
}
