/**
 * `npx tsx bench/entry-depth.ts [--entries N]`: what the depth check (src/core/normalise/depth.ts) adds to
 * the per-entry hot path of a sync. Each served entry has its content hash computed (canonical JSON
 * and sha256); the check walks the same entry once more, without recursion. Prints the time per
 * entry of the hash alone, of the check alone, and of both, over sandbox-generated entries
 * (best of 9 interleaved rounds, after a warm-up). Numbers only: no assertion.
 */
import { contentHash } from '../src/core/normalise/canonical.js';
import { MAX_ENTRY_DEPTH, nestsDeeperThan } from '../src/core/normalise/depth.js';
import { normaliseEntry } from '../src/core/normalise/entry.js';
import { startSandbox } from '../src/sandbox/index.js';

const i = process.argv.indexOf('--entries');
const N = i === -1 ? 50_000 : Number(process.argv[i + 1]);

const sandbox = await startSandbox({ entries: N, seed: 7 });
const entries = [...sandbox.history.entries()] as unknown[];
await sandbox.close();

let sink = 0;
const hashOnly = () => {
  for (const e of entries) sink += contentHash(e)[0] as number;
};
const checkOnly = () => {
  for (const e of entries) sink += nestsDeeperThan(e, MAX_ENTRY_DEPTH) ? 1 : 0;
};
const both = () => {
  for (const e of entries) {
    if (!nestsDeeperThan(e, MAX_ENTRY_DEPTH)) sink += contentHash(e)[0] as number;
  }
};
const normalise = () => {
  for (const e of entries) sink += normaliseEntry('acme', e).ok ? 1 : 0;
};
for (const f of [hashOnly, checkOnly, both, normalise]) f();

// Rounds interleaved, best of each kept: the machine's other load touches every kind alike.
const best = [
  Number.POSITIVE_INFINITY,
  Number.POSITIVE_INFINITY,
  Number.POSITIVE_INFINITY,
  Number.POSITIVE_INFINITY,
];
for (let r = 0; r < 9; r++) {
  [hashOnly, checkOnly, both, normalise].forEach((f, k) => {
    const t = performance.now();
    f();
    best[k] = Math.min(best[k] as number, performance.now() - t);
  });
}
const [h, c, b, n] = best as [number, number, number, number];
const per = (ms: number) => `${((ms * 1000) / entries.length).toFixed(2)} µs/entry`;
console.log(`entries: ${entries.length}`);
console.log(`content hash only:        ${per(h)}`);
console.log(`depth check only:         ${per(c)}`);
console.log(
  `depth check + hash:       ${per(b)} (+${(((b - h) / h) * 100).toFixed(1)}% over the hash alone)`,
);
console.log(`normaliseEntry (for scale): ${per(n)}`);
if (sink === -1) console.log(sink);
