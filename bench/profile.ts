/**
 * `npx tsx bench/profile.ts [N] [DIR] [sync,reconcile]`: the backfill of bench/run.ts's (c), and
 * optionally its reconcile (f), with `node --cpu-prof` on the govtrail child (build in dist/, one
 * sample per 0.5 ms). Writes one .cpuprofile per process to DIR (open it in Chrome DevTools, or
 * summarise it with `node bench/profile-summary.mjs FILE`), and prints wall and CPU time.
 */
import { buildGovtrail, runGovtrail, withFreshStore } from './lib.js';

const N = Number(process.argv[2] ?? 100_000);
const dir = process.argv[3] ?? 'bench/profiles';
const kinds = (process.argv[4] ?? 'sync').split(',');

async function main(): Promise<void> {
  buildGovtrail();
  await withFreshStore(N, async ({ env }) => {
    const profiled = {
      ...env,
      NODE_OPTIONS: `--cpu-prof --cpu-prof-dir=${dir} --cpu-prof-interval=500`,
    };
    for (const kind of ['sync', 'reconcile']) {
      if (kind === 'reconcile' && !kinds.includes('reconcile')) break;
      const r = await runGovtrail([kind], kinds.includes(kind) ? profiled : env, { memory: true });
      if (r.code !== 0) throw new Error(`${kind} failed (${r.code}): ${r.stderr.slice(-2000)}`);
      const cpu = r.cpu === undefined ? 'n/a' : `${(r.cpu.userS + r.cpu.systemS).toFixed(2)} s`;
      process.stdout.write(`${kind}: wall ${(r.ms / 1000).toFixed(2)} s, CPU ${cpu}\n`);
    }
  });
}

main().catch((err: unknown) => {
  process.stderr.write(`profile failed: ${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
