/**
 * COPY through a Kysely session (src/store/copy.ts) on both back ends — a PostgreSQL server and the
 * embedded database: hostile values round-trip, a COPY fails as a statement does (the database's
 * error, the transaction failed and rolled back), and the writers built on it (insertEntries,
 * insertFieldChanges) store what the former INSERT … SELECT FROM unnest stored, hash chain included.
 */
import { createHash } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { diffSnapshots, isDiffBase } from '../../src/core/diff.js';
import { rowHash, toJsonbText } from '../../src/core/normalise/canonical.js';
import { normaliseEntry } from '../../src/core/normalise/entry.js';
import type { NormalisedEntry } from '../../src/core/normalise/types.js';
import { silentLogger } from '../../src/runtime/logger.js';
import { copyRows, copyTables } from '../../src/store/copy.js';
import { type CopyValue, encodeCopyRows } from '../../src/store/copy-format.js';
import { type Database, openDatabase, type Session } from '../../src/store/database.js';
import { migrate } from '../../src/store/migrate.js';
import { verifyStore } from '../../src/store/verify/verify.js';
import { insertEntries } from '../../src/store/write/entries.js';
import { insertFieldChanges } from '../../src/store/write/field-changes.js';
import { createTestDatabase, NEEDS_SERVER, onServer } from '../helpers/database.js';

interface Backend {
  readonly database: Database;
  close(): Promise<void>;
}

async function openServer(): Promise<Backend> {
  const t = await createTestDatabase();
  return { database: t.database, close: () => t.close() };
}

async function openEmbedded(): Promise<Backend> {
  const database = await openDatabase({ dataDir: 'memory://' });
  await migrate(database, silentLogger);
  return { database, close: () => database.close() };
}

const HOSTILE = [
  'tab\there',
  'new\nline',
  'cr\rlf\r\n',
  'back\\slash \\\\ double',
  '\\N',
  '\\.',
  '\\.\n',
  `quote " and ' and $$ and $body$`,
  `'; drop table govtrail.history_entry; --`,
  'ünïcödé — 日本語 — 🚨 — \u202e — \u200b',
  '',
  ' ',
  'NULL',
  '{a,"b"}',
  '\u0001\u007f\u0085',
];

/** The error a promise rejects with. */
async function rejection(p: Promise<unknown>): Promise<Error & { code?: string }> {
  try {
    await p;
  } catch (err) {
    return err as Error & { code?: string };
  }
  throw new Error('expected a rejection');
}

async function count(s: Session, table: string): Promise<number> {
  const { rows } = await sql<{ n: number }>`select count(*)::int as n from ${sql.table(table)}`.execute(s);
  return rows[0]?.n ?? -1;
}

/** A wire entry as the tenant serves it, with hostile text wherever text goes. */
function wireEntry(i: number, hostile: string): Record<string, unknown> {
  const second = String(i % 60).padStart(2, '0');
  return {
    metadata: {
      id: `2t2UdU429ItUxnEk1LqQBL3f${String(i).padStart(3, '0')}`,
      createdAt: `2025-02-14T16:15:${second}.${String(100000000 + i * 7919).slice(1)}Z`,
      changeKind: 'CHANGE_KIND_PUT',
      actor: { kind: 'ACTOR_KIND_USER', userId: hostile },
      annotations: [
        { key: 'ticket', kind: 'ANNOTATION_KIND_TICKET', rawValue: hostile, displayValue: hostile },
        { key: `k${i}`, kind: 'ANNOTATION_KIND_OTHER', displayLabel: hostile, displayUrl: '' },
      ],
      traceId: `t${i}`,
      [hostile]: hostile,
    },
    snapshot:
      i % 4 === 3
        ? null
        : {
            allowedClientTypes: i % 4 === 2 ? [] : ['MCP_CLIENT_TYPE_PERSONAL', hostile, '"quoted"', 'NULL'],
            auditVerbosity: hostile,
            autoDiscoveryEnabled: i % 2 === 0,
            discoveryInterval: `${i * 60}.5s`,
            defaultClientLifecycle: { inactivityHideAfter: '7776000s', retentionDeleteAfter: '0.000001s' },
            createdAt: '2025-01-24T03:44:01.409372722Z',
            updatedAt: '2025-02-14T16:15:49.469868229+02:00',
            enabled: true,
            futureField: { nested: [hostile, 1.5, null], nul: 'a\u0000b' },
          },
    // What jsonb refuses: replaced in the stored text, so the hash takes the round trip.
    note: i % 5 === 0 ? `nul \u0000 and lone \udc00 surrogate ${hostile}` : hostile,
  };
}

function normalised(tenant: string, raws: readonly Record<string, unknown>[]): NormalisedEntry[] {
  return raws.map((raw) => {
    const n = normaliseEntry(tenant, raw);
    if (!n.ok) throw new Error(n.reason);
    return n.value;
  });
}

async function startRun(s: Session, tenant: string): Promise<number> {
  const { rows } = await sql<{ run_id: number }>`
    insert into govtrail.sync_run (tenant_id, trigger) values (${tenant}, 'cli') returning run_id`.execute(s);
  return Number(rows[0]?.run_id);
}

const BACKENDS: [string, () => Promise<Backend>, boolean][] = [
  [`a PostgreSQL server (${NEEDS_SERVER})`, openServer, !onServer],
  ['the embedded database', openEmbedded, false],
];

for (const [name, open, skip] of BACKENDS) {
  describe.skipIf(skip)(`COPY on ${name}`, () => {
    let b: Backend;
    beforeAll(async () => {
      b = await open();
    });
    afterAll(async () => {
      await b?.close();
    });
    const session = <T>(fn: (s: Session) => Promise<T>) => b.database.withSession(fn);

    it('round-trips hostile values of every column type, null apart from empty', async () => {
      await session(async (s) => {
        await sql`create table public.copy_probe (
          id int primary key, t text, a text[], j jsonb, b bytea, f boolean, n bigint, d double precision,
          ts timestamptz, iv interval)`.execute(s);
        const columns = ['id', 't', 'a', 'j', 'b', 'f', 'n', 'd', 'ts', 'iv'];
        const doc = (v: string) => ({ v, nul: 'a\u0000b', list: [v, null, 1.5], [v]: true });
        const rows: CopyValue[][] = HOSTILE.map((v, i) => [
          i,
          v,
          [v, null, 'NULL', ''],
          toJsonbText(doc(v)),
          Buffer.from(v),
          i % 2 === 0,
          2n ** 62n + BigInt(i),
          -1.5e-7,
          '2025-01-06T09:00:00.123456789Z',
          '3600.5 seconds',
        ]);
        rows.push([100, null, null, null, null, null, null, null, null, null]);
        rows.push([
          101,
          '',
          [],
          'null',
          new Uint8Array(),
          false,
          0,
          0,
          '2025-01-06T11:00:00+02:00',
          '0 seconds',
        ]);
        rows.push([
          102,
          '\\N',
          [null],
          '""',
          new Uint8Array(Array.from({ length: 256 }, (_, i) => i)),
          true,
          -1,
          1,
          null,
          null,
        ]);
        expect(await copyRows(s, 'public.copy_probe', columns, rows)).toBe(rows.length);

        const { rows: got } = await sql<{
          id: number;
          t: string | null;
          a: (string | null)[] | null;
          jt: string | null;
          b: Uint8Array | null;
          f: boolean | null;
          n: string | null;
          d: number | null;
          ts_ok: boolean | null;
          iv_ok: boolean | null;
        }>`select id, t, a, j::text as jt, b, f, n::text as n, d,
                  ts = '2025-01-06T09:00:00.123457Z'::timestamptz as ts_ok,
                  iv = interval '1 hour 0.5 seconds' as iv_ok
           from public.copy_probe order by id`.execute(s);
        expect(got).toHaveLength(rows.length);
        HOSTILE.forEach((v, i) => {
          const r = got[i];
          expect(r?.id).toBe(i);
          expect(r?.t).toBe(v);
          expect(r?.a).toEqual([v, null, 'NULL', '']);
          expect(JSON.parse(r?.jt as string)).toEqual(JSON.parse(toJsonbText(doc(v))));
          expect(Buffer.from(r?.b as Uint8Array).toString()).toBe(v);
          expect(r?.f).toBe(i % 2 === 0);
          expect(r?.n).toBe(String(2n ** 62n + BigInt(i)));
          expect(r?.d).toBe(-1.5e-7);
          expect(r?.ts_ok).toBe(true);
          expect(r?.iv_ok).toBe(true);
        });
        const [allNull, empty, odd] = got.slice(HOSTILE.length);
        expect(allNull).toEqual({
          id: 100,
          t: null,
          a: null,
          jt: null,
          b: null,
          f: null,
          n: null,
          d: null,
          ts_ok: null,
          iv_ok: null,
        });
        expect(empty).toMatchObject({ id: 101, t: '', a: [], jt: 'null', f: false, n: '0', ts_ok: false });
        expect(Buffer.from(empty?.b as Uint8Array).length).toBe(0);
        expect(odd).toMatchObject({ id: 102, t: '\\N', a: [null], jt: '""', f: true, n: '-1', ts_ok: null });
        expect([...Buffer.from(odd?.b as Uint8Array)]).toEqual(Array.from({ length: 256 }, (_, i) => i));
      });
    });

    it('streams a payload of many chunks, rows stored in the order given', async () => {
      await session(async (s) => {
        await sql`create table public.copy_big (seq bigint generated always as identity, id int, t text)`.execute(
          s,
        );
        const text = (i: number) => `${i} ü日🚨 ${'x\t\\'.repeat(300)}`;
        const n = 4000;
        function* rows() {
          for (let i = 0; i < n; i++) yield [n - i, text(n - i)];
        }
        expect(await copyRows(s, 'public.copy_big', ['id', 't'], rows())).toBe(n);
        const { rows: got } = await sql<{ n: number; in_order: boolean; digest: string }>`
          select count(*)::int as n,
                 bool_and(id = ${n + 1} - seq) as in_order,
                 md5(string_agg(t, '|' order by seq)) as digest
          from public.copy_big`.execute(s);
        const expected = createHash('md5')
          .update(Array.from({ length: n }, (_, i) => text(n - i)).join('|'))
          .digest('hex');
        expect(got[0]).toEqual({ n, in_order: true, digest: expected });
        // A payload encoded beforehand goes in the same way; nothing to send is no statement at all.
        expect(await copyRows(s, 'public.copy_big', ['id', 't'], encodeCopyRows([[0, 'pre']]))).toBe(1);
        expect(await copyRows(s, 'public.copy_big', ['id', 't'], [])).toBe(0);
        expect(await count(s, 'public.copy_big')).toBe(n + 1);
      });
    });

    it('a duplicate key rejects with the database error, fails the transaction and rolls it back', async () => {
      await session(async (s) => {
        await sql`create table public.copy_dup (id int primary key, t text)`.execute(s);
        await copyRows(s, 'public.copy_dup', ['id', 't'], [[1, 'kept']]);
        const err = await rejection(
          s.transaction().execute(async (trx) => {
            await copyRows(
              trx,
              'public.copy_dup',
              ['id', 't'],
              [
                [2, 'a'],
                [3, 'b'],
              ],
            );
            await copyRows(
              trx,
              'public.copy_dup',
              ['id', 't'],
              encodeCopyRows([
                [4, 'c'],
                [1, 'again'],
              ]),
            );
          }),
        );
        expect(err.code).toBe('23505');
        expect(err.message).toMatch(/duplicate key/);
        expect(await count(s, 'public.copy_dup')).toBe(1);

        // Inside the transaction, the failed COPY leaves it failed, as any statement would.
        let next: Error & { code?: string } = new Error('none');
        await rejection(
          s.transaction().execute(async (trx) => {
            const e = await rejection(
              copyRows(
                trx,
                'public.copy_dup',
                ['id', 't'],
                [
                  [5, 'x'],
                  [5, 'y'],
                ],
              ),
            );
            expect(e.code).toBe('23505');
            next = await rejection(sql`select 1`.execute(trx));
            throw next;
          }),
        );
        expect(next.code).toBe('25P02');

        // A value the column refuses fails the same way, mid-payload; the session goes on.
        const bad = await rejection(
          copyRows(
            s,
            'public.copy_dup',
            ['id', 't'],
            Array.from({ length: 5000 }, (_, i) => [i === 10 ? 'ten' : 100 + i, 'v'.repeat(200)]),
          ),
        );
        expect(bad.code).toBe('22P02');
        expect(await count(s, 'public.copy_dup')).toBe(1);
      });
    });

    it('a payload encoded beforehand goes out whole before the server answers: a COPY that cannot start, and a value refused mid-payload, reject with the error and the session goes on', async () => {
      await session(async (s) => {
        await sql`create table public.copy_eager (id int primary key, t text)`.execute(s);
        // Chunks of up to 1 MiB: this one is some 10 MiB, more than the socket takes at once.
        const many = encodeCopyRows(
          Array.from({ length: 40_000 }, (_, i) => [i, `r${i} ${'é'.repeat(120)}`]),
        );
        expect((many.chunks as Uint8Array[]).length).toBeGreaterThan(5);

        // The statement fails before any data is read (no such table, no such column): the server
        // skips the CopyData already sent, and the next statement is answered.
        const noTable = await rejection(copyRows(s, 'public.copy_missing', ['id', 't'], many));
        expect(noTable.code).toBe('42P01');
        const noColumn = await rejection(copyRows(s, 'public.copy_eager', ['id', 'nope'], many));
        expect(noColumn.code).toBe('42703');
        expect(await count(s, 'public.copy_eager')).toBe(0);

        // The same payload loads, in order; then a value refused in its middle rejects it whole.
        expect(await copyRows(s, 'public.copy_eager', ['id', 't'], many)).toBe(40_000);
        const { rows } = await sql<{ ok: boolean }>`
          select bool_and(t = 'r' || id || ' ' || repeat('é', 120)) as ok from public.copy_eager`.execute(s);
        expect(rows[0]?.ok).toBe(true);
        const refused = encodeCopyRows(
          Array.from({ length: 40_000 }, (_, i) => [i === 20_000 ? 'twenty thousand' : 100_000 + i, 'v']),
        );
        expect((await rejection(copyRows(s, 'public.copy_eager', ['id', 't'], refused))).code).toBe('22P02');
        expect(await count(s, 'public.copy_eager')).toBe(40_000);
      });
    });

    it('copyTables loads several tables in one query, and a failure in any of them fails the transaction', async () => {
      await session(async (s) => {
        await sql`create table public.copy_t1 (id int primary key)`.execute(s);
        await sql`create table public.copy_t2 (id int references public.copy_t1 (id), t text)`.execute(s);
        await sql`create table public.copy_t3 (t text)`.execute(s);
        const t1 = (ids: number[]) => ({
          table: 'public.copy_t1',
          columns: ['id'],
          rows: encodeCopyRows(ids.map((i) => [i])),
        });
        const t2 = (ids: number[]) => ({
          table: 'public.copy_t2',
          columns: ['id', 't'],
          rows: encodeCopyRows(ids.map((i) => [i, `child of ${i}\t${'ü'.repeat(50)}`])),
        });
        const t3 = { table: 'public.copy_t3', columns: ['t'], rows: encodeCopyRows([]) };
        // The second table's rows need the first's: the statements run in the order given.
        const ids = Array.from({ length: 20_000 }, (_, i) => i + 1);
        expect(await s.transaction().execute((trx) => copyTables(trx, [t1(ids), t2(ids), t3]))).toEqual([
          20_000, 20_000, 0,
        ]);
        expect(await count(s, 'public.copy_t2')).toBe(20_000);

        // A failure in the second statement (a key of the first table's repeated in it would fail
        // the first; here a child without its parent fails the second) rejects, and the first
        // table's rows go with the transaction; the session goes on.
        const err = await rejection(
          s.transaction().execute((trx) => copyTables(trx, [t1([30_001, 30_002]), t2([30_001, 99_999]), t3])),
        );
        expect(err.code).toBe('23503');
        expect(await count(s, 'public.copy_t1')).toBe(20_000);
        const failedFirst = await rejection(
          s.transaction().execute((trx) => copyTables(trx, [t1([1]), t2([30_003]), t3])),
        );
        expect(failedFirst.code).toBe('23505');
        expect(await count(s, 'public.copy_t2')).toBe(20_000);
        expect(await copyTables(s, [t3])).toEqual([0]);
      });
    });

    it('an error while encoding the rows rejects with it and loads nothing', async () => {
      await session(async (s) => {
        await sql`create table public.copy_throw (id int, t text)`.execute(s);
        function* rows() {
          for (let i = 0; i < 5000; i++) yield [i, 'w'.repeat(300)];
          throw new Error('the source failed');
        }
        const err = await rejection(
          s.transaction().execute(async (trx) => {
            await copyRows(trx, 'public.copy_throw', ['id', 't'], rows());
          }),
        );
        expect(err.message).toBe('the source failed');
        const wrong = await rejection(copyRows(s, 'public.copy_throw', ['id', 't'], [[1, 'a', 'extra']]));
        expect(wrong.message).toMatch(/3 values for 2 columns/);
        expect(await count(s, 'public.copy_throw')).toBe(0);
      });
    });

    it('insertEntries stores entries, annotations and snapshots; the chain is the former one and verifies', async () => {
      const tenant = `acme ${HOSTILE[0]} ${HOSTILE[8]}`;
      const raws = Array.from({ length: 30 }, (_, i) => wireEntry(i, HOSTILE[i % HOSTILE.length] as string));
      const entries = normalised(tenant, raws);
      await session(async (s) => {
        const runId = await startRun(s, tenant);
        const result = await s.transaction().execute(async (trx) => {
          const first = await insertEntries(trx, runId, entries.slice(0, 12), null);
          const second = await insertEntries(trx, runId, entries.slice(12), first.lastHash);
          return { first, second };
        });
        expect(result.first.inserted).toBe(12);
        expect(result.second.inserted).toBe(18);
        await sql`update govtrail.sync_run set status = 'succeeded', finished_at = now(), entries_inserted = 30
                  where run_id = ${runId}`.execute(s);

        // Storage order is the order given; the hashes are what the former code computed.
        const { rows } = await sql<{ entry_id: string; row_hash: Uint8Array; raw: unknown; run_id: number }>`
          select entry_id, row_hash, raw, run_id from govtrail.history_entry
          where tenant_id = ${tenant} order by seq`.execute(s);
        expect(rows.map((r) => r.entry_id)).toEqual(entries.map((e) => e.entry.entryId));
        let prev: Buffer | null = null;
        for (const [i, { entry }] of entries.entries()) {
          prev = rowHash(prev, {
            tenantId: entry.tenantId,
            entryId: entry.entryId,
            createdAtText: entry.createdAtText,
            raw: JSON.parse(toJsonbText(entry.raw)),
          });
          expect(Buffer.from(rows[i]?.row_hash as Uint8Array).toString('hex')).toBe(prev.toString('hex'));
          expect(rows[i]?.raw).toEqual(JSON.parse(toJsonbText(entry.raw)));
          expect(Number(rows[i]?.run_id)).toBe(runId);
        }
        expect(result.second.lastHash?.toString('hex')).toBe(prev?.toString('hex'));

        const { rows: typed } = await sql<{
          n_ann: number;
          n_snap: number;
          created_ok: boolean;
          iv: boolean;
        }>`
          select (select count(*)::int from govtrail.history_annotation where tenant_id = ${tenant}) as n_ann,
                 (select count(*)::int from govtrail.settings_snapshot where tenant_id = ${tenant}) as n_snap,
                 (select bool_and(e.created_at = (e.raw->'metadata'->>'createdAt')::timestamptz)
                    from govtrail.history_entry e where tenant_id = ${tenant}) as created_ok,
                 (select bool_and(discovery_interval = make_interval(secs => substr(entry_id, 25)::int * 60 + 0.5)
                                  and retention_delete_after = interval '1 microsecond')
                    from govtrail.settings_snapshot where tenant_id = ${tenant}) as iv`.execute(s);
        expect(typed[0]).toEqual({
          n_ann: entries.reduce((n, e) => n + e.annotations.length, 0),
          n_snap: entries.filter((e) => e.snapshot !== null).length,
          created_ok: true,
          iv: true,
        });
        const { rows: snap } = await sql<{ allowed: string[] | null; extra: unknown }>`
          select allowed_client_types as allowed, extra_fields as extra from govtrail.settings_snapshot
          where tenant_id = ${tenant} and entry_id = ${entries[1]?.entry.entryId}`.execute(s);
        expect(snap[0]?.allowed).toEqual(['MCP_CLIENT_TYPE_PERSONAL', HOSTILE[1], '"quoted"', 'NULL']);
        expect(snap[0]?.extra).toEqual(JSON.parse(toJsonbText(entries[1]?.snapshot?.extraFields)));

        // The field changes a sync would store with them (verify checks those against the diff too).
        const chrono = [...entries].sort((x, y) =>
          x.entry.createdAtKey === y.entry.createdAtKey
            ? Buffer.compare(Buffer.from(x.entry.entryId), Buffer.from(y.entry.entryId))
            : x.entry.createdAtKey < y.entry.createdAtKey
              ? -1
              : 1,
        );
        let base: NormalisedEntry['snapshotWire'] = null;
        const changes = chrono.flatMap((e) => {
          const rows = diffSnapshots(base, e.snapshotWire).map((change) => ({
            entryId: e.entry.entryId,
            change,
          }));
          if (isDiffBase(e.snapshotWire)) base = e.snapshotWire;
          return rows;
        });
        expect(changes.length).toBeGreaterThan(0);
        await insertFieldChanges(s, tenant, changes);

        // verify recomputes the chain from the stored rows and re-derives the child rows.
        const v = await verifyStore(s, { tenantId: tenant, pageSize: 7 });
        expect(v.findings).toEqual([]);
        expect(v.rowsVerified).toBe(30);

        // An id already stored fails the batch with a unique violation, leaving nothing of it.
        const dup = normalised(tenant, [wireEntry(99, 'new'), raws[3] as Record<string, unknown>]);
        const err = await rejection(
          s.transaction().execute((trx) => insertEntries(trx, runId, dup, result.second.lastHash)),
        );
        expect(err.code).toBe('23505');
        expect(await count(s, 'govtrail.history_entry')).toBe(30);
        await expect(insertEntries(s, runId, [], prev)).resolves.toEqual({ inserted: 0, lastHash: prev });
      });
    });

    it('insertFieldChanges inserts field changes as jsonb, null as NULL; a stored one is a unique violation', async () => {
      const tenant = 'acme-fc';
      const entries = normalised(tenant, [wireEntry(1, 'a'), wireEntry(2, 'b')]);
      const [e1, e2] = entries.map((e) => e.entry.entryId) as [string, string];
      await session(async (s) => {
        const runId = await startRun(s, tenant);
        await insertEntries(s, runId, entries, null);
        const changes = [
          {
            entryId: e1,
            change: {
              field: 'audit_verbosity',
              oldValue: null,
              newValue: 'AUDIT_VERBOSITY_FULL',
              direction: 'tightened' as const,
            },
          },
          {
            entryId: e1,
            change: {
              field: `extra_fields.${HOSTILE[0]}`,
              oldValue: { a: 'x\u0000y', b: [1, HOSTILE[1], HOSTILE[3]] },
              newValue: undefined,
              direction: 'changed' as const,
            },
          },
          {
            entryId: e2,
            change: {
              field: 'allowed_client_types',
              oldValue: ['A', '"B"'],
              newValue: [],
              direction: 'loosened' as const,
            },
          },
          {
            entryId: e2,
            change: { field: 'enabled', oldValue: true, newValue: false, direction: 'loosened' as const },
          },
        ];
        expect(await insertFieldChanges(s, tenant, changes)).toBe(4);
        expect(await insertFieldChanges(s, tenant, [])).toBe(0);
        const { rows } = await sql<{
          entry_id: string;
          field: string;
          old_value: unknown;
          new_value: unknown;
          old_null: boolean;
          new_null: boolean;
          direction: string;
        }>`select entry_id, field, old_value, new_value, old_value is null as old_null,
                  new_value is null as new_null, direction
           from govtrail.field_change where tenant_id = ${tenant} order by entry_id, field`.execute(s);
        const jsonb = (v: unknown) => (v === null || v === undefined ? null : JSON.parse(toJsonbText(v)));
        const expected = changes
          .map(({ entryId, change: c }) => ({
            entry_id: entryId,
            field: c.field,
            old_value: jsonb(c.oldValue),
            new_value: jsonb(c.newValue),
            old_null: c.oldValue === null || c.oldValue === undefined,
            new_null: c.newValue === null || c.newValue === undefined,
            direction: c.direction,
          }))
          .sort((x, y) => (x.entry_id + x.field < y.entry_id + y.field ? -1 : 1));
        expect(rows).toEqual(expected);

        const err = await rejection(insertFieldChanges(s, tenant, [changes[3] as (typeof changes)[number]]));
        expect(err.code).toBe('23505');
      });
    });
  });
}
