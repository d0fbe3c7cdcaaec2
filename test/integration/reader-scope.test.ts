/**
 * Readers who see only their tenants (docs/design/integrity.md, R1–R4; sql/0030), as real logins on
 * a real server: a login scoped to group cust-a (tenant acme) reads, from every view, function and
 * table it may read — enumerated from the catalogue, so an object added later is covered or fails
 * here — exactly acme's rows, as the owner counts them, and none of beta's or gamma's; every panel
 * of the Grafana dashboard answers it as the unscoped reader answers for acme (and for beta as for
 * a tenant that does not exist); SET ROLE to another role, the base tables, the scope table and a
 * leaky function are refused or see nothing; a tenant added to its group is visible at its next
 * query, and a revoke ends a session's access at its next statement; an unscoped reader sees all.
 *
 * Roles are cluster-wide and shared with other runs: the logins get names unique to this run and
 * are dropped at the end.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DASHBOARD_FILE, type DashboardQuery, dashboardQueries } from '../../scripts/dashboard.js';
import { createAlerting } from '../../src/app/alerting.js';
import { runCheck } from '../../src/app/conformance.js';
import { reconcileTenant } from '../../src/app/tenant-run.js';
import { loadBaselineFile } from '../../src/config/baseline.js';
import { DEFAULT_RANKS } from '../../src/core/diff.js';
import { dateKey } from '../../src/core/normalise/time.js';
import { silentLogger } from '../../src/runtime/logger.js';
import { migrate, readMigrations } from '../../src/store/migrate.js';
import { recordAlertEvents } from '../../src/store/write/alert-events.js';
import { grantReader, revokeReader } from '../../src/store/write/reader-scope.js';
import { setTenantGroups } from '../../src/store/write/tenant-groups.js';
import { setTenantStatus, syncTenantRegistry } from '../../src/store/write/tenant-registry.js';
import { judgeTenant } from '../../src/sync/conformance.js';
import { NEEDS_SERVER, onServer } from '../helpers/database.js';
import { expandGrafanaSql, grafanaInterval, type TimeRange } from '../helpers/grafana-macros.js';
import { createHarness, type Harness } from '../helpers/harness.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const RUN = `${process.pid}_${randomBytes(3).toString('hex')}`;
const LOGIN_A = `gt_scope_a_${RUN}`;
const LOGIN_B = `gt_scope_b_${RUN}`;
const LOGIN_ALL = `gt_scope_all_${RUN}`;
const LOGINS = [LOGIN_A, LOGIN_B, LOGIN_ALL];

type Row = Record<string, unknown>;

let h: Harness;
let ownerUrl: string;
let range: TimeRange;
const open: pg.Client[] = [];

function urlAs(login: string): string {
  const u = new URL(ownerUrl);
  u.username = login;
  u.password = '';
  return u.toString();
}

async function connect(login: string | undefined): Promise<pg.Client> {
  const c = new pg.Client({ connectionString: login === undefined ? ownerUrl : urlAs(login) });
  await c.connect();
  c.on('error', () => {});
  open.push(c);
  return c;
}

async function asOwner(text: string): Promise<pg.QueryResult> {
  const c = new pg.Client({ connectionString: ownerUrl });
  await c.connect();
  try {
    return await c.query(text);
  } finally {
    await c.end();
  }
}

/** The SQLSTATE a statement fails with; undefined when it succeeds. */
async function failure(c: pg.Client, text: string): Promise<string | undefined> {
  try {
    await c.query(text);
    return undefined;
  } catch (err) {
    return (err as { code?: string }).code ?? 'unknown';
  }
}

describe.skipIf(!onServer)(`readers scoped by PostgreSQL (${NEEDS_SERVER})`, () => {
  beforeAll(async () => {
    h = await createHarness({ entries: 90, scenarios: true }, { GOVTRAIL_BACKFILL_PER_ENTRY_ALERTS: 'true' });
    ownerUrl = h.testDb.url as string;
    for (const name of ['acme', 'beta', 'gamma']) {
      expect((await h.sync({ tenant: { name } })).status).toBe('succeeded');
    }
    // A rewrite at the source found by reconciles of acme and beta: discrepancies of both.
    const served = h.sandbox.history.entries();
    h.sandbox.history.rewrite(served[40]?.metadata?.id as string, { set: { discoveryInterval: '777s' } });
    for (const name of ['acme', 'beta']) {
      const r = await reconcileTenant({
        database: h.database,
        config: h.config,
        logger: h.logger,
        tenant: h.tenant({ name }),
        trigger: 'cli',
        alerting: createAlerting(h.config, h.logger, h.database),
      });
      expect(r.status).toBe('succeeded');
    }
    // Conformance (control periods, a check) and alert handling (events) of both: every reader
    // relation then holds several tenants.
    const baseline = loadBaselineFile(path.join(ROOT, 'baselines/recommended.yaml'), DEFAULT_RANKS);
    for (const name of ['acme', 'beta']) {
      await h.database.db.transaction().execute((trx) => judgeTenant(trx, name, baseline, null));
      const { rows } = await sql<{ alert_id: string }>`
        select min(alert_id)::text as alert_id from govtrail.alert where tenant_id = ${name}`.execute(
        h.database.db,
      );
      await recordAlertEvents(h.database.db, [Number(rows[0]?.alert_id)], {
        kind: 'acknowledged',
        actor: 'alice',
      });
    }
    // Operator decisions about both (tenant_decision): paused and resumed.
    for (const name of ['acme', 'beta']) {
      await setTenantStatus(h.database.db, name, 'disabled', { by: 'ops' });
      await setTenantStatus(h.database.db, name, 'active', { by: 'ops' });
    }
    const now = new Date();
    await h.database.db.transaction().execute((trx) =>
      runCheck(
        trx,
        ['acme', 'beta'].map((tenant) => ({ tenant, baseline })),
        dateKey(now),
        now.getTime(),
      ),
    );
    // Failed syncs of both, for the failed-run panels.
    for (const name of ['acme', 'beta'])
      expect((await h.sync({ tenant: { name, clientSecret: 'not-the-secret' } })).status).toBe('failed');
    await syncTenantRegistry(h.database.db, [
      h.tenant({ name: 'acme', groups: ['cust-a'], labels: { customer: 'A' } }),
      h.tenant({ name: 'beta', groups: ['cust-b'] }),
      h.tenant({ name: 'gamma' }),
    ]);
    for (const login of LOGINS) {
      await asOwner(`drop role if exists ${login}`);
      await asOwner(`create role ${login} login`);
    }
    await asOwner(`grant govtrail_reader to ${LOGIN_ALL}`);
    expect(
      await grantReader(h.database.db, LOGIN_A, { tenants: [], groups: ['cust-a'], by: 'test' }),
    ).toEqual({
      outcome: 'granted',
      added: ['group cust-a'],
    });
    expect(
      (await grantReader(h.database.db, LOGIN_B, { tenants: ['beta'], groups: [], by: 'test' })).outcome,
    ).toBe('granted');
    const oldest = served.at(-1)?.metadata?.createdAt as string;
    range = { from: new Date(Date.parse(oldest) - 86_400_000), to: new Date(Date.now() + 3_600_000) };
  }, 120_000);

  afterAll(async () => {
    for (const c of open) await c.end().catch(() => {});
    // While the database exists: asOwner connects to it.
    for (const login of LOGINS) await asOwner(`drop role if exists ${login}`);
    await h?.close();
  });

  /** Relations of schema govtrail the connected role may SELECT, with whether they have tenant_id. */
  async function readable(c: pg.Client): Promise<{ name: string; kind: string; tenantColumn: boolean }[]> {
    const { rows } = await c.query(`
      select c.relname as name, c.relkind as kind,
             exists (select from pg_attribute a where a.attrelid = c.oid and a.attname = 'tenant_id'
                     and not a.attisdropped) as "tenantColumn"
      from pg_class c join pg_namespace n on n.oid = c.relnamespace
      where n.nspname = 'govtrail' and c.relkind in ('r', 'v', 'm', 'p', 'f')
        and has_table_privilege(current_user, c.oid, 'select')
      order by 1`);
    return rows;
  }

  async function countsByTenant(c: pg.Client, relation: string): Promise<Record<string, number>> {
    const { rows } = await c.query(
      `select tenant_id, count(*)::int as n from govtrail.${relation} group by 1 order by 1`,
    );
    return Object.fromEntries(rows.map((r: Row) => [r['tenant_id'] as string, r['n'] as number]));
  }

  /** Calls of every function a reader may execute, by name: rows or a value for `tenant`. */
  const CALLS: Record<string, (c: pg.Client, tenant: string) => Promise<unknown>> = {
    settings_as_of: async (c, t) =>
      (await c.query(`select count(*)::int as n from govtrail.settings_as_of($1, 'infinity')`, [t])).rows[0]
        .n,
    setting_periods: async (c, t) =>
      (
        await c.query(
          `select count(*)::int as n from govtrail.setting_periods($1, 'require_tool_approval', '-infinity', 'infinity')`,
          [t],
        )
      ).rows[0].n,
    tenant_visible: async (c, t) => (await c.query('select govtrail.tenant_visible($1) as v', [t])).rows[0].v,
    // Pure functions of their arguments: no table is read.
    setting_value: async () => 'pure',
    tenant_in_scope: async () => 'pure',
    // The scope itself: the caller's own, and nothing of another login's.
    visible_tenants: async (c) => (await c.query('select govtrail.visible_tenants() as v')).rows[0].v,
    scoped_tenants: async (c) =>
      (await c.query(`select govtrail.scoped_tenants('${LOGIN_B}') as v`)).rows[0].v,
  };

  it('R1: from every view and table it may read, a scoped login gets exactly its tenants’ rows', async () => {
    const a = await connect(LOGIN_A);
    const owner = await connect(undefined);
    const relations = await readable(a);
    // Everything it may read is scoped by tenant: a relation without tenant_id would need a reason.
    expect(relations.filter((r) => !r.tenantColumn).map((r) => r.name)).toEqual([]);
    expect(relations.map((r) => r.name)).toEqual(
      expect.arrayContaining(['change_log', 'exporter_health', 'run_log', 'source_discrepancy', 'tenant']),
    );
    const seen: Record<string, Record<string, number>> = {};
    for (const r of relations) {
      const all = await countsByTenant(owner, r.name);
      const mine = await countsByTenant(a, r.name);
      seen[r.name] = mine;
      expect(mine, r.name).toEqual(all['acme'] === undefined ? {} : { acme: all['acme'] });
      expect(
        Object.keys(all).length,
        `${r.name} holds several tenants (the check is not vacuous)`,
      ).toBeGreaterThan(1);
    }
    expect(Object.values(seen).filter((m) => (m['acme'] ?? 0) > 0).length).toBe(relations.length);
  });

  it('R1: every function it may execute answers only for its tenants', async () => {
    const a = await connect(LOGIN_A);
    const all = await connect(LOGIN_ALL);
    const { rows } = await a.query(`
      select distinct p.proname as name
      from pg_proc p join pg_namespace n on n.oid = p.pronamespace
      where n.nspname = 'govtrail' and has_function_privilege(current_user, p.oid, 'execute')
        and p.prorettype <> 'trigger'::regtype
      order by 1`);
    const names = rows.map((r: Row) => r['name'] as string);
    expect(
      names.filter((n) => CALLS[n] === undefined),
      'functions without a call here',
    ).toEqual([]);
    for (const n of names) {
      const call = CALLS[n] as (c: pg.Client, t: string) => Promise<unknown>;
      const mine = await call(a, 'acme');
      const unscoped = await call(all, 'acme');
      if (n === 'setting_value' || n === 'tenant_in_scope') continue;
      if (n === 'visible_tenants') {
        expect(mine).toEqual(['acme']);
        expect(unscoped).toBeNull();
      } else if (n === 'scoped_tenants') {
        expect(mine, 'another login’s scope').toEqual([]);
      } else {
        expect(mine, `${n} of acme`).toEqual(unscoped);
        expect(await call(a, 'beta'), `${n} of beta`).toEqual(n === 'tenant_visible' ? false : 0);
        expect(await call(all, 'beta'), `${n} of beta, unscoped`).not.toEqual(
          n === 'tenant_visible' ? false : 0,
        );
      }
    }
  });

  it('R2: every Grafana panel answers the scoped login with acme’s rows and nothing of beta', async () => {
    const model = JSON.parse(readFileSync(path.join(ROOT, DASHBOARD_FILE), 'utf8')) as unknown;
    const queries = dashboardQueries(model);
    const a = await connect(LOGIN_A);
    const all = await connect(LOGIN_ALL);
    const run = async (c: pg.Client, q: DashboardQuery, tenant: string): Promise<Row[]> => {
      const { sql } = expandGrafanaSql(q.rawSql, {
        range,
        variables: { tenant },
        intervalMs: grafanaInterval(range, q.minInterval),
      });
      // Columns computed from now() differ between two runs by the time between them.
      return (await c.query(sql)).rows.map((r: Row) => {
        const { seconds_since_success: _s, off_seconds: _o, ...rest } = r;
        return rest;
      });
    };
    let withRows = 0;
    for (const q of queries) {
      if (q.rawSql.includes('$tenant')) {
        const mine = await run(a, q, 'acme');
        expect(mine, q.name).toEqual(await run(all, q, 'acme'));
        if (mine.length > 0) withRows++;
        expect(await run(a, q, 'beta'), `${q.name} for beta`).toEqual(await run(all, q, 'no-such-tenant'));
      } else {
        const mine = await run(a, q, 'acme');
        const tenants = new Set(mine.map((r) => r['tenant_id']).filter((t) => t !== undefined));
        expect([...tenants], q.name).toEqual(tenants.size === 0 ? [] : ['acme']);
        if (q.kind === 'variable') expect(mine.map((r) => Object.values(r)[0])).toEqual(['acme']);
      }
    }
    expect(withRows).toBeGreaterThan(queries.length / 2);
  });

  it('R3: no SET ROLE to another role, no base table, no scope change, no leak through a function', async () => {
    const a = await connect(LOGIN_A);
    expect(await failure(a, 'set role govtrail_writer')).toBe('42501');
    expect(await failure(a, 'set role govtrail_reader')).toBe('42501');
    expect(await failure(a, `set role ${LOGIN_B}`)).toBe('42501');
    expect(await failure(a, 'reset role')).toBeUndefined();
    expect((await a.query('select current_user as u')).rows[0].u).toBe(LOGIN_A);
    expect(await countsByTenant(a, 'run_log')).toEqual({ acme: expect.any(Number) });
    // Every table it may not read is refused, not empty.
    const { rows: tables } = await a.query(`
      select c.relname as name from pg_class c join pg_namespace n on n.oid = c.relnamespace
      where n.nspname = 'govtrail' and c.relkind in ('r', 'v') and not has_table_privilege(current_user, c.oid, 'select')
      order by 1`);
    expect(tables.map((t: Row) => t['name'])).toEqual(
      expect.arrayContaining(['history_entry', 'field_change', 'reader_scope', 'tenant_group', 'sync_run']),
    );
    for (const t of tables)
      expect(await failure(a, `select 1 from govtrail.${t['name']} limit 1`), t['name']).toBe('42501');
    expect(
      await failure(
        a,
        `insert into govtrail.reader_scope (login, group_name, granted_by) values ('${LOGIN_A}', 'cust-b', 'me')`,
      ),
    ).toBe('42501');
    expect(await failure(a, `update govtrail.tenant_group set member = true`)).toBe('42501');
    expect(await failure(a, 'select govtrail.apply_reader_scope()')).toBe('42501');
    expect(
      await failure(
        a,
        `select * from govtrail.setting_periods_unscoped('beta', 'enabled', '-infinity', 'infinity')`,
      ),
    ).toBe('42501');
    // The role it may become is scoped to nothing.
    expect(await failure(a, 'set role govtrail_scoped_reader')).toBeUndefined();
    expect(await countsByTenant(a, 'run_log')).toEqual({});
    await a.query('reset role');
    // A function of its own in the WHERE clause sees no other tenant's row (security_barrier).
    const notices: string[] = [];
    a.on('notice', (n) => notices.push(n.message ?? ''));
    await a.query(`create function pg_temp.leak(t text, v anyelement) returns boolean language plpgsql cost 0.0000001
      as $$ begin raise notice 'saw % %', t, v; return true; end $$`);
    await a.query('select count(*) from govtrail.change_log where pg_temp.leak(tenant_id, new_value)');
    await a.query(`select count(*) from govtrail.run_log where pg_temp.leak(tenant_id, error_message)`);
    await a.query(
      `select count(*) from govtrail.source_discrepancy where pg_temp.leak(tenant_id, source_raw)`,
    );
    expect(notices.length).toBeGreaterThan(0);
    expect(notices.filter((n) => !n.startsWith('saw acme '))).toEqual([]);
  });

  it('R1: a view a later migration adds, or replaces without the predicate, is scoped by migrate', async () => {
    const later = (version: number, script: string) => ({
      version,
      name: `${version}_later.sql`,
      script,
      checksum: `test-${version}`,
    });
    const plain =
      'create or replace view govtrail.later_runs as select tenant_id, count(*) as runs from govtrail.sync_run group by tenant_id;';
    await migrate(h.database, silentLogger, [
      ...readMigrations(),
      later(9990, `${plain} grant select on govtrail.later_runs to govtrail_reader;`),
      // A migration that changes a view restates its definition, without the predicate.
      later(9991, plain),
    ]);
    const a = await connect(LOGIN_A);
    expect(await countsByTenant(a, 'later_runs')).toEqual({ acme: expect.any(Number) });
    const all = await connect(LOGIN_ALL);
    expect(Object.keys(await countsByTenant(all, 'later_runs'))).toEqual(['acme', 'beta', 'gamma']);
  });

  it('R4: a tenant added to its group is visible at the next query; removed, gone at once', async () => {
    const a = await connect(LOGIN_A);
    expect(Object.keys(await countsByTenant(a, 'exporter_health'))).toEqual(['acme']);
    await setTenantGroups(h.database.db, 'gamma', { add: ['cust-a'], remove: [], by: 'test' });
    expect(Object.keys(await countsByTenant(a, 'exporter_health'))).toEqual(['acme', 'gamma']);
    expect(Object.keys(await countsByTenant(a, 'change_log'))).toEqual(['acme', 'gamma']);
    await setTenantGroups(h.database.db, 'gamma', { add: [], remove: ['cust-a'], by: 'test' });
    expect(Object.keys(await countsByTenant(a, 'exporter_health'))).toEqual(['acme']);
  });

  it('R4: a revoke ends an open session’s access at its next statement', async () => {
    const b = await connect(LOGIN_B);
    expect(Object.keys(await countsByTenant(b, 'run_log'))).toEqual(['beta']);
    expect(await revokeReader(h.database.db, LOGIN_B, { tenants: [], groups: [] })).toEqual({
      removed: ['tenant beta'],
      roleRevoked: true,
    });
    expect(await failure(b, 'select count(*) from govtrail.run_log')).toBe('42501');
  });

  it('an unscoped reader (govtrail_reader) still sees every tenant, and cannot be scoped while it holds it', async () => {
    const all = await connect(LOGIN_ALL);
    expect(Object.keys(await countsByTenant(all, 'run_log'))).toEqual(['acme', 'beta', 'gamma']);
    expect(Object.keys(await countsByTenant(all, 'tenant'))).toEqual(['acme', 'beta', 'gamma']);
    const refused = await grantReader(h.database.db, LOGIN_ALL, {
      tenants: ['acme'],
      groups: [],
      by: 'test',
    });
    expect(refused.outcome).toBe('refused');
  });
});
