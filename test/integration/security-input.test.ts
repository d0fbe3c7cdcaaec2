/**
 * Hostile or broken input from the tenant API (issue 20, items 5–7): an entry nested thousands of
 * levels deep is rejected into rejected_entry and the run goes on; a body trickled a byte at a time
 * ends at the whole-body deadline with a timeout code and a failed run; a 2xx body over
 * GOVTRAIL_HTTP_MAX_BODY ends with BAD_RESPONSE without being buffered whole.
 */
import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { MAX_ENTRY_DEPTH } from '../../src/normalise/depth.js';
import { NEEDS_SERVER, onServer } from '../helpers/database.js';
import { createHarness, type Harness } from '../helpers/harness.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

/** An entry whose unknown field nests `depth` arrays, as JSON text (JSON.stringify cannot write it). */
function deepEntryText(id: string, depth: number): string {
  const metadata = JSON.stringify({
    id,
    createdAt: '2026-11-25T12:00:00Z',
    changeKind: 'CHANGE_KIND_PUT',
    actor: { kind: 'ACTOR_KIND_API', userId: 'u1' },
  });
  return `{"metadata":${metadata},"snapshot":{},"unknownField":${'['.repeat(depth)}${']'.repeat(depth)}}`;
}

describe.skipIf(!onServer)(`hostile entries (${NEEDS_SERVER})`, () => {
  it('an entry nested 5 000 levels deep is rejected with its reason; the run succeeds and keeps the rest', async () => {
    h = await createHarness({ entries: 10, seed: 51 });
    h.sandbox.history.insertRawText(deepEntryText('2deepDeepDeepDeepDeepDeepDee', 5000));
    h.sandbox.history.appendEntry({ set: { auditVerbosity: 'after-the-deep-one' } });
    const run = await h.sync();
    expect(run.status, run.error?.message).toBe('succeeded');
    expect(run.counters.entriesInserted).toBe(11);
    expect(run.counters.entriesRejected).toBe(1);
    const rows = await sql<{ reason: string; id: string }>`
      select reason, raw->'metadata'->>'id' as id from govtrail.rejected_entry`.execute(h.database.db);
    expect(rows.rows).toEqual([
      {
        reason: expect.stringContaining(`nested more than ${MAX_ENTRY_DEPTH} levels deep`),
        id: '2deepDeepDeepDeepDeepDeepDee',
      },
    ]);
    // The next run is not stuck on it either.
    const again = await h.sync();
    expect(again.status, again.error?.message).toBe('succeeded');
  });

  it('an entry nested exactly to the limit is stored as usual', async () => {
    h = await createHarness({ entries: 3, seed: 52 });
    // Entry object (1) → unknownField arrays: depth 1 + n.
    h.sandbox.history.insertRawText(deepEntryText('2shallowShallowShallowShall', MAX_ENTRY_DEPTH - 1));
    const run = await h.sync();
    expect(run.status, run.error?.message).toBe('succeeded');
    expect(run.counters.entriesRejected).toBe(0);
    expect(run.counters.entriesInserted).toBe(4);
  });
});
