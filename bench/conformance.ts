/**
 * `npm run bench:conformance [-- --entries N] [-- --large M] [-- --pairs P]`: what judging costs
 * (docs/design/conformance.md), on the local PostgreSQL server. Prints a table and one JSON line.
 *
 *   (1) backfill   — `govtrail sync` of N sandbox entries (default 100 000) in a child process,
 *                    with and without GOVTRAIL_BASELINE, alternating P pairs; the judging time the
 *                    run logs ("conformance judged", ms) against the sync's wall time (c).
 *                    Target: judging ≤ 10 % of (c).
 *   (2) incremental — a run that stored 10 entries, judged on a tenant of 10 000 and of M (default
 *                    1 000 000) stored entries: the cost should not grow with the history.
 *   (3) re-judge   — the whole M-entry history judged again after a change of baseline.
 *   (4) report     — `baseline report` over a year of the M-entry tenant (in process, the same code
 *                    the command runs). Target ≤ 2 s.
 *
 * (2)–(4) use a synthetic history written straight into the store (a year of entries, each field
 * changing in blocks, a hard delete every 50 000 entries): seeding a million entries through the
 * sandbox takes minutes on this machine, and the judge reads only the stored rows.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { runReport } from '../src/app/conformance.js';
import { type Baseline, parseBaseline } from '../src/core/conformance/baseline.js';
import { DEFAULT_RANKS } from '../src/core/diff.js';
import { silentLogger } from '../src/runtime/logger.js';
import { type Database, openDatabase } from '../src/store/database.js';
import { migrate } from '../src/store/migrate.js';
import { judgeTenant } from '../src/sync/conformance.js';
import { SNAPSHOT_ROWS_OF_RUN } from '../test/helpers/conformance.js';
import {
  buildGovtrail,
  createScratchDatabase,
  govtrailEnv,
  runGovtrail,
  startSandboxProcess,
  syncLog,
} from './lib.js';

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i === -1 ? undefined : process.argv[i + 1];
}
const N = Number(arg('--entries') ?? 100_000);
const LARGE = Number(arg('--large') ?? 1_000_000);
const PAIRS = Number(arg('--pairs') ?? 1);

const BASELINE = `baseline: bench
title: Benchmark baseline
controls:
  - id: AIG-01
    title: Tool calls need approval
    field: require_tool_approval
    expect: { equals: true }
    severity: high
  - id: AIG-02
    field: audit_verbosity
    expect: { at_least: AUDIT_VERBOSITY_STANDARD }
  - id: AIG-03
    field: allowed_client_types
    expect: { subset_of: [MCP_CLIENT_TYPE_SHARED, MCP_CLIENT_TYPE_SERVICE] }
  - id: AIG-04
    field: retention_delete_after
    expect: { at_least: 365d }
  - id: AIG-05
    field: auto_discovery_enabled
    expect: { equals: false }
  - id: AIG-06
    field: default_tool_classification
    expect: { at_least: TOOL_CLASSIFICATION_WRITE }
exceptions:
  - control: AIG-03
    tenants: [bench, acme]
    value: [MCP_CLIENT_TYPE_SHARED, MCP_CLIENT_TYPE_PERSONAL]
    rationale: pilot
    approved_by: ciso
    approved_at: 2025-03-01T00:00:00Z
    expires: 2025-09-01T00:00:00Z
`;

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
const fmt = (ms: number) => (ms >= 1000 ? `${(ms / 1000).toFixed(2)} s` : `${ms.toFixed(1)} ms`);

/** The "conformance judged" log line of a run: its ms. */
function judgedMs(stderr: string): number | undefined {
  for (const l of stderr.split('\n')) {
    if (!l.includes('conformance judged')) continue;
    try {
      return Number((JSON.parse(l) as { ms: number }).ms);
    } catch {}
  }
  return undefined;
}

async function backfill(): Promise<{ withMs: number[]; withoutMs: number[]; judgeMs: number[] }> {
  buildGovtrail();
  const dir = mkdtempSync(path.join(os.tmpdir(), 'govtrail-bench-conf-'));
  const file = path.join(dir, 'baseline.yaml');
  writeFileSync(file, BASELINE);
  const sb = await startSandboxProcess(['--entries', String(N)]);
  const out = { withMs: [] as number[], withoutMs: [] as number[], judgeMs: [] as number[] };
  try {
    for (let p = 0; p < PAIRS; p++) {
      for (const judged of [false, true]) {
        const db = await createScratchDatabase('govtrail_bench_conf');
        try {
          const env = govtrailEnv(sb, db.url, judged ? { GOVTRAIL_BASELINE: file } : {});
          const m = await runGovtrail(['migrate'], env);
          if (m.code !== 0) throw new Error(`migrate: ${m.stderr}`);
          const r = await runGovtrail(['sync'], env);
          if (r.code !== 0 || syncLog(r.stderr) === undefined)
            throw new Error(`sync: ${r.stderr.slice(-2000)}`);
          if (judged) {
            out.withMs.push(r.ms);
            out.judgeMs.push(judgedMs(r.stderr) ?? Number.NaN);
          } else out.withoutMs.push(r.ms);
          process.stderr.write(`bench: backfill ${judged ? 'with' : 'without'} baseline: ${fmt(r.ms)}\n`);
        } finally {
          await db.drop();
        }
      }
    }
  } finally {
    await sb.close();
  }
  return out;
}

/**
 * Writes `count` synthetic entries of tenant `tenant` as one run, `stepS` seconds apart from
 * `startAt` (by default a year from 2025-01-01).
 */
async function seed(
  database: Database,
  tenant: string,
  count: number,
  startG = 1,
  startAt = '2025-01-01T00:00:00Z',
  stepS = (365 * 86_400) / Math.max(count, 1),
): Promise<number> {
  const { rows } = await sql<{ run_id: number }>`
    insert into govtrail.sync_run (tenant_id, trigger, status) values (${tenant}, 'cli', 'succeeded') returning run_id`.execute(
    database.db,
  );
  const runId = Number(rows[0]?.run_id);
  const CHUNK = 100_000;
  for (let from = startG; from < startG + count; from += CHUNK) {
    const to = Math.min(from + CHUNK - 1, startG + count - 1);
    await sql`
      insert into govtrail.history_entry
        (tenant_id, entry_id, created_at, created_at_text, change_kind, actor_kind, actor_user_id, raw, run_id, row_hash)
      select ${tenant}, lpad(g::text, 12, '0'), x.t,
             to_char(x.t at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US') || '000Z',
             case when g % 49999 = 0 then 'CHANGE_KIND_HARD_DELETE' else 'CHANGE_KIND_PUT' end,
             'ACTOR_KIND_USER', 'u' || (g % 7),
             case when g % 49999 = 0 then jsonb_build_object('changeKind', 'CHANGE_KIND_HARD_DELETE')
             else jsonb_build_object('snapshot', jsonb_build_object(
               'requireToolApproval', (g / 997) % 5 <> 0,
               'auditVerbosity', (array['AUDIT_VERBOSITY_MINIMAL','AUDIT_VERBOSITY_STANDARD','AUDIT_VERBOSITY_FULL'])[1 + (g / 1499) % 3],
               'allowedClientTypes', case (g / 2003) % 3 when 0 then '["MCP_CLIENT_TYPE_SHARED"]'::jsonb
                                       when 1 then '["MCP_CLIENT_TYPE_SHARED","MCP_CLIENT_TYPE_PERSONAL"]'::jsonb else '[]'::jsonb end,
               'autoDiscoveryEnabled', (g / 2999) % 4 = 0,
               'defaultToolClassification', (array['TOOL_CLASSIFICATION_READ','TOOL_CLASSIFICATION_WRITE','TOOL_CLASSIFICATION_DESTRUCTIVE'])[1 + (g / 3989) % 3],
               'defaultClientLifecycle', jsonb_build_object('retentionDeleteAfter', case (g / 4999) % 2 when 0 then '31536000s' else '86400s' end)))
             end,
             ${runId}, '\\x00'::bytea
      from generate_series(${from}::bigint, ${to}::bigint) g
      cross join lateral (select ${startAt}::timestamptz + ((g - ${startG}::bigint) * ${stepS}::float8) * interval '1 second' as t) x`.execute(
      database.db,
    );
  }
  await sql.raw(SNAPSHOT_ROWS_OF_RUN.replace('$1', String(runId))).execute(database.db);
  if (count > 1000) await sql`analyze govtrail.history_entry`.execute(database.db);
  return runId;
}

/** Wall time, and the CPU time of this process (the judge's own work, without the server's). */
async function timed<T>(fn: () => Promise<T>): Promise<{ ms: number; cpuMs: number; value: T }> {
  const t = performance.now();
  const c = process.cpuUsage();
  const value = await fn();
  const used = process.cpuUsage(c);
  return { ms: performance.now() - t, cpuMs: (used.user + used.system) / 1000, value };
}

async function main(): Promise<void> {
  const load = os
    .loadavg()
    .map((x) => x.toFixed(2))
    .join(' ');
  const baseline: Baseline = parseBaseline(BASELINE, 'bench.yaml', DEFAULT_RANKS);
  const changed: Baseline = parseBaseline(
    BASELINE.replace('at_least: 365d', 'at_least: 30d'),
    'bench2.yaml',
    DEFAULT_RANKS,
  );

  const bf = N > 0 ? await backfill() : { withMs: [], withoutMs: [], judgeMs: [] };

  const scratch = await createScratchDatabase('govtrail_bench_conf');
  const database = await openDatabase({ url: scratch.url });
  const rows: string[][] = [];
  const json: Record<string, unknown> = { load, entries: N, large: LARGE };
  try {
    await migrate(database, silentLogger);
    const incremental: Record<string, number> = {};
    for (const [tenant, size] of [
      ['small', 10_000],
      ['bench', LARGE],
    ] as const) {
      const seeded = await timed(() => seed(database, tenant, size));
      process.stderr.write(`bench: seeded ${size} entries in ${fmt(seeded.ms)}\n`);
      const full = await timed(() =>
        database.db.transaction().execute((trx) => judgeTenant(trx, tenant, baseline, seeded.value)),
      );
      if (tenant === 'bench') {
        json['first_judge_ms'] = Math.round(full.ms);
        rows.push([
          `first judgement of ${LARGE.toLocaleString('en')} entries`,
          fmt(full.ms),
          `${full.value.written.length} periods`,
        ]);
      }
      // Incremental runs: 10 new entries each, after the history, five times.
      const times: number[] = [];
      for (let i = 0; i < 5; i++) {
        // Ten entries a second apart, after the history's end (as a sync of the last minutes stores).
        const runId = await seed(database, tenant, 10, size + 1 + i * 10, `2026-01-02T0${i}:00:00Z`, 1);
        const r = await timed(() =>
          database.db.transaction().execute((trx) => judgeTenant(trx, tenant, baseline, runId)),
        );
        times.push(r.ms);
      }
      incremental[tenant] = median(times);
      rows.push([
        `incremental run (10 entries), ${size.toLocaleString('en')} stored`,
        fmt(median(times)),
        'median of 5',
      ]);
    }
    json['incremental_10k_ms'] = Math.round(incremental['small'] ?? 0);
    json['incremental_large_ms'] = Math.round(incremental['bench'] ?? 0);

    const rejudge = await timed(() =>
      database.db.transaction().execute((trx) => judgeTenant(trx, 'bench', changed, null)),
    );
    json['rejudge_ms'] = Math.round(rejudge.ms);
    json['rejudge_cpu_ms'] = Math.round(rejudge.cpuMs);
    rows.push([
      `re-judge ${LARGE.toLocaleString('en')} entries after a baseline change`,
      fmt(rejudge.ms),
      `${rejudge.value.entriesJudged} entries, ${rejudge.value.written.length} periods; govtrail CPU ${fmt(rejudge.cpuMs)}`,
    ]);

    const reportTimes: number[] = [];
    let periodsRead = 0;
    for (let i = 0; i < 3; i++) {
      const r = await timed(() =>
        database.db
          .transaction()
          .execute((trx) =>
            runReport(
              trx,
              [{ tenant: 'bench', baseline: changed }],
              '2025-01-01T00:00:00.000000000Z',
              '2026-01-01T00:00:00.000000000Z',
            ),
          ),
      );
      reportTimes.push(r.ms);
      periodsRead = r.value[0]?.tenants[0]?.controls.reduce((n, c) => n + c.fail_periods.length, 0) ?? 0;
    }
    json['report_year_ms'] = Math.round(median(reportTimes));
    rows.push([
      `baseline report over a year of ${LARGE.toLocaleString('en')} entries`,
      fmt(median(reportTimes)),
      `median of 3; ${periodsRead} fail periods listed; target ≤ 2 s`,
    ]);
  } finally {
    await database.close();
    await scratch.drop();
  }

  if (bf.withMs.length > 0) {
    const c = median(bf.withoutMs);
    const w = median(bf.withMs);
    const j = median(bf.judgeMs);
    rows.unshift(
      [
        `(c) backfill of ${N.toLocaleString('en')} entries without a baseline`,
        fmt(c),
        `median of ${bf.withoutMs.length}`,
      ],
      [`    the same with GOVTRAIL_BASELINE`, fmt(w), `+${(((w - c) / c) * 100).toFixed(1)} % wall (noisy)`],
      [
        `    judging inside that run (logged)`,
        fmt(j),
        `${((j / c) * 100).toFixed(1)} % of (c); target ≤ 10 %`,
      ],
    );
    json['backfill_without_ms'] = Math.round(c);
    json['backfill_with_ms'] = Math.round(w);
    json['backfill_judge_ms'] = Math.round(j);
  }
  const width = Math.max(...rows.map((r) => (r[0] as string).length));
  process.stdout.write(`load average: ${load}\n\n`);
  process.stdout.write(`| ${'measure'.padEnd(width)} | time | note |\n|${'-'.repeat(width + 2)}|---|---|\n`);
  for (const r of rows) process.stdout.write(`| ${(r[0] as string).padEnd(width)} | ${r[1]} | ${r[2]} |\n`);
  process.stdout.write(`\n${JSON.stringify({ bench: 'conformance', ...json })}\n`);
}

await main();
