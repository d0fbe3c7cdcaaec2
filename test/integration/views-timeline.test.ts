/**
 * The analyst views of sql/0003_views.sql against a crafted sandbox history with explicit times:
 * the SCD-2 timeline and its HARD_DELETE handling, settings_as_of at exact boundaries,
 * change_log against its tables, changes_without_ticket, and the govtrail_reader role.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SandboxEntry } from '../../src/sandbox/index.js';
import { findSettingsAsOf } from '../../src/store/read/views.js';
import { createHarness, type Harness } from '../helpers/harness.js';

let h: Harness;
const ids: Record<string, string> = {};
const idOf = (e: SandboxEntry) => (e.metadata as { id: string }).id;

const T = {
  create: '2025-03-01T10:00:00Z',
  loosen: '2025-03-02T10:00:00.123456Z',
  delete: '2025-03-03T10:00:00Z',
  recreate: '2025-03-04T10:00:00Z',
  workflow: '2025-03-05T10:00:00Z',
  noSnapshot: '2025-03-06T10:00:00Z',
};

beforeAll(async () => {
  h = await createHarness({ entries: 0 });
  const hist = h.sandbox.history;
  ids['create'] = idOf(
    hist.appendEntry({ at: T.create, changeKind: 'CHANGE_KIND_CREATE', set: { requireToolApproval: true } }),
  );
  ids['loosen'] = idOf(
    hist.appendEntry({
      at: T.loosen,
      annotations: [
        { kind: 'ANNOTATION_KIND_TICKET', rawValue: 'SEC-1', displayUrl: 'https://tickets.example/SEC-1' },
        { kind: 'ANNOTATION_KIND_REASON', rawValue: 'pilot' },
      ],
      set: { requireToolApproval: false },
    }),
  );
  ids['delete'] = idOf(
    hist.appendEntry({ at: T.delete, changeKind: 'CHANGE_KIND_HARD_DELETE', annotations: [] }),
  );
  ids['recreate'] = idOf(
    hist.appendEntry({
      at: T.recreate,
      changeKind: 'CHANGE_KIND_CREATE',
      set: { requireToolApproval: true },
    }),
  );
  ids['workflow'] = idOf(
    hist.appendEntry({
      at: T.workflow,
      annotations: [{ kind: 'ANNOTATION_KIND_WORKFLOW' }],
      set: { auditVerbosity: 'AUDIT_VERBOSITY_MINIMAL' },
    }),
  );
  ids['noSnapshot'] = idOf(hist.appendEntry({ at: T.noSnapshot, snapshot: null, annotations: [] }));
  expect((await h.sync()).status).toBe('succeeded');
});
afterAll(async () => {
  await h?.close();
});

interface Row {
  entry_id: string;
  valid_from: Date;
  valid_to: Date | null;
  is_current: boolean;
  is_deleted: boolean;
  require_tool_approval: boolean | null;
  tickets: string[];
  reasons: string[];
}

async function timeline(): Promise<Row[]> {
  const { rows } = await sql<Row>`
    select entry_id, valid_from, valid_to, is_current, is_deleted, require_tool_approval, tickets, reasons
    from govtrail.settings_timeline where tenant_id = 'acme' order by valid_from, entry_id`.execute(
    h.database.db,
  );
  return rows;
}

describe('settings_timeline', () => {
  it('has one row per entry with a snapshot or a HARD_DELETE, and none for an entry without either', async () => {
    const rows = await timeline();
    expect(rows.map((r) => r.entry_id)).toEqual([
      ids['create'],
      ids['loosen'],
      ids['delete'],
      ids['recreate'],
      ids['workflow'],
    ]);
  });

  it('is contiguous and never overlaps: each valid_to is the next valid_from; only the last is open', async () => {
    const rows = await timeline();
    for (let i = 0; i + 1 < rows.length; i++) {
      expect(rows[i]?.valid_to?.getTime()).toBe(rows[i + 1]?.valid_from.getTime());
      expect(rows[i]?.is_current).toBe(false);
    }
    expect(rows.at(-1)?.valid_to).toBeNull();
    expect(rows.at(-1)?.is_current).toBe(true);
    // And in SQL, at microsecond precision (JavaScript dates stop at milliseconds).
    const { rows: gaps } = await sql<{ n: number }>`
      select count(*)::int as n from (
        select valid_to, lead(valid_from) over (order by valid_from, entry_id) as next_from
        from govtrail.settings_timeline where tenant_id = 'acme') x
      where valid_to is distinct from next_from`.execute(h.database.db);
    expect(gaps[0]?.n).toBe(0);
  });

  it('marks the HARD_DELETE period with is_deleted and no settings', async () => {
    const del = (await timeline()).find((r) => r.entry_id === ids['delete']);
    expect(del).toMatchObject({
      is_deleted: true,
      require_tool_approval: null,
      valid_to: new Date(T.recreate),
    });
  });

  it('carries tickets and reasons', async () => {
    const loosen = (await timeline()).find((r) => r.entry_id === ids['loosen']);
    expect(loosen).toMatchObject({ tickets: ['SEC-1'], reasons: ['pilot'], require_tool_approval: false });
  });
});

describe('settings_as_of', () => {
  const asOf = async (at: string) =>
    (
      await sql<{ entry_id: string; is_deleted: boolean; valid_to: Date | null }>`
        select entry_id, is_deleted, valid_to from govtrail.settings_as_of('acme', ${at}::timestamptz)`.execute(
        h.database.db,
      )
    ).rows;

  it('returns no row before the first entry', async () => {
    expect(await asOf('2025-03-01T09:59:59.999999Z')).toEqual([]);
  });

  it('returns the row that begins exactly at the time asked (valid_from is inclusive)', async () => {
    expect((await asOf(T.create))[0]?.entry_id).toBe(ids['create']);
    expect((await asOf(T.loosen))[0]?.entry_id).toBe(ids['loosen']);
  });

  it('returns the earlier row one microsecond before a change (valid_to is exclusive)', async () => {
    expect((await asOf('2025-03-02T10:00:00.123455Z'))[0]?.entry_id).toBe(ids['create']);
  });

  it('answers "deleted" after a HARD_DELETE and until the next CREATE', async () => {
    expect(await asOf('2025-03-03T12:00:00Z')).toEqual([
      { entry_id: ids['delete'], is_deleted: true, valid_to: new Date(T.recreate) },
    ]);
    expect((await asOf(T.recreate))[0]).toMatchObject({ entry_id: ids['recreate'], is_deleted: false });
  });

  it('agrees with the view at every boundary', async () => {
    const rows = await timeline();
    for (const r of rows) {
      const at = r.valid_from.toISOString();
      const { rows: viaView } = await sql<{ entry_id: string }>`
        select entry_id from govtrail.settings_timeline
        where tenant_id = 'acme' and valid_from <= ${at}::timestamptz and (valid_to is null or ${at}::timestamptz < valid_to)`.execute(
        h.database.db,
      );
      expect((await asOf(at)).map((x) => x.entry_id)).toEqual(viaView.map((x) => x.entry_id));
    }
  });

  it('is what `govtrail settings --as-of` reads, intervals in the wire form', async () => {
    const row = await findSettingsAsOf(h.database.db, 'acme', new Date('2025-03-05T12:00:00Z'));
    expect(row?.entryId).toBe(ids['workflow']);
    expect(row?.settings['audit_verbosity']).toBe('AUDIT_VERBOSITY_MINIMAL');
    for (const k of ['discovery_interval', 'inactivity_close_after']) {
      const v = row?.settings[k];
      if (v !== null) expect(v).toMatch(/^-?\d+(\.\d+)?s$/);
    }
  });
});

describe('settings_current', () => {
  it('is the newest timeline row, not deleted', async () => {
    const { rows } = await sql<{ entry_id: string; is_deleted: boolean }>`
      select entry_id, is_deleted from govtrail.settings_current where tenant_id = 'acme'`.execute(
      h.database.db,
    );
    expect(rows).toEqual([{ entry_id: ids['workflow'], is_deleted: false }]);
  });
});

describe('change_log and changes_without_ticket', () => {
  it('change_log is field_change joined with its entry and ticket annotations, row for row', async () => {
    const { rows: viaView } = await sql<Record<string, unknown>>`
      select tenant_id, entry_id, field, old_value, new_value, direction, changed_at, actor_kind, actor_user_id, tickets
      from govtrail.change_log order by changed_at, entry_id, field`.execute(h.database.db);
    const { rows: viaTables } = await sql<Record<string, unknown>>`
      select f.tenant_id, f.entry_id, f.field, f.old_value, f.new_value, f.direction, e.created_at as changed_at,
             e.actor_kind, e.actor_user_id,
             array(select a.display_value from govtrail.history_annotation a
                   where a.tenant_id = f.tenant_id and a.entry_id = f.entry_id and a.kind = 'ANNOTATION_KIND_TICKET'
                   order by a.ordinal) as tickets
      from govtrail.field_change f join govtrail.history_entry e using (tenant_id, entry_id)
      order by e.created_at, f.entry_id, f.field`.execute(h.database.db);
    expect(viaView.length).toBeGreaterThan(0);
    expect(viaView).toEqual(viaTables);
  });

  it('lists entries without a ticket, leaving out those annotated WORKFLOW or AUTOMATION', async () => {
    const { rows } = await sql<{ entry_id: string }>`
      select entry_id from govtrail.changes_without_ticket where tenant_id = 'acme' order by changed_at, entry_id`.execute(
      h.database.db,
    );
    expect(rows.map((r) => r.entry_id)).toEqual([ids['delete'], ids['noSnapshot']]);
  });
});

describe('govtrail_reader', () => {
  it('reads every view and settings_as_of, but no table', async () => {
    await h.database.withSession(async (s) => {
      await sql`set role govtrail_reader`.execute(s);
      try {
        for (const v of [
          'settings_timeline',
          'settings_current',
          'change_log',
          'changes_without_ticket',
          'alert_log',
          'exporter_health',
        ]) {
          await sql`select * from ${sql.table(`govtrail.${v}`)} limit 1`.execute(s);
        }
        const { rows } = await sql<{
          entry_id: string;
        }>`select entry_id from govtrail.settings_as_of('acme', now())`.execute(s);
        expect(rows.length).toBe(1);
        await expect(sql`select 1 from govtrail.history_entry limit 1`.execute(s)).rejects.toThrow(
          /permission denied/,
        );
      } finally {
        await sql`reset role`.execute(s);
      }
    });
  });
});
