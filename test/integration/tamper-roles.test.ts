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
import type pg from 'pg';
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
import { runCliCaptured } from '../helpers/cli-process.js';
import { NEEDS_SERVER, onServer } from '../helpers/database.js';
import { FAST_ENGINE } from '../helpers/fleet.js';
import { createHarness, type Harness } from '../helpers/harness.js';
import { asClient, writerUrl } from '../helpers/roles.js';

let h: Harness | undefined;
let writer: Database | undefined;
afterEach(async () => {
  await writer?.close();
  await h?.close();
  writer = undefined;
  h = undefined;
});

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
      // GOVTRAIL_JOB_HEARTBEAT (10 s here) holds although migrate created the queues with 30 s.
      const heartbeats = await asClient(ownerUrl, async (c) => ({
        queue: (
          await c.query<{ h: number }>(
            `select heartbeat_seconds as h from govtrail_boss.queue where name = 'govtrail-sync'`,
          )
        ).rows.map((r) => r.h),
        jobs: (
          await c.query<{ h: number }>(
            `select distinct heartbeat_seconds as h from govtrail_boss.job where name = 'govtrail-sync'`,
          )
        ).rows.map((r) => r.h),
      }));
      expect(heartbeats).toEqual({ queue: [10], jobs: [10] });
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

  it('cannot rewrite a finished run, delete one, or overturn an operator decision', async () => {
    h = await createHarness({ entries: 10, seed: 7 });
    expect((await h.sync()).status).toBe('succeeded');
    const { setTenantStatus } = await import('../../src/store/write/tenant-registry.js');
    await setTenantStatus(h.database.db, 'acme', 'retired', { by: 'ops@host' });
    const url = await writerUrl(h.testDb.url as string);
    await asClient(url, async (c) => {
      const run = (
        await c.query<{ run_id: number }>('select min(run_id)::int as run_id from govtrail.sync_run')
      ).rows[0]?.run_id;
      const refused: Array<[string, string]> = [];
      for (const statement of [
        `update govtrail.sync_run set status = 'succeeded', error_code = null where run_id = ${run}`,
        `update govtrail.sync_run set status = 'running' where run_id = ${run}`,
        `update govtrail.sync_run set finished_at = now() where run_id = ${run}`,
        `delete from govtrail.sync_run where run_id = ${run}`,
        `update govtrail.tenant set status = 'active', retired_by = null, enabled_by = 'configuration' where tenant_id = 'acme'`,
        `update govtrail.tenant set status = 'active' where tenant_id = 'acme'`,
        `insert into govtrail.tenant (tenant_id, status) values ('forged', 'retired')`,
        `insert into govtrail.tenant_decision (tenant_id, status, decided_by) values ('acme', 'active', 'x')`,
        `update govtrail.tenant_decision set decided_by = 'someone else'`,
        'delete from govtrail.tenant_decision',
      ])
        refused.push([statement, (await failure(c, statement)) ?? 'accepted']);
      expect(refused.filter(([, code]) => code !== '42501')).toEqual([]);
      // A running run the writer did not open cannot be deleted either.
      await c.query(`insert into govtrail.sync_run (tenant_id, trigger) values ('acme', 'cli')`);
      expect(await failure(c, `delete from govtrail.sync_run where status = 'running'`)).toBeUndefined();
      // The operator's record: appended to, never rewritten; who and when are the database's.
      const { rows } = await c.query(
        'select status, previous_status, decided_by, database_role from govtrail.tenant_decision order by decision_id',
      );
      expect(rows).toEqual([
        { status: 'retired', previous_status: 'active', decided_by: 'ops@host', database_role: 'postgres' },
      ]);
    });
    // The owner cannot rewrite the record either (the trigger, not only the grants).
    await asClient(h.testDb.url as string, async (c) => {
      for (const statement of [
        `update govtrail.tenant_decision set decided_by = 'someone else'`,
        'delete from govtrail.tenant_decision',
        `update govtrail.sync_run set status = 'succeeded' where status = 'failed' or status = 'succeeded'`,
      ])
        expect({ statement, code: await failure(c, statement) }).toEqual({ statement, code: '42501' });
    });
    // The session that opened a running run may discard it (an engine attempt to be retried); another may not.
    await asClient(url, async (a) => {
      const id = (
        await a.query<{ run_id: number }>(
          `insert into govtrail.sync_run (tenant_id, trigger) values ('acme', 'cli') returning run_id::int`,
        )
      ).rows[0]?.run_id;
      await asClient(url, async (b) => {
        expect(await failure(b, `delete from govtrail.sync_run where run_id = ${id}`)).toBe('42501');
      });
      expect(await failure(a, `delete from govtrail.sync_run where run_id = ${id}`)).toBeUndefined();
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

  it('GOVTRAIL_REQUIRE_WRITER_ROLE looks at every role of the login, and sync and reconcile honour it', async () => {
    h = await createHarness({ entries: 5, seed: 3 });
    const ownerUrl = h.testDb.url as string;
    const url = await writerUrl(ownerUrl);
    // A writer that is also a member of a superuser role (NOINHERIT or not: it could `set role`),
    // or of a BYPASSRLS role.
    const login = 'govtrail_writer_test_elevated';
    await asClient(ownerUrl, async (c) => {
      await c.query(`do $$
        begin
          if not exists (select from pg_roles where rolname = '${login}') then
            begin create role ${login} login noinherit; exception when duplicate_object or unique_violation then null; end;
          end if;
          if not exists (select from pg_roles where rolname = 'govtrail_test_super') then
            begin create role govtrail_test_super nologin superuser; exception when duplicate_object or unique_violation then null; end;
          end if;
          if not exists (select from pg_roles where rolname = 'govtrail_test_bypass') then
            begin create role govtrail_test_bypass nologin bypassrls; exception when duplicate_object or unique_violation then null; end;
          end if;
        end $$`);
      await c.query(`grant govtrail_writer to ${login}`);
    });
    const elevated = new URL(url);
    elevated.username = login;
    const check = async (target: string) => {
      const db = await openDatabase({ url: target });
      try {
        return await connectedAsOwner(db.db);
      } finally {
        await db.close();
      }
    };
    expect(await check(url)).toBe(false);
    expect(await check(elevated.toString())).toBe(false);
    for (const role of ['govtrail_test_super', 'govtrail_test_bypass']) {
      await asClient(ownerUrl, (c) => c.query(`grant ${role} to ${login}`));
      try {
        expect({ role, owner: await check(elevated.toString()) }).toEqual({ role, owner: true });
      } finally {
        await asClient(ownerUrl, (c) => c.query(`revoke ${role} from ${login}`));
      }
    }
    // sync and reconcile (a CronJob's commands) refuse the owner before doing anything, exit 2.
    const env = {
      DATABASE_URL: ownerUrl,
      LOG_LEVEL: 'silent',
      GOVTRAIL_REQUIRE_WRITER_ROLE: 'true',
      GOVTRAIL_BASE_URL: h.sandbox.baseUrl,
      GOVTRAIL_CLIENT_ID: h.sandbox.credentials.secret.clientId,
      GOVTRAIL_CLIENT_SECRET: h.sandbox.credentials.secret.clientSecret,
    };
    try {
      for (const command of ['sync', 'reconcile']) {
        const owner = await runCliCaptured([command], env);
        expect({ command, code: owner.code }).toEqual({ command, code: 2 });
        expect(owner.stderr).toContain('GOVTRAIL_REQUIRE_WRITER_ROLE');
        const asWriter = await runCliCaptured([command], { ...env, DATABASE_URL: url });
        expect({ command, code: asWriter.code, err: asWriter.stderr }).toEqual({ command, code: 0, err: '' });
      }
    } finally {
      vi.unstubAllEnvs();
    }
  });

  it('a login without the grants (or NOINHERIT) gets one DATABASE line naming the missing grant, exit 1', async () => {
    h = await createHarness({ entries: 5, seed: 3 });
    const ownerUrl = h.testDb.url as string;
    await writerUrl(ownerUrl);
    const login = 'govtrail_test_nogrants';
    const noinherit = 'govtrail_test_noinherit';
    await asClient(ownerUrl, async (c) => {
      await c.query(`do $$
        begin
          if not exists (select from pg_roles where rolname = '${login}') then
            begin create role ${login} login; exception when duplicate_object or unique_violation then null; end;
          end if;
          if not exists (select from pg_roles where rolname = '${noinherit}') then
            begin create role ${noinherit} login noinherit; exception when duplicate_object or unique_violation then null; end;
          end if;
        end $$`);
      await c.query(`grant govtrail_writer to ${noinherit}`);
    });
    try {
      for (const name of [login, noinherit]) {
        const u = new URL(ownerUrl);
        u.username = name;
        const r = await runCliCaptured(['tenants', 'list'], { DATABASE_URL: u.toString() });
        expect({ name, code: r.code }).toEqual({ name, code: 1 });
        expect(r.stderr).toBe(
          `govtrail: the login "${name}" has no USAGE on schema govtrail: grant govtrail_writer to "${name}" (docs/deploy.md); a NOINHERIT login does not use the privileges of its roles: make it INHERIT [DATABASE]\n`,
        );
      }
    } finally {
      vi.unstubAllEnvs();
    }
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
