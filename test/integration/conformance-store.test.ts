/**
 * Conformance on real databases (both back ends: PGlite, and PostgreSQL when TEST_DATABASE_URL is
 * set): random histories stored in random order over several runs, each run judged in its own
 * transaction from its earliest entry on, leave control_period equal to a brute-force judgement of
 * the final history (C1, C4, C5); a change of baseline re-judges the whole history; baseline texts
 * are append-only.
 */
import fc from 'fast-check';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Baseline, parseBaseline } from '../../src/core/conformance/baseline.js';
import type { JudgedEntry } from '../../src/core/conformance/judge.js';
import { DEFAULT_RANKS } from '../../src/core/diff.js';
import { silentLogger } from '../../src/runtime/logger.js';
import { type Database, openDatabase, type Session } from '../../src/store/database.js';
import { migrate } from '../../src/store/migrate.js';
import { readControlPeriods } from '../../src/store/read/control-periods.js';
import { recordBaselineText } from '../../src/store/write/conformance.js';
import { judgeTenant } from '../../src/sync/conformance.js';
import { brutePeriods, keyAt, SNAPSHOT_ROWS_OF_RUN, shape } from '../helpers/conformance.js';
import { createTestDatabase, onServer, type TestDatabase } from '../helpers/database.js';

const BASE = Date.UTC(2026, 9, 1);

const TEXT = `baseline: store-test
controls:
  - id: C1
    field: require_tool_approval
    expect: { equals: true }
  - id: C2
    field: audit_verbosity
    expect: { at_least: AUDIT_VERBOSITY_STANDARD }
  - id: C3
    field: allowed_client_types
    expect: { subset_of: [MCP_CLIENT_TYPE_SHARED, MCP_CLIENT_TYPE_SERVICE] }
exceptions:
  - control: C1
    tenants: [acme]
    value: false
    rationale: test
    approved_by: tester
    approved_at: ${keyAt(BASE, 20)}
    expires: ${keyAt(BASE, 60)}
  - control: C3
    tenants: [acme]
    value: []
    rationale: test
    approved_by: tester
    approved_at: ${keyAt(BASE, 0)}
    expires: ${keyAt(BASE, 35)}
`;
const baseline = parseBaseline(TEXT, 'store.yaml', DEFAULT_RANKS);

interface Stored extends JudgedEntry {
  readonly createdAtText: string;
}

let seq = 0;

/** Stores entries as one run (a ledger row and history rows with a dummy hash): returns the run id. */
async function storeRun(db: Session, entries: readonly Stored[]): Promise<number> {
  const { rows } = await sql<{ run_id: number }>`
    insert into govtrail.sync_run (tenant_id, trigger, status) values ('acme', 'cli', 'succeeded') returning run_id`.execute(
    db,
  );
  const runId = Number((rows[0] as { run_id: number }).run_id);
  for (const e of entries) {
    const raw = {
      metadata: { id: e.entryId, createdAt: e.createdAtText },
      changeKind: e.snapshot === null ? 'CHANGE_KIND_HARD_DELETE' : 'CHANGE_KIND_PUT',
      ...(e.snapshot === null ? {} : { snapshot: e.snapshot }),
    };
    await sql`insert into govtrail.history_entry
      (tenant_id, entry_id, created_at, created_at_text, change_kind, actor_kind, actor_user_id, raw, run_id, row_hash)
      values ('acme', ${e.entryId}, ${e.key}::timestamptz, ${e.createdAtText}, ${raw.changeKind}, ${e.actorKind},
              ${e.actorUserId}, ${JSON.stringify(raw)}::jsonb, ${runId}, ${Buffer.from([seq++ % 256])})`.execute(
      db,
    );
    if (e.ticket !== null) {
      await sql`insert into govtrail.history_annotation (tenant_id, entry_id, ordinal, kind, raw_value, display_value)
        values ('acme', ${e.entryId}, 0, 'ANNOTATION_KIND_TICKET', ${e.ticket}, ${e.ticket})`.execute(db);
    }
  }
  await sql.raw(SNAPSHOT_ROWS_OF_RUN.replace('$1', String(runId))).execute(db);
  return runId;
}

const historyArb = fc
  .array(
    fc.record({
      second: fc.integer({ min: 0, max: 80 }),
      nanos: fc.constantFrom(0, 1, 999, 123456789),
      kind: fc.integer({ min: 0, max: 7 }),
      approval: fc.boolean(),
      verbosity: fc.constantFrom('AUDIT_VERBOSITY_MINIMAL', 'AUDIT_VERBOSITY_FULL'),
      types: fc.subarray(['MCP_CLIENT_TYPE_SHARED', 'MCP_CLIENT_TYPE_PERSONAL']),
      ticket: fc.option(fc.constantFrom('SEC-9'), { nil: null }),
      run: fc.integer({ min: 0, max: 3 }),
    }),
    { minLength: 1, maxLength: 14 },
  )
  .map((rows) =>
    rows.map((r, i) => {
      const key = keyAt(BASE, r.second, r.nanos);
      // Sometimes an offset form of the same instant: the key, not the text, decides order.
      const text = r.kind === 1 ? key.replace('T00:', 'T02:').replace(/Z$/, '+02:00') : key;
      const entry: Stored & { run: number } = {
        key,
        createdAtText: text,
        entryId: `2${String(i).padStart(3, '0')}`,
        snapshot:
          r.kind === 0
            ? null
            : { requireToolApproval: r.approval, auditVerbosity: r.verbosity, allowedClientTypes: r.types },
        actorKind: 'ACTOR_KIND_USER',
        actorUserId: `u${i}`,
        ticket: r.ticket,
        run: r.run,
      };
      return entry;
    }),
  );

function sorted<T extends JudgedEntry>(entries: readonly T[]): T[] {
  return [...entries].sort((a, b) =>
    a.key < b.key ? -1 : a.key > b.key ? 1 : a.entryId < b.entryId ? -1 : a.entryId > b.entryId ? 1 : 0,
  );
}

const backends: { name: string; open: () => Promise<{ database: Database; close: () => Promise<void> }> }[] =
  [
    {
      name: 'PGlite',
      open: async () => {
        const database = await openDatabase({ dataDir: 'memory://' });
        await migrate(database, silentLogger);
        return { database, close: () => database.close() };
      },
    },
    ...(onServer
      ? [
          {
            name: 'PostgreSQL',
            open: async () => {
              const t: TestDatabase = await createTestDatabase();
              return { database: t.database, close: () => t.close() };
            },
          },
        ]
      : []),
  ];

for (const backend of backends) {
  describe(`conformance store on ${backend.name}`, () => {
    let database: Database;
    let close: () => Promise<void>;
    beforeAll(async () => {
      ({ database, close } = await backend.open());
    });
    afterAll(async () => {
      await close?.();
    });

    async function reset(): Promise<string> {
      await sql`delete from govtrail.control_period`.execute(database.db);
      const tenant = `t${seq++}`;
      return tenant;
    }

    it('C1/C4/C5: runs storing a random history in random order leave the brute-force periods', async () => {
      await recordBaselineText(database.db, baseline);
      const { rows } = await sql<{ key: string }>`
        select to_char(first_loaded_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US') || '000Z' as key
        from govtrail.baseline_text where baseline_id = 'store-test'`.execute(database.db);
      const loadedAtKey = (rows[0] as { key: string }).key;
      await fc.assert(
        fc.asyncProperty(historyArb, async (history) => {
          await reset();
          // A fresh tenant per case, by rewriting the tenant id afterwards is not possible
          // (append-only): use a database transaction that is rolled back instead.
          await database.db
            .transaction()
            .execute(async (trx) => {
              for (let run = 0; run < 4; run++) {
                const part = history.filter((e) => e.run === run);
                if (part.length === 0) continue;
                const runId = await storeRun(trx, part);
                await judgeTenant(trx, 'acme', baseline, runId);
              }
              const periods = await readControlPeriods(trx, 'acme');
              const expected = brutePeriods(sorted(history), baseline, 'acme', loadedAtKey);
              const order = (p: { controlId: string; fromKey: string }) => `${p.controlId} ${p.fromKey}`;
              expect(periods.map(shape).sort((a, b) => (order(a) < order(b) ? -1 : 1))).toEqual(
                expected.sort((a, b) => (order(a) < order(b) ? -1 : 1)),
              );
              throw new Rollback();
            })
            .catch((err: unknown) => {
              if (!(err instanceof Rollback)) throw err;
            });
        }),
        { numRuns: onServer ? 40 : 25 },
      );
    });

    it('C5: entries within one microsecond are judged in nanosecond order, not in id order', async () => {
      await database.db
        .transaction()
        .execute(async (trx) => {
          // Same microsecond: the later instant has the smaller id, so id order would put it first.
          const history: Stored[] = [
            { nanos: 400, id: '41', approval: false },
            { nanos: 100, id: '42', approval: true },
          ].map((x) => ({
            key: keyAt(BASE, 5, x.nanos),
            createdAtText: keyAt(BASE, 5, x.nanos),
            entryId: x.id,
            snapshot: { requireToolApproval: x.approval, auditVerbosity: 'AUDIT_VERBOSITY_FULL' },
            actorKind: 'ACTOR_KIND_USER',
            actorUserId: 'u',
            ticket: null,
          }));
          const runId = await storeRun(trx, history);
          await judgeTenant(trx, 'acme', baseline, runId);
          const periods = (await readControlPeriods(trx, 'acme')).filter((p) => p.controlId === 'C1');
          // (The baseline's exception on C1 then accepts false from 00:20 to 01:00.)
          expect(periods.slice(0, 2).map((p) => [p.status, p.fromKey, p.entryId])).toEqual([
            ['pass', keyAt(BASE, 5, 100), '42'],
            ['fail', keyAt(BASE, 5, 400), '41'],
          ]);
          throw new Rollback();
        })
        .catch((err: unknown) => {
          if (!(err instanceof Rollback)) throw err;
        });
    });

    it('a change of baseline re-judges the whole history once, and the registry records it', async () => {
      await database.db
        .transaction()
        .execute(async (trx) => {
          await sql`insert into govtrail.tenant (tenant_id) values ('acme') on conflict do nothing`.execute(
            trx,
          );
          const history: Stored[] = [0, 10, 30].map((s, i) => ({
            key: keyAt(BASE, s),
            createdAtText: keyAt(BASE, s),
            entryId: `3${i}`,
            snapshot: { requireToolApproval: i !== 1, auditVerbosity: 'AUDIT_VERBOSITY_FULL' },
            actorKind: 'ACTOR_KIND_USER',
            actorUserId: 'u',
            ticket: null,
          }));
          const runId = await storeRun(trx, history);
          const first = await judgeTenant(trx, 'acme', baseline, runId);
          expect(first).toMatchObject({ scope: 'full', reason: 'first', entriesJudged: 3 });
          const again = await judgeTenant(trx, 'acme', baseline, runId);
          // The same run again: judged from its earliest entry (the first), not the whole history anew.
          expect(again).toMatchObject({ scope: 'from', fromKey: keyAt(BASE, 0), entriesJudged: 3 });
          const other: Baseline = parseBaseline(
            TEXT.replace('AUDIT_VERBOSITY_STANDARD', 'AUDIT_VERBOSITY_FULL'),
            'b2',
            DEFAULT_RANKS,
          );
          const changed = await judgeTenant(trx, 'acme', other, runId);
          expect(changed).toMatchObject({ scope: 'full', reason: 'baseline_changed', entriesJudged: 3 });
          const { rows } = await sql<{ baseline_sha256: string; n: number }>`
            select t.baseline_sha256, (select count(distinct p.baseline_sha256)::int from govtrail.control_period p
                                       where p.tenant_id = 'acme') as n
            from govtrail.tenant t where t.tenant_id = 'acme'`.execute(trx);
          expect(rows[0]).toEqual({ baseline_sha256: other.sha256, n: 1 });
          throw new Rollback();
        })
        .catch((err: unknown) => {
          if (!(err instanceof Rollback)) throw err;
        });
    });

    it('keeps every baseline text once, append-only, with its first load time', async () => {
      await recordBaselineText(database.db, baseline);
      await recordBaselineText(database.db, baseline);
      const { rows } = await sql<{ n: number }>`
        select count(*)::int as n from govtrail.baseline_text where baseline_id = 'store-test'`.execute(
        database.db,
      );
      expect(rows[0]?.n).toBe(1);
      await expect(
        sql`update govtrail.baseline_text set text = 'x' where baseline_id = 'store-test'`.execute(
          database.db,
        ),
      ).rejects.toThrow(/append-only/);
      await expect(
        sql`delete from govtrail.baseline_text where baseline_id = 'store-test'`.execute(database.db),
      ).rejects.toThrow(/append-only/);
    });
  });
}

class Rollback extends Error {}
