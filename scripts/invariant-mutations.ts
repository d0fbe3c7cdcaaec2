/**
 * The deliberate bugs of `npm run mutate:invariants` (scripts/mutate-invariants.ts): each breaks one
 * invariant of sync.md or integrity.md and names the tests that must catch it. Kept apart from the
 * runner so that a unit test can check, on every CI run, that each one still applies to the source.
 *
 * A new invariant or rule comes with a line here (docs/testing.md).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

export interface Patch {
  readonly file: string;
  readonly find: string;
  readonly replace: string;
  /** Replace every occurrence (default: the text must occur exactly once). */
  readonly all?: boolean;
}

export interface Mutation {
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
        find: 'for (const e of entries) if (!unique.has(e.key.entryId)) unique.set(e.key.entryId, e);',
        replace:
          // biome-ignore lint/suspicious/noTemplateCurlyInString: source text to patch, not a template
          'for (const [i, e] of entries.entries()) unique.set(unique.has(e.key.entryId) ? `${e.key.entryId}#${i}` : e.key.entryId, e);',
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
    tests: [SYNC, RECONCILE],
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
        find: 'if (servedHash.equals(storedHash)) {',
        replace: 'if (servedHash.equals(storedHash) || storedHash.length > 0) {',
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
        // biome-ignore lint/suspicious/noTemplateCurlyInString: source text to patch, not a template
        find: 'coalesce(e.created_at < ${oldestServedKey ?? null}::timestamptz, false)',
        // biome-ignore lint/suspicious/noTemplateCurlyInString: source text to patch, not a template
        replace: 'coalesce(e.created_at < ${oldestServedKey ?? null}::timestamptz or true, false)',
      },
    ],
    tests: [RECONCILE],
  },
  {
    name: 'delivery-id-per-process',
    breaks:
      'alerts.md, at least once: a delivery repeated after the sender was killed between send and record carries a new id, so the receiver cannot drop it',
    patches: [
      {
        file: 'src/alerts/deliver.ts',
        // biome-ignore lint/suspicious/noTemplateCurlyInString: the patch is source text holding a template
        find: 'update(`${alert.dedupeKey}\\u0000${sink}`)',
        // biome-ignore lint/suspicious/noTemplateCurlyInString: the patch is source text holding a template
        replace: 'update(`${alert.dedupeKey}\\u0000${sink}${process.pid}`)',
      },
    ],
    tests: ['test/integration/alerts-kill-delivery.test.ts'],
  },
  {
    name: 'slot-job-id-per-replica',
    breaks:
      'product.md scaling out: a job id that is not derived from (kind, tenant, slot) alone lets every replica insert its own job, so a tenant runs once per replica in a slot',
    patches: [
      {
        file: 'src/worker/slots.ts',
        // biome-ignore lint/suspicious/noTemplateCurlyInString: source text to patch, not a template
        find: 'update(`govtrail:job:${kind}:${slot.toISOString()}:${tenant}`)',
        // biome-ignore lint/suspicious/noTemplateCurlyInString: source text to patch, not a template
        replace: 'update(`govtrail:job:${kind}:${slot.toISOString()}:${tenant}:${Math.random()}`)',
      },
    ],
    tests: ['test/integration/worker-replicas.test.ts', 'test/integration/worker-engine.test.ts'],
  },
  {
    name: 'retried-attempt-recorded',
    breaks:
      'product.md scaling out: a failed attempt retried inside its slot keeps its ledger row, so one failure is recorded once per attempt',
    patches: [
      {
        file: 'src/sync/steps.ts',
        find: 'if (runId !== 0 && options.engineAttempt?.retriesLeft === true) {',
        replace: 'if (runId !== 0 && options.engineAttempt?.retriesLeft === undefined) {',
      },
    ],
    tests: ['test/integration/worker-engine.test.ts'],
  },
  {
    name: 'missed-reconcile-forgotten',
    breaks:
      'product.md scaling out: a reconcile slot missed while no worker ran is not run when one comes back',
    patches: [{ file: 'src/worker/engine.ts', find: '      await catchUpReconcile();\n', replace: '' }],
    tests: ['test/integration/worker-engine.test.ts'],
  },
  {
    name: 'orphaned-run-left-running',
    breaks:
      'S3 with replicas: the run a killed replica had in flight stays `running` instead of being closed as failed',
    patches: [
      {
        file: 'src/sync/steps.ts',
        find: 'const orphans = await failOrphanedRuns(session, tenantId);',
        replace: 'const orphans = 0;',
      },
    ],
    tests: ['test/e2e/worker-fleet.test.ts'],
  },
  {
    name: 'sighup-ignored',
    breaks: 'product.md scaling out: SIGHUP does not replace the tenant list of a running worker',
    patches: [
      {
        file: 'src/commands/worker.ts',
        find: 'if (!signalled) void reloadTenants(service, logger);',
        replace: 'if (!signalled) void service;',
      },
    ],
    tests: ['test/e2e/worker-fleet.test.ts'],
  },
];

/** Why a mutation does not apply to the source under `dir` (one line a patch), or [] when it does. */
export function patchProblems(dir: string, m: Mutation): string[] {
  const problems: string[] = [];
  const texts = new Map<string, string>();
  for (const p of m.patches) {
    const file = path.join(dir, p.file);
    const text = texts.get(file) ?? readFileSync(file, 'utf8');
    const count = text.split(p.find).length - 1;
    if (count === 0 || (count > 1 && p.all !== true)) {
      problems.push(
        `mutation ${m.name}: ${p.file} holds the text to replace ${count} times (expected ${p.all === true ? 'at least once' : 'once'}); update the mutation list`,
      );
      continue;
    }
    texts.set(file, p.all === true ? text.replaceAll(p.find, p.replace) : text.replace(p.find, p.replace));
  }
  return problems;
}

/** Applies a mutation to the copy of the source under `dir`. */
export function applyPatches(dir: string, m: Mutation): void {
  const problems = patchProblems(dir, m);
  if (problems.length > 0) throw new Error(problems.join('; '));
  for (const p of m.patches) {
    const file = path.join(dir, p.file);
    const text = readFileSync(file, 'utf8');
    writeFileSync(
      file,
      p.all === true ? text.replaceAll(p.find, p.replace) : text.replace(p.find, p.replace),
    );
  }
}
