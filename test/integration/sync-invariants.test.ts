/**
 * The invariants of docs/design/sync.md, one test (or more) each, against real PostgreSQL and the sandbox
 * over real sockets.
 */
import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/store/database.js';
import { runSync } from '../../src/sync/run.js';
import { NEEDS_SERVER, onServer } from '../helpers/database.js';
import { createHarness, type Harness } from '../helpers/harness.js';
import { compareWithTruth, partialEntries, storedState } from '../helpers/state.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

describe('S1 complete, S9 backfill', () => {
  it.each([10, 100])(
    'backfills 3 000 entries with page size %i equal to the sandbox, row for row',
    async (pageSize) => {
      h = await createHarness({ entries: 3000, seed: 11 });
      const run = await h.sync({ tenant: { pageSize } });
      expect(run.status).toBe('succeeded');
      expect(run.isBackfill).toBe(true);
      expect(run.stopReason).toBe('end_of_history');
      expect(run.counters.pagesFetched).toBe(Math.ceil(3000 / pageSize));
      const state = await storedState(h.database, 'acme');
      expect(compareWithTruth(state, h.sandbox.history.entries())).toEqual([]);
      expect(state.entries.size).toBe(3000);
      // The checkpoint is the newest entry by time, which the feed serves first.
      const newest = (h.sandbox.history.entries()[0] as { metadata: { id: string } }).metadata.id;
      expect(state.checkpoint?.entry_id).toBe(newest);
    },
  );

  it('raises one digest alert for a backfill, not one per entry', async () => {
    h = await createHarness({ entries: 300, seed: 3 });
    await h.sync();
    const { rows } = await sql<{ rule_id: string; n: number }>`
      select rule_id, count(*)::int as n from govtrail.alert group by rule_id`.execute(h.database.db);
    expect(rows).toEqual([{ rule_id: 'AIGOV-016', n: 1 }]);
  });
});

describe('S4 idempotent', () => {
  it('a second run with nothing new inserts nothing, raises nothing and makes one history request', async () => {
    h = await createHarness({ entries: 500, seed: 5 });
    expect((await h.sync()).status).toBe('succeeded');
    const before = h.sandbox.stats.historyRequests;
    const again = await h.sync();
    expect(again.status).toBe('succeeded');
    expect(again.counters.entriesInserted).toBe(0);
    expect(again.alerts).toBe(0);
    expect(again.stopReason).toBe('checkpoint');
    expect(h.sandbox.stats.historyRequests - before).toBe(1);
  });

  it('picks up entries appended between runs, and only those', async () => {
    h = await createHarness({ entries: 400, seed: 6 });
    await h.sync();
    h.sandbox.history.append(37);
    const run = await h.sync();
    expect(run.counters.entriesInserted).toBe(37);
    expect(compareWithTruth(await storedState(h.database, 'acme'), h.sandbox.history.entries())).toEqual([]);
  });
});

/**
 * A progress callback that appends `count` entries once the first page is read: with offset paging
 * the later pages shift, and page 2 re-serves page 1's tail.
 */
function appendAfterFirstPage(x: Harness, count: number): (p: { pages: number }) => void {
  let appended = false;
  return (p) => {
    if (p.pages === 1 && !appended) {
      appended = true;
      x.sandbox.history.append(count);
    }
  };
}

describe('S2 no duplicates', () => {
  it('stores an entry served on two pages once, without error', async () => {
    h = await createHarness({ entries: 250, seed: 8, paging: 'offset' });
    const run = await h.sync({ tenant: { pageSize: 50 }, onProgress: appendAfterFirstPage(h, 5) });
    expect(run.status).toBe('succeeded');
    expect(run.counters.entriesFetched).toBeGreaterThan(run.counters.entriesInserted);
    const state = await storedState(h.database, 'acme');
    expect(state.entries.size).toBe(250);
    // The five appended mid-listing sit above the page already read: the next run gets them.
    const next = await h.sync({ tenant: { pageSize: 50 } });
    expect(next.counters.entriesInserted).toBe(5);
    expect(compareWithTruth(await storedState(h.database, 'acme'), h.sandbox.history.entries())).toEqual([]);
  });

  it('stores a new entry served on two pages once when the tenant has entries (no early encoding)', async () => {
    // A backfill encodes a page's entries as they come and catches a repeat by its id; a tenant
    // with entries sorts every batch's entries by id (groupServed) instead.
    h = await createHarness({ entries: 250, seed: 8, paging: 'offset' });
    const first = await h.sync({ tenant: { pageSize: 50 } });
    expect(first.status).toBe('succeeded');
    h.sandbox.history.append(200);
    const run = await h.sync({ tenant: { pageSize: 50 }, onProgress: appendAfterFirstPage(h, 5) });
    expect(run.status).toBe('succeeded');
    expect(run.counters.entriesInserted).toBe(200);
    expect(run.counters.entriesFetched).toBeGreaterThan(205);
    const next = await h.sync({ tenant: { pageSize: 50 } });
    expect(next.counters.entriesInserted).toBe(5);
    expect(compareWithTruth(await storedState(h.database, 'acme'), h.sandbox.history.entries())).toEqual([]);
  });
});

/**
 * Runs `body` with a trigger that fails every row statement on `table` matching `when`
 * (superuser, on the test database), and removes it afterwards.
 */
async function failingTrigger(
  x: Harness,
  table: string,
  timing: string,
  when: string,
  body: () => Promise<void>,
): Promise<void> {
  await sql
    .raw(`
    create or replace function govtrail.test_injected_failure() returns trigger language plpgsql as $$
    begin raise exception 'injected failure on %', tg_table_name; end $$;
    create trigger test_injected_failure ${timing} on ${table}
      for each row when (${when}) execute function govtrail.test_injected_failure();`)
    .execute(x.database.db);
  try {
    await body();
  } finally {
    await sql.raw(`drop trigger test_injected_failure on ${table}`).execute(x.database.db);
  }
}

describe('S3 atomic', () => {
  it('a 500 on page 4 fails the run without moving the checkpoint or keeping rows; the next run completes', async () => {
    h = await createHarness({ entries: 1000, seed: 9 });
    h.sandbox.faults.add({ kind: '500', afterRequests: 3, times: Number.POSITIVE_INFINITY });
    const failed = await h.sync();
    expect(failed.status).toBe('failed');
    expect(failed.error?.code).toBe('HTTP_ERROR');
    let state = await storedState(h.database, 'acme');
    expect(state.entries.size).toBe(0);
    expect(state.checkpoint).toBeUndefined();
    expect(state.runs.at(-1)).toMatchObject({ status: 'failed', error_code: 'HTTP_ERROR' });
    const { rows } = await sql<{ n: number }>`select count(*)::int as n from govtrail.alert`.execute(
      h.database.db,
    );
    expect(rows[0]?.n).toBe(0);

    h.sandbox.faults.clear();
    const ok = await h.sync();
    expect(ok.status).toBe('succeeded');
    state = await storedState(h.database, 'acme');
    expect(compareWithTruth(state, h.sandbox.history.entries())).toEqual([]);
  });

  it('an alert that cannot be written fails the whole run: no entry is kept without its alerts', async () => {
    h = await createHarness({ entries: 60, seed: 17 });
    const x = h;
    await x.sync();
    const before = await storedState(x.database, 'acme');
    x.sandbox.history.appendEntry({ set: { requireToolApproval: true } });
    x.sandbox.history.appendEntry({ set: { requireToolApproval: false }, annotations: [] });
    await failingTrigger(x, 'govtrail.alert', 'before insert', 'true', async () => {
      const failed = await x.sync();
      expect(failed.status).toBe('failed');
      expect(failed.error?.code).toBe('DATABASE');
      const after = await storedState(x.database, 'acme');
      expect(after.entries.size).toBe(before.entries.size);
      expect(after.checkpoint).toEqual(before.checkpoint);
      const { rows } = await sql<{ n: number }>`
        select count(*)::int as n from govtrail.field_change f
        where not exists (select 1 from govtrail.history_entry e where e.entry_id = f.entry_id)`.execute(
        x.database.db,
      );
      expect(rows[0]?.n).toBe(0);
    });
    const ok = await x.sync();
    expect(ok.status).toBe('succeeded');
    expect(ok.counters.entriesInserted).toBe(2);
    expect(ok.alerts).toBeGreaterThan(0);
  });

  it('a run that fails as it closes leaves the checkpoint, the entries and the alerts as they were', async () => {
    h = await createHarness({ entries: 60, seed: 18 });
    const x = h;
    await x.sync();
    const before = await storedState(x.database, 'acme');
    const alertsBefore = (
      await sql<{ n: number }>`select count(*)::int as n from govtrail.alert`.execute(x.database.db)
    ).rows[0]?.n;
    x.sandbox.history.appendEntry({ set: { requireToolApproval: true } });
    x.sandbox.history.appendEntry({ set: { requireToolApproval: false }, annotations: [] });
    // The ledger row is closed last, in the same transaction as the data and the checkpoint.
    await failingTrigger(x, 'govtrail.sync_run', 'before update', "new.status = 'succeeded'", async () => {
      const failed = await x.sync();
      expect(failed.status).toBe('failed');
      const after = await storedState(x.database, 'acme');
      expect(after.checkpoint).toEqual(before.checkpoint);
      expect(after.entries.size).toBe(before.entries.size);
      const alerts = (
        await sql<{ n: number }>`select count(*)::int as n from govtrail.alert`.execute(x.database.db)
      ).rows[0]?.n;
      expect(alerts).toBe(alertsBefore);
    });
    expect((await x.sync()).status).toBe('succeeded');
  });

  it('an incremental run that fails keeps the old checkpoint', async () => {
    h = await createHarness({ entries: 300, seed: 10 });
    await h.sync();
    const before = (await storedState(h.database, 'acme')).checkpoint;
    h.sandbox.history.append(250);
    h.sandbox.faults.add({ kind: '503', afterRequests: 1, times: Number.POSITIVE_INFINITY });
    const failed = await h.sync();
    expect(failed.status).toBe('failed');
    const state = await storedState(h.database, 'acme');
    expect(state.checkpoint).toEqual(before);
    expect(state.entries.size).toBe(300);
    expect(partialEntries(state)).toEqual([]);
  });
});

describe('S5 late arrivals', () => {
  it('stores an entry that appears behind the checkpoint inside the lookback window, and fixes the diff after it', async () => {
    h = await createHarness({ entries: 200, seed: 12 });
    await h.sync();
    const entries = h.sandbox.history.entries() as Array<{ metadata: { id: string; createdAt: string } }>;
    const newest = entries[0]?.metadata as { id: string; createdAt: string };
    const second = entries[1]?.metadata as { id: string; createdAt: string };
    // Between the two newest entries, within 15 minutes of the newest.
    const t = new Date(
      Math.max(Date.parse(newest.createdAt) - 5 * 60_000, Date.parse(second.createdAt) + 1000),
    );
    const late = h.sandbox.history.insertLate({
      at: t.toISOString(),
      set: { requireToolApproval: false, auditVerbosity: 'AUDIT_VERBOSITY_MINIMAL' },
    }) as {
      metadata: { id: string };
    };
    const run = await h.sync();
    expect(run.counters.entriesInserted).toBe(1);
    const state = await storedState(h.database, 'acme');
    expect(state.entries.has(late.metadata.id)).toBe(true);
    expect(compareWithTruth(state, h.sandbox.history.entries())).toEqual([]);

    // The diffs of the late entry and of the one after it are against their true predecessors.
    const { rows } = await sql<{ entry_id: string; field: string; new_value: unknown }>`
      select entry_id, field, new_value from govtrail.field_change
      where entry_id in (${late.metadata.id}, ${newest.id}) and field = 'audit_verbosity'`.execute(
      h.database.db,
    );
    const lateChange = rows.find((r) => r.entry_id === late.metadata.id);
    expect(lateChange?.new_value).toBe('AUDIT_VERBOSITY_MINIMAL');
    const newestSnapshot = (entries[0] as unknown as { snapshot?: { auditVerbosity?: string } }).snapshot;
    const after = rows.find((r) => r.entry_id === newest.id);
    if (newestSnapshot?.auditVerbosity !== 'AUDIT_VERBOSITY_MINIMAL')
      expect(after?.new_value).toBe(newestSnapshot?.auditVerbosity ?? null);
  });

  it('stores late arrivals that only the lookback makes it fetch: on pages 2 and 3, and in a second split by a page boundary', async () => {
    h = await createHarness({ entries: 50, seed: 16 });
    const hist = h.sandbox.history;
    const base = Date.parse('2031-05-01T12:00:00Z');
    const at = (ms: number) => new Date(ms).toISOString();
    // 45 entries 20 s apart (the newest 14 min 40 s after the oldest): with pages of 10, a
    // 15-minute lookback re-reads five pages. Entries 33–35 share one second: positions 9–11 from
    // the top, across the boundary of pages 1 and 2.
    for (let i = 0; i < 45; i++) {
      const sameSecond = i >= 33 && i <= 35;
      hist.appendEntry({
        at: at(sameSecond ? base + 33 * 20_000 + (i - 33) * 250 + 100 : base + i * 20_000),
      });
    }
    const first = await h.sync({ tenant: { pageSize: 10 } });
    expect(first.status).toBe('succeeded');

    const late = [
      // Into the second split by the page boundary.
      hist.insertLate({ at: at(base + 33 * 20_000 + 420), annotations: [] }),
      // Between entries 30 and 31 (about 14 from the top: page 2) and 19 and 20 (about 25: page 3).
      hist.insertLate({ at: at(base + 30 * 20_000 + 10_000), set: { discoveryInterval: '4242s' } }),
      hist.insertLate({ at: at(base + 19 * 20_000 + 10_000), annotations: [] }),
    ].map((e) => (e as { metadata: { id: string } }).metadata.id);
    const served = (hist.entries() as Array<{ metadata: { id: string } }>).map((e) => e.metadata.id);
    const pages = late.map((id) => Math.floor(served.indexOf(id) / 10) + 1);
    expect(pages[1]).toBe(2);
    expect(pages[2]).toBe(3);

    const run = await h.sync({ tenant: { pageSize: 10 } });
    expect(run.status).toBe('succeeded');
    expect(run.counters.entriesInserted).toBe(3);
    expect(run.counters.pagesFetched).toBe(5);
    const state = await storedState(h.database, 'acme');
    expect(compareWithTruth(state, hist.entries())).toEqual([]);
    // The entry after the page-2 arrival is now diffed against it.
    const successor = served[served.indexOf(late[1] as string) - 1] as string;
    const { rows } = await sql<{ old_value: unknown }>`
      select old_value from govtrail.field_change
      where entry_id = ${successor} and field = 'discovery_interval'`.execute(h.database.db);
    expect(rows).toEqual([{ old_value: '4242s' }]);
  });

  it('with GOVTRAIL_LOOKBACK=0 stops at the first entry at or before the checkpoint', async () => {
    h = await createHarness({ entries: 500, seed: 13 });
    await h.sync({ tenant: { lookbackMs: 0, pageSize: 10 } });
    const before = h.sandbox.stats.historyRequests;
    h.sandbox.history.append(3);
    const run = await h.sync({ tenant: { lookbackMs: 0, pageSize: 10 } });
    expect(run.counters.entriesInserted).toBe(3);
    expect(h.sandbox.stats.historyRequests - before).toBe(1);
  });
});

describe('S6 tolerant', () => {
  it('keeps unknown values and odd shapes, and rejects an entry without metadata.id while the run succeeds', async () => {
    h = await createHarness({ entries: 50, seed: 14 });
    h.sandbox.history.insertRaw({
      metadata: { createdAt: '2030-01-01T00:00:00Z', changeKind: 'CHANGE_KIND_PUT' },
      snapshot: {},
    });
    h.sandbox.history.appendEntry({
      changeKind: 'CHANGE_KIND_RESURRECT',
      actor: { kind: 'ACTOR_KIND_TIME_TRAVELLER' },
      annotations: [{ key: 'Weird Key!', kind: 'ANNOTATION_KIND_HOLOGRAM', rawValue: 'x' }],
      set: { auditVerbosity: 'AUDIT_VERBOSITY_TOTAL', brandNewField: { nested: [1, 2] } },
      extraMetadata: { shinyNewMetadata: true },
    });
    const run = await h.sync();
    expect(run.status).toBe('succeeded');
    expect(run.counters.entriesRejected).toBe(1);
    expect(run.counters.warnings).toBeGreaterThan(0);
    const { rows } = await sql<{ reason: string }>`select reason from govtrail.rejected_entry`.execute(
      h.database.db,
    );
    expect(rows).toEqual([{ reason: 'entry has no metadata.id' }]);
    const kinds = await sql<{ change_kind: string; extra: unknown }>`
      select e.change_kind, s.extra_fields as extra from govtrail.history_entry e
      join govtrail.settings_snapshot s using (tenant_id, entry_id)
      where e.change_kind = 'CHANGE_KIND_RESURRECT'`.execute(h.database.db);
    expect(kinds.rows[0]?.extra).toMatchObject({ brandNewField: { nested: [1, 2] } });
    // Served again on the next run (inside the lookback window), the rejected entry is kept once.
    await h.sync();
    const again = await sql<{ n: number }>`select count(*)::int as n from govtrail.rejected_entry`.execute(
      h.database.db,
    );
    expect(again.rows[0]?.n).toBe(1);
  });
});

describe('S7 terminates', () => {
  it('fails with PAGING_LOOP on a repeated page token', async () => {
    h = await createHarness({ entries: 300, seed: 15 });
    h.sandbox.faults.add({ kind: 'repeat-token', afterRequests: 1 });
    const run = await h.sync({ tenant: { pageSize: 10 } });
    expect(run.status).toBe('failed');
    expect(run.error?.code).toBe('PAGING_LOOP');
  });

  it('fails with PAGE_LIMIT past the page safety limit', async () => {
    h = await createHarness({ entries: 300, seed: 15 }, { GOVTRAIL_MAX_PAGES: '5' });
    const run = await h.sync({ tenant: { pageSize: 10 } });
    expect(run.status).toBe('failed');
    expect(run.error?.code).toBe('PAGE_LIMIT');
    expect((await storedState(h.database, 'acme')).entries.size).toBe(0);
  });
});

describe('S8 single runner', () => {
  it.skipIf(!onServer)(
    `two concurrent runs: one does the work, the other records skipped (${NEEDS_SERVER})`,
    async () => {
      h = await createHarness({ entries: 2000, seed: 16 });
      // A second pool is a second client as far as PostgreSQL is concerned.
      const other = await openDatabase({ url: h.testDb.url as string });
      try {
        h.sandbox.faults.add({ kind: 'slow', delayMs: 300, times: 2 });
        const mk = (database: typeof other) => {
          const run = (h as Harness).runOptions({ database, trigger: 'schedule' });
          return runSync(run.options).finally(run.close);
        };
        const [a, b] = await Promise.all([mk(h.database), mk(other)]);
        expect([a.status, b.status].sort()).toEqual(['skipped', 'succeeded']);
        const state = await storedState(h.database, 'acme');
        expect(state.entries.size).toBe(2000);
        expect(state.runs.map((r) => r.status).sort()).toEqual(['skipped', 'succeeded']);
      } finally {
        await other.close();
      }
    },
  );
});

describe('S11 secrets', () => {
  it('never writes the client secret, the key secret, an assertion or a token to logs or tables', async () => {
    h = await createHarness({ entries: 120, seed: 17 });
    const keyCred = h.sandbox.credentials.key;
    const secretCred = h.sandbox.credentials.secret;
    await h.sync({ tenant: { clientId: keyCred.clientId, clientSecret: keyCred.clientSecret } });
    h.sandbox.expireTokens();
    h.sandbox.history.append(2);
    await h.sync({ tenant: { clientId: secretCred.clientId, clientSecret: secretCred.clientSecret } });
    h.sandbox.faults.add({ kind: '400', body: '{"code":3,"message":"nope"}' });
    await h.sync();

    const jwk = JSON.parse(
      Buffer.from(keyCred.clientSecret.split(':').at(-1) as string, 'base64url').toString(),
    ) as { d: string };
    const tokens = h.sandbox.issuedTokens();
    expect(tokens.length).toBeGreaterThan(1);
    const needles = [
      secretCred.clientSecret,
      keyCred.clientSecret,
      jwk.d,
      ...tokens,
      ...h.sandbox.receivedAssertions(),
    ];
    const logText = h.logs.join('');
    const { rows } = await sql<{ t: string }>`
      select string_agg(x::text, ' ') as t from (
        select to_jsonb(r)::text as x from govtrail.sync_run r
        union all select to_jsonb(e)::text from govtrail.history_entry e
        union all select to_jsonb(a)::text from govtrail.history_annotation a
        union all select to_jsonb(c)::text from govtrail.checkpoint c
        union all select to_jsonb(a)::text from govtrail.alert a
        union all select to_jsonb(r)::text from govtrail.rejected_entry r) all_rows`.execute(h.database.db);
    const tableText = rows[0]?.t ?? '';
    expect(tableText.length).toBeGreaterThan(1000);
    for (const needle of needles) {
      expect(needle.length).toBeGreaterThan(8);
      expect(logText.includes(needle)).toBe(false);
      expect(tableText.includes(needle)).toBe(false);
    }
  });
});
