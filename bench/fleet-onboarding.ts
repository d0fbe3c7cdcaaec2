/**
 * Fleet onboarding (issue 18, part 1): N new tenants listed in one GOVTRAIL_CONFIG file, all served
 * by one sandbox (60 entries each by default), onboarded by one `govtrail sync` process into a fresh
 * scratch database. Measures the wall time of that process, the time each run took by the run
 * ledger, and how many times the shared tables were ANALYZEd; run for several fleet sizes it gives
 * the ratio of the largest to the smallest (target for 2 000 vs 500: ≤ 4.4, i.e. near-linear).
 *
 *   npx tsx bench/fleet-onboarding.ts --tenants 500,2000 [--entries 60] [--concurrency 4] [--source]
 *
 * `runOnboardingBench` and `runOnboardingComparison` are the exports `bench/fleet.ts` calls.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { stringify } from 'yaml';
import { buildGovtrail, createScratchDatabase, runGovtrail, startSandboxProcess } from './lib.js';

export interface OnboardingBenchOptions {
  /** Tenants in the config file, all new. */
  readonly tenants: number;
  /** Entries the sandbox serves to every tenant (default 60). */
  readonly entriesPerTenant?: number;
  /**
   * PostgreSQL server to create the scratch database on (dropped afterwards); default
   * BENCH_DATABASE_URL, TEST_DATABASE_URL or the local server.
   */
  readonly databaseUrl?: string;
  /** GOVTRAIL_WORKER_CONCURRENCY of the sync process; unset: govtrail's default. */
  readonly concurrency?: number;
  /** Build dist/ and run the build (as installed); default true. False runs the sources with tsx. */
  readonly build?: boolean;
}

export interface OnboardingFigures {
  readonly tenants: number;
  readonly entriesPerTenant: number;
  /** GOVTRAIL_WORKER_CONCURRENCY given to the process, or null for the default. */
  readonly concurrency: number | null;
  /** Wall time of the `govtrail sync` process, start to exit. */
  readonly ms: number;
  /** ms / tenants. */
  readonly msPerTenant: number;
  /** Exit code of the process (0: every tenant succeeded). */
  readonly exitCode: number | null;
  readonly succeeded: number;
  readonly failed: number;
  /** Sum and largest of the runs' own durations (run ledger, started_at to finished_at). */
  readonly runMsTotal: number;
  readonly runMsMax: number;
  /** Mean run duration of the first and of the last tenth of the runs, by start time. */
  readonly runMsFirstTenth: number;
  readonly runMsLastTenth: number;
  readonly entriesStored: number;
  /** Times history_entry was ANALYZEd during the onboarding (pg_stat_user_tables.analyze_count). */
  readonly analyzes: number;
}

export interface OnboardingComparison {
  readonly runs: readonly OnboardingFigures[];
  /** Largest fleet's time over the smallest's, and the fleet sizes' ratio beside it. */
  readonly timeRatio: number;
  readonly sizeRatio: number;
}

let built = false;

/** Onboards `tenants` new tenants with one `govtrail sync` process and returns what it measured. */
export async function runOnboardingBench(options: OnboardingBenchOptions): Promise<OnboardingFigures> {
  const entries = options.entriesPerTenant ?? 60;
  if (options.build !== false && !built) {
    buildGovtrail();
    built = true;
  }
  const sandbox = await startSandboxProcess(['--entries', String(entries)]);
  const scratch = await createScratchDatabase('govtrail_bench_onboard', options.databaseUrl);
  const dir = await mkdtemp(path.join(os.tmpdir(), 'govtrail-onboard-'));
  try {
    const configFile = path.join(dir, 'govtrail.yaml');
    await writeFile(configFile, fleetConfig(options.tenants, sandbox), { mode: 0o600 });
    const env: NodeJS.ProcessEnv = {
      PATH: process.env['PATH'] ?? '',
      HOME: process.env['HOME'] ?? dir,
      DATABASE_URL: scratch.url,
      GOVTRAIL_CONFIG: configFile,
      LOG_LEVEL: 'warn',
      ...(options.concurrency !== undefined
        ? { GOVTRAIL_WORKER_CONCURRENCY: String(options.concurrency) }
        : {}),
    };
    // Migrate first, so the timed process does only the onboarding.
    const migrated = await runGovtrail(['migrate'], env);
    if (migrated.code !== 0) throw new Error(`govtrail migrate failed: ${migrated.stderr}`);
    const result = await runGovtrail(['sync'], env);
    if (result.code !== 0 && result.code !== 1) {
      throw new Error(
        `govtrail sync exited with ${result.code ?? result.signal}: ${result.stderr.slice(-2000)}`,
      );
    }
    const ledger = await readLedger(scratch.url);
    return {
      tenants: options.tenants,
      entriesPerTenant: entries,
      concurrency: options.concurrency ?? null,
      ms: Math.round(result.ms),
      msPerTenant: round1(result.ms / options.tenants),
      exitCode: result.code,
      ...ledger,
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
    await scratch.drop();
    await sandbox.close();
  }
}

/** Onboards each fleet size in turn (smallest first) and compares the largest with the smallest. */
export async function runOnboardingComparison(
  sizes: readonly number[],
  options: Omit<OnboardingBenchOptions, 'tenants'> = {},
): Promise<OnboardingComparison> {
  const sorted = [...sizes].sort((a, b) => a - b);
  const runs: OnboardingFigures[] = [];
  for (const tenants of sorted) runs.push(await runOnboardingBench({ ...options, tenants }));
  const first = runs[0];
  const last = runs[runs.length - 1];
  if (first === undefined || last === undefined) throw new Error('no fleet size given');
  return {
    runs,
    timeRatio: Number((last.ms / first.ms).toFixed(2)),
    sizeRatio: Number((last.tenants / first.tenants).toFixed(2)),
  };
}

/** A GOVTRAIL_CONFIG file listing `n` tenants, all on the one sandbox with its credentials. */
function fleetConfig(
  n: number,
  sandbox: { baseUrl: string; clientId: string; clientSecret: string },
): string {
  const width = String(n).length;
  const tenants = Array.from({ length: n }, (_, i) => ({
    name: `fleet-${String(i + 1).padStart(width, '0')}`,
    base_url: sandbox.baseUrl,
    client_id: sandbox.clientId,
    client_secret: sandbox.clientSecret,
  }));
  return stringify({ tenants });
}

async function readLedger(
  url: string,
): Promise<
  Pick<
    OnboardingFigures,
    | 'succeeded'
    | 'failed'
    | 'runMsTotal'
    | 'runMsMax'
    | 'runMsFirstTenth'
    | 'runMsLastTenth'
    | 'entriesStored'
    | 'analyzes'
  >
> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const runs = await client.query<{ status: string; ms: number }>(
      `select status, extract(epoch from finished_at - started_at)::float8 * 1000 as ms
         from govtrail.sync_run order by started_at, run_id`,
    );
    const ms = runs.rows.map((r) => Number(r.ms));
    const tenth = Math.max(1, Math.floor(ms.length / 10));
    const mean = (xs: number[]) => (xs.length === 0 ? 0 : round1(xs.reduce((a, b) => a + b, 0) / xs.length));
    const stored = await client.query<{ n: string }>('select count(*) as n from govtrail.history_entry');
    const stats = await client.query<{ n: string }>(
      `select analyze_count as n from pg_stat_user_tables
        where schemaname = 'govtrail' and relname = 'history_entry'`,
    );
    return {
      succeeded: runs.rows.filter((r) => r.status === 'succeeded').length,
      failed: runs.rows.filter((r) => r.status === 'failed').length,
      runMsTotal: Math.round(ms.reduce((a, b) => a + b, 0)),
      runMsMax: Math.round(Math.max(0, ...ms)),
      runMsFirstTenth: mean(ms.slice(0, tenth)),
      runMsLastTenth: mean(ms.slice(-tenth)),
      entriesStored: Number(stored.rows[0]?.n ?? 0),
      analyzes: Number(stats.rows[0]?.n ?? 0),
    };
  } finally {
    await client.end();
  }
}

function round1(x: number): number {
  return Math.round(x * 10) / 10;
}

/** The comparison as a Markdown table. */
export function formatOnboarding(c: OnboardingComparison): string {
  const rows = c.runs.map((r) => [
    String(r.tenants),
    String(r.concurrency ?? 'default'),
    `${(r.ms / 1000).toFixed(1)} s`,
    `${r.msPerTenant} ms`,
    `${r.runMsFirstTenth} / ${r.runMsLastTenth} ms`,
    String(r.analyzes),
    `${r.succeeded}/${r.tenants}`,
    String(r.entriesStored),
  ]);
  const head = [
    'tenants',
    'concurrency',
    'onboarding',
    'per tenant',
    'run, first / last tenth',
    'ANALYZEs',
    'succeeded',
    'entries',
  ];
  const lines = [`| ${head.join(' | ')} |`, `|${head.map(() => '---').join('|')}|`];
  for (const r of rows) lines.push(`| ${r.join(' | ')} |`);
  lines.push(
    `\nratio of ${c.runs.at(-1)?.tenants} to ${c.runs[0]?.tenants} tenants: ${c.timeRatio} (sizes ×${c.sizeRatio})`,
  );
  return lines.join('\n');
}

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i === -1 ? undefined : process.argv[i + 1];
}

async function main(): Promise<void> {
  const sizes = (arg('--tenants') ?? '500,2000').split(',').map(Number);
  if (sizes.some((n) => !Number.isInteger(n) || n < 1))
    throw new Error('--tenants takes positive integers, e.g. 500,2000');
  const concurrency = arg('--concurrency');
  const entries = arg('--entries');
  const load = os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');
  process.stderr.write(
    `fleet onboarding: tenants ${sizes.join(', ')}, nproc ${os.cpus().length}, load ${load}\n`,
  );
  const comparison = await runOnboardingComparison(sizes, {
    ...(concurrency !== undefined ? { concurrency: Number(concurrency) } : {}),
    ...(entries !== undefined ? { entriesPerTenant: Number(entries) } : {}),
    build: !process.argv.includes('--source'),
  });
  process.stdout.write(`${formatOnboarding(comparison)}\n`);
  process.stdout.write(`${JSON.stringify({ onboarding: comparison, load: os.loadavg()[0] })}\n`);
}

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().catch((err: unknown) => {
    process.stderr.write(`bench failed: ${(err as Error).stack ?? String(err)}\n`);
    process.exit(1);
  });
}
