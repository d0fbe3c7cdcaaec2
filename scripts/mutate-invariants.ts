/**
 * `npm run mutate:invariants [-- --only NAME[,NAME]] [-- --concurrency N]`: proves the invariant
 * tests can fail. Each entry below is a deliberate bug that breaks one invariant of docs/design/sync.md or
 * docs/design/integrity.md. For each, the source is copied to a scratch directory, the bug is applied there
 * (never to the working tree), the integration tests that guard the invariant run against it, and
 * a table says which tests failed: every row must say "caught". A mutation whose text no longer
 * matches the source fails loudly, so the list cannot rot silently when the code moves.
 *
 * Needs TEST_DATABASE_URL (a PostgreSQL server: the locking and atomicity tests need two
 * connections). Not part of `npm test` or CI: it runs the integration tests once per mutation.
 *
 * The list itself is in invariant-mutations.ts; a new invariant or rule comes with a line there.
 */
import { spawn } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { applyPatches, MUTATIONS, type Mutation } from './invariant-mutations.js';

const ROOT = path.resolve(import.meta.dirname, '..');
/** What a scratch copy needs besides node_modules (linked, not copied). */
const COPIED = [
  'src',
  'test',
  'sql',
  'rules',
  // The shipped baseline: the conformance and reader-scope fixtures judge by it.
  'baselines',
  'bench',
  // tenant-registry.test.ts runs the dashboard's own tenant query (scripts/dashboard.ts reads dashboards/).
  'scripts',
  'dashboards',
  // launch.test.ts checks that the image starts the binary with its own flags (S10).
  'Dockerfile',
  'package.json',
  'tsconfig.json',
  'vitest.config.ts',
];

interface Outcome {
  readonly mutation: Mutation;
  readonly failed: string[];
  readonly error?: string;
  readonly ms: number;
}

/** Runs the guarding tests against one mutant; the names of the tests that failed. */
async function runMutant(m: Mutation): Promise<Outcome> {
  const started = performance.now();
  const dir = mkdtempSync(path.join(tmpdir(), `govtrail-mutant-${m.name}-`));
  try {
    for (const entry of COPIED) cpSync(path.join(ROOT, entry), path.join(dir, entry), { recursive: true });
    symlinkSync(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'), 'dir');
    applyPatches(dir, m);
    const report = path.join(dir, 'vitest-report.json');
    const code = await new Promise<number>((resolve) => {
      const child = spawn(
        process.execPath,
        [
          path.join(ROOT, 'node_modules/vitest/vitest.mjs'),
          'run',
          ...m.tests,
          '--reporter=json',
          `--outputFile=${report}`,
        ],
        { cwd: dir, env: { ...process.env, LOG_LEVEL: 'silent' }, stdio: ['ignore', 'ignore', 'pipe'] },
      );
      child.stderr.resume();
      child.once('close', (c) => resolve(c ?? 1));
    });
    let failed: string[] = [];
    try {
      const json = JSON.parse(readFileSync(report, 'utf8')) as {
        testResults: Array<{ assertionResults: Array<{ status: string; fullName: string }> }>;
      };
      failed = json.testResults.flatMap((f) =>
        f.assertionResults.filter((a) => a.status === 'failed').map((a) => a.fullName),
      );
    } catch {
      return {
        mutation: m,
        failed,
        error: `vitest exited ${code} without a report`,
        ms: performance.now() - started,
      };
    }
    return { mutation: m, failed, ms: performance.now() - started };
  } catch (err) {
    return { mutation: m, failed: [], error: (err as Error).message, ms: performance.now() - started };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i === -1 ? undefined : process.argv[i + 1];
}

async function main(): Promise<void> {
  if (process.env['TEST_DATABASE_URL'] === undefined) {
    process.stderr.write(
      'mutate:invariants needs TEST_DATABASE_URL (a PostgreSQL server), e.g. postgres://postgres@127.0.0.1:5432/postgres\n',
    );
    process.exit(2);
  }
  const only = arg('--only')?.split(',');
  const list = only === undefined ? MUTATIONS : MUTATIONS.filter((m) => only.includes(m.name));
  if (only !== undefined && list.length !== only.length) {
    process.stderr.write(`unknown mutation in --only; known: ${MUTATIONS.map((m) => m.name).join(', ')}\n`);
    process.exit(2);
  }
  const concurrency = Math.max(1, Number(arg('--concurrency') ?? 1));
  const outcomes: Outcome[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < list.length) {
        const m = list[next++] as Mutation;
        process.stderr.write(`mutant ${m.name}: ${m.tests.join(' ')}\n`);
        const o = await runMutant(m);
        process.stderr.write(
          `mutant ${m.name}: ${o.error ?? `${o.failed.length} test(s) failed`} (${(o.ms / 1000).toFixed(0)} s)\n`,
        );
        outcomes.push(o);
      }
    }),
  );
  outcomes.sort((a, b) => list.indexOf(a.mutation) - list.indexOf(b.mutation));
  const rows = outcomes.map((o) => [
    o.mutation.name,
    o.error !== undefined ? `(${o.error})` : o.failed.length === 0 ? '(none)' : o.failed.join('; '),
    o.error === undefined && o.failed.length > 0 ? 'yes' : 'NO',
  ]);
  const out = ['| mutation | tests that failed | caught |', '|---|---|---|'];
  for (const r of rows) out.push(`| ${r.join(' | ')} |`);
  process.stdout.write(`${out.join('\n')}\n`);
  const missed = rows.filter((r) => r[2] !== 'yes').length;
  process.stdout.write(
    missed === 0
      ? `\nall ${rows.length} mutations caught\n`
      : `\n${missed} of ${rows.length} mutations NOT caught: an invariant is unguarded\n`,
  );
  process.exit(missed === 0 ? 0 : 1);
}

await main();
