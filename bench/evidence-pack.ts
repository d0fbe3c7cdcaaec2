/**
 * `npx tsx bench/evidence-pack.ts [--entries N] [--database NAME] [--rebuild]`: peak RSS and time of
 * `govtrail export evidence-pack` over a store of N entries (default 1 000 000), in a child process
 * measured with `/usr/bin/time -v`:
 *
 *   (1) the whole history as the period (every entry, change and setting period in the pack)
 *   (2) the same with the heap capped at 128 MiB (`--max-old-space-size=128`): memory that does not
 *       grow with the period fits
 *   (3) one day of it (a few thousand entries), for comparison
 *
 * The store is a dedicated database on the local server (default `govtrail_pack1m`), filled once by
 * a `govtrail sync` from a sandbox process (about 3 minutes for a million entries) and kept for the
 * next run; `--rebuild` drops and refills it. It is ANALYZEd before measuring, as autovacuum would
 * after the load. The server is BENCH_DATABASE_URL, TEST_DATABASE_URL, or
 * postgres://postgres@127.0.0.1:5432/postgres.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { keptStore, runGovtrail } from './lib.js';

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i === -1 ? undefined : process.argv[i + 1];
}
const N = Number(arg('--entries') ?? 1_000_000);
const DATABASE = arg('--database') ?? 'govtrail_pack1m';
const REBUILD = process.argv.includes('--rebuild');
const HEAP_CAP_MIB = 128;
const store = keptStore(DATABASE);

interface PackRun {
  readonly label: string;
  readonly seconds: number;
  readonly peakRssMiB: number | undefined;
  readonly rows: Record<string, number | null>;
}

async function exportPack(label: string, from: string, to: string, heapCapMiB?: number): Promise<PackRun> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'govtrail-pack-bench-'));
  const out = path.join(dir, 'pack');
  const env: NodeJS.ProcessEnv = {
    PATH: process.env['PATH'],
    HOME: process.env['HOME'],
    DATABASE_URL: store.url,
    LOG_LEVEL: 'info',
    ...(heapCapMiB === undefined ? {} : { NODE_OPTIONS: `--max-old-space-size=${heapCapMiB}` }),
  };
  try {
    const r = await runGovtrail(
      ['export', 'evidence-pack', '--from', from, '--to', to, '--out', out, '--interval', '15m'],
      env,
      { memory: true },
    );
    if (r.code !== 0) throw new Error(`${label}: evidence-pack exited ${r.code}: ${r.stderr.slice(-3000)}`);
    const manifest = JSON.parse(readFileSync(path.join(out, 'manifest.json'), 'utf8')) as {
      files: { name: string; rows: number | null }[];
    };
    return {
      label,
      seconds: Number((r.ms / 1000).toFixed(1)),
      peakRssMiB: r.peakRssKb === undefined ? undefined : Math.round(r.peakRssKb / 1024),
      rows: Object.fromEntries(manifest.files.map((f) => [f.name, f.rows])),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const load = os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');
  process.stderr.write(`bench: evidence pack, N=${N}, nproc ${os.cpus().length}, load ${load}\n`);
  const stored = await store.storedEntries();
  if (REBUILD || stored < N) await store.fill(N);
  // A production server's autovacuum analyzes a freshly loaded table; this test server runs with
  // autovacuum off, and without statistics the planner probes annotations by the wrong index
  // (change_log then takes minutes for 20 000 rows, for `export evidence` as much as for the pack).
  await store.query((c) => c.query('analyze'));
  const range = await store.query((c) =>
    c.query<{ first: Date; last: Date }>(
      'select min(created_at) as first, max(created_at) as last from govtrail.history_entry',
    ),
  );
  const first = range.rows[0]?.first as Date;
  const last = range.rows[0]?.last as Date;
  const whole = [first.toISOString(), new Date(last.getTime() + 1000).toISOString()] as const;
  const midday = new Date((first.getTime() + last.getTime()) / 2);
  const day = [midday.toISOString(), new Date(midday.getTime() + 86_400_000).toISOString()] as const;

  const runs: PackRun[] = [];
  for (const [label, period, cap] of [
    ['whole history, default heap', whole, undefined],
    [`whole history, heap capped at ${HEAP_CAP_MIB} MiB`, whole, HEAP_CAP_MIB],
    ['one day, default heap', day, undefined],
  ] as const) {
    process.stderr.write(`bench: ${label}: ${period[0]} … ${period[1]}\n`);
    const r = await exportPack(label, period[0], period[1], cap);
    runs.push(r);
    process.stdout.write(
      `${r.label}: ${r.seconds} s, peak RSS ${r.peakRssMiB ?? '?'} MiB; rows ${JSON.stringify(r.rows)}\n`,
    );
  }
  process.stdout.write(`${JSON.stringify({ entries: N, load, runs })}\n`);
}

main().catch((err: unknown) => {
  process.stderr.write(`bench failed: ${(err as Error).stack ?? String(err)}\n`);
  process.exitCode = 1;
});
