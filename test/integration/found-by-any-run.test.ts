/**
 * Found by any run (docs/design/integrity.md; docs/design/sync.md S12), against the sandbox over real sockets
 * and a real database, with small pages on a sparse history (a change every other day), where a sync's first
 * page reaches far behind `checkpoint − lookback`:
 * - an entry slipped in 3 days behind the checkpoint is stored by the next sync and recorded there
 *   as `backdated` with AIGOV-018, in that run's transaction (a finding that cannot be written
 *   fails the run: the entry is not kept without it); a later reconcile and sync add nothing;
 * - one id served twice with different contents is recorded as `conflicting_ids` with AIGOV-018
 *   (one version stored, the other in source_raw), in a sync and in a reconcile alike; reconcile
 *   exits 1 while the source serves it so, and a second reconcile records nothing new;
 * - the same id served twice with the same content stays a harmless duplicate.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createAlerting } from '../../src/app/alerting.js';
import { reconcileTenant } from '../../src/app/tenant-run.js';
import { runCli } from '../../src/cli.js';
import { contentHash } from '../../src/core/normalise/canonical.js';
import type { SandboxEntry } from '../../src/sandbox/index.js';
import { runSync } from '../../src/sync/run.js';
import { alertRows, appendSteps, DAY, idOf } from '../helpers/alerts.js';
import { createHarness, type Harness } from '../helpers/harness.js';

let h: Harness | undefined;
afterEach(async () => {
  vi.unstubAllEnvs();
  vi.restoreAllMocks();
  await h?.close();
  h = undefined;
});

/** Pages of 5 and the default 15-minute lookback: one page spans ten days of this history. */
const TENANT = { pageSize: 5, lookbackMs: 15 * 60_000 };

interface Row {
  entry_id: string;
  kind: string;
  run_id: number;
  stored_sha256: string | null;
  source_sha256: string | null;
  source_raw: SandboxEntry | null;
}

async function discrepancies(x: Harness): Promise<Row[]> {
  const { rows } = await sql<Row>`
    select entry_id, kind, run_id::int as run_id, stored_sha256, source_sha256, source_raw
    from govtrail.source_discrepancy order by discrepancy_id`.execute(x.database.db);
  return rows;
}

async function storedEntry(x: Harness, id: string): Promise<{ raw: unknown; run_id: number } | undefined> {
  const { rows } = await sql<{ raw: unknown; run_id: number }>`
    select raw, run_id::int as run_id from govtrail.history_entry where entry_id = ${id}`.execute(
    x.database.db,
  );
  return rows[0];
}

function reconcile(x: Harness) {
  return reconcileTenant({
    database: x.database,
    config: x.config,
    logger: x.logger,
    tenant: x.tenant(TENANT),
    trigger: 'cli',
    alerting: createAlerting(x.config, x.logger, x.database),
  });
}

const hex = (raw: unknown) => contentHash(raw).toString('hex');

/**
 * A sync of `listing` as the source would serve it (newest first), in pages of `size` entries,
 * written in batches of `size`.
 */
function syncListing(x: Harness, listing: readonly SandboxEntry[], size: number) {
  return runSync({
    database: x.database,
    source: {
      async *listHistory() {
        for (let i = 0; i < listing.length; i += size)
          yield {
            entries: listing.slice(i, i + size),
            nextPageToken: i + size < listing.length ? 't' : '',
            index: i / size,
          };
      },
      stats: { retries: 0, historyRequests: 1 },
    },
    logger: x.logger,
    tenantId: 'acme',
    trigger: 'cli',
    pageSize: 100,
    lookbackMs: TENANT.lookbackMs,
    maxPages: 100,
    batchSize: size,
  });
}

/** A sparse history: 30 changes, two days apart, synced once. */
async function sparse(seed: number): Promise<Harness> {
  const x = await createHarness({ entries: 0, seed });
  appendSteps(
    x.sandbox,
    Array.from({ length: 30 }, () => ({ after: 2 * DAY })),
  );
  const first = await x.sync({ tenant: TENANT });
  expect(first.status).toBe('succeeded');
  expect(first.counters.entriesInserted).toBe(30);
  return x;
}

/** createdAt of the newest entry served (the checkpoint after a sync), in epoch ms. */
function newestMs(x: Harness): number {
  return Date.parse((x.sandbox.history.entries()[0] as SandboxEntry).metadata?.createdAt as string);
}

describe('a backdated entry on a page a sync reads anyway', () => {
  it('is stored and recorded as backdated with AIGOV-018 by that sync, once; reconcile adds nothing', async () => {
    h = await sparse(191);
    const x = h;
    const slipped = x.sandbox.history.backdate({
      at: new Date(newestMs(x) - 3 * DAY * 1000).toISOString(),
      set: { requireToolApproval: false },
    });
    const id = idOf(slipped);
    // The first page of 5 reaches 8 days back: the entry is on it, far behind checkpoint − lookback.
    const top = (x.sandbox.history.entries() as SandboxEntry[]).slice(0, TENANT.pageSize).map(idOf);
    expect(top).toContain(id);

    const run = await x.sync({ tenant: TENANT });
    expect(run.status).toBe('succeeded');
    expect(run.counters.pagesFetched).toBe(1);
    expect(run.counters.entriesInserted).toBe(1);
    expect(run.findings).toBe(1);
    // Recorded by the run that stored it: the entry and the finding share the run (one transaction).
    expect(await discrepancies(x)).toEqual([
      expect.objectContaining({ entry_id: id, kind: 'backdated', run_id: run.runId, stored_sha256: null }),
    ]);
    expect((await discrepancies(x))[0]?.source_sha256).toBe(hex(slipped));
    expect((await storedEntry(x, id))?.run_id).toBe(run.runId);
    const alerts = (await alertRows(x.database.db, run.runId)).filter((a) => a.rule_id === 'AIGOV-018');
    expect(alerts.map((a) => [a.entry_id, a.severity])).toEqual([[id, 'high']]);

    // Found once: the next sync and a reconcile record and alert nothing more, and agree.
    const again = await x.sync({ tenant: TENANT });
    expect(again.findings).toBe(0);
    const rec = await reconcile(x);
    expect(rec.status).toBe('succeeded');
    expect(rec.integrity).toMatchObject({ entriesBackdated: 0, entriesNew: 0, entriesConflicting: 0 });
    expect(await discrepancies(x)).toHaveLength(1);
    expect(await alertRows(x.database.db, rec.runId)).toEqual([]);
  });

  it('is never stored without its finding: a finding that cannot be written fails the run, the next run flags it', async () => {
    h = await sparse(197);
    const x = h;
    const slipped = x.sandbox.history.backdate({ at: new Date(newestMs(x) - 3 * DAY * 1000).toISOString() });
    const id = idOf(slipped);
    // One statement per call: the embedded database prepares each, and a prepared statement holds one.
    await sql
      .raw(`
      create function govtrail.test_no_finding() returns trigger language plpgsql as $$
      begin raise exception 'injected failure on %', tg_table_name; end $$`)
      .execute(x.database.db);
    await sql
      .raw(`create trigger test_no_finding before insert on govtrail.source_discrepancy
        for each row execute function govtrail.test_no_finding()`)
      .execute(x.database.db);
    const failed = await x.sync({ tenant: TENANT });
    await sql.raw('drop trigger test_no_finding on govtrail.source_discrepancy').execute(x.database.db);
    expect(failed.status).toBe('failed');
    expect(await storedEntry(x, id)).toBeUndefined();
    const run = await x.sync({ tenant: TENANT });
    expect(run.status).toBe('succeeded');
    expect((await discrepancies(x)).map((d) => [d.entry_id, d.kind, d.run_id])).toEqual([
      [id, 'backdated', run.runId],
    ]);
    expect((await storedEntry(x, id))?.run_id).toBe(run.runId);
  });

  it('is no discrepancy inside the lookback window: a late arrival is simply stored', async () => {
    h = await sparse(192);
    const x = h;
    x.sandbox.history.insertLate({ at: new Date(newestMs(x) - 5 * 60_000).toISOString() });
    const run = await x.sync({ tenant: TENANT });
    expect(run.counters.entriesInserted).toBe(1);
    expect(await discrepancies(x)).toEqual([]);
  });
});

describe('one id served twice with different contents', () => {
  it('is recorded as conflicting_ids with AIGOV-018 by the sync that stores it, both versions kept', async () => {
    h = await sparse(193);
    const x = h;
    const [entry] = appendSteps(x.sandbox, [{ after: DAY, set: { requireToolApproval: true } }]);
    const id = idOf(entry as SandboxEntry);
    const other = x.sandbox.history.duplicate(id, { set: { requireToolApproval: false } });

    const run = await x.sync({ tenant: TENANT });
    expect(run.status).toBe('succeeded');
    expect(run.counters.entriesInserted).toBe(1);
    const rows = await discrepancies(x);
    expect(rows).toEqual([
      expect.objectContaining({ entry_id: id, kind: 'conflicting_ids', run_id: run.runId }),
    ]);
    // One version stored, the other in the discrepancy row: nothing dropped.
    const held = (await storedEntry(x, id))?.raw;
    const versions = [hex(entry), hex(other)];
    expect(rows[0]?.stored_sha256).toBe(hex(held));
    expect(versions).toContain(rows[0]?.stored_sha256);
    expect(versions).toContain(rows[0]?.source_sha256);
    expect(rows[0]?.source_sha256).not.toBe(rows[0]?.stored_sha256);
    expect(hex(rows[0]?.source_raw)).toBe(rows[0]?.source_sha256);
    const alerts = (await alertRows(x.database.db, run.runId)).filter((a) => a.rule_id === 'AIGOV-018');
    expect(alerts.map((a) => [a.entry_id, a.severity])).toEqual([[id, 'high']]);
    expect(alerts[0]?.context.changes).toEqual([expect.objectContaining({ field: 'require_tool_approval' })]);
    expect(x.logs.join('')).toMatch(/conflicting_ids/);

    // Served so again (inside the lookback window): nothing new recorded or alerted.
    const again = await x.sync({ tenant: TENANT });
    expect(again.findings).toBe(0);
    expect(await discrepancies(x)).toHaveLength(1);
  });

  it('makes reconcile record it and exit 1 while the source serves it, with nothing new the second time', async () => {
    h = await sparse(194);
    const x = h;
    // Stored first, then served twice, far behind any sync's window: only reconcile reads it.
    const id = idOf((x.sandbox.history.entries() as SandboxEntry[])[20] as SandboxEntry);
    const other = x.sandbox.history.duplicate(id);

    const rec = await reconcile(x);
    expect(rec.status).toBe('succeeded');
    expect(rec.integrity).toMatchObject({ entriesConflicting: 1, entriesBackdated: 0, entriesNew: 0 });
    expect(rec.counters.entriesChanged).toBe(0);
    const rows = await discrepancies(x);
    expect(rows).toEqual([
      expect.objectContaining({
        entry_id: id,
        kind: 'conflicting_ids',
        run_id: rec.runId,
        source_sha256: hex(other),
        stored_sha256: hex((await storedEntry(x, id))?.raw),
      }),
    ]);
    expect((await alertRows(x.database.db, rec.runId)).map((a) => [a.rule_id, a.entry_id])).toEqual([
      ['AIGOV-018', id],
    ]);
    const { rows: ledger } = await sql<{ entries_conflicting: number }>`
      select entries_conflicting from govtrail.sync_run where run_id = ${rec.runId}`.execute(x.database.db);
    expect(ledger[0]?.entries_conflicting).toBe(1);
    const { rows: health } = await sql<{ open_conflicting_ids: string }>`
      select open_conflicting_ids from govtrail.exporter_health`.execute(x.database.db);
    expect(Number(health[0]?.open_conflicting_ids)).toBe(1);

    // The command: exit 1 while the source serves the id twice, and no second row.
    vi.stubEnv('GOVTRAIL_BASE_URL', x.sandbox.baseUrl);
    vi.stubEnv('GOVTRAIL_CLIENT_ID', x.sandbox.credentials.secret.clientId);
    vi.stubEnv('GOVTRAIL_CLIENT_SECRET', x.sandbox.credentials.secret.clientSecret);
    vi.stubEnv('GOVTRAIL_PAGE_SIZE', String(TENANT.pageSize));
    vi.stubEnv('GOVTRAIL_TENANT', 'acme');
    vi.stubEnv('LOG_LEVEL', 'silent');
    if (x.testDb.url !== undefined) vi.stubEnv('DATABASE_URL', x.testDb.url);
    else vi.stubEnv('GOVTRAIL_DATA_DIR', mkdtempSync(path.join(tmpdir(), 'govtrail-data-')));
    const out: string[] = [];
    vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
      out.push(String(chunk));
      return true;
    });
    const code = await runCli(['node', 'govtrail', 'reconcile']);
    vi.restoreAllMocks();
    expect(code).toBe(1);
    expect(out.join('')).toMatch(/backdated\s+conflicting[\s\S]*differs/);
    expect(await discrepancies(x)).toHaveLength(1);
  });

  it('is recorded when its two versions fall into different write batches of one listing', async () => {
    h = await createHarness({ entries: 0, seed: 196 });
    const x = h;
    appendSteps(
      x.sandbox,
      Array.from({ length: 6 }, () => ({ after: 2 * DAY })),
    );
    const served = x.sandbox.history.entries() as SandboxEntry[];
    const id = idOf(served[3] as SandboxEntry);
    const other = x.sandbox.history.duplicate(id);
    // The listing as the source serves it, newest first, in pages of 2 written in batches of 2: the
    // copies are written apart, the second compared with what the first batch stored.
    const listing = x.sandbox.history.entries() as SandboxEntry[];
    const positions = listing.flatMap((e, i) => (idOf(e) === id ? [i] : []));
    expect(positions).toHaveLength(2);
    expect(Math.floor((positions[0] as number) / 2)).not.toBe(Math.floor((positions[1] as number) / 2));
    const run = await syncListing(x, listing, 2);
    expect(run.status).toBe('succeeded');
    expect(run.counters.entriesInserted).toBe(6);
    expect(run.counters.entriesChanged).toBe(0);
    const rows = await discrepancies(x);
    expect(rows.map((r) => [r.entry_id, r.kind])).toEqual([[id, 'conflicting_ids']]);
    const versions = [hex(served[3]), hex(other)];
    expect(versions).toContain(rows[0]?.source_sha256);
    expect(versions).toContain(rows[0]?.stored_sha256);
    expect(rows[0]?.source_sha256).not.toBe(rows[0]?.stored_sha256);
  });

  // The writer asks the database for a batch's stored versions before the previous batch is written,
  // and takes that batch's own entries from memory: a copy one batch later is found in memory, two
  // or three batches later in the database. Each way the outcome is the same.
  for (const gap of [1, 2, 3])
    for (const same of [true, false])
      it(`served again ${gap} batch(es) later with ${same ? 'the same' : 'other'} content: ${same ? 'stored once, nothing recorded' : 'conflicting_ids'}`, async () => {
        h = await createHarness({ entries: 0, seed: 197 });
        const x = h;
        appendSteps(
          x.sandbox,
          Array.from({ length: 6 }, () => ({ after: 2 * DAY })),
        );
        const listing = [...(x.sandbox.history.entries() as SandboxEntry[])];
        const first = listing[1] as SandboxEntry;
        const copy = same ? structuredClone(first) : { ...structuredClone(first), servedTwice: true };
        listing.splice(1 + gap, 0, copy);
        const run = await syncListing(x, listing, 1);
        expect(run.status).toBe('succeeded');
        expect(run.counters.entriesInserted).toBe(6);
        expect(await storedEntry(x, idOf(first))).toMatchObject({ raw: first });
        const rows = await discrepancies(x);
        if (same) expect(rows).toEqual([]);
        else {
          expect(rows.map((r) => [r.entry_id, r.kind])).toEqual([[idOf(first), 'conflicting_ids']]);
          expect(rows[0]).toMatchObject({ stored_sha256: hex(first), source_sha256: hex(copy) });
        }
      });

  // A backfill encodes a batch as its pages come while every entry of it is new for certain; a
  // batch holding a copy is classified after it is sealed instead ("late"), and its new entries are
  // then found in memory by the next batch as the early ones are.
  it('a copy of an entry stored by a batch classified late (itself holding a copy) is found in memory too', async () => {
    h = await createHarness({ entries: 0, seed: 198 });
    const x = h;
    appendSteps(
      x.sandbox,
      Array.from({ length: 6 }, () => ({ after: 2 * DAY })),
    );
    const [e0, e1, e2, e3, e4, e5] = x.sandbox.history.entries() as SandboxEntry[];
    const other = { ...structuredClone(e2 as SandboxEntry), servedTwice: true };
    // Batches of 2: [e0 e1] early, [e0 e2] late, [e2' e3] late (e2 from the batch before, in memory).
    const listing = [e0, e1, structuredClone(e0), e2, other, e3, e4, e5] as SandboxEntry[];
    const run = await syncListing(x, listing, 2);
    expect(run.status).toBe('succeeded');
    expect(run.counters.entriesInserted).toBe(6);
    const rows = await discrepancies(x);
    expect(rows.map((r) => [r.entry_id, r.kind])).toEqual([[idOf(e2 as SandboxEntry), 'conflicting_ids']]);
    expect(rows[0]).toMatchObject({ stored_sha256: hex(e2), source_sha256: hex(other) });
  });

  it('served twice with the same content is a harmless duplicate: stored once, nothing recorded', async () => {
    h = await sparse(195);
    const x = h;
    const [entry] = appendSteps(x.sandbox, [{ after: DAY }]);
    const id = idOf(entry as SandboxEntry);
    x.sandbox.history.duplicate(id, { metadata: {} });
    const run = await x.sync({ tenant: TENANT });
    expect(run.counters.entriesInserted).toBe(1);
    expect(run.findings).toBe(0);
    const rec = await reconcile(x);
    expect(rec.integrity).toMatchObject({ entriesConflicting: 0 });
    expect(await discrepancies(x)).toEqual([]);
  });
});
