/**
 * /metrics stays bounded whatever the fleet's size: the first GOVTRAIL_METRICS_TENANTS tenants have
 * series of their own, the others count under `_other`; a reload gives new tenants zero series and
 * drops the series of tenants that left.
 */
import { describe, expect, it } from 'vitest';
import type { RunSummary } from '../../src/sync/run-types.js';
import { createWorkerMetrics } from '../../src/worker/metrics.js';

const tenantsOf = (text: string, metric: string) =>
  [...text.matchAll(new RegExp(`^${metric}\\{[^}]*tenant="([^"]+)"`, 'gm'))]
    .map((m) => m[1])
    .filter((t, i, all) => all.indexOf(t) === i)
    .sort();

function run(tenant: string): RunSummary {
  return {
    kind: 'sync',
    tenantId: tenant,
    status: 'succeeded',
    durationMs: 10,
    findings: 0,
    counters: { entriesInserted: 2 },
  } as unknown as RunSummary;
}

describe('per-tenant metrics', () => {
  it('name the first N tenants and count the rest under _other, at any fleet size', async () => {
    const tenants = Array.from({ length: 5000 }, (_, i) => `t-${i}`);
    const now = Date.now();
    const m = createWorkerMetrics({
      tenants,
      tenantSeries: 2,
      processMetrics: false,
      checkpointTimes: async () => new Map(tenants.map((t, i) => [t, new Date(now - i * 1000)])),
    });
    m.recordRun(run('t-0'));
    m.recordRun(run('t-3000'));
    m.recordRun(run('t-4000'));
    const text = await m.render();
    expect(tenantsOf(text, 'govtrail_sync_runs_total')).toEqual(['_other', 't-0', 't-1']);
    expect(text).toContain('govtrail_sync_runs_total{tenant="_other",status="succeeded"} 2');
    // The others' age is the oldest of them.
    expect(text).toContain('govtrail_checkpoint_age_seconds{tenant="_other"} 4999');
    expect(text.split('\n').filter((l) => l.includes('tenant=')).length).toBeLessThan(100);
  });

  it('a reload gives new tenants zero series and drops the series of tenants that left', async () => {
    const m = createWorkerMetrics({
      tenants: ['a', 'b'],
      processMetrics: false,
      checkpointTimes: async () => new Map(),
    });
    m.recordRun(run('a'));
    expect(tenantsOf(await m.render(), 'govtrail_sync_run_duration_seconds_bucket')).toEqual(['a']);
    await m.setTenants(['b', 'c']);
    const text = await m.render();
    expect(tenantsOf(text, 'govtrail_sync_runs_total')).toEqual(['b', 'c']);
    expect(tenantsOf(text, 'govtrail_sync_run_duration_seconds_bucket')).toEqual([]);
    expect(text).toContain('govtrail_sync_runs_total{tenant="c",status="succeeded"} 0');
  });
});
