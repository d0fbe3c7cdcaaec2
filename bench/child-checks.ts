/**
 * `npx tsx bench/child-checks.ts [N] [ROUNDS]`: the database's CPU for the rows of a backfill of N
 * sandbox entries (history_entry, annotations, snapshots and field changes, encoded beforehand as
 * `govtrail sync` encodes them, in its 2 000-entry batches and one transaction) under two ways of
 * holding "no child row without its entry" (docs/design/data-model.md, "Child rows and their
 * entry"): `fk`, the three declared foreign keys (checked row by row), and `statement`, the
 * per-statement triggers of migration 0035. The variants alternate, ROUNDS times each, on one
 * connection per database; each load is rolled back (and the tables vacuumed). Reported: the backend's own CPU (user +
 * system, from /proc/<pid>/stat: the server must be local and the login a superuser) and wall time.
 */
import { readFileSync } from 'node:fs';
import { sql } from 'kysely';
import { loadRulePack } from '../src/config/rule-pack.js';
import { normaliseEntry } from '../src/core/normalise/entry.js';
import type { NormalisedEntry } from '../src/core/normalise/types.js';
import { silentLogger } from '../src/runtime/logger.js';
import type { TableCopy } from '../src/store/copy.js';
import { type Database, openDatabase, type Session } from '../src/store/database.js';
import { migrate } from '../src/store/migrate.js';
import { type EncodedEntries, encodeEntries, writeEncodedEntries } from '../src/store/write/entries.js';
import { fieldChangeCopy } from '../src/store/write/field-changes.js';
import { BackfillWalk } from '../src/sync/backfill-walk.js';
import { createScratchDatabase, sandboxTruth, startSandboxProcess } from './lib.js';

const N = Number(process.argv[2] ?? 100_000);
const ROUNDS = Number(process.argv[3] ?? 3);
const BATCH = 2000;

/** The declared foreign keys of before 0035, in place of its triggers. */
const BACK_TO_FOREIGN_KEYS = `
  drop trigger history_annotation_has_entry on govtrail.history_annotation;
  drop trigger history_annotation_has_entry_update on govtrail.history_annotation;
  drop trigger settings_snapshot_has_entry on govtrail.settings_snapshot;
  drop trigger settings_snapshot_has_entry_update on govtrail.settings_snapshot;
  drop trigger field_change_has_entry on govtrail.field_change;
  drop trigger field_change_has_entry_update on govtrail.field_change;
  alter table govtrail.history_annotation add foreign key (tenant_id, entry_id) references govtrail.history_entry (tenant_id, entry_id);
  alter table govtrail.settings_snapshot add foreign key (tenant_id, entry_id) references govtrail.history_entry (tenant_id, entry_id);
  alter table govtrail.field_change add foreign key (tenant_id, entry_id) references govtrail.history_entry (tenant_id, entry_id);`;

interface Batch {
  readonly encoded: EncodedEntries;
  readonly after: TableCopy[];
}

/** The sync's batches: newest first, the walk's field changes written with the batch that finished them. */
function prepareBatches(truth: readonly unknown[], runId: number): Batch[] {
  const walk = new BackfillWalk(loadRulePack(), 'acme');
  const batches: Batch[] = [];
  let previous: Buffer | null = null;
  for (let i = 0; i < truth.length; i += BATCH) {
    const entries: NormalisedEntry[] = [];
    for (const raw of truth.slice(i, i + BATCH)) {
      const n = normaliseEntry('acme', raw);
      if (n.ok) entries.push(n.value);
    }
    const encoded = encodeEntries(runId, entries, previous);
    previous = encoded.lastHash;
    const changes = walk.add(entries);
    batches.push({ encoded, after: changes.length > 0 ? [fieldChangeCopy('acme', changes)] : [] });
  }
  const last = walk.finish().changes;
  if (walk.gaveUp !== undefined) throw new Error(`the walk gave up: ${walk.gaveUp}`);
  if (last.length > 0)
    batches.push({ encoded: encodeEntries(runId, [], previous), after: [fieldChangeCopy('acme', last)] });
  return batches;
}

/** CPU seconds (user + system) of the session's backend so far. */
async function backendCpuS(s: Session): Promise<number> {
  const { rows } = await sql<{ stat: string }>`
    select pg_read_file('/proc/' || pg_backend_pid() || '/stat') as stat`.execute(s);
  const fields = (rows[0]?.stat ?? '').split(') ')[1]?.split(' ') ?? [];
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

class RolledBack extends Error {}

async function load(database: Database, batches: readonly Batch[], runId: number) {
  return database.withSession(async (s) => {
    let result = { cpuS: 0, ms: 0 };
    await s
      .transaction()
      .execute(async (trx) => {
        await sql`insert into govtrail.sync_run (run_id, tenant_id, trigger) overriding system value
                  values (${runId}, 'acme', 'cli')`.execute(trx);
        const cpu0 = await backendCpuS(trx);
        const t0 = performance.now();
        for (const b of batches) await writeEncodedEntries(trx, b.encoded, b.after);
        result = { cpuS: (await backendCpuS(trx)) - cpu0, ms: performance.now() - t0 };
        throw new RolledBack();
      })
      .catch((err: unknown) => {
        if (!(err instanceof RolledBack)) throw err;
      });
    return result;
  });
}

async function main(): Promise<void> {
  const sb = await startSandboxProcess(['--entries', String(N)]);
  const truth = await sandboxTruth(sb);
  await sb.close();
  const runId = 1;
  const batches = prepareBatches(truth, runId);
  const variants: { name: string; database: Database; drop: () => Promise<void> }[] = [];
  try {
    for (const name of ['fk', 'statement']) {
      const scratch = await createScratchDatabase(`govtrail_bench_${name}`);
      const database = await openDatabase({ url: scratch.url });
      variants.push({ name, database, drop: () => database.close().then(() => scratch.drop()) });
      await migrate(database, silentLogger);
      if (name === 'fk') await database.withSession((s) => sql.raw(BACK_TO_FOREIGN_KEYS).execute(s));
    }
    const rows = (t: TableCopy['table']) =>
      batches.reduce(
        (n, b) => n + b.after.filter((a) => a.table === t).reduce((m, a) => m + a.rows.rows, 0),
        0,
      );
    process.stdout.write(
      `${truth.length} entries, ${batches.reduce((n, b) => n + b.encoded.annotations.rows, 0)} annotations, ` +
        `${batches.reduce((n, b) => n + b.encoded.snapshots.rows, 0)} snapshots, ${rows('govtrail.field_change')} field changes; ` +
        `load ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')}\n`,
    );
    for (let r = 0; r < ROUNDS; r++) {
      for (const v of variants) {
        const { cpuS, ms } = await load(v.database, batches, runId);
        // The rolled-back rows would otherwise meet the next round's in every unique index.
        await v.database.withSession((s) =>
          sql`vacuum govtrail.history_entry, govtrail.history_annotation, govtrail.settings_snapshot,
              govtrail.field_change, govtrail.sync_run`.execute(s),
        );
        process.stdout.write(
          `${JSON.stringify({ variant: v.name, round: r + 1, backendCpuS: Number(cpuS.toFixed(2)), ms: Math.round(ms) })}\n`,
        );
      }
    }
  } finally {
    for (const v of variants) await v.drop();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`child-checks failed: ${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
