/**
 * `npm run bench:fleet [-- --tenants N]`: the fleet on one sandbox (default 2 000 tenants of one
 * YAML file), with `govtrail worker` replicas as child processes over one PostgreSQL database.
 *
 * (1) onboarding: `govtrail sync` of N/4 and of N new tenants (bench/fleet-onboarding.ts), and their
 *     time ratio; `--no-onboarding` leaves it out.
 * (2) a no-op slot with 1, 2 and 4 replicas: time from the slot to its last run, duplicate runs,
 *     skipped rows, peak database connections.
 * (3) a replica SIGKILLed mid-slot: time from the kill until every tenant of the slot is done.
 *
 * Prints a table and one JSON line. Every replica plans a slot that fires once, a few seconds after
 * they all started (a cron expression naming that second), so the figures hold no start-up time.
 */
import type { ChildProcess } from 'node:child_process';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { formatOnboarding, runOnboardingComparison } from './fleet-onboarding.js';
import {
  buildGovtrail,
  createScratchDatabase,
  FAST_HTTP_ENV,
  govtrailArgv,
  ROOT,
  startRoundTripCounter,
  startSandboxProcess,
  withLaunchEnv,
} from './lib.js';

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i === -1 ? undefined : process.argv[i + 1];
}

const TENANTS = Number(arg('--tenants') ?? 2_000);
/** Replica counts of part (2); `--replicas 1,2` for a quicker look. */
const REPLICAS = (arg('--replicas') ?? '1,2,4').split(',').map(Number);
/** `--no-kill` leaves part (3) out. */
const KILL = !process.argv.includes('--no-kill');
const HEARTBEAT = '10s';

/** A cron expression (with seconds) that fires once: at `at`, to the second, UTC. */
function onceAt(at: Date): string {
  return `${at.getUTCSeconds()} ${at.getUTCMinutes()} ${at.getUTCHours()} ${at.getUTCDate()} ${at.getUTCMonth() + 1} *`;
}

function yaml(baseUrl: string, clientId: string, clientSecret: string, n: number): string {
  const lines = ['tenants:'];
  for (let i = 0; i < n; i++) {
    lines.push(`  - name: fleet-${String(i).padStart(5, '0')}`);
    lines.push(`    base_url: ${baseUrl}`);
    lines.push(`    client_id: ${clientId}`);
    lines.push(`    client_secret: ${clientSecret}`);
  }
  return `${lines.join('\n')}\n`;
}

function startReplicas(count: number, env: NodeJS.ProcessEnv): ChildProcess[] {
  return Array.from({ length: count }, () =>
    spawn(process.execPath, govtrailArgv(['worker', '--no-initial-run']), {
      cwd: ROOT,
      env: withLaunchEnv(env),
      stdio: ['ignore', 'ignore', 'inherit'],
    }),
  );
}

async function stopAll(children: ChildProcess[]): Promise<void> {
  await Promise.all(
    children.map(
      (c) =>
        new Promise<void>((resolve) => {
          if (c.exitCode !== null || c.signalCode !== null) return resolve();
          c.once('exit', () => resolve());
          c.kill('SIGTERM');
        }),
    ),
  );
}

interface SlotFigures {
  readonly replicas: number;
  readonly slotMs: number;
  readonly duplicates: number;
  readonly skipped: number;
  readonly peakConnections: number;
  readonly succeeded: number;
  /** From the slot to the first run's start (the fetch latency of the first job). */
  readonly firstStartMs: number;
  /** A run's mean time in the ledger (start to finish), in ms. */
  readonly meanRunMs: number;
  /** CPU seconds (user + system) spent from the slot to its end, by who spent them. */
  readonly cpu: CpuFigures;
  /** Round trips per tenant from the slot to its end: SQL (Query/Sync messages, pg-boss's too) and HTTP. */
  readonly roundTripsPerTenant: { readonly sql: number; readonly http: number };
  /** Peak RSS of each replica (VmHWM), MiB, read just before it is stopped. */
  readonly replicaPeakRssMiB: readonly number[];
}

/** Peak RSS of a live process so far (VmHWM of /proc/<pid>/status), MiB; 0 once it is gone. */
function peakRssMiB(pid: number | undefined): number {
  if (pid === undefined) return 0;
  try {
    const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m === null ? 0 : Math.round(Number(m[1]) / 1024);
  } catch {
    return 0;
  }
}

interface CpuFigures {
  readonly replicas: number;
  readonly postgres: number;
  readonly sandbox: number;
}

/** User + system CPU seconds of a process so far (Linux /proc); 0 once it is gone. */
function cpuSeconds(pid: number | undefined): number {
  if (pid === undefined) return 0;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may hold spaces): state is field 3, utime 14, stime 15.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return 0;
  }
}

/** CPU seconds so far of each PostgreSQL backend serving `database` (other than the bench's own). */
async function backendCpu(client: pg.Client, database: string): Promise<Map<number, number>> {
  const { rows } = await client.query<{ pid: number }>(
    'select pid from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()',
    [database],
  );
  return new Map(rows.map((r) => [r.pid, cpuSeconds(r.pid)]));
}

/** What the processes spent between two readings; a backend born in between counts from zero. */
function cpuSpent(
  before: { replicas: number; backends: Map<number, number>; sandbox: number },
  after: { replicas: number; backends: Map<number, number>; sandbox: number },
): CpuFigures {
  let postgres = 0;
  for (const [pid, s] of after.backends) postgres += s - (before.backends.get(pid) ?? 0);
  const round = (x: number): number => Math.round(x * 100) / 100;
  return {
    replicas: round(after.replicas - before.replicas),
    postgres: round(postgres),
    sandbox: round(after.sandbox - before.sandbox),
  };
}

/** Waits until every tenant succeeded in `slot` (or the deadline); samples connections meanwhile. */
async function watchSlot(
  client: pg.Client,
  database: string,
  slot: Date,
  deadlineMs: number,
): Promise<{ done: number; peakConnections: number }> {
  let peak = 0;
  for (;;) {
    const conn = await client.query<{ n: number }>(
      'select count(*)::int as n from pg_stat_activity where datname = $1',
      [database],
    );
    peak = Math.max(peak, conn.rows[0]?.n ?? 0);
    // Before the first worker migrated the database, the ledger is not there yet: none done.
    const done = await client
      .query<{ n: number }>(
        `select count(distinct tenant_id)::int as n from govtrail.sync_run
          where slot = $1 and status = 'succeeded'`,
        [slot.toISOString()],
      )
      .catch(() => ({ rows: [{ n: 0 }] }));
    const n = done.rows[0]?.n ?? 0;
    if (n >= TENANTS || Date.now() > deadlineMs) return { done: n, peakConnections: peak };
    await new Promise((r) => setTimeout(r, 250));
  }
}

async function slotFigures(
  client: pg.Client,
  slot: Date,
): Promise<
  Omit<SlotFigures, 'replicas' | 'peakConnections' | 'cpu' | 'roundTripsPerTenant' | 'replicaPeakRssMiB'>
> {
  const { rows } = await client.query<{
    last: Date | null;
    first: Date | null;
    runMs: number | null;
    dup: number;
    skipped: number;
    ok: number;
  }>(
    `select (select max(finished_at) from govtrail.sync_run where slot = $1 and status = 'succeeded') as last,
            (select min(started_at) from govtrail.sync_run where slot = $1) as first,
            (select avg(extract(epoch from finished_at - started_at) * 1000)::float8 from govtrail.sync_run
              where slot = $1 and status = 'succeeded') as "runMs",
            (select count(*)::int from (select tenant_id from govtrail.sync_run where slot = $1 and status = 'succeeded'
                                         group by tenant_id having count(*) > 1) d) as dup,
            (select count(*)::int from govtrail.sync_run where status = 'skipped' and started_at >= $1) as skipped,
            (select count(distinct tenant_id)::int from govtrail.sync_run where slot = $1 and status = 'succeeded') as ok`,
    [slot.toISOString()],
  );
  const r = rows[0] as (typeof rows)[number];
  return {
    slotMs: r.last === null ? Number.NaN : new Date(r.last).getTime() - slot.getTime(),
    firstStartMs: r.first === null ? Number.NaN : new Date(r.first).getTime() - slot.getTime(),
    meanRunMs: r.runMs === null ? Number.NaN : Math.round(r.runMs * 10) / 10,
    duplicates: r.dup,
    skipped: r.skipped,
    succeeded: r.ok,
  };
}

function cpuText(c: CpuFigures): string {
  return `${c.replicas.toFixed(1)} / ${c.postgres.toFixed(1)} / ${c.sandbox.toFixed(1)}`;
}

async function main(): Promise<void> {
  buildGovtrail();
  const sandbox = await startSandboxProcess(['--entries', '5', '--seed', '42']);
  const db = await createScratchDatabase('govtrail_fleet');
  const dir = mkdtempSync(path.join(tmpdir(), 'govtrail-fleet-bench-'));
  const config = path.join(dir, 'govtrail.yaml');
  writeFileSync(config, yaml(sandbox.baseUrl, sandbox.clientId, sandbox.clientSecret, TENANTS));
  const client = new pg.Client({ connectionString: db.url });
  // The replicas reach the database through a relay that counts their round trips.
  const relay = await startRoundTripCounter();
  const env = (schedule: string): NodeJS.ProcessEnv => ({
    PATH: process.env['PATH'] ?? '',
    ...FAST_HTTP_ENV,
    DATABASE_URL: relay.url(db.name),
    GOVTRAIL_CONFIG: config,
    GOVTRAIL_SCHEDULE: schedule,
    GOVTRAIL_RECONCILE_SCHEDULE: 'off',
    GOVTRAIL_HTTP_PORT: '0',
    GOVTRAIL_JOB_HEARTBEAT: HEARTBEAT,
    LOG_LEVEL: 'warn',
    // e.g. '--cpu-prof --cpu-prof-dir=/tmp/prof' to profile the replicas.
    ...(process.env['BENCH_REPLICA_NODE_OPTIONS'] !== undefined
      ? { NODE_OPTIONS: process.env['BENCH_REPLICA_NODE_OPTIONS'] }
      : {}),
  });
  /** Starts `replicas` workers, lets them all plan one slot `leadMs` from now, waits for it. */
  const runSlot = async (
    replicas: number,
    options: { leadMs?: number; onRunning?: (children: ChildProcess[], slot: Date) => Promise<void> } = {},
  ): Promise<SlotFigures & { slot: Date }> => {
    const slot = new Date(Math.ceil((Date.now() + (options.leadMs ?? 45_000)) / 1000) * 1000);
    const children = startReplicas(replicas, env(onceAt(slot)));
    const reading = async () => ({
      replicas: children.reduce((sum, c) => sum + cpuSeconds(c.pid), 0),
      backends: await backendCpu(client, db.name),
      sandbox: cpuSeconds(sandbox.child.pid),
      sql: relay.roundTrips,
      http: (await sandbox.control<{ requests: number }>('GET', '/_sandbox/stats')).requests,
    });
    try {
      const watching = (async () => {
        await new Promise((r) => setTimeout(r, Math.max(0, slot.getTime() - Date.now())));
        const before = await reading();
        const watched = await watchSlot(client, db.name, slot, Date.now() + 30 * 60_000);
        const after = await reading();
        const perTenant = (n: number) => Math.round((n / Math.max(1, watched.done)) * 100) / 100;
        return {
          ...watched,
          cpu: cpuSpent(before, after),
          roundTripsPerTenant: {
            sql: perTenant(after.sql - before.sql),
            http: perTenant(after.http - before.http),
          },
          replicaPeakRssMiB: children.map((c) => peakRssMiB(c.pid)),
        };
      })();
      if (options.onRunning !== undefined) await options.onRunning(children, slot);
      const { peakConnections, cpu, roundTripsPerTenant, replicaPeakRssMiB } = await watching;
      return {
        replicas,
        slot,
        peakConnections,
        cpu,
        roundTripsPerTenant,
        replicaPeakRssMiB,
        ...(await slotFigures(client, slot)),
      };
    } finally {
      await stopAll(children);
    }
  };

  const results: Record<string, unknown> = { tenants: TENANTS, heartbeat: HEARTBEAT };

  /** Part (3): two replicas, one SIGKILLed once a quarter of the slot is done. */
  const runKill = async () => {
    let killedAt = 0;
    const killed = await runSlot(2, {
      onRunning: async (children, slot) => {
        await new Promise((r) => setTimeout(r, Math.max(0, slot.getTime() - Date.now())));
        for (;;) {
          const { rows } = await client.query<{ n: number }>(
            `select count(*)::int as n from govtrail.sync_run where slot = $1 and status = 'succeeded'`,
            [slot.toISOString()],
          );
          if ((rows[0]?.n ?? 0) >= TENANTS / 4) break;
          await new Promise((r) => setTimeout(r, 50));
        }
        killedAt = Date.now();
        children[1]?.kill('SIGKILL');
      },
    });
    const { rows } = await client.query<{ running: number; failed: number }>(
      `select count(*) filter (where status = 'running')::int as running,
              count(*) filter (where status = 'failed')::int as failed
         from govtrail.sync_run where slot = $1`,
      [killed.slot.toISOString()],
    );
    const recoveredMs = killed.slot.getTime() + killed.slotMs - killedAt;
    results['kill'] = {
      ...killed,
      recoveredMs,
      runsLeftRunning: rows[0]?.running,
      runsClosedFailed: rows[0]?.failed,
    };
    console.log(
      `kill mid-slot (2 replicas): all ${killed.succeeded}/${TENANTS} tenants done ${(recoveredMs / 1000).toFixed(1)} s after the kill; ` +
        `${rows[0]?.failed} run(s) in flight closed failed, ${rows[0]?.running} left running (closed when the tenant runs next)`,
    );
    return { killed, recoveredMs };
  };

  await client.connect();
  try {
    // Migrations and pg-boss's schema first, by one worker, so no replica below pays for them.
    await runSlot(1, { leadMs: 45_000 }).then((r) => {
      results['firstSlot'] = { slotMs: r.slotMs, succeeded: r.succeeded };
      console.log(
        `first slot (backfills, 1 replica): ${(r.slotMs / 1000).toFixed(1)} s for ${r.succeeded} tenants`,
      );
    });

    // (1) Onboarding: one `govtrail sync` over a quarter of the fleet, then over all of it, each
    // into an empty database of its own; the time ratio is the one to hold (target ≤ 4.4 for ×4).
    if (!process.argv.includes('--no-onboarding')) {
      const onboarding = await runOnboardingComparison([Math.max(1, Math.round(TENANTS / 4)), TENANTS], {
        build: false,
      });
      results['onboarding'] = onboarding;
      console.log(formatOnboarding(onboarding));
    }

    // (2) A no-op slot with 1, 2 and 4 replicas.
    const noop: SlotFigures[] = [];
    for (const replicas of REPLICAS) {
      const r = await runSlot(replicas);
      noop.push(r);
      console.log(
        `no-op slot, ${replicas} replica(s): ${(r.slotMs / 1000).toFixed(1)} s, ${r.succeeded}/${TENANTS} tenants, ` +
          `${r.duplicates} duplicates, ${r.skipped} skipped, ${r.peakConnections} connections at peak; ` +
          `CPU s: replicas ${r.cpu.replicas}, PostgreSQL ${r.cpu.postgres}, sandbox ${r.cpu.sandbox}; ` +
          `first run started ${r.firstStartMs} ms after the slot, a run took ${r.meanRunMs} ms on average; ` +
          `round trips per tenant: ${r.roundTripsPerTenant.sql} SQL + ${r.roundTripsPerTenant.http} HTTP; ` +
          `replicas' peak RSS ${r.replicaPeakRssMiB.join(' / ')} MiB`,
      );
    }
    results['noopSlot'] = noop;

    // (3) Two replicas, one SIGKILLed once a quarter of the slot is done.
    const kill = KILL ? await runKill() : undefined;
    console.log('');
    console.log(
      "| part | replicas | slot done in | tenants done | duplicates | skipped | peak connections | CPU s replicas / PostgreSQL / sandbox | round trips per tenant (SQL + HTTP) | replicas' peak RSS |",
    );
    console.log('|---|---|---|---|---|---|---|---|---|---|');
    for (const r of noop) {
      console.log(
        `| (2) no-op slot | ${r.replicas} | ${(r.slotMs / 1000).toFixed(1)} s | ${r.succeeded}/${TENANTS} | ${r.duplicates} | ${r.skipped} | ${r.peakConnections} | ${cpuText(r.cpu)} | ${r.roundTripsPerTenant.sql} + ${r.roundTripsPerTenant.http} | ${r.replicaPeakRssMiB.join(' / ')} MiB |`,
      );
    }
    if (kill !== undefined) {
      const { killed, recoveredMs } = kill;
      console.log(
        `| (3) one of 2 killed | 2 → 1 | ${(killed.slotMs / 1000).toFixed(1)} s (${(recoveredMs / 1000).toFixed(1)} s after the kill) | ${killed.succeeded}/${TENANTS} | ${killed.duplicates} | ${killed.skipped} | ${killed.peakConnections} | ${cpuText(killed.cpu)} | ${killed.roundTripsPerTenant.sql} + ${killed.roundTripsPerTenant.http} | ${killed.replicaPeakRssMiB.join(' / ')} MiB |`,
      );
    }
    console.log(JSON.stringify({ bench: 'fleet', ...results }));
  } finally {
    await client.end().catch(() => {});
    await relay.close();
    await sandbox.close();
    await db.drop();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
