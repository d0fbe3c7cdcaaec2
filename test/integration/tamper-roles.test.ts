/**
 * The two roles of docs/deploy.md: `govtrail migrate` as the owner, everything else as a login role
 * granted govtrail_writer (sql/0009). The writer syncs, stores a late arrival (which recomputes the
 * diff after it), reconciles and raises alerts, and starts without migrating; it can neither alter
 * a table, disable a trigger nor update or delete evidence. Every evidence table is append-only,
 * field_change included, even for the owner.
 *
 * Roles are cluster-wide and shared by every test run on the server: the login role is created
 * idempotently under a fixed name and never dropped.
 */
import pg from 'pg';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createAlerting } from '../../src/app/alerting.js';
import { reconcileTenant, syncTenant } from '../../src/app/tenant-run.js';
import { startWorkerService } from '../../src/app/worker.js';
import { silentLogger } from '../../src/runtime/logger.js';
import { type Database, openDatabase } from '../../src/store/database.js';
import { migrate } from '../../src/store/migrate.js';
import { connectedAsOwner, requireWriterRole } from '../../src/store/roles.js';
import { verifyStore } from '../../src/store/verify/verify.js';
import { installEngine } from '../../src/worker/engine-setup.js';
import { NEEDS_SERVER, onServer } from '../helpers/database.js';
import { FAST_ENGINE } from '../helpers/fleet.js';
import { createHarness, type Harness } from '../helpers/harness.js';

const WRITER_LOGIN = 'govtrail_writer_test_login';

let h: Harness | undefined;
let writer: Database | undefined;
afterEach(async () => {
  await writer?.close();
  await h?.close();
  writer = undefined;
  h = undefined;
});

async function asClient<T>(url: string, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

/** The test database's URL for the writer login, which is created (once per cluster) if missing. */
async function writerUrl(ownerUrl: string): Promise<string> {
  await asClient(ownerUrl, async (c) => {
    await c.query(`do $$
      begin
        if not exists (select from pg_roles where rolname = '${WRITER_LOGIN}') then
          begin
            create role ${WRITER_LOGIN} login;
          exception when duplicate_object or unique_violation then null;
          end;
        end if;
      end $$`);
    await c.query(`grant govtrail_writer to ${WRITER_LOGIN}`);
  });
  const u = new URL(ownerUrl);
  u.username = WRITER_LOGIN;
  u.password = '';
  return u.toString();
}

/** The SQLSTATE a statement fails with (undefined when it succeeds). */
async function failure(c: pg.Client, statement: string): Promise<string | undefined> {
  try {
    await c.query(statement);
    return undefined;
  } catch (err) {
    return (err as { code?: string }).code;
  }
}

describe.skipIf(!onServer)(`the writer role (${NEEDS_SERVER})`, () => {
  it('syncs, stores a late arrival, reconciles and alerts as the writer, and starts without migrating', async () => {
    h = await createHarness({ entries: 200, seed: 12 });
    const url = await writerUrl(h.testDb.url as string);
    writer = await openDatabase({ url });
    // Start-up as the writer: the schema is up to date, so migrate runs no DDL.
    expect((await migrate(writer, silentLogger)).applied).toEqual([]);
    const harness = h;
    const database = writer;
    const run = (kind: 'sync' | 'reconcile') =>
      (kind === 'sync' ? syncTenant : reconcileTenant)({
        database,
        config: harness.config,
        logger: silentLogger,
        tenant: harness.tenant(),
        trigger: 'cli',
        alerting: createAlerting(harness.config, silentLogger, database),
      });
    const first = await run('sync');
    expect(first.error).toBeUndefined();
    expect(first.status).toBe('succeeded');
    expect(first.counters.entriesInserted).toBe(200);

    // A late arrival between the two newest entries: the diff of the newest is recomputed (its
    // field changes deleted and written again), which the writer may do only in that transaction.
    const entries = h.sandbox.history.entries() as Array<{ metadata: { id: string; createdAt: string } }>;
    const newest = entries[0]?.metadata as { createdAt: string };
    const second = entries[1]?.metadata as { createdAt: string };
    const t = new Date(
      Math.max(Date.parse(newest.createdAt) - 5 * 60_000, Date.parse(second.createdAt) + 1000),
    );
    h.sandbox.history.insertLate({ at: t.toISOString(), set: { requireToolApproval: false } });
    const late = await run('sync');
    expect(late.error).toBeUndefined();
    expect(late.counters.entriesInserted).toBe(1);
    expect(late.alerts).toBeGreaterThan(0);

    const all = h.sandbox.history.entries() as Array<{ metadata: { id: string } }>;
    h.sandbox.history.rewrite(all[50]?.metadata.id as string);
    const reconcile = await run('reconcile');
    expect(reconcile.error).toBeUndefined();
    expect(reconcile.findings).toBe(1);

    const verified = await writer.withSession((s) => verifyStore(s));
    expect(verified.findings).toEqual([]);
    expect(verified.fieldChangesVerified).toBeGreaterThan(0);
  });

  it('runs scheduled syncs on the job engine as the writer once migrate installed the engine', async () => {
    h = await createHarness({ entries: 30, seed: 13 });
    const ownerUrl = h.testDb.url as string;
    // What `govtrail migrate` does as the owner after the SQL migrations.
    await installEngine(ownerUrl, 'govtrail_writer');
    const url = await writerUrl(ownerUrl);
    writer = await openDatabase({ url });
    const service = await startWorkerService({
      config: { ...h.config, databaseUrl: url, tenants: [h.tenant()] },
      logger: silentLogger,
      database: writer,
      httpPort: 0,
      httpHost: '127.0.0.1',
      processMetrics: false,
      engineTuning: FAST_ENGINE,
    });
    try {
      await service.engine.start({ initialRun: false });
      await service.engine.planSlot('sync', new Date());
      const status = await vi.waitFor(
        async () => {
          const { rows } = await asClient(ownerUrl, (c) =>
            c.query<{ status: string }>('select status from govtrail.sync_run where slot is not null'),
          );
          if (rows.length === 0 || rows[0]?.status === 'running')
            throw new Error('no scheduled run finished yet');
          return rows.map((r) => r.status);
        },
        { timeout: 30_000, interval: 250 },
      );
      expect(status).toEqual(['succeeded']);
    } finally {
      await service.stop(0);
    }
  });

  it('cannot alter a table, disable a trigger, or update or delete evidence', async () => {
    h = await createHarness({ entries: 30, seed: 5 });
    expect((await h.sync()).status).toBe('succeeded');
    const url = await writerUrl(h.testDb.url as string);
    await asClient(url, async (c) => {
      for (const t of ['history_entry', 'field_change', 'source_discrepancy', 'alert'])
        expect({ t, code: await failure(c, `alter table govtrail.${t} disable trigger user`) }).toEqual({
          t,
          code: '42501',
        });
      expect(await failure(c, 'alter table govtrail.field_change add column forged text')).toBe('42501');
      expect(await failure(c, 'set session_replication_role = replica')).toBe('42501');
      expect(await failure(c, `update govtrail.history_entry set actor_kind = 'X'`)).toBe('42501');
      expect(await failure(c, `update govtrail.field_change set direction = 'tightened'`)).toBe('42501');
      // DELETE on field_change is granted for the recompute; outside it the trigger refuses.
      expect(await failure(c, 'delete from govtrail.field_change')).toBe('42501');
      expect(await failure(c, 'delete from govtrail.alert')).toBe('42501');
      expect(await failure(c, 'truncate govtrail.rejected_entry')).toBe('42501');
      // It reads and inserts, as the worker needs.
      expect(await failure(c, 'select count(*) from govtrail.history_entry')).toBeUndefined();
    });
  });

  it('with GOVTRAIL_REQUIRE_WRITER_ROLE the worker refuses the owner and accepts the writer', async () => {
    h = await createHarness({ entries: 5, seed: 3 });
    const url = await writerUrl(h.testDb.url as string);
    writer = await openDatabase({ url });
    expect(await connectedAsOwner(h.database.db)).toBe(true);
    expect(await connectedAsOwner(writer.db)).toBe(false);
    await expect(requireWriterRole(h.database.db, true)).rejects.toThrow(/GOVTRAIL_REQUIRE_WRITER_ROLE/);
    await expect(requireWriterRole(h.database.db, false)).resolves.toBeUndefined();
    await expect(requireWriterRole(writer.db, true)).resolves.toBeUndefined();
  });

  it('every evidence table is append-only for the owner too, field_change included', async () => {
    h = await createHarness({ entries: 30, seed: 5 });
    expect((await h.sync()).status).toBe('succeeded');
    await asClient(h.testDb.url as string, async (c) => {
      const { rows } = await c.query(
        `select (select count(*) from govtrail.field_change)::int as changes, (select count(*) from govtrail.alert)::int as alerts`,
      );
      expect(rows[0].changes).toBeGreaterThan(0);
      expect(rows[0].alerts).toBeGreaterThan(0);
      // One row in each table sync did not fill, so the row triggers have something to refuse.
      await c.query(
        `insert into govtrail.rejected_entry (tenant_id, run_id, reason, raw, raw_sha256)
         select 'acme', min(run_id), 'test', '{}', 'test-sha' from govtrail.sync_run`,
      );
      await c.query(
        `insert into govtrail.owner_removal (tenant_id, app_id, resource_type_id, resource_id, role_slug,
           entitlement_app_id, entitlement_id, dry_run, outcome)
         values ('acme', 'a', 'r', 'i', 'owner', 'e', 'x', true, 'dry_run')`,
      );
      for (const statement of [
        `update govtrail.field_change set direction = 'tightened', new_value = 'true'`,
        'delete from govtrail.field_change',
        'truncate govtrail.field_change cascade',
        `update govtrail.alert set severity = 'low'`,
        'delete from govtrail.alert',
        'truncate govtrail.alert cascade',
        `update govtrail.rejected_entry set reason = 'x'`,
        'delete from govtrail.rejected_entry',
        `update govtrail.owner_removal set outcome = 'deleted'`,
        'delete from govtrail.owner_removal',
        'truncate govtrail.owner_removal',
      ])
        expect({ statement, code: await failure(c, statement) }).toEqual({ statement, code: '42501' });
    });
  });
});
