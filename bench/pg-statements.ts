/**
 * `npx tsx bench/pg-statements.ts [N] [--explain]`: one backfill of N entries (the build in dist/)
 * with the server logging every statement's duration (and with --explain, auto_explain's plans with
 * their trigger times) for the scratch database only, and govtrail's debug log. Point
 * BENCH_DATABASE_URL at a cluster of your own: the durations land in its server log. --keep leaves
 * the database in place (its name printed) for measuring statements on the stored rows.
 */
import pg from 'pg';
import { buildGovtrail, runGovtrail, withFreshStore } from './lib.js';

const N = Number(process.argv[2] ?? 100_000);
const EXPLAIN = process.argv.includes('--explain');
/** Keep the scratch database (its name is printed) to measure statements on it afterwards. */
const KEEP = process.argv.includes('--keep');

async function main(): Promise<void> {
  buildGovtrail();
  await withFreshStore(
    N,
    async ({ scratch, env }) => {
      const admin = new pg.Client({ connectionString: scratch.url });
      await admin.connect();
      await admin.query(`alter database ${scratch.name} set log_min_duration_statement = 0`);
      if (EXPLAIN) {
        await admin.query(`alter database ${scratch.name} set session_preload_libraries = 'auto_explain'`);
        await admin.query(`alter database ${scratch.name} set auto_explain.log_min_duration = 20`);
        await admin.query(`alter database ${scratch.name} set auto_explain.log_analyze = on`);
        await admin.query(`alter database ${scratch.name} set auto_explain.log_buffers = on`);
        await admin.query(`alter database ${scratch.name} set auto_explain.log_triggers = on`);
        await admin.query(`alter database ${scratch.name} set auto_explain.log_nested_statements = on`);
      }
      await admin.end();
      const r = await runGovtrail(['sync'], { ...env, LOG_LEVEL: 'debug' }, { memory: true });
      process.stderr.write(r.stderr);
      const cpu = r.cpu === undefined ? 'n/a' : `${(r.cpu.userS + r.cpu.systemS).toFixed(2)} s`;
      process.stdout.write(`sync: code ${r.code}, wall ${(r.ms / 1000).toFixed(2)} s, CPU ${cpu}\n`);
    },
    { keep: KEEP },
  );
}

main().catch((err: unknown) => {
  process.stderr.write(`pg-statements failed: ${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
