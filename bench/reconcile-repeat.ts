/**
 * `npx tsx bench/reconcile-repeat.ts [N] [REPS] [BUILD,BUILD…]`: (f) of bench/run.ts, repeated on
 * one filled store. One sandbox of N entries is backfilled once by the build in dist/; then each
 * round runs `govtrail reconcile` once per build listed (directories laid out as dist/, default
 * just dist), in turn, so that builds are compared under the same load. Each build must be made
 * beforehand (`npx tsc -p tsconfig.build.json`, then copied aside). Prints, per reconcile: wall, CPU
 * of the govtrail process (user + system), the PostgreSQL backends' CPU, peak RSS, load average.
 * On a shared machine compare CPU seconds and alternate builds (the PostgreSQL figure holds every
 * backend of the server that ended meanwhile, other sessions' too); one reconcile of 100 000
 * entries takes 7-20 s.
 */
import fs from 'node:fs';
import path from 'node:path';
import {
  type ChildResult,
  postgresChildCpuS,
  ROOT,
  runGovtrail,
  useBuiltGovtrail,
  withFreshStore,
} from './lib.js';

const N = Number(process.argv[2] ?? 100_000);
const reps = Number(process.argv[3] ?? 3);
const builds = (process.argv[4] ?? 'dist').split(',');

const DIST = path.join(ROOT, 'dist');
const PARKED = path.join(ROOT, 'dist.reconcile-repeat');

function cpuS(r: ChildResult): string {
  return r.cpu === undefined ? 'n/a' : (r.cpu.userS + r.cpu.systemS).toFixed(2);
}

function load(): string {
  return fs.readFileSync('/proc/loadavg', 'utf8').split(' ')[0] ?? '?';
}

/** Runs `f` with `build` in dist/'s place (the children run dist/src/main.js). */
async function withBuild<T>(build: string, f: () => Promise<T>): Promise<T> {
  if (path.resolve(ROOT, build) === DIST) return f();
  fs.renameSync(DIST, PARKED);
  fs.renameSync(path.resolve(ROOT, build), DIST);
  try {
    return await f();
  } finally {
    fs.renameSync(DIST, path.resolve(ROOT, build));
    fs.renameSync(PARKED, DIST);
  }
}

async function main(): Promise<void> {
  useBuiltGovtrail();
  await withFreshStore(
    N,
    async ({ env }) => {
      const s = await runGovtrail(['sync'], env, { memory: true });
      if (s.code !== 0) throw new Error(`sync failed (${s.code}): ${s.stderr.slice(-2000)}`);
      process.stdout.write(`backfill (dist): wall ${(s.ms / 1000).toFixed(2)} s, CPU ${cpuS(s)} s\n`);
      for (let i = 0; i < reps; i++)
        for (const build of builds) {
          const r = await withBuild(build, async () => {
            const before = await postgresChildCpuS();
            const run = await runGovtrail(['reconcile'], env, { memory: true });
            const after = await postgresChildCpuS();
            return { run, pg: before === undefined || after === undefined ? undefined : after - before };
          });
          if (r.run.code !== 0)
            throw new Error(`reconcile failed (${r.run.code}): ${r.run.stderr.slice(-2000)}`);
          const rss = r.run.peakRssKb === undefined ? 'n/a' : `${Math.round(r.run.peakRssKb / 1024)} MiB`;
          process.stdout.write(
            `${build}: reconcile wall ${(r.run.ms / 1000).toFixed(2)} s, CPU govtrail ${cpuS(r.run)} s / ` +
              `PostgreSQL ${r.pg === undefined ? 'n/a' : r.pg.toFixed(2)} s, peak RSS ${rss}, load ${load()}\n`,
          );
        }
    },
    { extraEnv: { LOG_LEVEL: 'warn' } },
  );
}

main().catch((err: unknown) => {
  process.stderr.write(`reconcile-repeat failed: ${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
