/**
 * The served digest (docs/design/integrity.md, "The served digest"; sql/0041): each stored entry
 * keeps the sha256 of its bytes as served, a re-served entry with the same bytes is known
 * unchanged by it alone, other bytes with the same content still match by content hash, and
 * `reconcile --deep` (RunOptions.deep) never reads it.
 */
import { createHash } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reconcileTenant } from '../../src/app/tenant-run.js';
import type { SandboxEntry } from '../../src/sandbox/index.js';
import { listDiscrepancies } from '../../src/store/read/discrepancies.js';
import { createHarness, type Harness } from '../helpers/harness.js';

const TENANT = { pageSize: 10 };
let h: Harness;

beforeAll(async () => {
  h = await createHarness({ entries: 120, seed: 41 });
  const backfill = await h.sync({ tenant: TENANT });
  expect(backfill.status).toBe('succeeded');
});
afterAll(async () => {
  await h?.close();
});

function reconcile(deep = false) {
  return reconcileTenant({
    database: h.database,
    config: h.config,
    logger: h.logger,
    tenant: h.tenant(TENANT),
    trigger: 'cli',
    ...(deep ? { deep: true } : {}),
  });
}

async function storedDigest(id: string): Promise<string | null> {
  const { rows } = await sql<{ d: string | null }>`
    select encode(served_sha256, 'hex') as d from govtrail.history_entry where entry_id = ${id}`.execute(
    h.database.db,
  );
  return rows[0]?.d ?? null;
}

/** As the owner, past the append-only trigger: what only tampering can do. */
async function tamper(statement: ReturnType<typeof sql>): Promise<void> {
  await h.database.db.transaction().execute(async (trx) => {
    await sql`set local session_replication_role = replica`.execute(trx);
    await statement.execute(trx);
  });
}

describe('the served digest', () => {
  it('is stored for every entry: the sha256 of exactly the bytes served', async () => {
    const [first] = [...h.sandbox.history.jsonLines()];
    const id = (JSON.parse(first as string) as SandboxEntry).metadata?.id as string;
    expect(await storedDigest(id)).toBe(
      createHash('sha256')
        .update(first as string)
        .digest('hex'),
    );
    const { rows } = await sql<{ n: number }>`
      select count(*)::int as n from govtrail.history_entry where served_sha256 is null`.execute(
      h.database.db,
    );
    expect(rows[0]?.n).toBe(0);
  });

  it('other bytes with the same content still match (by content hash), and nothing is recorded', async () => {
    const hist = h.sandbox.history;
    const entry = hist.entries()[30] as SandboxEntry;
    const id = entry.metadata?.id as string;
    hist.remove(id);
    // The same content with other spacing and key order.
    const { metadata, ...rest } = entry;
    hist.insertRawText(JSON.stringify({ ...rest, metadata }, null, 1), { at: metadata?.createdAt as string });
    const run = await reconcile();
    expect(run.status).toBe('succeeded');
    expect(run.findings).toBe(0);
    expect(run.counters.entriesMatched).toBe(run.counters.entriesFetched);
  });

  it('is what a reconcile trusts, and what reconcile --deep ignores', async () => {
    const id = (h.sandbox.history.entries()[50] as SandboxEntry).metadata?.id as string;
    // The content hash stored for the entry no longer agrees with what is served; its digest does.
    await tamper(sql`update govtrail.history_entry set content_sha256 = sha256('not this entry')
                     where entry_id = ${id}`);
    const trusting = await reconcile();
    expect(trusting.status).toBe('succeeded');
    expect(trusting.findings).toBe(0);
    const deep = await reconcile(true);
    expect(deep.status).toBe('succeeded');
    expect(deep.counters.entriesChanged).toBe(1);
    const found = await listDiscrepancies(h.database.db, { runId: deep.runId });
    expect(found.map((d) => [d.entryId, d.kind])).toEqual([[id, 'changed_at_source']]);
  });

  it('does not hide a rewrite: other bytes with other content are a changed_at_source', async () => {
    const id = (h.sandbox.history.entries()[70] as SandboxEntry).metadata?.id as string;
    h.sandbox.history.rewrite(id);
    const run = await reconcile();
    expect(run.counters.entriesChanged).toBe(1);
  });

  it('does not hide a second version served beside it: an id served twice is compared by content', async () => {
    // The stored bytes first, then another version of the id, on one page (one batch): the lookup
    // is given no digest for an id served twice, or the unchanged copy would speak for both.
    const hist = h.sandbox.history;
    const entry = hist.entries()[90] as SandboxEntry;
    const id = entry.metadata?.id as string;
    const text = [...hist.jsonLines()].find((t) => (JSON.parse(t) as SandboxEntry).metadata?.id === id);
    const other = hist.duplicate(id);
    // Served after its copy, as a duplicate is: taken out and served again, it comes first.
    hist.remove(id);
    hist.insertRawText(text as string, { at: entry.metadata?.createdAt as string });
    const served = [...hist.jsonLines()].filter((t) => (JSON.parse(t) as SandboxEntry).metadata?.id === id);
    expect(served).toEqual([text, JSON.stringify(other)]);

    const run = await reconcile();
    expect(run.status).toBe('succeeded');
    expect(run.integrity).toMatchObject({ entriesConflicting: 1 });
    const found = await listDiscrepancies(h.database.db, { runId: run.runId });
    expect(found.filter((d) => d.kind === 'conflicting_ids').map((d) => d.entryId)).toEqual([id]);
  });
});
