/**
 * `npx tsx bench/hot-path.ts [N]`: the CPU a backfill spends per entry in govtrail's own code,
 * stage by stage, without a network or a database: N sandbox entries (seed 1) parsed from their
 * JSON text, keyed, normalised, encoded for COPY with their hashes (as insertEntries sends them),
 * and walked for field changes and rules (as a backfill's in-memory walk does). CPU µs per entry
 * (process.cpuUsage: GC threads included), best of five rounds. A quick loop for changes to the hot path; the bench (npm run bench) is the judge.
 */
import { loadRulePack } from '../src/config/rule-pack.js';
import { nestsDeeperThan } from '../src/core/normalise/depth.js';
import { entryKeyOf, normaliseEntry } from '../src/core/normalise/entry.js';
import type { NormalisedEntry } from '../src/core/normalise/types.js';
import { startSandbox } from '../src/sandbox/index.js';
import { encodeEntries } from '../src/store/write/entries.js';
import { BackfillWalk } from '../src/sync/backfill-walk.js';

const N = Number(process.argv[2] ?? 20_000);

async function main(): Promise<void> {
  const sb = await startSandbox({ entries: N, seed: 1 });
  const texts = [...sb.history.jsonLines()];
  await sb.close();
  // Pages of 100 as the API serves them.
  const pages: string[] = [];
  for (let i = 0; i < texts.length; i += 100) pages.push(`{"list":[${texts.slice(i, i + 100).join(',')}]}`);
  const pack = loadRulePack();
  const stages: Record<string, number[]> = {};
  const time = (name: string, f: () => void): void => {
    // CPU time, not wall time: the machine may be shared.
    const t = process.cpuUsage();
    f();
    const d = process.cpuUsage(t);
    const list = stages[name] ?? [];
    list.push((d.user + d.system) / texts.length);
    stages[name] = list;
  };
  for (let round = 0; round < 5; round++) {
    let raws: unknown[] = [];
    let normalised: NormalisedEntry[] = [];
    time('JSON.parse pages', () => {
      raws = pages.flatMap((p) => (JSON.parse(p) as { list: unknown[] }).list);
    });
    time('depth check + key', () => {
      for (const r of raws)
        if (!nestsDeeperThan(r, 256) && entryKeyOf(r) === undefined) throw new Error('key');
    });
    time('normalise', () => {
      normalised = [];
      for (const r of raws) {
        const n = normaliseEntry('acme', r);
        if (n.ok) normalised.push(n.value);
      }
    });
    const oldestFirst = normalised.slice().reverse();
    time('hash + COPY encode (2 000-entry batches)', () => {
      let prev: Buffer | null = null;
      for (let i = 0; i < oldestFirst.length; i += 2000)
        prev = encodeEntries(1, oldestFirst.slice(i, i + 2000), prev).lastHash;
    });
    time('walk (diff + rules)', () => {
      const walk = new BackfillWalk(pack, 'acme', 20_000);
      for (let i = 0; i < normalised.length; i += 2000) walk.add(normalised.slice(i, i + 2000));
      walk.finish();
      if (walk.gaveUp !== undefined) throw new Error(walk.gaveUp);
    });
  }
  let total = 0;
  for (const [name, v] of Object.entries(stages)) {
    const best = Math.min(...v);
    total += best;
    process.stdout.write(`${best.toFixed(2).padStart(7)} µs  ${name}\n`);
  }
  process.stdout.write(`${total.toFixed(2).padStart(7)} µs  total per entry\n`);
}

main().catch((err: unknown) => {
  process.stderr.write(`${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
