/**
 * `npx tsx bench/round-trips.ts [--entries N] [--baseline FILE]`: the round trips of a no-op
 * `govtrail sync`, one per line (with `--baseline`, of a tenant judged by that baseline:
 * GOVTRAIL_BASELINE). A sandbox of N entries (default 500) is backfilled into a scratch database, then synced
 * again through a relay that records each SQL round trip's statements (startRoundTripCounter in
 * lib.ts); the sandbox counts the HTTP requests. bench/RESULTS.md (n) lists what it printed.
 */
import {
  buildGovtrail,
  createScratchDatabase,
  govtrailEnv,
  runGovtrail,
  startRoundTripCounter,
  startSandboxProcess,
} from './lib.js';

const i = process.argv.indexOf('--entries');
const N = i === -1 ? 500 : Number(process.argv[i + 1]);
const b = process.argv.indexOf('--baseline');
const BASELINE = b === -1 ? undefined : process.argv[b + 1];
if (!Number.isInteger(N) || N < 1) {
  process.stderr.write('bench/round-trips: --entries takes a positive integer\n');
  process.exit(2);
}

async function main(): Promise<void> {
  buildGovtrail();
  const sb = await startSandboxProcess(['--entries', String(N)]);
  const scratch = await createScratchDatabase('govtrail_trips');
  try {
    const env = govtrailEnv(sb, scratch.url, {
      LOG_LEVEL: 'warn',
      ...(BASELINE !== undefined ? { GOVTRAIL_BASELINE: BASELINE } : {}),
    });
    for (const args of [['migrate'], ['sync']]) {
      const r = await runGovtrail(args, env);
      if (r.code !== 0) throw new Error(`${args[0]} failed: ${r.stderr.slice(-2000)}`);
    }
    type Stats = { requests: number; historyRequests: number; tokenRequests: number };
    const before = await sb.control<Stats>('GET', '/_sandbox/stats');
    const relay = await startRoundTripCounter(undefined, { capture: true });
    try {
      const r = await runGovtrail(['sync'], { ...env, DATABASE_URL: relay.url(scratch.name) });
      if (r.code !== 0) throw new Error(`no-op sync failed: ${r.stderr.slice(-2000)}`);
    } finally {
      await relay.close();
    }
    const after = await sb.control<Stats>('GET', '/_sandbox/stats');
    relay.statements.forEach((s, n) => {
      process.stdout.write(`${String(n + 1).padStart(2)}  ${s.replace(/\s+/g, ' ').trim().slice(0, 160)}\n`);
    });
    const http = after.requests - before.requests;
    process.stdout.write(
      `${relay.roundTrips} SQL round trips on ${relay.connections} connection(s) + ${http} HTTP requests ` +
        `(${after.tokenRequests - before.tokenRequests} token, ${after.historyRequests - before.historyRequests} history) = ${relay.roundTrips + http}\n`,
    );
  } finally {
    await sb.close();
    await scratch.drop();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`bench/round-trips failed: ${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
