/**
 * "No child row without its entry" (docs/design/data-model.md, "Child rows and their entry"): no
 * history_annotation, settings_snapshot or field_change row exists without the history_entry row
 * of its (tenant_id, entry_id). Since 0035 it is checked once per statement (a trigger over the
 * statement's added rows) instead of by a foreign key row by row; these tests hold the guarantee,
 * for the owner and for the writer role, through INSERT and through the COPY a run writes with.
 */
import type pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { copyTables } from '../../src/store/copy.js';
import { encodeCopyRows } from '../../src/store/copy-format.js';
import { NEEDS_SERVER, onServer } from '../helpers/database.js';
import { createHarness, type Harness } from '../helpers/harness.js';
import { asClient, writerUrl } from '../helpers/roles.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

/** The SQLSTATE and detail a statement fails with (undefined when it succeeds). */
async function failure(c: pg.Client, statement: string, values: unknown[] = []) {
  try {
    await c.query(statement, values);
    return undefined;
  } catch (err) {
    const e = err as { code?: string; detail?: string };
    return { code: e.code, detail: e.detail };
  }
}

/** One row of each child table for (tenant, entry), as INSERT statements. */
const CHILD_INSERTS = [
  `insert into govtrail.history_annotation (tenant_id, entry_id, ordinal, kind) values ($1, $2, 99, 'TICKET')`,
  `insert into govtrail.settings_snapshot (tenant_id, entry_id, allows_all_client_types) values ($1, $2, false)`,
  `insert into govtrail.field_change (tenant_id, entry_id, field, direction) values ($1, $2, 'forged', 'changed')`,
];

/** Child rows whose entry is missing, per table (what the guarantee says is always 0). */
async function orphans(c: pg.Client): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const t of ['history_annotation', 'settings_snapshot', 'field_change']) {
    const { rows } = await c.query<{ n: number }>(
      `select count(*)::int as n from govtrail.${t} x
       where not exists (select from govtrail.history_entry e where e.tenant_id = x.tenant_id and e.entry_id = x.entry_id)`,
    );
    out[t] = rows[0]?.n ?? -1;
  }
  return out;
}

describe.skipIf(!onServer)(`no child row without its entry (${NEEDS_SERVER})`, () => {
  it('a row of an annotation, snapshot or field change without its entry is refused (23503), for the owner and the writer', async () => {
    h = await createHarness({ entries: 40, seed: 21 });
    expect((await h.sync()).status).toBe('succeeded');
    const ownerUrl = h.testDb.url as string;
    const { rows } = await asClient(ownerUrl, (c) =>
      c.query<{ entry_id: string }>(
        `select entry_id from govtrail.history_entry where tenant_id = 'acme' limit 1`,
      ),
    );
    const stored = rows[0]?.entry_id as string;
    for (const url of [ownerUrl, await writerUrl(ownerUrl)]) {
      await asClient(url, async (c) => {
        for (const insert of CHILD_INSERTS) {
          // An id never stored, and a stored id under another tenant.
          expect(await failure(c, insert, ['acme', '2zzzzzzzzzzzzzzzzzzzzzzzzzz'])).toEqual({
            code: '23503',
            detail:
              'Key (tenant_id, entry_id)=(acme, 2zzzzzzzzzzzzzzzzzzzzzzzzzz) is not present in table "history_entry".',
          });
          expect((await failure(c, insert, ['other', stored]))?.code).toBe('23503');
        }
        // Several rows in one statement: one without its entry fails them all.
        expect(
          (
            await failure(
              c,
              `insert into govtrail.field_change (tenant_id, entry_id, field, direction)
               select 'acme', id, 'forged', 'changed' from unnest($1::text[]) id`,
              [[stored, '2zzzzzzzzzzzzzzzzzzzzzzzzzz']],
            )
          )?.code,
        ).toBe('23503');
        expect(await orphans(c)).toEqual({ history_annotation: 0, settings_snapshot: 0, field_change: 0 });
        // And the entry of a child row cannot go (append-only: 42501 before any check).
        expect(
          (await failure(c, `delete from govtrail.history_entry where entry_id = $1`, [stored]))?.code,
        ).toBe('42501');
      });
    }
  });

  it('the COPY a run writes with is checked too: a batch whose child row lacks its entry fails whole', async () => {
    h = await createHarness({ entries: 10, seed: 22 });
    expect((await h.sync()).status).toBe('succeeded');
    const entries = h.sandbox.history.entries() as Array<{ metadata: { id: string } }>;
    const stored = entries[0]?.metadata.id as string;
    const copy = (ids: string[]) => ({
      table: 'govtrail.history_annotation',
      columns: ['tenant_id', 'entry_id', 'ordinal', 'kind'],
      rows: encodeCopyRows(ids.map((id) => ['acme', id, 77, 'TICKET'])),
    });
    const err = await h.database
      .withSession((s) => s.transaction().execute((trx) => copyTables(trx, [copy([stored, 'not-stored'])])))
      .then(
        () => undefined,
        (e: unknown) => e as { code?: string },
      );
    expect(err?.code).toBe('23503');
    // The same COPY with only stored entries goes in.
    expect(
      await h.database.withSession((s) =>
        s.transaction().execute((trx) => copyTables(trx, [copy([stored])])),
      ),
    ).toEqual([1]);
    expect(await asClient(h.testDb.url as string, orphans)).toEqual({
      history_annotation: 0,
      settings_snapshot: 0,
      field_change: 0,
    });
  });
});
