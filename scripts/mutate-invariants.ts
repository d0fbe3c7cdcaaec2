/**
 * `npm run mutate:invariants [-- --only NAME[,NAME]] [-- --concurrency N]`: proves the invariant
 * tests can fail. Each entry below is a deliberate bug that breaks one invariant of sync.md or
 * integrity.md. For each, the source is copied to a scratch directory, the bug is applied there
 * (never to the working tree), the integration tests that guard the invariant run against it, and
 * a table says which tests failed: every row must say "caught". A mutation whose text no longer
 * matches the source fails loudly, so the list cannot rot silently when the code moves.
 *
 * Needs TEST_DATABASE_URL (a PostgreSQL server: the locking and atomicity tests need two
 * connections). Not part of `npm test` or CI: it runs the integration tests once per mutation.
 *
 * A new invariant or rule comes with a line here (docs/testing.md).
 */
import { spawn } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

interface Patch {
  readonly file: string;
  readonly find: string;
  readonly replace: string;
  /** Replace every occurrence (default: the text must occur exactly once). */
  readonly all?: boolean;
}

interface Mutation {
  readonly name: string;
  /** The invariant it breaks, in words. */
  readonly breaks: string;
  readonly patches: readonly Patch[];
  /** Test files that guard it (run against the mutant). */
  readonly tests: readonly string[];
}

const SYNC = 'test/integration/sync-invariants.test.ts';
const RECONCILE = 'test/integration/reconcile.test.ts';

export const MUTATIONS: readonly Mutation[] = [
  {
    name: 'lookback-ignored',
    breaks: 'S5: the stop rule stops at the checkpoint itself, not checkpoint − lookback',
    patches: [
      {
        file: 'src/sync/stop-rule.ts',
        find: 'const threshold = lookbackBound(checkpoint, lookbackMs);',
        replace: 'const threshold = checkpoint.createdAtKey;',
      },
    ],
    tests: [SYNC],
  },
  {
    name: 'checkpoint-last-seen',
    breaks: 'S6 step 6: the checkpoint is the last entry stored, not the newest by (created_at, entry_id)',
    patches: [
      {
        file: 'src/store/history.ts',
        find: `    .orderBy('created_at', 'desc')
    .orderBy('entry_id', 'desc')`,
        replace: `    .orderBy('seq', 'desc')`,
      },
    ],
    tests: [SYNC],
  },
  {
    name: 'duplicates-kept',
    breaks: 'S2: an entry served twice in one batch is not removed before COPY',
    patches: [
      {
        file: 'src/sync/steps.ts',
        find: 'for (const e of entries) if (!unique.has(e.entry.entryId)) unique.set(e.entry.entryId, e);',
        replace:
          'for (const [i, e] of entries.entries()) unique.set(unique.has(e.entry.entryId) ? `${e.entry.entryId}#${i}` : e.entry.entryId, e);',
      },
    ],
    tests: [SYNC],
  },
  {
    name: 'no-advisory-lock',
    breaks: 'S8: the tenant lock is not taken; two runs of one tenant overlap',
    patches: [
      {
        file: 'src/store/runs.ts',
        find: 'return rows[0]?.locked === true;',
        replace: 'return rows[0] !== undefined;',
      },
    ],
    tests: [SYNC, RECONCILE, 'test/integration/worker-replicas.test.ts'],
  },
  {
    name: 'checkpoint-outside-transaction',
    breaks: 'S3: the checkpoint is written on another connection, outside the data transaction',
    patches: [
      {
        file: 'src/sync/steps.ts',
        find: 'const checkpointAfter = (await advanceCheckpoint(trx, tenantId, runId)) ?? checkpointBefore;',
        replace:
          'const checkpointAfter = (await advanceCheckpoint(trx, tenantId, runId, database.db)) ?? checkpointBefore;',
      },
      {
        file: 'src/sync/steps.ts',
        find: 'async function advanceCheckpoint(trx: Session, tenantId: string, runId: number): Promise<string | undefined> {',
        replace:
          'async function advanceCheckpoint(trx: Session, tenantId: string, runId: number, out: Session = trx): Promise<string | undefined> {',
      },
      {
        file: 'src/sync/steps.ts',
        find: 'await writeCheckpoint(trx, tenantId, {',
        replace: 'await writeCheckpoint(out, tenantId, {',
      },
    ],
    tests: [SYNC],
  },
  {
    name: 'alerts-after-commit',
    breaks:
      'S3 / outbox: field changes and alerts are written after the data commits, in a transaction of their own',
    patches: [
      {
        file: 'src/sync/steps.ts',
        find: `        const after = options.changes
          ? await options.changes.after(trx, {`,
        replace: `        const changes = options.changes;
        afterCommit = (db: Session) => changes === undefined ? Promise.resolve({ alerts: 0, fieldChanges: 0 }) : changes.after(db, {`,
      },
      {
        file: 'src/sync/steps.ts',
        find: `              logger,
            })
          : { alerts: 0, fieldChanges: 0 };`,
        replace: `              logger,
            });
        const after = { alerts: 0, fieldChanges: 0 };`,
      },
      {
        file: 'src/sync/steps.ts',
        find: '      const result = await session.transaction().execute(async (trx) => {',
        replace:
          '      let afterCommit: ((db: Session) => Promise<{ alerts: number; fieldChanges: number }>) | undefined;\n      const result = await session.transaction().execute(async (trx) => {',
      },
      {
        file: 'src/sync/steps.ts',
        find: `      logger.info(
        { ...counters, stopReason: result.stopReason, alerts: result.alerts, ms: Date.now() - started },`,
        replace: `      const deferred = afterCommit;
      if (deferred !== undefined) await session.transaction().execute((t) => deferred(t));
      logger.info(
        { ...counters, stopReason: result.stopReason, alerts: result.alerts, ms: Date.now() - started },`,
      },
    ],
    tests: [SYNC],
  },
  {
    name: 'repeated-token-undetected',
    breaks: 'S7: a page token already used is followed again',
    patches: [
      {
        file: 'src/tenant-api/history.ts',
        find: "if (next !== '' && used.has(next)) {",
        replace: "if (next !== '' && used.has(next) && index < 0) {",
      },
    ],
    tests: [SYNC],
  },
  {
    name: '401-not-refreshed',
    breaks: 'HTTP behaviour: a 401 does not fetch a new token and retry once',
    patches: [
      {
        file: 'src/tenant-api/client.ts',
        find: 'if (first.response.status !== 401) return first.response;',
        replace: 'if (first.response.status !== 401 || first.token !== undefined) return first.response;',
      },
    ],
    tests: [SYNC, 'test/integration/tenant-api-retries.test.ts'],
  },
  {
    name: 'delete-recreate-blind',
    breaks: 'integrity.md: a CREATE after a HARD_DELETE is diffed against nothing',
    patches: [
      {
        file: 'src/sync/backfill-walk.ts',
        find: `export function isDiffBase(snapshot: unknown): boolean {
  return typeof snapshot === 'object' && snapshot !== null;`,
        replace: `export function isDiffBase(snapshot: unknown, changeKind?: string | null): boolean {
  return (typeof snapshot === 'object' && snapshot !== null) || changeKind === 'CHANGE_KIND_HARD_DELETE';`,
      },
      {
        file: 'src/sync/backfill-walk.ts',
        find: 'isDiffBase(snapshot);',
        replace: 'isDiffBase(snapshot, n.entry.changeKind);',
      },
      {
        file: 'src/sync/changes.ts',
        find: 'isDiffBase(base.snapshot)',
        replace: 'isDiffBase(base.snapshot, base.changeKind)',
        all: true,
      },
      {
        file: 'src/sync/changes.ts',
        find: 'isDiffBase(e.snapshot)',
        replace: 'isDiffBase(e.snapshot, e.changeKind)',
      },
    ],
    tests: ['test/integration/changes-delete-recreate.test.ts'],
  },
  {
    name: 'reserved-content-not-compared',
    breaks: 'S12: a re-served stored entry is taken as matching without comparing its content hash',
    patches: [
      {
        file: 'src/sync/steps.ts',
        find: 'if (servedHash.equals(storedHash)) counters.entriesMatched++;',
        replace: 'if (servedHash.equals(storedHash) || storedHash.length > 0) counters.entriesMatched++;',
      },
    ],
    tests: [RECONCILE],
  },
  {
    name: 'backdated-taken-as-new',
    breaks:
      'integrity.md: a served-not-stored entry behind checkpoint − lookback is stored without a finding',
    patches: [
      {
        file: 'src/sync/reconcile.ts',
        find: 'fresh.filter((e) => e.entry.createdAtKey < backdatedBefore)',
        replace: 'fresh.filter((e) => e.entry.createdAtKey < backdatedBefore && backdatedBefore === "")',
      },
    ],
    tests: [RECONCILE],
  },
  {
    name: 'hole-taken-as-expired',
    breaks:
      'integrity.md: a stored entry missing from the middle of the history is filed as expired (no alert)',
    patches: [
      {
        file: 'src/store/reconcile.ts',
        find: 'coalesce(e.created_at < ${oldestServedKey ?? null}::timestamptz, false)',
        replace: 'coalesce(e.created_at < ${oldestServedKey ?? null}::timestamptz or true, false)',
      },
    ],
    tests: [RECONCILE],
  },
];

const ROOT = path.resolve(import.meta.dirname, '..');
/** What a scratch copy needs besides node_modules (linked, not copied). */
const COPIED = ['src', 'test', 'sql', 'rules', 'bench', 'package.json', 'tsconfig.json', 'vitest.config.ts'];

function applyPatches(dir: string, m: Mutation): void {
  for (const p of m.patches) {
    const file = path.join(dir, p.file);
    const text = readFileSync(file, 'utf8');
    const count = text.split(p.find).length - 1;
    if (count === 0 || (count > 1 && p.all !== true))
      throw new Error(
        `mutation ${m.name}: ${p.file} holds the text to replace ${count} times (expected ${p.all === true ? 'at least once' : 'once'}); update the mutation list`,
      );
    writeFileSync(
      file,
      p.all === true ? text.replaceAll(p.find, p.replace) : text.replace(p.find, p.replace),
    );
  }
}

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
