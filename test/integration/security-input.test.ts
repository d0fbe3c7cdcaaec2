/**
 * Hostile or broken input from the tenant API (issue 20, items 5–7): an entry nested thousands of
 * levels deep is rejected into rejected_entry and the run goes on; a body trickled a byte at a time
 * ends at the whole-body deadline with a timeout code and a failed run; a 2xx body over
 * GOVTRAIL_HTTP_MAX_BODY ends with BAD_RESPONSE without being buffered whole.
 */
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { MAX_ENTRY_DEPTH } from '../../src/core/normalise/depth.js';
import { NEEDS_SERVER, onServer } from '../helpers/database.js';
import { createHarness, type Harness } from '../helpers/harness.js';

let h: Harness | undefined;
let upstream: Server | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
  upstream?.closeAllConnections();
  await new Promise<void>((resolve) =>
    upstream === undefined ? resolve() : upstream.close(() => resolve()),
  );
  upstream = undefined;
});

/** What the hostile upstream did with the history listing. */
interface Served {
  bytesWritten: number;
  closed: boolean;
}

/**
 * A tenant API that hands out tokens and answers the history listing with `history`; loopback only.
 */
async function hostileUpstream(
  history: (res: ServerResponse, served: Served) => void,
): Promise<{ url: string; served: Served }> {
  const served: Served = { bytesWritten: 0, closed: false };
  upstream = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      if (req.url?.startsWith('/auth/v1/token') === true) {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ access_token: 'hostile-upstream-token-0123', expires_in: 3600 }));
        return;
      }
      res.on('close', () => {
        served.closed = true;
      });
      history(res, served);
    });
  });
  await new Promise<void>((resolve) => upstream?.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`, served };
}

/** The run's row in sync_run. */
async function runRow(
  harness: Harness,
  runId: number,
): Promise<{ status: string; error_code: string | null }> {
  const r = await sql<{ status: string; error_code: string | null }>`
    select status, error_code from govtrail.sync_run where run_id = ${runId}`.execute(harness.database.db);
  return r.rows[0] as { status: string; error_code: string | null };
}

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

describe.skipIf(!onServer)(`hostile response bodies (${NEEDS_SERVER})`, () => {
  it('a body trickled a byte at a time ends at the whole-body deadline: NETWORK, the run failed', async () => {
    const { url, served } = await hostileUpstream((res, s) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      // Never a gap as long as the body timeout: only a deadline on the whole body can end this.
      const timer = setInterval(() => {
        if (res.destroyed) return clearInterval(timer);
        res.write(' ');
        s.bytesWritten += 1;
      }, 100);
      res.on('close', () => clearInterval(timer));
    });
    h = await createHarness(
      { entries: 1, seed: 53 },
      { GOVTRAIL_HTTP_BODY_TIMEOUT: '1500ms', GOVTRAIL_HTTP_MAX_ATTEMPTS: '1' },
    );
    const run = await h.sync({ tenant: { baseUrl: url } });
    expect(run.status).toBe('failed');
    expect(run.error?.code).toBe('NETWORK');
    expect(run.error?.message).toMatch(/UND_ERR_BODY_TIMEOUT.*whole body did not arrive within 1500 ms/);
    expect(await runRow(h, run.runId)).toEqual({ status: 'failed', error_code: 'NETWORK' });
    expect(served.closed).toBe(true);
  });

  it('a 2xx body over GOVTRAIL_HTTP_MAX_BODY is refused as BAD_RESPONSE while streaming, not buffered whole', async () => {
    const total = 64 * 1024 * 1024;
    const { url, served } = await hostileUpstream((res, s) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      const chunk = Buffer.alloc(64 * 1024, 0x20);
      const pump = (): void => {
        while (!res.destroyed && s.bytesWritten < total) {
          s.bytesWritten += chunk.length;
          if (!res.write(chunk)) return void res.once('drain', pump);
        }
        if (!res.destroyed) res.end();
      };
      res.write('{"list":[');
      pump();
    });
    h = await createHarness(
      { entries: 1, seed: 54 },
      { GOVTRAIL_HTTP_MAX_BODY: '1MiB', GOVTRAIL_HTTP_MAX_ATTEMPTS: '1' },
    );
    const run = await h.sync({ tenant: { baseUrl: url } });
    expect(run.status).toBe('failed');
    expect(run.error?.code).toBe('BAD_RESPONSE');
    expect(run.error?.message).toMatch(/more than the 1048576-byte limit \(GOVTRAIL_HTTP_MAX_BODY\)/);
    expect(await runRow(h, run.runId)).toEqual({ status: 'failed', error_code: 'BAD_RESPONSE' });
    // The client stopped reading at the cap: the upstream could not push the whole body.
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(served.closed).toBe(true);
    expect(served.bytesWritten).toBeLessThan(total / 4);
  });

  it('a declared Content-Length over the cap is refused before reading', async () => {
    const { url } = await hostileUpstream((res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(8 * 1024 * 1024) });
      res.write('{"list":[');
    });
    h = await createHarness(
      { entries: 1, seed: 55 },
      { GOVTRAIL_HTTP_MAX_BODY: '1MiB', GOVTRAIL_HTTP_MAX_ATTEMPTS: '1' },
    );
    const run = await h.sync({ tenant: { baseUrl: url } });
    expect(run.error?.code).toBe('BAD_RESPONSE');
    expect(run.error?.message).toMatch(/8388608 bytes, over the 1048576-byte limit/);
  });
});
