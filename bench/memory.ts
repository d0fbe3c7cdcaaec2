/**
 * `npx tsx bench/memory.ts [--entries N] [--runs K] [--node-options "…"] [--node-args "…"] [--no-build] [--command sync|reconcile]`:
 * peak RSS (and CPU) of `govtrail sync` backfilling N entries from a sandbox into a scratch
 * database, K times against the same sandbox (a fresh database each time), from the build in dist/.
 * `--node-options` is passed as NODE_OPTIONS to the govtrail child (e.g. `--trace-gc`), so a
 * variant can be compared with the defaults on the same sandbox. Prints one JSON line per run.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  buildGovtrail,
  createScratchDatabase,
  govtrailEnv,
  migrateOrThrow,
  runGovtrail,
  startSandboxProcess,
  syncLog,
  useBuiltGovtrail,
} from './lib.js';

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i === -1 ? undefined : process.argv[i + 1];
}
const N = Number(arg('--entries') ?? 100_000);
const RUNS = Number(arg('--runs') ?? 1);
const NODE_OPTIONS = arg('--node-options');
/** Node flags on the child's command line (for those NODE_OPTIONS refuses, e.g. --trace-gc). */
const NODE_ARGS =
  arg('--node-args')
    ?.split(' ')
    .filter((a) => a !== '') ?? [];
const COMMAND = arg('--command') ?? 'sync';
/**
 * `--tenants K`: K tenants (one GOVTRAIL_CONFIG file, all on the same sandbox, each its own
 * history in the store) backfilled by one `govtrail sync`, GOVTRAIL_WORKER_CONCURRENCY (4) at once:
 * the memory of onboarding K large tenants together.
 */
const TENANTS = Number(arg('--tenants') ?? 0);
/** Extra environment of the child: `--env "K=V K2=V2"`. */
const EXTRA_ENV = Object.fromEntries(
  (arg('--env') ?? '')
    .split(' ')
    .filter((a) => a.includes('='))
    .map((a) => [a.slice(0, a.indexOf('=')), a.slice(a.indexOf('=') + 1)]),
);
if (
  !Number.isInteger(N) ||
  N < 1 ||
  !Number.isInteger(RUNS) ||
  RUNS < 1 ||
  !Number.isInteger(TENANTS) ||
  TENANTS < 0
) {
  process.stderr.write('bench/memory: --entries, --runs and --tenants take positive integers\n');
  process.exit(2);
}

async function main(): Promise<void> {
  if (process.argv.includes('--no-build')) useBuiltGovtrail();
  else buildGovtrail();
  const sb = await startSandboxProcess(['--entries', String(N)]);
  try {
    for (let i = 0; i < RUNS; i++) {
      const scratch = await createScratchDatabase('govtrail_bench_m');
      try {
        let env = govtrailEnv(sb, scratch.url, {
          ...EXTRA_ENV,
          ...(NODE_OPTIONS === undefined ? {} : { NODE_OPTIONS }),
        });
        if (TENANTS > 0) {
          const dir = mkdtempSync(path.join(os.tmpdir(), 'govtrail-memory-bench-'));
          const file = path.join(dir, 'govtrail.yaml');
          const lines = ['tenants:'];
          for (let t = 0; t < TENANTS; t++)
            lines.push(
              `  - name: tenant-${t}`,
              `    base_url: ${sb.baseUrl}`,
              `    client_id: ${sb.clientId}`,
              `    client_secret: ${sb.clientSecret}`,
            );
          writeFileSync(file, `${lines.join('\n')}\n`);
          const {
            GOVTRAIL_CLIENT_ID: _id,
            GOVTRAIL_CLIENT_SECRET: _secret,
            GOVTRAIL_TENANT: _tenant,
            GOVTRAIL_BASE_URL: _url,
            ...rest
          } = env;
          env = { ...rest, GOVTRAIL_CONFIG: file };
          process.on('exit', () => rmSync(dir, { recursive: true, force: true }));
        }
        await migrateOrThrow(env);
        const load = os.loadavg()[0];
        const r = await runGovtrail(['sync'], env, { memory: true, nodeArgs: NODE_ARGS });
        if (r.code !== 0) throw new Error(`sync failed (${r.code}): ${r.stderr.slice(-2000)}`);
        let f: Awaited<ReturnType<typeof runGovtrail>> | undefined;
        if (COMMAND === 'reconcile') {
          f = await runGovtrail(['reconcile'], env, { memory: true, nodeArgs: NODE_ARGS });
          if (f.code !== 0) throw new Error(`reconcile failed (${f.code}): ${f.stderr.slice(-2000)}`);
        }
        if (process.env['BENCH_MEMORY_STDERR'] !== undefined) process.stderr.write(r.stdout + r.stderr);
        process.stdout.write(
          `${JSON.stringify({
            entries: N,
            tenants: TENANTS || 1,
            load,
            nodeOptions: NODE_OPTIONS ?? '',
            nodeArgs: NODE_ARGS.join(' '),
            ms: Math.round(r.ms),
            runMs: syncLog(r.stderr)?.['ms'],
            peakRssMiB: Math.round((r.peakRssKb ?? 0) / 1024),
            cpuS: r.cpu === undefined ? undefined : Number((r.cpu.userS + r.cpu.systemS).toFixed(2)),
            ...(f === undefined
              ? {}
              : {
                  reconcileMs: Math.round(f.ms),
                  reconcilePeakRssMiB: Math.round((f.peakRssKb ?? 0) / 1024),
                  reconcileCpuS:
                    f.cpu === undefined ? undefined : Number((f.cpu.userS + f.cpu.systemS).toFixed(2)),
                }),
          })}\n`,
        );
      } finally {
        await scratch.drop();
      }
    }
  } finally {
    await sb.close();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`bench/memory failed: ${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
