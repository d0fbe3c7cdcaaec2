/**
 * `npx tsx bench/cpu-variants.ts N ROUNDS 'K=V K2=V2|K=V3|…'`: the CPU seconds (user + system) of a
 * `govtrail sync` backfill of N sandbox entries, per variant of the environment (each variant a
 * space-separated list of assignments, e.g. `NODE_OPTIONS=--max-semi-space-size=64`; an empty
 * variant is the default), ROUNDS times each, alternating; prints the median per variant. A quick
 * A/B of a runtime setting, less sensitive to a busy neighbour than wall time.
 */
import { buildGovtrail, runGovtrail, withFreshStore } from './lib.js';

const N = Number(process.argv[2] ?? 100_000);
const ROUNDS = Number(process.argv[3] ?? 3);
const VARIANTS = (process.argv[4] ?? '').split('|');

/** `K=V K2=V2` as an environment. */
function assignments(variant: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const a of variant.split(' ').filter((x) => x !== '')) {
    const i = a.indexOf('=');
    if (i < 1) throw new Error(`not an assignment: ${a}`);
    out[a.slice(0, i)] = a.slice(i + 1);
  }
  return out;
}

async function once(variant: string): Promise<{ cpu: number; ms: number; rss: number }> {
  return withFreshStore(
    N,
    async ({ env }) => {
      const r = await runGovtrail(['sync'], env, { memory: true });
      if (r.code !== 0) throw new Error(`sync failed (${r.code}): ${r.stderr.slice(-2000)}`);
      return { cpu: (r.cpu?.userS ?? 0) + (r.cpu?.systemS ?? 0), ms: r.ms, rss: (r.peakRssKb ?? 0) / 1024 };
    },
    { extraEnv: assignments(variant) },
  );
}

async function main(): Promise<void> {
  buildGovtrail();
  const results = new Map<string, { cpu: number; ms: number; rss: number }[]>();
  for (let round = 0; round < ROUNDS; round++)
    for (const v of VARIANTS) {
      const r = await once(v);
      results.set(v, [...(results.get(v) ?? []), r]);
      process.stderr.write(
        `${v || '(default)'}: CPU ${r.cpu.toFixed(2)} s, wall ${(r.ms / 1000).toFixed(2)} s, RSS ${r.rss.toFixed(0)} MiB\n`,
      );
    }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
  for (const [v, rs] of results)
    process.stdout.write(
      `${v || '(default)'}: median CPU ${median(rs.map((r) => r.cpu)).toFixed(2)} s, wall ${(median(rs.map((r) => r.ms)) / 1000).toFixed(2)} s, RSS ${median(rs.map((r) => r.rss)).toFixed(0)} MiB\n`,
    );
}

await main();
