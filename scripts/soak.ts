/**
 * `npm run soak [-- --runs 60] [-- --entries 3000]`: fault-injection soak. The sandbox runs in its
 * own process with random faults while entries keep being appended; `govtrail sync` runs again and
 * again as child processes, a third of them killed with SIGKILL at a random moment. At the end
 * (faults cleared, one clean run) the database must equal the sandbox's history exactly. Exit 1 on
 * any mismatch.
 */
import { pathToFileURL } from 'node:url';
import { sql } from 'kysely';
import {
  createScratchDatabase,
  FAST_HTTP_ENV,
  govtrailEnv,
  runGovtrail,
  sandboxTruth,
  startSandboxProcess,
} from '../bench/lib.js';
import { openDatabase } from '../src/store/database.js';
import { compareWithTruth, partialEntries, storedState } from '../test/helpers/state.js';

export const SOAK_FAULTS = '429:0.05,500:0.05,reset:0.02,slow:0.02,expire:0.01';

export interface SoakOptions {
  readonly runs: number;
  /** Runs killed with SIGKILL; default a third. */
  readonly kills?: number;
  /** Seeded history before the first run. */
  readonly entries: number;
  /** Entries appended per tick (random 1..appendMax), every appendEveryMs. */
  readonly appendMax?: number;
  readonly appendEveryMs?: number;
  /** Upper bound of the random kill delay after the run starts; default the last finished run's duration. */
  readonly maxKillDelayMs?: number;
  readonly seed?: number;
  readonly log?: (line: string) => void;
}

export interface SoakReport {
  runs: number;
  kills: number;
  succeeded: number;
  failed: number;
  faultsInjected: number;
  faultsByKind: Record<string, number>;
  entries: number;
  mismatches: number;
  problems: string[];
}

/** A small deterministic PRNG (mulberry32), so that a failing soak can be replayed by seed. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export async function soak(options: SoakOptions): Promise<SoakReport> {
  const log = options.log ?? (() => {});
  const random = prng(options.seed ?? Date.now());
  const killsWanted = options.kills ?? Math.floor(options.runs / 3);
  // Which runs get killed: a random subset of the right size.
  const order = [...Array(options.runs).keys()].sort(() => random() - 0.5);
  const killSet = new Set(order.slice(0, killsWanted));

  const sb = await startSandboxProcess([
    '--entries',
    String(options.entries),
    '--faults',
    SOAK_FAULTS,
    '--fault-seed',
    String(Math.floor(random() * 1e9)),
  ]);
  const scratch = await createScratchDatabase('govtrail_soak');
  const report: SoakReport = {
    runs: 0,
    kills: 0,
    succeeded: 0,
    failed: 0,
    faultsInjected: 0,
    faultsByKind: {},
    entries: 0,
    mismatches: 0,
    problems: [],
  };
  let appending = true;
  let appender: Promise<void> = Promise.resolve();
  try {
    const env = govtrailEnv(sb, scratch.url, { ...FAST_HTTP_ENV, GOVTRAIL_LOOKBACK: '15m' });
    const mig = await runGovtrail(['migrate'], env);
    if (mig.code !== 0) throw new Error(`migrate failed: ${mig.stderr}`);

    appender = (async () => {
      while (appending) {
        const n = 1 + Math.floor(random() * (options.appendMax ?? 10));
        await sb.control('POST', `/_sandbox/append?count=${n}`);
        await new Promise((r) => setTimeout(r, options.appendEveryMs ?? 150));
      }
    })();

    // The kill moment is drawn within how long a run takes now (the last run that finished), so a
    // scheduled kill lands inside the run rather than after it, however fast runs have become.
    let lastRunMs: number | undefined;
    for (let i = 0; i < options.runs; i++) {
      const kill = killSet.has(i);
      // (Within the first 80 % of it: run times vary by a fifth from one run to the next.)
      const bound = options.maxKillDelayMs ?? (lastRunMs === undefined ? 1500 : lastRunMs * 0.8);
      const delay = kill ? Math.floor(random() * bound) : 0;
      let timer: NodeJS.Timeout | undefined;
      let runStarted: number | undefined;
      const r = await runGovtrail(['sync'], env, {
        onSpawn: (child) => {
          // The random moment counts from the run's start (its first log line), not from process start-up.
          child.stderr?.on('data', (d: Buffer) => {
            if (runStarted !== undefined || !/sync started|backfill started/.test(d.toString())) return;
            runStarted = performance.now();
            if (kill) timer = setTimeout(() => child.kill('SIGKILL'), delay);
          });
        },
      });
      if (r.signal === null && r.code === 0 && runStarted !== undefined)
        lastRunMs = performance.now() - runStarted;
      if (timer !== undefined) clearTimeout(timer);
      report.runs++;
      if (r.signal === 'SIGKILL') report.kills++;
      else if (r.code === 0) report.succeeded++;
      else report.failed++;
      log(
        `run ${i + 1}/${options.runs}: ${r.signal === 'SIGKILL' ? `killed after ${delay} ms` : `exit ${r.code}`} (${Math.round(r.ms)} ms)`,
      );
    }

    appending = false;
    await appender;
    await sb.control('POST', '/_sandbox/faults', { clear: true });
    const stats = await sb.control<{ injected: Record<string, number> }>('GET', '/_sandbox/stats');
    report.faultsByKind = stats.injected;
    report.faultsInjected = Object.values(stats.injected).reduce((a, b) => a + b, 0);
    const final = await runGovtrail(['sync'], env);
    if (final.code !== 0)
      report.problems.push(`final clean run failed (${final.code}): ${final.stderr.slice(-500)}`);

    const truth = await sandboxTruth(sb);
    report.entries = truth.length;
    const database = await openDatabase({ url: scratch.url });
    try {
      const state = await storedState(database, 'acme');
      report.problems.push(...compareWithTruth(state, truth));
      report.problems.push(...partialEntries(state).map((id) => `partial ${id}`));
      const newest = (truth[0] as { metadata?: { id?: string } }).metadata?.id;
      if (state.checkpoint?.entry_id !== newest)
        report.problems.push(`checkpoint ${state.checkpoint?.entry_id} is not the newest entry ${newest}`);
      const orphanAlerts = await sql<{ n: number }>`
        select count(*)::int as n from govtrail.alert a
        where a.entry_id is not null and not exists (
          select 1 from govtrail.history_entry e where e.tenant_id = a.tenant_id and e.entry_id = a.entry_id)`.execute(
        database.db,
      );
      const orphans = orphanAlerts.rows[0]?.n ?? 0;
      if (orphans > 0) report.problems.push(`${orphans} alerts whose entry does not exist`);
      const running = state.runs.filter((r) => r.status === 'running').length;
      if (running > 0) report.problems.push(`${running} run(s) left 'running' after the final run`);
      const dupes = await sql<{ n: number }>`
        select count(*)::int as n from (select entry_id from govtrail.history_entry group by tenant_id, entry_id having count(*) > 1) d`.execute(
        database.db,
      );
      if ((dupes.rows[0]?.n ?? 0) > 0) report.problems.push('duplicate entries');
    } finally {
      await database.close();
    }
    report.mismatches = report.problems.length;
    return report;
  } finally {
    appending = false;
    await appender.catch(() => {});
    await sb.close();
    await scratch.drop();
  }
}

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(name);
  return i === -1 ? fallback : Number(process.argv[i + 1]);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const started = Date.now();
  const options: SoakOptions = {
    runs: arg('--runs', 60),
    entries: arg('--entries', 3000),
    seed: arg('--seed', Date.now() % 1e9),
    log: (l) => process.stderr.write(`${l}\n`),
  };
  process.stderr.write(`soak: ${JSON.stringify({ ...options, log: undefined, faults: SOAK_FAULTS })}\n`);
  soak(options).then(
    (r) => {
      const { problems, ...counts } = r;
      for (const p of problems.slice(0, 50)) process.stdout.write(`MISMATCH ${p}\n`);
      process.stdout.write(
        `runs ${r.runs}, kills ${r.kills}, succeeded ${r.succeeded}, failed ${r.failed}, faults injected ${r.faultsInjected} ${JSON.stringify(r.faultsByKind)}, entries ${r.entries}, mismatches ${r.mismatches} (${Math.round((Date.now() - started) / 1000)} s)\n`,
      );
      process.stdout.write(`${JSON.stringify(counts)}\n`);
      process.exit(r.mismatches === 0 ? 0 : 1);
    },
    (err: unknown) => {
      process.stderr.write(`soak failed: ${(err as Error).stack ?? String(err)}\n`);
      process.exit(1);
    },
  );
}
