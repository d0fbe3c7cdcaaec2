/**
 * `npx tsx bench/timeline.ts [N] [sync|reconcile] [--waits]`: where a backfill's (or a reconcile's)
 * time goes between govtrail, PostgreSQL and the sandbox. Runs `govtrail sync` (and, for
 * `reconcile`, a reconcile of the store it filled) from the build in dist/, and prints:
 *
 * - every 250 ms, the CPU each of the three used in that interval (from /proc: govtrail's process,
 *   every postgres process summed, the sandbox's process), 100 % being one core;
 * - with `--waits`, a histogram of what the run's backend was doing, sampled from pg_stat_activity
 *   every few milliseconds: state, wait event and statement. `Client:ClientRead` while active in a
 *   COPY, or `idle in transaction`, is the database waiting for govtrail. (The sampling is itself
 *   a query every few milliseconds: run without it for the timeline's figures.)
 *
 * Linux only (/proc). bench/RESULTS.md (m) shows what it found.
 */
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import pg from 'pg';
import {
  buildGovtrail,
  createScratchDatabase,
  govtrailArgv,
  govtrailEnv,
  runGovtrail,
  SERVER_URL,
  startSandboxProcess,
  withLaunchEnv,
} from './lib.js';

const args = process.argv.slice(2);
const N = Number(args.find((a) => /^\d+$/.test(a)) ?? 100_000);
const kind = args.includes('reconcile') ? 'reconcile' : 'sync';
const WAITS = args.includes('--waits');
const TICK_MS = 250;
/** Clock ticks per second of /proc's times (USER_HZ; 100 on Linux). */
const HZ = 100;

/** utime + stime of a process, in clock ticks; 0 once it is gone. */
function ticks(pid: number): number {
  try {
    const fields = (readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1] as string).split(' ');
    return Number(fields[11]) + Number(fields[12]);
  } catch {
    return 0;
  }
}

function postgresPids(): number[] {
  const out: number[] = [];
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      if (readFileSync(`/proc/${d}/comm`, 'utf8').startsWith('postgres')) out.push(Number(d));
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

const pct = (dTicks: number, ms: number) =>
  `${String(Math.round((dTicks / HZ / (ms / 1000)) * 100)).padStart(4)} %`;

async function sampleWaits(database: string, running: () => boolean): Promise<Map<string, number>> {
  const client = new pg.Client(SERVER_URL);
  await client.connect();
  const hist = new Map<string, number>();
  try {
    while (running()) {
      const { rows } = await client.query<{ state: string; wait: string; query: string }>(
        `select state, coalesce(wait_event_type, '-') || ':' || coalesce(wait_event, '-') as wait,
                left(regexp_replace(query, '\\s+', ' ', 'g'), 48) as query
           from pg_stat_activity where datname = $1 and backend_type = 'client backend'`,
        [database],
      );
      for (const r of rows) {
        const k = `${r.state.padEnd(20)} ${r.wait.padEnd(22)} ${r.state === 'active' ? r.query : ''}`;
        hist.set(k, (hist.get(k) ?? 0) + 1);
      }
      await new Promise((r) => setTimeout(r, 5));
    }
  } finally {
    await client.end();
  }
  return hist;
}

async function main(): Promise<void> {
  buildGovtrail();
  const sb = await startSandboxProcess(['--entries', String(N)]);
  const scratch = await createScratchDatabase();
  try {
    const env = govtrailEnv(sb, scratch.url, { LOG_LEVEL: 'warn' });
    if ((await runGovtrail(['migrate'], env)).code !== 0) throw new Error('migrate failed');
    if (kind === 'reconcile' && (await runGovtrail(['sync'], env)).code !== 0) throw new Error('sync failed');

    const child = spawn(process.execPath, govtrailArgv([kind]), { env: withLaunchEnv(env), stdio: 'ignore' });
    let running = true;
    const exited = new Promise<number | null>((resolve) =>
      child.once('exit', (code) => {
        running = false;
        resolve(code);
      }),
    );
    const waits = WAITS ? sampleWaits(new URL(scratch.url).pathname.slice(1), () => running) : undefined;
    const started = Date.now();
    const pid = child.pid as number;
    let last = { at: started, gov: ticks(pid), sb: ticks(sb.child.pid as number) };
    const pgLast = new Map(postgresPids().map((p) => [p, ticks(p)]));
    process.stdout.write('     t   govtrail  PostgreSQL  sandbox\n');
    while (running) {
      await new Promise((r) => setTimeout(r, TICK_MS));
      const now = Date.now();
      const gov = running ? ticks(pid) : last.gov;
      const sbt = ticks(sb.child.pid as number);
      let pgd = 0;
      for (const p of postgresPids()) {
        const t = ticks(p);
        pgd += t - (pgLast.get(p) ?? t);
        pgLast.set(p, t);
      }
      const ms = now - last.at;
      process.stdout.write(
        `${((now - started) / 1000).toFixed(2).padStart(6)} s ${pct(gov - last.gov, ms)}  ${pct(pgd, ms)}   ${pct(sbt - last.sb, ms)}\n`,
      );
      last = { at: now, gov, sb: sbt };
    }
    const code = await exited;
    process.stdout.write(`${kind} exited ${code} after ${((Date.now() - started) / 1000).toFixed(2)} s\n`);
    if (waits !== undefined) {
      const hist = await waits;
      const total = [...hist.values()].reduce((a, b) => a + b, 0);
      process.stdout.write(`\nthe run's backend, ${total} samples:\n`);
      for (const [k, v] of [...hist].sort((a, b) => b[1] - a[1]).slice(0, 20))
        process.stdout.write(`${String(v).padStart(6)}  ${k}\n`);
    }
  } finally {
    await sb.close();
    await scratch.drop();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
