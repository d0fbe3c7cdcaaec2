/**
 * The change walk pages through stored entries by (created_at, entry_id). Its keys must keep
 * PostgreSQL's microseconds: a JS Date would round them to milliseconds and re-read rows at a page
 * boundary (a backfill then failed with "ON CONFLICT DO UPDATE command cannot affect row a second time").
 */
import { afterEach, describe, expect, it } from 'vitest';
import { findOldestOfRun, streamEntriesFrom } from '../../src/store/read/chrono-entries.js';
import { createHarness, type Harness } from '../helpers/harness.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

describe('change walk', () => {
  it('streams entries that share a millisecond exactly once, whatever the page size', async () => {
    h = await createHarness({ entries: 0, seed: 21 });
    // Five entries inside one millisecond, then two more.
    for (const at of [
      '2025-06-01T00:00:00.123100Z',
      '2025-06-01T00:00:00.123200Z',
      '2025-06-01T00:00:00.123300Z',
      '2025-06-01T00:00:00.123400Z',
      '2025-06-01T00:00:00.123500Z',
      '2025-06-01T00:00:01.000000Z',
      '2025-06-01T00:00:02.000000Z',
    ]) {
      h.sandbox.history.appendEntry({ at, set: { auditVerbosity: 'AUDIT_VERBOSITY_FULL' } });
    }
    const run = await h.sync();
    expect(run.status).toBe('succeeded');
    const oldest = await findOldestOfRun(h.database.db, 'acme', run.runId);
    expect(oldest).toBeDefined();
    for (const batchSize of [1, 2, 3]) {
      const ids: string[] = [];
      for await (const e of streamEntriesFrom(h.database.db, 'acme', oldest!, batchSize)) ids.push(e.entryId);
      expect(ids).toHaveLength(7);
      expect(new Set(ids).size).toBe(7);
    }
  });
});
