/**
 * `tsx bench/health-metrics.ts [--tenants N] [--root DIR] [--url URL]`: /healthz and /metrics of
 * one worker at fleet size N (default 10 000): response size, series and time of each, three
 * scrapes. The run ledger holds three finished syncs per tenant (inserted directly), the engine
 * runs but plans no slot (a yearly schedule). `--root` runs another checkout's source (e.g. the
 * commit before a change, for a before/after pair); `--url` is a PostgreSQL server (a scratch
 * database is created on it and dropped).
 */
import path from 'node:path';
import pg from 'pg';

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i === -1 ? undefined : process.argv[i + 1];
}

const TENANTS = Number(arg('--tenants') ?? 10_000);
const ROOT = path.resolve(arg('--root') ?? path.join(import.meta.dirname, '..'));
const SERVER = arg('--url') ?? 'postgres://postgres@127.0.0.1:5432/postgres';

const load = (p: string) => import(path.join(ROOT, p));

async function main(): Promise<void> {
  const { loadConfig } = await load('src/config/settings.ts');
  const { openDatabase } = await load('src/store/database.ts');
  const { migrate } = await load('src/store/migrate.ts');
  const { startWorkerService } = await load('src/app/worker.ts');
  const { silentLogger } = await load('src/runtime/logger.ts');
  const name = `govtrail_bench_hm_${process.pid}`;
  const admin = new pg.Client({ connectionString: SERVER });
  await admin.connect();
  await admin.query(`create database ${name}`);
  const u = new URL(SERVER);
  u.pathname = `/${name}`;
  const url = u.toString();
  const database = await openDatabase({ url });
  try {
    await migrate(database, silentLogger);
    const tenants = Array.from({ length: TENANTS }, (_, i) => ({
      name: `fleet-${String(i).padStart(5, '0')}`,
      baseUrl: 'http://127.0.0.1:9',
      clientId: 'bench',
      clientSecret: 'bench',
      pageSize: 100,
      lookbackMs: 900_000,
    }));
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    await c.query(
      `insert into govtrail.sync_run (tenant_id, trigger, started_at, finished_at, status)
       select t, 'schedule', now() - (k || ' minutes')::interval, now() - (k || ' minutes')::interval + interval '2 seconds', 'succeeded'
       from unnest($1::text[]) t, generate_series(1, 3) k`,
      [tenants.map((t) => t.name)],
    );
    await c.query('analyze govtrail.sync_run');
    await c.end();
    const config = {
      ...loadConfig(
        { DATABASE_URL: url, GOVTRAIL_SCHEDULE: '0 0 1 1 *', LOG_LEVEL: 'silent' },
        { dotenv: false },
      ),
      tenants,
    };
    const service = await startWorkerService({
      config,
      logger: silentLogger,
      database,
      httpPort: 0,
      httpHost: '127.0.0.1',
      processMetrics: false,
    });
    try {
      const engine = service.engine ?? service.worker;
      await engine.start({ initialRun: false });
      const base = `http://127.0.0.1:${service.port}`;
      const rows: string[] = [];
      for (let i = 0; i < 3; i++) {
        for (const p of ['/healthz', '/metrics']) {
          const t0 = performance.now();
          const res = await fetch(`${base}${p}`);
          const body = await res.text();
          const ms = performance.now() - t0;
          const series =
            p === '/metrics' ? body.split('\n').filter((l) => l !== '' && !l.startsWith('#')).length : 0;
          rows.push(
            `${p.padEnd(9)} ${String(res.status).padEnd(4)} ${(body.length / 1024).toFixed(1).padStart(8)} KiB ${ms.toFixed(0).padStart(6)} ms${p === '/metrics' ? ` ${series} series` : ''}`,
          );
        }
      }
      process.stdout.write(
        `root ${ROOT}, ${TENANTS} tenants, load ${(await import('node:os'))
          .loadavg()
          .map((x) => x.toFixed(1))
          .join(' ')}\n${rows.join('\n')}\n`,
      );
    } finally {
      await service.stop(0);
    }
  } finally {
    await admin.query(`drop database if exists ${name} with (force)`);
    await admin.end();
  }
}

await main();
