/**
 * `npx tsx bench/backfill-cpu.ts [N] [LABEL]`: (c) of bench/run.ts alone — one `govtrail sync`
 * backfill of N sandbox entries from the build in dist/ (built first) into a fresh scratch database
 * — printed as one JSON line: wall time, govtrail's CPU (user + system), the PostgreSQL backends'
 * CPU (a local server whose data directory is readable; a cluster of your own, through
 * BENCH_DATABASE_URL, counts only this run), peak RSS and the load average. For A/B runs of two
 * builds, alternating, where a whole `npm run bench` is too long for the noise of the machine.
 */
import { readFileSync } from 'node:fs';
import { buildGovtrail, runGovtrailWithServerCpu, withFreshStore } from './lib.js';

const N = Number(process.argv[2] ?? 100_000);
const LABEL = process.argv[3] ?? '';

async function main(): Promise<void> {
  buildGovtrail();
  await withFreshStore(N, async ({ env }) => {
    const load = Number(readFileSync('/proc/loadavg', 'utf8').split(' ')[0]);
    const r = await runGovtrailWithServerCpu(['sync'], env);
    if (r.code !== 0) throw new Error(`sync failed (${r.code}): ${r.stderr.slice(-2000)}`);
    const line = {
      label: LABEL,
      entries: N,
      load,
      syncMs: Math.round(r.ms),
      syncCpuS: r.cpu === undefined ? undefined : Number((r.cpu.userS + r.cpu.systemS).toFixed(2)),
      syncServerCpuS: r.serverCpuS,
      peakRssMiB: r.peakRssKb === undefined ? undefined : Math.round(r.peakRssKb / 1024),
    };
    process.stdout.write(`${JSON.stringify(line)}\n`);
  });
}

main().catch((err: unknown) => {
  process.stderr.write(`backfill-cpu failed: ${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
