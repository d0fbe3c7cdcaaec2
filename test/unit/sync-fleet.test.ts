/**
 * `govtrail sync` over a fleet (issue 18): `concurrency` runs in flight at once, never more; the
 * summaries in the tenants' order; a run that throws stops new ones; on a TTY a line per finished
 * tenant, and nothing more than before when the output is not a terminal.
 */
import { describe, expect, it } from 'vitest';
import { type FleetProgress, fleetProgress } from '../../src/commands/progress.js';
import { syncFleet } from '../../src/commands/sync-fleet.js';
import type { TenantConfig } from '../../src/config/settings.js';
import { GovtrailError } from '../../src/core/errors.js';
import { silentLogger } from '../../src/runtime/logger.js';
import type { SyncRunSummary } from '../../src/sync/run.js';
import { emptyCounters } from '../../src/sync/run-types.js';

const tenants = (n: number): TenantConfig[] =>
  Array.from({ length: n }, (_, i) => ({
    name: `t${i + 1}`,
    baseUrl: 'http://127.0.0.1:9',
    clientId: 'id',
    clientSecret: 'secret',
    pageSize: 100,
    lookbackMs: 0,
  }));

function summary(tenantId: string, status: SyncRunSummary['status'] = 'succeeded'): SyncRunSummary {
  return {
    kind: 'sync',
    tenantId,
    runId: 1,
    status,
    isBackfill: true,
    counters: { ...emptyCounters(), entriesInserted: 60 },
    stopReason: 'end_of_history',
    checkpointBefore: null,
    checkpointAfter: 'x',
    alerts: 1,
    fieldChanges: 0,
    findings: 0,
    durationMs: 120,
    historyRequests: 1,
    ...(status === 'failed' ? { error: new GovtrailError('NETWORK', 'boom') } : {}),
  };
}

/** Lets every other pending callback run `n` times over: a run's work, without a clock. */
async function yieldTurns(n: number): Promise<void> {
  for (let i = 0; i < n; i++) await new Promise((resolve) => setImmediate(resolve));
}

const silent: FleetProgress = {
  tenant: () => ({ update() {}, finished() {} }),
  close() {},
};

/** A stream that records what is written, a terminal or not. */
function fakeStream(isTTY: boolean): { stream: NodeJS.WriteStream; text: () => string } {
  let text = '';
  const stream = {
    isTTY,
    write(chunk: string) {
      text += chunk;
      return true;
    },
  } as unknown as NodeJS.WriteStream;
  return { stream, text: () => text };
}

describe('syncFleet', () => {
  it('keeps `concurrency` tenants in flight at once, never more, and returns them in order', async () => {
    let inFlight = 0;
    let most = 0;
    const ended: string[] = [];
    const result = await syncFleet({
      tenants: tenants(7),
      concurrency: 3,
      progress: silent,
      run: async (tenant) => {
        inFlight++;
        most = Math.max(most, inFlight);
        // The first tenants take longest, so they end after later ones.
        await yieldTurns(tenant.name === 't1' ? 20 : 3);
        inFlight--;
        ended.push(tenant.name);
        return summary(tenant.name);
      },
    });
    expect(most).toBe(3);
    expect(ended[0]).not.toBe('t1');
    expect(result.map((s) => s.tenantId)).toEqual(['t1', 't2', 't3', 't4', 't5', 't6', 't7']);
  });

  it('runs one at a time with a concurrency of 1', async () => {
    let inFlight = 0;
    let most = 0;
    await syncFleet({
      tenants: tenants(4),
      concurrency: 1,
      progress: silent,
      run: async (tenant) => {
        most = Math.max(most, ++inFlight);
        await yieldTurns(3);
        inFlight--;
        return summary(tenant.name);
      },
    });
    expect(most).toBe(1);
  });

  it('starts no tenant after a run threw, lets the ones in flight end, then rethrows', async () => {
    const started: string[] = [];
    const finished: string[] = [];
    const lost = new Error('database lost');
    await expect(
      syncFleet({
        tenants: tenants(6),
        concurrency: 2,
        progress: silent,
        run: async (tenant) => {
          started.push(tenant.name);
          if (tenant.name === 't1') {
            await yieldTurns(1);
            throw lost;
          }
          await yieldTurns(5);
          finished.push(tenant.name);
          return summary(tenant.name);
        },
      }),
    ).rejects.toBe(lost);
    expect(started).toEqual(['t1', 't2']);
    expect(finished).toEqual(['t2']);
  });
});

describe('fleetProgress', () => {
  it('on a terminal, prints one line per finished tenant, counting them', () => {
    const { stream, text } = fakeStream(true);
    const progress = fleetProgress(3, silentLogger, stream);
    const a = progress.tenant('acme');
    const b = progress.tenant('globex');
    const c = progress.tenant('initech');
    a.update({ pages: 1, entries: 100, inserted: 100 });
    b.finished(summary('globex'));
    a.finished(summary('acme', 'failed'));
    c.finished(summary('initech', 'skipped'));
    progress.close();
    // The progress line of a tenant in flight was drawn, and cleared before the next finished line.
    expect(text()).toContain('\r\x1b[2K[0/3 done, 3 running] acme: 1 pages, 100 entries fetched');
    const lines = text()
      .split('\n')
      .map((l) => l.replace(/^[\s\S]*\r\x1b\[2K/, ''))
      .filter((l) => l !== '');
    expect(lines).toEqual([
      '[1/3] globex: succeeded (backfill), 60 new, 1 alert(s), 0.1 s',
      '[2/3] acme: failed, NETWORK: boom (0.1 s)',
      '[3/3] initech: skipped, another process is syncing it',
    ]);
  });

  it('writes nothing when the output is not a terminal', () => {
    const { stream, text } = fakeStream(false);
    const progress = fleetProgress(2, silentLogger, stream);
    const a = progress.tenant('acme');
    a.update({ pages: 1, entries: 100, inserted: 100 });
    a.finished(summary('acme'));
    progress.tenant('globex').finished(summary('globex'));
    progress.close();
    expect(text()).toBe('');
  });
});
