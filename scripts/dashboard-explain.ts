/**
 * `npx tsx scripts/dashboard-explain.ts [--url URL] [--tenant NAME] [--days 30] [--to TIME|now] [--runs 3] [--jit] [--rows]`:
 * runs every query of dashboards/grafana/govtrail.json with EXPLAIN (ANALYZE, BUFFERS) against a
 * database, as `govtrail_reader`, with the Grafana macros expanded as Grafana's PostgreSQL data source
 * expands them, and prints one line per panel: execution time, rows, plan shape, indexes used.
 *
 * The range is the last `--days` days (default 30) ending at `--to` (a time, or `now`), by default
 * at the tenant's newest stored entry (exporter_health.checkpoint_entry_created_at: the end of the
 * data). Each query runs `--runs` times (default 3); the best
 * run is reported, the first one warming the cache. The URL defaults to DATABASE_URL; the
 * connecting role must be able to `set role govtrail_reader` (a superuser, the owner, or a member).
 * JIT is off, as docs/dashboards.md configures the dashboard login; `--jit` leaves the server's
 * setting in force instead. `--rows` runs each query once without EXPLAIN and prints the rows it
 * returns (what a panel shows).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { expandGrafanaSql, grafanaInterval, type TimeRange } from '../test/helpers/grafana-macros.js';
import { DASHBOARD_FILE, dashboardQueries } from './dashboard.js';

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i === -1 ? undefined : process.argv[i + 1];
}

interface PlanNode {
  'Node Type': string;
  'Index Name'?: string;
  'Relation Name'?: string;
  'Actual Rows'?: number;
  'Actual Loops'?: number;
  'Shared Hit Blocks'?: number;
  'Shared Read Blocks'?: number;
  Plans?: PlanNode[];
}

interface Explained {
  Plan: PlanNode;
  'Planning Time': number;
  'Execution Time': number;
}

/** Index names used anywhere in the plan, in order of first use. */
function indexesOf(node: PlanNode, out = new Set<string>()): Set<string> {
  if (node['Index Name'] !== undefined) out.add(node['Index Name']);
  for (const child of node.Plans ?? []) indexesOf(child, out);
  return out;
}

const SHORT: Record<string, string> = {
  'Nested Loop': 'NL',
  'Index Scan': 'IdxScan',
  'Index Only Scan': 'IdxOnly',
  'Bitmap Heap Scan': 'BitmapHeap',
  'Bitmap Index Scan': 'BitmapIdx',
  'Seq Scan': 'SeqScan',
  Aggregate: 'Agg',
  'Function Scan': 'FuncScan',
  'Subquery Scan': 'SubqScan',
};

/** A one-line outline of the plan: node types nested, scans with their index or table. */
function shape(node: PlanNode, depth = 0): string {
  const name = SHORT[node['Node Type']] ?? node['Node Type'];
  const target = node['Index Name'] ?? node['Relation Name'];
  const self = target === undefined ? name : `${name} ${target}`;
  const children = (node.Plans ?? []).map((c) => shape(c, depth + 1));
  if (children.length === 0 || depth >= 3) return self;
  return `${self}(${children.join(', ')})`;
}

function totalBuffers(node: PlanNode): { hit: number; read: number } {
  return { hit: node['Shared Hit Blocks'] ?? 0, read: node['Shared Read Blocks'] ?? 0 };
}

async function main(): Promise<void> {
  const url = arg('--url') ?? process.env['DATABASE_URL'];
  if (url === undefined) {
    console.error('set --url or DATABASE_URL');
    process.exit(2);
  }
  const days = Number(arg('--days') ?? 30);
  const runs = Math.max(1, Number(arg('--runs') ?? 3));
  const jit = process.argv.includes('--jit');
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
  const model = JSON.parse(readFileSync(path.join(root, DASHBOARD_FILE), 'utf8')) as unknown;

  const client = new pg.Client({ connectionString: url, application_name: 'govtrail-dashboard-explain' });
  await client.connect();
  try {
    // Through the public views only, so that the reader login itself can run this script.
    const tenant =
      arg('--tenant') ??
      ((await client.query<{ t: string }>('select min(tenant_id) as t from govtrail.exporter_health')).rows[0]
        ?.t as string);
    const { rows: health } = await client.query<{ entries: string; newest: Date }>(
      `select entries_stored as entries, checkpoint_entry_created_at as newest
       from govtrail.exporter_health where tenant_id = $1`,
      [tenant],
    );
    const toArg = arg('--to');
    const to =
      toArg === undefined ? (health[0]?.newest as Date) : toArg === 'now' ? new Date() : new Date(toArg);
    const range: TimeRange = { from: new Date(to.getTime() - days * 86_400_000), to };
    console.log(
      `tenant ${tenant}, ${health[0]?.entries} entries; range ${range.from.toISOString()} .. ${range.to.toISOString()} (${days} days); best of ${runs}; jit ${jit ? 'as configured' : 'off'}`,
    );
    const rowsOnly = process.argv.includes('--rows');
    console.log(
      rowsOnly
        ? '| panel | rows |\n|---|---:|'
        : '| panel | ms | rows | buffers hit/read | plan shape | indexes |',
    );
    if (!rowsOnly) console.log('|---|---:|---:|---|---|---|');
    for (const q of dashboardQueries(model)) {
      const { sql } = expandGrafanaSql(q.rawSql, {
        range,
        variables: { tenant },
        intervalMs: grafanaInterval(range, q.minInterval),
      });
      if (rowsOnly) {
        await client.query('begin');
        try {
          await client.query('set local role govtrail_reader');
          const { rowCount } = await client.query(sql);
          console.log(`| ${q.name} | ${rowCount} |`);
        } finally {
          await client.query('rollback');
        }
        continue;
      }
      let best: Explained | undefined;
      for (let i = 0; i < runs; i++) {
        await client.query('begin');
        try {
          await client.query('set local role govtrail_reader');
          // What docs/dashboards.md asks of a dashboard login (`alter role … set jit = off`): these
          // queries take milliseconds, and JIT compiling them takes hundreds.
          if (!jit) await client.query('set local jit = off');
          const { rows } = await client.query<{ 'QUERY PLAN': Explained[] }>(
            `explain (analyze, buffers, format json) ${sql}`,
          );
          const e = rows[0]?.['QUERY PLAN'][0] as Explained;
          if (best === undefined || e['Execution Time'] < best['Execution Time']) best = e;
        } finally {
          await client.query('rollback');
        }
      }
      const e = best as Explained;
      const b = totalBuffers(e.Plan);
      console.log(
        `| ${q.name} | ${e['Execution Time'].toFixed(1)} | ${e.Plan['Actual Rows']} | ${b.hit}/${b.read} | ${shape(e.Plan)} | ${[...indexesOf(e.Plan)].join(', ') || '—'} |`,
      );
    }
  } finally {
    await client.end();
  }
}

await main();
