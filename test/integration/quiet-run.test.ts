/**
 * A sync with nothing new closes without a transaction (docs/design/sync.md "A run with nothing
 * new", S4): it records what a run through the transaction records, and anything the entry writer
 * would act on keeps it from closing that way.
 */
import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { pageReachesCheckpoint } from '../../src/core/stop-rule.js';
import type { Database } from '../../src/store/database.js';
import { listDiscrepancies } from '../../src/store/read/discrepancies.js';
import { executeRun, pageAndWrite } from '../../src/sync/execute-run.js';
import { runSync } from '../../src/sync/run.js';
import type { RunOptions } from '../../src/sync/run-types.js';
import { createHarness, type Harness } from '../helpers/harness.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

/** The same sync as runSync, without the plan that lets it close quietly: always through the transaction. */
function runSyncInTransaction(options: RunOptions) {
  return executeRun('sync', options, async (ctx) => ({
    stopReason: await pageAndWrite(ctx, (page) =>
      ctx.checkpoint === undefined
        ? false
        : pageReachesCheckpoint(page.entries, ctx.checkpoint, options.lookbackMs),
    ),
  }));
}

interface LedgerRow {
  status: string;
  pages_fetched: number;
  entries_fetched: number;
  entries_inserted: number;
  entries_rejected: number;
  entries_changed: number;
  warnings: number;
  http_retries: number;
  checkpoint_before: string | null;
  checkpoint_after: string | null;
  stop_reason: string | null;
  error_code: string | null;
  error_message: string | null;
  kind: string;
  trigger: string;
  closed: boolean;
}

async function ledgerRow(db: Database, runId: number): Promise<LedgerRow> {
  const { rows } = await sql<LedgerRow>`
    select status, pages_fetched, entries_fetched, entries_inserted, entries_rejected, entries_changed,
           warnings, http_retries, checkpoint_before, checkpoint_after, stop_reason, error_code,
           error_message, kind, trigger, finished_at >= started_at as closed
    from govtrail.sync_run where run_id = ${runId}`.execute(db.db);
  return rows[0] as LedgerRow;
}

async function checkpointRow(db: Database) {
  const { rows } = await sql<{ entry_id: string; entry_created_at_key: string; run_id: string }>`
    select entry_id, entry_created_at_key, run_id::text from govtrail.checkpoint where tenant_id = 'acme'`.execute(
    db.db,
  );
  return rows[0];
}

/** The findings a run recorded, as (entry_id, kind). */
async function findingsOf(x: Harness, runId: number): Promise<{ entry_id: string; kind: string }[]> {
  const found = await listDiscrepancies(x.database.db, { runId });
  return found.map((d) => ({ entry_id: d.entryId, kind: d.kind }));
}

describe('a sync with nothing new (S4)', () => {
  it('closes without a transaction, with the ledger row and checkpoint a run through one records', async () => {
    h = await createHarness({ entries: 300, seed: 21 });
    const x = h;
    const bare = x.runOptions();
    try {
      expect((await runSync(bare.options)).status).toBe('succeeded');
      const quiet = await runSync(bare.options);
      expect(quiet.status).toBe('succeeded');
      expect(x.logs.some((l) => l.includes('"quiet":true') && l.includes(`"runId":${quiet.runId}`))).toBe(
        true,
      );
      const quietCheckpoint = await checkpointRow(x.database);
      expect(quietCheckpoint?.run_id).toBe(String(quiet.runId));

      const full = await runSyncInTransaction(bare.options);
      expect(full.status).toBe('succeeded');
      expect(x.logs.some((l) => l.includes('"quiet":true') && l.includes(`"runId":${full.runId}`))).toBe(
        false,
      );
      expect(await ledgerRow(x.database, quiet.runId)).toEqual(await ledgerRow(x.database, full.runId));
      expect(await checkpointRow(x.database)).toEqual({ ...quietCheckpoint, run_id: String(full.runId) });
      expect({ ...quiet, runId: 0, durationMs: 0, historyRequests: 0, openAlerts: undefined }).toEqual({
        ...full,
        runId: 0,
        durationMs: 0,
        historyRequests: 0,
        openAlerts: undefined,
      });
      expect(await ledgerRow(x.database, quiet.runId)).toMatchObject({
        status: 'succeeded',
        pages_fetched: 1,
        entries_fetched: 100,
        entries_inserted: 0,
        stop_reason: 'checkpoint',
        checkpoint_before: quietCheckpoint?.entry_id,
        checkpoint_after: quietCheckpoint?.entry_id,
      });
    } finally {
      await bare.close();
    }
  });

  it('is not quiet when an entry on the first page was rewritten at the source: changed_at_source', async () => {
    h = await createHarness({ entries: 60, seed: 23 });
    const x = h;
    expect((await x.sync()).status).toBe('succeeded');
    const second = (x.sandbox.history.entries()[1] as { metadata: { id: string } }).metadata.id;
    x.sandbox.history.rewrite(second);
    const run = await x.sync();
    expect(run.status).toBe('succeeded');
    expect(run.counters.entriesChanged).toBe(1);
    const rows = await findingsOf(x, run.runId);
    expect(rows).toEqual([{ entry_id: second, kind: 'changed_at_source' }]);
  });

  it('is not quiet when an id on the first page is served again with another content: conflicting_ids', async () => {
    h = await createHarness({ entries: 60, seed: 24 });
    const x = h;
    expect((await x.sync()).status).toBe('succeeded');
    const third = (x.sandbox.history.entries()[2] as { metadata: { id: string } }).metadata.id;
    x.sandbox.history.duplicate(third);
    const run = await x.sync();
    expect(run.status).toBe('succeeded');
    const rows = await findingsOf(x, run.runId);
    expect(rows).toEqual([{ entry_id: third, kind: 'conflicting_ids' }]);
  });
});
