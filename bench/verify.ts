/**
 * `npx tsx bench/verify.ts [--entries N] [--database NAME] [--rebuild]`: time and peak RSS of
 * `govtrail verify --anchors DIR --public-key FILE` over a store of N entries (default 1 000 000),
 * in a child process measured with `/usr/bin/time -v`: the whole chain recomputed, every typed
 * column, annotation and snapshot compared with raw, every field change with a recomputed diff, and
 * the anchor written just before checked. Also the same with the heap capped at 128 MiB: memory
 * that does not grow with the history fits.
 *
 * The store is a dedicated database on the local server (default `govtrail_verify1m`), filled once
 * by a `govtrail sync` from a sandbox process and kept for the next run; `--rebuild` refills it. The
 * server is BENCH_DATABASE_URL, TEST_DATABASE_URL, or postgres://postgres@127.0.0.1:5432/postgres.
 */
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { keptStore, runGovtrail } from './lib.js';

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i === -1 ? undefined : process.argv[i + 1];
}
const N = Number(arg('--entries') ?? 1_000_000);
const DATABASE = arg('--database') ?? 'govtrail_verify1m';
const REBUILD = process.argv.includes('--rebuild');
const HEAP_CAP_MIB = 128;
const store = keptStore(DATABASE);

async function main(): Promise<void> {
  if ((await store.storedEntries()) !== N || REBUILD) {
    await store.fill(N);
    await store.query((c) => c.query('analyze'));
  }
  const work = mkdtempSync(path.join(os.tmpdir(), 'govtrail-verify-bench-'));
  try {
    const { privateKey, publicKey } = generateKeyPairSync('ed25519');
    const pub = path.join(work, 'pub.pem');
    writeFileSync(pub, publicKey.export({ type: 'spki', format: 'pem' }));
    const env = {
      DATABASE_URL: store.url,
      GOVTRAIL_TENANT: 'bench',
      GOVTRAIL_CLIENT_ID: 'unused',
      GOVTRAIL_CLIENT_SECRET: 'unused',
      GOVTRAIL_BASE_URL: 'http://127.0.0.1:9',
      GOVTRAIL_DATA_DIR: path.join(work, 'data'),
      GOVTRAIL_ANCHOR_SIGNING_KEY: privateKey.export({ type: 'pkcs8', format: 'pem' }) as string,
      LOG_LEVEL: 'warn',
      PATH: process.env['PATH'] ?? '',
    };
    const anchors = path.join(work, 'anchors');
    const a = await runGovtrail(['anchor', '--out', anchors], env);
    if (a.code !== 0) throw new Error(`anchor failed: ${a.stderr}`);
    process.stdout.write(
      `| run | entries | wall time | peak RSS | exit | output |\n|---|---|---|---|---|---|\n`,
    );
    for (const [label, extra] of [
      ['verify --anchors', {}],
      [
        `verify --anchors, heap capped at ${HEAP_CAP_MIB} MiB`,
        { NODE_OPTIONS: `--max-old-space-size=${HEAP_CAP_MIB}` },
      ],
    ] as const) {
      const r = await runGovtrail(
        ['verify', '--anchors', anchors, '--public-key', pub],
        { ...env, ...extra },
        {
          memory: true,
        },
      );
      const first = r.stdout.split('\n')[0] ?? '';
      process.stdout.write(
        `| ${label} | ${N.toLocaleString('en')} | ${(r.ms / 1000).toFixed(1)} s | ${((r.peakRssKb ?? 0) / 1024).toFixed(0)} MiB | ${r.code} | ${first} |\n`,
      );
      if (r.code !== 0) process.stderr.write(r.stderr.slice(-2000));
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

await main();
