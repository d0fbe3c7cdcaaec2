/**
 * The worker's timing logic with fake timers and injected runs: no database, no real waiting.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { TenantConfig } from '../../src/config.js';
import type { SyncRunSummary } from '../../src/sync/run.js';
import { createWorker, type Worker } from '../../src/worker/worker.js';
import { capturingLogger } from '../helpers/harness.js';

function tenant(name: string): TenantConfig {
  return {
    name,
    baseUrl: 'http://127.0.0.1:1',
    clientId: 'id',
    clientSecret: 'secret',
    pageSize: 100,
    lookbackMs: 0,
  };
}

function summary(tenantId: string, status: SyncRunSummary['status'] = 'succeeded'): SyncRunSummary {
  return {
    kind: 'sync',
    tenantId,
    runId: 1,
    status,
    isBackfill: false,
    counters: {
      pagesFetched: 1,
      entriesFetched: 0,
      entriesInserted: 0,
      entriesRejected: 0,
      warnings: 0,
      httpRetries: 0,
      entriesMatched: 0,
      entriesChanged: 0,
    },
    stopReason: null,
    checkpointBefore: null,
    checkpointAfter: null,
    alerts: 0,
    fieldChanges: 0,
    findings: 0,
    durationMs: 1,
    historyRequests: 1,
  };
}

/** A promise the test settles by hand, to hold a run "in flight" as long as it likes. */
function deferred<T = void>(): { promise: Promise<T>; resolve: (v: T) => void } {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

let worker: Worker | undefined;

beforeEach(() => {
  vi.useFakeTimers();
});

afterEach(async () => {
  // Stop with a zero grace so that a test that left a run hanging does not leak its schedule.
  const w = worker;
  worker = undefined;
  if (w !== undefined) {
    const stopping = w.stop(0);
    await vi.advanceTimersByTimeAsync(1);
    await stopping;
  }
  vi.useRealTimers();
});

describe('worker schedule', () => {
  it('ticks at the cron times, in UTC, and not before', async () => {
    vi.setSystemTime(new Date('2026-03-01T10:03:30Z'));
    const ticks: string[] = [];
    const { logger } = capturingLogger();
    worker = createWorker({
      tenants: [tenant('a')],
      schedule: '*/5 * * * *',
      concurrency: 1,
      logger,
      syncTenant: async (t) => {
        ticks.push(new Date().toISOString().slice(11, 16));
        return summary(t.name);
      },
    });
    worker.start({ initialRun: false });
    await vi.advanceTimersByTimeAsync(60_000); // 10:04:30
    expect(ticks).toEqual([]);
    await vi.advanceTimersByTimeAsync(31_000); // 10:05:01
    expect(ticks).toEqual(['10:05']);
    await vi.advanceTimersByTimeAsync(10 * 60_000); // 10:15:01
    expect(ticks).toEqual(['10:05', '10:10', '10:15']);
  });

  it('reconciles every tenant on its own schedule, beside the sync ticks', async () => {
    vi.setSystemTime(new Date('2026-03-01T03:39:30Z'));
    const calls: string[] = [];
    const { logger } = capturingLogger();
    const reconciled = deferred();
    worker = createWorker({
      tenants: [tenant('a'), tenant('b')],
      schedule: '*/15 * * * *',
      concurrency: 1,
      logger,
      syncTenant: async (t) => {
        calls.push(`sync ${t.name} ${new Date().toISOString().slice(11, 16)}`);
        return summary(t.name);
      },
      reconcile: {
        schedule: '41 * * * *',
        run: async (t) => {
          calls.push(`reconcile ${t.name} ${new Date().toISOString().slice(11, 16)}`);
          // The first reconcile is still running when the 03:45 sync tick fires: the sync tick runs anyway.
          if (t.name === 'a') await reconciled.promise;
          return { ...summary(t.name), kind: 'reconcile' };
        },
      },
    });
    worker.start({ initialRun: false });
    await vi.advanceTimersByTimeAsync(60_000); // 03:40:30
    expect(calls).toEqual([]);
    await vi.advanceTimersByTimeAsync(60_000); // 03:41:30
    expect(calls).toEqual(['reconcile a 03:41']);
    await vi.advanceTimersByTimeAsync(4 * 60_000); // 03:45:30
    expect(calls).toEqual(['reconcile a 03:41', 'sync a 03:45', 'sync b 03:45']);
    reconciled.resolve();
    await vi.advanceTimersByTimeAsync(1_000);
    expect(calls.slice(3)).toEqual(['reconcile b 03:45']);
    await vi.advanceTimersByTimeAsync(56 * 60_000); // 04:41:30
    expect(calls.filter((c) => c.startsWith('reconcile'))).toEqual([
      'reconcile a 03:41',
      'reconcile b 03:45',
      'reconcile a 04:41',
      'reconcile b 04:41',
    ]);
  });

  it('runs once at start-up unless the initial run is turned off', async () => {
    vi.setSystemTime(new Date('2026-03-01T10:03:30Z'));
    const calls: string[] = [];
    const { logger } = capturingLogger();
    worker = createWorker({
      tenants: [tenant('a')],
      schedule: '0 * * * *',
      concurrency: 1,
      logger,
      syncTenant: async (t) => {
        calls.push(t.name);
        return summary(t.name);
      },
    });
    worker.start();
    await vi.advanceTimersByTimeAsync(1_000);
    expect(calls).toEqual(['a']);
  });

  it('skips and logs a tick that fires while the previous one still runs', async () => {
    vi.setSystemTime(new Date('2026-03-01T10:00:30Z'));
    const hold = deferred();
    let started = 0;
    const { logger, lines } = capturingLogger();
    worker = createWorker({
      tenants: [tenant('a')],
      schedule: '* * * * *',
      concurrency: 1,
      logger,
      syncTenant: async (t) => {
        started++;
        if (started === 1) await hold.promise;
        return summary(t.name);
      },
    });
    worker.start({ initialRun: false });
    await vi.advanceTimersByTimeAsync(31_000); // 10:01:01 — first tick starts and hangs
    expect(started).toBe(1);
    await vi.advanceTimersByTimeAsync(2 * 60_000); // 10:03:01 — two ticks fired meanwhile
    expect(started).toBe(1);
    expect(lines.filter((l) => l.includes('previous tick still running')).length).toBe(2);
    hold.resolve();
    await vi.advanceTimersByTimeAsync(60_000); // 10:04:01 — free again
    expect(started).toBe(2);
  });

  it('never runs more tenants at once than the concurrency bound, and runs them all', async () => {
    let inFlight = 0;
    let peak = 0;
    const done: string[] = [];
    const { logger } = capturingLogger();
    worker = createWorker({
      tenants: ['a', 'b', 'c', 'd', 'e', 'f', 'g'].map(tenant),
      schedule: '0 0 * * *',
      concurrency: 3,
      logger,
      syncTenant: async (t) => {
        inFlight++;
        peak = Math.max(peak, inFlight);
        // Uneven durations so that lanes free up at different times.
        await new Promise((r) => setTimeout(r, 100 + t.name.charCodeAt(0) * 7));
        inFlight--;
        done.push(t.name);
        return summary(t.name);
      },
    });
    const result = worker.tick('manual');
    await vi.advanceTimersByTimeAsync(10_000);
    const r = await result;
    expect(peak).toBe(3);
    expect(done.sort()).toEqual(['a', 'b', 'c', 'd', 'e', 'f', 'g']);
    expect(r !== 'overlap' && r !== 'stopped' && r.summaries.length).toBe(7);
  });

  it('goes on with the other tenants when one throws or fails, then delivers alerts', async () => {
    const { logger } = capturingLogger();
    const delivered = vi.fn(async () => ({ delivered: 2, retried: 0, failed: 0, bySink: {} }));
    worker = createWorker({
      tenants: ['a', 'boom', 'bad', 'd'].map(tenant),
      schedule: '0 0 * * *',
      concurrency: 1,
      logger,
      syncTenant: async (t) => {
        if (t.name === 'boom') throw new Error('database connection lost');
        return summary(t.name, t.name === 'bad' ? 'failed' : 'succeeded');
      },
      deliverAlerts: delivered,
    });
    const r = await worker.tick('manual');
    if (r === 'overlap' || r === 'stopped') throw new Error(`unexpected ${r}`);
    expect(r.summaries.map((s) => `${s.tenantId}:${s.status}`)).toEqual([
      'a:succeeded',
      'bad:failed',
      'd:succeeded',
    ]);
    expect(r.errors.map((e) => e.tenant)).toEqual(['boom']);
    expect(delivered).toHaveBeenCalledTimes(1);
    expect(r.delivery?.delivered).toBe(2);
  });

  it('on stop, lets a run finish within the grace period without aborting it', async () => {
    const { logger } = capturingLogger();
    let signal: AbortSignal | undefined;
    worker = createWorker({
      tenants: [tenant('a')],
      schedule: '0 0 * * *',
      concurrency: 1,
      logger,
      syncTenant: async (t, s) => {
        signal = s;
        await new Promise((r) => setTimeout(r, 5_000));
        return summary(t.name);
      },
    });
    void worker.tick('manual');
    await vi.advanceTimersByTimeAsync(1);
    const stopping = worker.stop(30_000);
    await vi.advanceTimersByTimeAsync(5_000);
    await expect(stopping).resolves.toEqual({ aborted: false });
    expect(signal?.aborted).toBe(false);
    // After stop, ticks do nothing.
    await expect(worker.tick('manual')).resolves.toBe('stopped');
  });

  it('on stop, aborts a run that outlives the grace period and starts no other tenant', async () => {
    const { logger } = capturingLogger();
    const started: string[] = [];
    worker = createWorker({
      tenants: [tenant('a'), tenant('b')],
      schedule: '0 0 * * *',
      concurrency: 1,
      logger,
      syncTenant: async (t, s) => {
        started.push(t.name);
        // Stands for a long backfill: ends only when aborted.
        await new Promise<void>((r) => s.addEventListener('abort', () => r(), { once: true }));
        return summary(t.name, 'failed');
      },
    });
    void worker.tick('manual');
    await vi.advanceTimersByTimeAsync(1);
    const stopping = worker.stop(10_000);
    await vi.advanceTimersByTimeAsync(9_999);
    let settled = false;
    void stopping.then(() => {
      settled = true;
    });
    await vi.advanceTimersByTimeAsync(0);
    expect(settled).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    await expect(stopping).resolves.toEqual({ aborted: true });
    expect(started).toEqual(['a']);
  });

  it('refuses an invalid cron expression naming GOVTRAIL_SCHEDULE', () => {
    const { logger } = capturingLogger();
    expect(() =>
      createWorker({
        tenants: [],
        schedule: '61 * * * *',
        concurrency: 1,
        logger,
        syncTenant: async (t) => summary(t.name),
      }),
    ).toThrow(/GOVTRAIL_SCHEDULE/);
  });
});
