/**
 * `npm run bench [-- --entries N] [-- --memory]`: govtrail's backfill against its two limits, side
 * by side, with the sandbox tenant in its own process and a scratch database on the local server.
 *
 *   (a) fetch limit  — a bare undici loop pages every entry (page_size 100) and discards it
 *   (b) write limit  — the same rows, normalised, hashed and encoded before the clock starts, loaded
 *                      with COPY in 5 000-row batches into freshly migrated tables
 *   (c) govtrail     — `govtrail sync` in a child process, end to end (backfill), run from the
 *                      build in dist/ as installed
 *   (d) no-op run    — `govtrail sync` again with nothing new: wall time and history requests
 *   (e) --memory     — peak RSS of the govtrail process at 10 000 and at 1 000 000 entries
 *   (f) reconcile    — `govtrail reconcile` of the same N entries against the filled store: the whole
 *                      history paged and compared by content hash (target: within 1.5 × (a));
 *                      with --memory, its peak RSS at 10 000 and 1 000 000 (target: ≤ 1.2 ×)
 *
 * For (c) and (f) also the CPU seconds (user + system) of the govtrail process, as a total and per
 * 100 000 entries: wall time moves with a noisy neighbour on a shared machine, CPU time far less.
 * And the CPU seconds of the PostgreSQL backends that served the run (where the server is local and
 * its data directory readable: the postmaster's reaped-children times), since on 2 cores the two
 * processes share the machine, and the server's work bounds the run's wall time as much as govtrail's.
 * They come from the child's resource usage as `/usr/bin/time -v` reports it (wait4 of exactly
 * that process). Where the machine has a hardware counter, `perf stat -e instructions` adds the
 * instructions of the child (see `perfEvent` in lib.ts; a VM without a PMU has none).
 */
import os from 'node:os';
import { sql } from 'kysely';
import { request } from 'undici';
import { normaliseEntry } from '../src/core/normalise/entry.js';
import type { NormalisedEntry } from '../src/core/normalise/types.js';
import { silentLogger } from '../src/runtime/logger.js';
import { openDatabase } from '../src/store/database.js';
import { migrate } from '../src/store/migrate.js';
import { type EncodedEntries, encodeEntries, writeEncodedEntries } from '../src/store/write/entries.js';
import {
  buildGovtrail,
  type ChildResult,
  createScratchDatabase,
  govtrailEnv,
  migrateOrThrow,
  perfEvent,
  runGovtrailWithServerCpu,
  type SandboxProcess,
  sandboxTruth,
  startRoundTripCounter,
  startSandboxProcess,
  syncLog,
} from './lib.js';

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i === -1 ? undefined : process.argv[i + 1];
}
const N = Number(arg('--entries') ?? 100_000);
const MEMORY = process.argv.includes('--memory');
/** The capped-heap variant of (e). */
const HEAP_CAP_MIB = 128;

async function fetchLimit(sb: SandboxProcess): Promise<{ ms: number; entries: number }> {
  const started = performance.now();
  const tok = await request(`${sb.baseUrl}/auth/v1/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'client_credentials',
      client_id: sb.clientId,
      client_secret: sb.clientSecret,
    }).toString(),
  });
  const { access_token } = (await tok.body.json()) as { access_token: string };
  let token = '';
  let entries = 0;
  for (;;) {
    const q = new URLSearchParams({ page_size: '100', ...(token === '' ? {} : { page_token: token }) });
    const res = await request(`${sb.baseUrl}/api/v1/settings/ai-governance/history?${q}`, {
      headers: { authorization: `Bearer ${access_token}` },
    });
    if (res.statusCode !== 200) throw new Error(`history: HTTP ${res.statusCode}`);
    const page = (await res.body.json()) as { list: unknown[] | null; nextPageToken?: string };
    entries += page.list?.length ?? 0;
    token = page.nextPageToken ?? '';
    if (token === '') break;
  }
  return { ms: performance.now() - started, entries };
}

async function writeLimit(truth: unknown[]): Promise<{ ms: number; entries: number }> {
  const scratch = await createScratchDatabase('govtrail_bench_w');
  const database = await openDatabase({ url: scratch.url });
  try {
    await migrate(database, silentLogger);
    // Oldest first, as the chain would be built. Before the clock starts: normalised, hashed and
    // encoded into COPY payloads (history_entry with row hashes, annotations, snapshots), in
    // 5 000-row batches, for a run recorded beforehand.
    const rows: NormalisedEntry[] = [];
    for (let i = truth.length - 1; i >= 0; i--) {
      const n = normaliseEntry('acme', truth[i]);
      if (n.ok) rows.push(n.value);
    }
    const runId = await database.withSession(async (s) => {
      const run = await sql<{ run_id: string }>`
        insert into govtrail.sync_run (tenant_id, trigger) values ('acme', 'cli') returning run_id`.execute(
        s,
      );
      return Number(run.rows[0]?.run_id);
    });
    const batches: EncodedEntries[] = [];
    let prev: Buffer | null = null;
    for (let i = 0; i < rows.length; i += 5000) {
      const batch = encodeEntries(runId, rows.slice(i, i + 5000), prev);
      prev = batch.lastHash;
      batches.push(batch);
    }
    // Timed: the COPYs alone, into the freshly migrated tables (same indexes), in one transaction.
    const started = performance.now();
    await database.withSession(async (s) => {
      await s.transaction().execute(async (trx) => {
        for (const batch of batches) await writeEncodedEntries(trx, batch);
      });
    });
    return { ms: performance.now() - started, entries: rows.length };
  } finally {
    await database.close();
    await scratch.drop();
  }
}

async function backfill(
  n: number,
  memory: boolean,
  /** Runs govtrail with `--max-old-space-size` set to this many MiB. */
  heapCapMiB?: number,
): Promise<{
  ms: number;
  runMs: number | undefined;
  peakRssKb: number | undefined;
  cpu: ChildResult['cpu'];
  /** CPU seconds of the PostgreSQL backends serving the run (undefined where unreadable). */
  serverCpuS: number | undefined;
  instructions: number | undefined;
  noop?: Noop;
  reconcile?: {
    ms: number;
    runMs: number | undefined;
    peakRssKb: number | undefined;
    cpu: ChildResult['cpu'];
    serverCpuS: number | undefined;
    instructions: number | undefined;
    matched: unknown;
  };
  fetch?: { ms: number; entries: number } | undefined;
  write?: { ms: number; entries: number } | undefined;
}> {
  const sb = await startSandboxProcess(['--entries', String(n)]);
  const scratch = await createScratchDatabase();
  try {
    const env = govtrailEnv(
      sb,
      scratch.url,
      heapCapMiB === undefined ? {} : { NODE_OPTIONS: `--max-old-space-size=${heapCapMiB}` },
    );
    await migrateOrThrow(env);
    let fetch: { ms: number; entries: number } | undefined;
    let write: { ms: number; entries: number } | undefined;
    if (!memory) {
      fetch = await fetchLimit(sb);
      write = await writeLimit(await sandboxTruth(sb));
    }
    const c = await runGovtrailWithServerCpu(['sync'], env);
    if (c.code !== 0) throw new Error(`sync failed (${c.code}): ${c.stderr.slice(-2000)}`);
    const cLog = syncLog(c.stderr);
    if (Number(cLog?.['entriesInserted']) !== n)
      throw new Error(`backfill inserted ${String(cLog?.['entriesInserted'])} of ${n}`);
    const reconcile = async () => {
      const f = await runGovtrailWithServerCpu(['reconcile'], env);
      if (f.code !== 0) throw new Error(`reconcile did not agree (${f.code}): ${f.stderr.slice(-2000)}`);
      const fLog = syncLog(f.stderr, 'reconcile');
      if (Number(fLog?.['entriesMatched']) !== n)
        throw new Error(`reconcile matched ${String(fLog?.['entriesMatched'])} of ${n}`);
      return {
        ms: f.ms,
        runMs: Number(fLog?.['ms']),
        peakRssKb: f.peakRssKb,
        cpu: f.cpu,
        serverCpuS: f.serverCpuS,
        instructions: f.instructions,
        matched: fLog?.['entriesMatched'],
      };
    };
    if (memory)
      return {
        ms: c.ms,
        runMs: Number(cLog?.['ms']),
        peakRssKb: c.peakRssKb,
        cpu: c.cpu,
        serverCpuS: c.serverCpuS,
        instructions: c.instructions,
        reconcile: await reconcile(),
      };
    // (d) through a relay that counts the SQL round trips (every Query and Sync message), with the
    // sandbox's own count of HTTP requests (token and history).
    type Stats = { historyRequests: number; requests: number };
    const before = await sb.control<Stats>('GET', '/_sandbox/stats');
    const counter = await startRoundTripCounter();
    let d: Awaited<ReturnType<typeof runGovtrailWithServerCpu>>;
    try {
      d = await runGovtrailWithServerCpu(['sync'], { ...env, DATABASE_URL: counter.url(scratch.name) });
    } finally {
      await counter.close();
    }
    if (d.code !== 0) throw new Error(`no-op sync failed: ${d.stderr.slice(-2000)}`);
    const after = await sb.control<Stats>('GET', '/_sandbox/stats');
    const dLog = syncLog(d.stderr);
    return {
      ms: c.ms,
      runMs: Number(cLog?.['ms']),
      peakRssKb: c.peakRssKb,
      cpu: c.cpu,
      serverCpuS: c.serverCpuS,
      instructions: c.instructions,
      noop: {
        ms: d.ms,
        runMs: Number(dLog?.['ms']),
        requests: after.historyRequests - before.historyRequests,
        httpRequests: after.requests - before.requests,
        sqlRoundTrips: counter.roundTrips,
        connections: counter.connections,
        peakRssKb: d.peakRssKb,
        cpu: d.cpu,
        serverCpuS: d.serverCpuS,
        inserted: dLog?.['entriesInserted'],
      },
      reconcile: await reconcile(),
      fetch,
      write,
    };
  } finally {
    await sb.close();
    await scratch.drop();
  }
}

/** (d), the no-op run: its time, requests, round trips and resources. */
interface Noop {
  ms: number;
  runMs: number | undefined;
  /** History requests the sandbox served. */
  requests: number;
  /** Every HTTP request the sandbox served (token and history). */
  httpRequests: number;
  /** SQL round trips (Query and Sync messages), migrations and start-up checks included. */
  sqlRoundTrips: number;
  connections: number;
  peakRssKb: number | undefined;
  cpu: ChildResult['cpu'];
  serverCpuS: number | undefined;
  inserted: unknown;
}

const fmt = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
const rate = (n: number, ms: number) => Math.round((n * 1000) / ms);
/** user + system seconds of a child. */
const cpuS = (cpu: ChildResult['cpu']) => (cpu === undefined ? Number.NaN : cpu.userS + cpu.systemS);
/** CPU seconds per 100 000 entries. */
const per100k = (s: number, n: number) => Number(((s * 100_000) / n).toFixed(2));
function cpuNote(cpu: ChildResult['cpu'], instructions: number | undefined, n: number): string {
  if (cpu === undefined) return 'not measured';
  const ins =
    instructions === undefined
      ? ''
      : `, ${(instructions / 1e9).toFixed(2)} G ${perfEvent() || 'events'} (${((instructions * 100_000) / n / 1e9).toFixed(2)} G / 100 000)`;
  return `user ${cpu.userS.toFixed(2)} s + sys ${cpu.systemS.toFixed(2)} s; ${per100k(cpuS(cpu), n).toFixed(2)} s / 100 000 entries${ins}`;
}

function serverCpuNote(s: number | undefined): string {
  return s === undefined
    ? 'not readable (server not local, or its data directory unreadable)'
    : `${s.toFixed(2)} s`;
}

async function main(): Promise<void> {
  const load = os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');
  process.stderr.write(`bench: N=${N}, nproc ${os.cpus().length}, load ${load}; building dist/\n`);
  buildGovtrail();
  const r = await backfill(N, false);
  const a = r.fetch as { ms: number; entries: number };
  const b = r.write as { ms: number; entries: number };
  const noop = r.noop as Noop;
  const rows: [string, string, string][] = [
    ['(a) fetch limit (undici loop, page_size 100)', fmt(a.ms), `${rate(a.entries, a.ms)}/s`],
    ['(b) write limit (COPY, 5 000-row batches)', fmt(b.ms), `${rate(b.entries, b.ms)}/s`],
    ['(c) govtrail sync backfill (child process)', fmt(r.ms), `${rate(N, r.ms)}/s (in-run ${r.runMs} ms)`],
    [
      '(d) no-op incremental sync (child process)',
      fmt(noop.ms),
      `${noop.requests} history request(s), in-run ${noop.runMs} ms, inserted ${String(noop.inserted)}`,
    ],
    [
      '    round trips of (d)',
      String(noop.sqlRoundTrips + noop.httpRequests),
      `${noop.sqlRoundTrips} SQL (Query/Sync messages, ${noop.connections} connection(s)) + ${noop.httpRequests} HTTP`,
    ],
    ['    peak RSS of (d)', `${Math.round((noop.peakRssKb ?? 0) / 1024)} MiB`, ''],
    [
      '    CPU of (d) (govtrail / PostgreSQL)',
      `${cpuS(noop.cpu).toFixed(2)} s`,
      serverCpuNote(noop.serverCpuS),
    ],
    ['    peak RSS of (c)', `${Math.round((r.peakRssKb ?? 0) / 1024)} MiB`, ''],
    ['    CPU of (c) (govtrail process)', `${cpuS(r.cpu).toFixed(2)} s`, cpuNote(r.cpu, r.instructions, N)],
    ['    CPU of (c) (PostgreSQL backends)', serverCpuNote(r.serverCpuS), ''],
  ];
  const f = r.reconcile as NonNullable<typeof r.reconcile>;
  rows.push(
    [
      '(f) govtrail reconcile of the filled store',
      fmt(f.ms),
      `${rate(N, f.ms)}/s (in-run ${f.runMs} ms), ${(f.ms / a.ms).toFixed(2)} × (a)`,
    ],
    ['    peak RSS of (f)', `${Math.round((f.peakRssKb ?? 0) / 1024)} MiB`, ''],
    ['    CPU of (f) (govtrail process)', `${cpuS(f.cpu).toFixed(2)} s`, cpuNote(f.cpu, f.instructions, N)],
    ['    CPU of (f) (PostgreSQL backends)', serverCpuNote(f.serverCpuS), ''],
  );
  // (e) twice: as Node sizes its heap by default, and with the heap capped. By default V8 lets the
  // heap grow with the allocation rate of a long run (garbage not yet collected, not data kept), so
  // a 2-second run of 10 000 entries never reaches the size a 2-minute run does.
  let memory: Record<string, number> | undefined;
  if (MEMORY) {
    memory = {};
    for (const cap of [undefined, HEAP_CAP_MIB]) {
      const m10k = await backfill(10_000, true, cap);
      const m1m = await backfill(1_000_000, true, cap);
      const label = cap === undefined ? 'default heap' : `heap capped at ${cap} MiB`;
      const suffix = cap === undefined ? '' : 'Capped';
      memory[`peakRss10kMiB${suffix}`] = Math.round((m10k.peakRssKb ?? 0) / 1024);
      memory[`peakRss1mMiB${suffix}`] = Math.round((m1m.peakRssKb ?? 0) / 1024);
      memory[`rss1mOver10k${suffix}`] = Number(((m1m.peakRssKb ?? 0) / (m10k.peakRssKb ?? 1)).toFixed(2));
      memory[`backfill1mPerS${suffix}`] = rate(1_000_000, m1m.ms);
      const r10k = m10k.reconcile?.peakRssKb ?? 0;
      const r1m = m1m.reconcile?.peakRssKb ?? 0;
      memory[`reconcileRss10kMiB${suffix}`] = Math.round(r10k / 1024);
      memory[`reconcileRss1mMiB${suffix}`] = Math.round(r1m / 1024);
      memory[`reconcileRss1mOver10k${suffix}`] = Number((r1m / (r10k || 1)).toFixed(2));
      memory[`reconcile1mPerS${suffix}`] = rate(1_000_000, m1m.reconcile?.ms ?? 1);
      rows.push(
        [
          `(e) peak RSS, backfill of 10 000 (${label})`,
          `${Math.round((m10k.peakRssKb ?? 0) / 1024)} MiB`,
          fmt(m10k.ms),
        ],
        [
          `(e) peak RSS, backfill of 1 000 000 (${label})`,
          `${Math.round((m1m.peakRssKb ?? 0) / 1024)} MiB`,
          `${fmt(m1m.ms)}, ${rate(1_000_000, m1m.ms)}/s`,
        ],
        [
          `(f) peak RSS, reconcile of 10 000 (${label})`,
          `${Math.round(r10k / 1024)} MiB`,
          fmt(m10k.reconcile?.ms ?? 0),
        ],
        [
          `(f) peak RSS, reconcile of 1 000 000 (${label})`,
          `${Math.round(r1m / 1024)} MiB`,
          `${fmt(m1m.reconcile?.ms ?? 0)}, ${(r1m / (r10k || 1)).toFixed(2)} × the 10 000 figure`,
        ],
      );
    }
  }
  const w = Math.max(...rows.map((x) => x[0].length));
  const out = [`| ${'measure'.padEnd(w)} | time / size | rate / notes |`, `|${'-'.repeat(w + 2)}|---|---|`];
  for (const [k, t, n] of rows) out.push(`| ${k.padEnd(w)} | ${t} | ${n} |`);
  process.stdout.write(`${out.join('\n')}\n`);
  const summary = {
    entries: N,
    load: os.loadavg()[0],
    fetchMs: Math.round(a.ms),
    writeMs: Math.round(b.ms),
    syncMs: Math.round(r.ms),
    fetchPerS: rate(a.entries, a.ms),
    writePerS: rate(b.entries, b.ms),
    syncPerS: rate(N, r.ms),
    cOverMaxAB: Number((r.ms / Math.max(a.ms, b.ms)).toFixed(2)),
    cOverSumAB: Number((r.ms / (a.ms + b.ms)).toFixed(2)),
    noopMs: Math.round(noop.ms),
    noopRunMs: noop.runMs,
    noopHistoryRequests: noop.requests,
    noopHttpRequests: noop.httpRequests,
    noopSqlRoundTrips: noop.sqlRoundTrips,
    noopRoundTrips: noop.sqlRoundTrips + noop.httpRequests,
    noopConnections: noop.connections,
    noopPeakRssMiB: Math.round((noop.peakRssKb ?? 0) / 1024),
    noopCpuS: Number(cpuS(noop.cpu).toFixed(2)),
    noopServerCpuS: noop.serverCpuS,
    peakRssMiB: Math.round((r.peakRssKb ?? 0) / 1024),
    reconcileMs: Math.round(f.ms),
    reconcileRunMs: f.runMs,
    reconcilePerS: rate(N, f.ms),
    fOverA: Number((f.ms / a.ms).toFixed(2)),
    reconcilePeakRssMiB: Math.round((f.peakRssKb ?? 0) / 1024),
    syncCpuS: Number(cpuS(r.cpu).toFixed(2)),
    syncUserS: r.cpu?.userS,
    syncSysS: r.cpu?.systemS,
    syncCpuPer100kS: per100k(cpuS(r.cpu), N),
    reconcileCpuS: Number(cpuS(f.cpu).toFixed(2)),
    reconcileUserS: f.cpu?.userS,
    reconcileSysS: f.cpu?.systemS,
    reconcileCpuPer100kS: per100k(cpuS(f.cpu), N),
    syncServerCpuS: r.serverCpuS,
    reconcileServerCpuS: f.serverCpuS,
    perf: perfEvent() || 'unsupported',
    ...(r.instructions === undefined ? {} : { syncInstructions: r.instructions }),
    ...(f.instructions === undefined ? {} : { reconcileInstructions: f.instructions }),
    ...memory,
  };
  process.stdout.write(`${JSON.stringify(summary)}\n`);
}

main().catch((err: unknown) => {
  process.stderr.write(`bench failed: ${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
