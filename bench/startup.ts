/**
 * `npm run bench:startup [-- --runs N] [-- --no-build]`: how long the CLI takes to start. Builds
 * dist/ (unless --no-build), then times, as child processes of the project's Node, `node -e 0`,
 * `govtrail --help` and `govtrail verify-pack --help` (the build, as installed). The three are run
 * interleaved, N rounds (default 10) after one warm-up round, and the median wall time of each is
 * printed with the ratio of each to `node -e 0` (issue 21's target: `--help` within 2×), and the
 * fastest run of each (on a shared, loaded machine the medians move with the load). Numbers
 * only: no assertion (the machine is shared and noisy; a test that timed this would be flaky).
 */
import { spawnSync } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { buildGovtrail, ROOT } from './lib.js';

const argv = process.argv.slice(2);
const runsAt = argv.indexOf('--runs');
const RUNS = runsAt === -1 ? 10 : Number(argv[runsAt + 1]);
if (!Number.isSafeInteger(RUNS) || RUNS < 1) throw new Error('--runs: expected a whole number of at least 1');
if (!argv.includes('--no-build')) buildGovtrail();

const main = path.join(ROOT, 'dist/src/main.js');
const cases: readonly { readonly name: string; readonly args: readonly string[] }[] = [
  { name: 'node -e 0', args: ['-e', '0'] },
  { name: 'govtrail --help', args: [main, '--help'] },
  { name: 'govtrail verify-pack --help', args: [main, 'verify-pack', '--help'] },
];

/** Wall time of one run, in milliseconds; throws when the process fails. */
function timeOnce(args: readonly string[]): number {
  const start = process.hrtime.bigint();
  const r = spawnSync(process.execPath, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  if (r.status !== 0) throw new Error(`${args.join(' ')} exited with ${r.status}: ${r.stderr}`);
  return ms;
}

function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? (s[mid] as number) : ((s[mid - 1] as number) + (s[mid] as number)) / 2;
}

for (const c of cases) timeOnce(c.args); // warm-up: file cache, compile cache
const times = cases.map(() => [] as number[]);
for (let round = 0; round < RUNS; round++) {
  cases.forEach((c, i) => {
    times[i]?.push(timeOnce(c.args));
  });
}

const medians = times.map(median);
const mins = times.map((xs) => Math.min(...xs));
const bare = medians[0] as number;
console.log(`node ${process.version}, ${RUNS} runs each, load average ${os.loadavg()[0]?.toFixed(2)}`);
cases.forEach((c, i) => {
  const m = medians[i] as number;
  const ratio = i === 0 ? '' : `  ${(m / bare).toFixed(2)}× node -e 0`;
  const min = mins[i] as number;
  console.log(
    `${c.name.padEnd(30)} median ${m.toFixed(0).padStart(5)} ms${ratio}  (fastest ${min.toFixed(0)} ms)`,
  );
});
console.log(
  JSON.stringify({
    runs: RUNS,
    load: Number(os.loadavg()[0]?.toFixed(2)),
    nodeMs: Math.round(bare),
    helpMs: Math.round(medians[1] as number),
    verifyPackHelpMs: Math.round(medians[2] as number),
    helpRatio: Number(((medians[1] as number) / bare).toFixed(2)),
    fastestMs: mins.map((m) => Math.round(m)),
  }),
);
