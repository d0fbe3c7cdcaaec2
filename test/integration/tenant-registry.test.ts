/**
 * The tenant registry (issue 18, sql/0007, src/store/write/tenant-registry.ts, `govtrail tenants …`):
 * retiring a tenant keeps every row of its history and takes it out of exporter_health and the
 * dashboard's tenant list; disable and enable round-trip, and govtrail sync skips a tenant that is
 * not active; a configuration reload never re-enables a tenant an operator disabled or retired; no
 * column of the registry ever holds a secret; unknown names and a retired tenant's enable without
 * --force exit 2 with one line, while a tenant only the run ledger knows can be retired; migration
 * 0007 registers the tenants stored before it.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import pg from 'pg';
import { afterEach, describe, expect, inject, it, vi } from 'vitest';
import { stringify as toYaml } from 'yaml';
import { DASHBOARD_FILE, dashboardQueries } from '../../scripts/dashboard.js';
import { runCli } from '../../src/cli.js';
import type { TenantConfig } from '../../src/config/settings.js';
import { silentLogger } from '../../src/runtime/logger.js';
import { type Database, openDatabase, type Session } from '../../src/store/database.js';
import { migrate, readMigrations } from '../../src/store/migrate.js';
import {
  schedulableTenants,
  setTenantStatus,
  syncTenantRegistry,
} from '../../src/store/write/tenant-registry.js';
import { NEEDS_SERVER, onServer } from '../helpers/database.js';
import { createHarness, type Harness } from '../helpers/harness.js';

let h: Harness | undefined;
afterEach(async () => {
  vi.unstubAllEnvs();
  vi.restoreAllMocks();
  await h?.close();
  h = undefined;
});

/** Runs the CLI in this process, capturing stdout and stderr. */
async function cli(...args: string[]): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const so = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    out.push(String(chunk));
    return true;
  });
  const se = vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
    err.push(String(chunk));
    return true;
  });
  try {
    const code = await runCli(['node', 'govtrail', ...args]);
    return { code, out: out.join(''), err: err.join('') };
  } finally {
    so.mockRestore();
    se.mockRestore();
  }
}

/** A GOVTRAIL_CONFIG file listing the named tenants, all on the harness's sandbox. */
function configureTenants(
  harness: Harness,
  names: readonly string[],
  extra: Record<string, unknown> = {},
): void {
  const dir = mkdtempSync(path.join(tmpdir(), 'govtrail-registry-'));
  const file = path.join(dir, 'govtrail.yaml');
  writeFileSync(
    file,
    toYaml({
      tenants: names.map((name) => ({
        name,
        base_url: harness.sandbox.baseUrl,
        client_id: harness.sandbox.credentials.secret.clientId,
        client_secret: harness.sandbox.credentials.secret.clientSecret,
        page_size: 50,
        ...extra,
      })),
    }),
  );
  vi.stubEnv('GOVTRAIL_CONFIG', file);
  vi.stubEnv('DATABASE_URL', harness.testDb.url as string);
  vi.stubEnv('LOG_LEVEL', 'silent');
}

/** Rows of the tenant in every table that holds its history or its runs. */
async function rowsOf(db: Session, tenant: string): Promise<Record<string, number>> {
  const tables = [
    'history_entry',
    'history_annotation',
    'settings_snapshot',
    'field_change',
    'checkpoint',
    'sync_run',
    'alert',
  ];
  const counts: Record<string, number> = {};
  for (const t of tables) {
    const { rows } = await sql<{ n: number }>`
      select count(*) as n from ${sql.table(`govtrail.${t}`)} where tenant_id = ${tenant}`.execute(db);
    counts[t] = Number(rows[0]?.n);
  }
  return counts;
}

async function healthTenants(db: Session): Promise<string[]> {
  const { rows } = await sql<{ tenant_id: string }>`
    select tenant_id from govtrail.exporter_health order by tenant_id`.execute(db);
  return rows.map((r) => r.tenant_id);
}

/** The tenants the Grafana dashboard's `tenant` variable offers, by running its own query. */
async function dashboardTenants(db: Session): Promise<string[]> {
  const variable = dashboardQueries(JSON.parse(readFileSync(DASHBOARD_FILE, 'utf8'))).find(
    (q) => q.name === 'variable tenant',
  );
  expect(variable?.rawSql).toBeTruthy();
  const { rows } = await sql.raw<{ tenant_id: string }>(variable?.rawSql as string).execute(db);
  return rows.map((r) => r.tenant_id);
}

async function statusOf(db: Session, tenant: string): Promise<string | undefined> {
  const row = await db
    .selectFrom('govtrail.tenant')
    .select('status')
    .where('tenant_id', '=', tenant)
    .executeTakeFirst();
  return row?.status;
}

async function runsOf(db: Session, tenant: string): Promise<number> {
  return (await rowsOf(db, tenant))['sync_run'] as number;
}

describe.skipIf(!onServer)(`tenant registry${onServer ? '' : ` (${NEEDS_SERVER})`}`, () => {
  it('tenants retire keeps every row of the tenant, takes it out of exporter_health and the dashboard, and stops its syncs', async () => {
    h = await createHarness({ entries: 40, seed: 18 });
    configureTenants(h, ['acme', 'globex']);
    const db = h.database.db;
    expect((await cli('sync')).code).toBe(0);
    const before = await rowsOf(db, 'acme');
    expect(before['history_entry']).toBe(40);
    expect(await healthTenants(db)).toEqual(['acme', 'globex']);
    expect(await dashboardTenants(db)).toEqual(['acme', 'globex']);

    const retired = await cli('tenants', 'retire', 'acme');
    expect(retired.code).toBe(0);
    expect(retired.out).toMatch(/^acme: active -> retired: /);
    expect(await statusOf(db, 'acme')).toBe('retired');
    expect(await rowsOf(db, 'acme')).toEqual(before);
    expect(await healthTenants(db)).toEqual(['globex']);
    expect(await dashboardTenants(db)).toEqual(['globex']);
    // The history is still there for analysts.
    const { rows } = await sql<{ n: number }>`
      select count(*) as n from govtrail.settings_timeline where tenant_id = 'acme'`.execute(db);
    expect(Number(rows[0]?.n)).toBeGreaterThan(0);

    // govtrail sync and reconcile skip it with a note, and still run the other tenant.
    const sync = await cli('sync');
    expect(sync.code).toBe(0);
    expect(sync.out).toContain(
      'skipped (not active in the tenant registry; govtrail tenants list): acme (retired)',
    );
    expect(await rowsOf(db, 'acme')).toEqual(before);
    expect(await runsOf(db, 'globex')).toBe(2);
    const reconcile = await cli('reconcile');
    expect(reconcile.out).toContain('acme (retired)');
    expect(await rowsOf(db, 'acme')).toEqual(before);

    const list = await cli('tenants', 'list');
    expect(list.code).toBe(0);
    expect(list.out).toMatch(/tenant\s+status\s+configured\s+last success\s+entries/);
    expect(list.out).toMatch(/acme\s+retired\s+yes\s+\S+Z\s+40\s/);
    expect(list.out).toMatch(/globex\s+active\s+yes\s+\S+Z\s+40\s+\S+Z\s+configuration/);
  });

  it('a tenant is registered by sync once its first run succeeds, not when it fails (a mistyped base URL leaves no tenant)', async () => {
    h = await createHarness({ entries: 20, seed: 23 });
    const db = h.database.db;
    configureTenants(h, ['acme']);
    vi.stubEnv('GOVTRAIL_HTTP_MAX_ATTEMPTS', '1');
    // The base URL mistyped: a port nothing listens on.
    const wrong = `http://127.0.0.1:${new URL(h.sandbox.baseUrl).port === '9' ? '10' : '9'}`;
    const file = process.env['GOVTRAIL_CONFIG'] as string;
    writeFileSync(file, readFileSync(file, 'utf8').replace(h.sandbox.baseUrl, wrong));
    const failed = await cli('sync');
    expect(failed.code).toBe(1);
    // The message names the URL it tried.
    expect(failed.out).toContain(`to ${wrong} failed: network error ECONNREFUSED`);
    expect(await statusOf(db, 'acme')).toBeUndefined();

    writeFileSync(file, readFileSync(file, 'utf8').replace(wrong, h.sandbox.baseUrl));
    expect((await cli('sync')).code).toBe(0);
    expect(await statusOf(db, 'acme')).toBe('active');
  });

  it('disable and enable round trip: a disabled tenant is not synced but stays in exporter_health; enabled, it is synced again', async () => {
    h = await createHarness({ entries: 30, seed: 19 });
    configureTenants(h, ['acme']);
    const db = h.database.db;
    expect((await cli('sync')).code).toBe(0);
    expect(await runsOf(db, 'acme')).toBe(1);

    const disabled = await cli('tenants', 'disable', 'acme');
    expect(disabled.code).toBe(0);
    expect(disabled.out).toMatch(/^acme: active -> disabled: /);
    expect(await statusOf(db, 'acme')).toBe('disabled');
    const row = await db
      .selectFrom('govtrail.tenant')
      .selectAll()
      .where('tenant_id', '=', 'acme')
      .executeTakeFirstOrThrow();
    expect(row.disabled_at).toBeInstanceOf(Date);
    expect(row.disabled_by).toMatch(/.+@.+/);
    expect((await cli('tenants', 'disable', 'acme')).out).toBe('acme: already disabled\n');

    const skipped = await cli('sync');
    expect(skipped.code).toBe(0);
    expect(skipped.out).toContain('acme (disabled)');
    expect(await runsOf(db, 'acme')).toBe(1);
    expect(await healthTenants(db)).toEqual(['acme']);
    expect(await schedulableTenants(db, [h.tenant()])).toEqual([]);

    const enabled = await cli('tenants', 'enable', 'acme');
    expect(enabled.code).toBe(0);
    expect(enabled.out).toMatch(/^acme: disabled -> active: /);
    expect(await statusOf(db, 'acme')).toBe('active');
    const again = await cli('sync');
    expect(again.code).toBe(0);
    expect(again.out).not.toContain('skipped');
    expect(await runsOf(db, 'acme')).toBe(2);
  });

  it('a configuration reload never re-enables a tenant an operator disabled or retired', async () => {
    h = await createHarness({ entries: 5, seed: 20 });
    const db = h.database.db;
    const tenants: TenantConfig[] = [
      h.tenant({ name: 'a' }),
      h.tenant({ name: 'b' }),
      h.tenant({ name: 'c' }),
    ];
    const first = await syncTenantRegistry(db, tenants);
    expect(first.added).toEqual(['a', 'b', 'c']);
    expect(await setTenantStatus(db, 'b', 'disabled', { by: 'test' })).toMatchObject({ outcome: 'changed' });
    expect(await setTenantStatus(db, 'c', 'retired', { by: 'test' })).toMatchObject({ outcome: 'changed' });

    // Reloaded twice, once with changed settings: the statuses stay, the settings follow.
    const reload = await syncTenantRegistry(db, [
      h.tenant({ name: 'a' }),
      h.tenant({ name: 'b', pageSize: 20 }),
      h.tenant({ name: 'c' }),
    ]);
    expect(reload.added).toEqual([]);
    expect(reload.updated).toEqual([{ tenant: 'b', settings: ['page_size'] }]);
    expect(reload.held).toEqual([
      { tenant: 'b', status: 'disabled' },
      { tenant: 'c', status: 'retired' },
    ]);
    await syncTenantRegistry(db, tenants);
    expect(await statusOf(db, 'b')).toBe('disabled');
    expect(await statusOf(db, 'c')).toBe('retired');
    expect((await schedulableTenants(db, tenants)).map((t) => t.name)).toEqual(['a']);

    // A tenant dropped from the configuration is left as it is, and reported.
    const dropped = await syncTenantRegistry(db, [h.tenant({ name: 'b' })]);
    expect(dropped.unconfigured).toEqual([{ tenant: 'a', status: 'active' }]);
    expect(await statusOf(db, 'a')).toBe('active');

    // The command does the same and says so.
    configureTenants(h, ['a', 'b', 'c', 'd']);
    const loaded = await cli('tenants', 'sync');
    expect(loaded.code).toBe(0);
    expect(loaded.out).toMatch(/d\s+added \(active\)/);
    expect(loaded.out).toMatch(/b\s+stays disabled/);
    expect(loaded.out).toMatch(/c\s+stays retired/);
    expect(await statusOf(db, 'b')).toBe('disabled');
    expect(await statusOf(db, 'c')).toBe('retired');
  });

  it('no column of the registry ever holds a secret', async () => {
    h = await createHarness({ entries: 5, seed: 21 });
    const db = h.database.db;
    const plain = 'plain-secret-Zq81vX0pL3';
    const keySecret = 'secret-token:conductorone.com:v1:eyJrIjoiUmVnaXN0cnlUZXN0In0';
    await syncTenantRegistry(db, [h.tenant({ name: 'p', clientSecret: plain })]);
    await schedulableTenants(db, [h.tenant({ name: 'k', clientSecret: keySecret })]);
    // A reload that changes the settings writes them again.
    await syncTenantRegistry(db, [
      h.tenant({ name: 'p', clientSecret: plain, pageSize: 10 }),
      h.tenant({ name: 'k', clientSecret: keySecret, lookbackMs: 60_000 }),
    ]);
    configureTenants(h, ['y'], { client_secret: plain });
    expect((await cli('tenants', 'sync')).code).toBe(0);
    expect((await cli('tenants', 'disable', 'y')).code).toBe(0);

    // Every column of every row, as text.
    const { rows } = await sql<{ tenant_id: string; row: string }>`
      select t.tenant_id, row_to_json(t)::text as row from govtrail.tenant t order by 1`.execute(db);
    expect(rows.map((r) => r.tenant_id)).toEqual(['k', 'p', 'y']);
    const columns = await sql<{ column_name: string }>`
      select column_name from information_schema.columns
      where table_schema = 'govtrail' and table_name = 'tenant'`.execute(db);
    for (const { column_name } of columns.rows) {
      expect(rows.every((r) => column_name in JSON.parse(r.row))).toBe(true);
      expect(column_name).not.toMatch(/secret|password|token/i);
    }
    for (const r of rows) {
      expect(r.row).not.toContain(plain);
      expect(r.row).not.toContain(keySecret);
      expect(r.row).not.toContain('eyJrIjoiUmVnaXN0cnlUZXN0In0');
    }
    // The settings that are worth showing are there.
    expect(rows.find((r) => r.tenant_id === 'k')?.row).toContain(h.sandbox.credentials.secret.clientId);
  });

  it('unknown names exit 2 with one line; a retired tenant is enabled only with --force', async () => {
    h = await createHarness({ entries: 5, seed: 22 });
    configureTenants(h, ['acme']);
    for (const verb of ['disable', 'enable', 'retire']) {
      const r = await cli('tenants', verb, 'nope');
      expect(r.code).toBe(2);
      expect(r.out).toBe('');
      expect(r.err.trimEnd().split('\n')).toHaveLength(1);
      expect(r.err).toContain('no tenant named "nope"');
    }
    expect((await cli('tenants', 'disable')).code).toBe(2);
    expect(await statusOf(h.database.db, 'nope')).toBeUndefined();

    expect((await cli('tenants', 'retire', 'acme')).code).toBe(0);
    const refused = await cli('tenants', 'enable', 'acme');
    expect(refused.code).toBe(2);
    expect(refused.err.trimEnd().split('\n')).toHaveLength(1);
    expect(refused.err).toContain('--force');
    expect((await cli('tenants', 'disable', 'acme')).code).toBe(2);
    expect(await statusOf(h.database.db, 'acme')).toBe('retired');
    // A tenant only the run ledger knows (synced by a path that does not register) can be retired.
    await h.database.db
      .insertInto('govtrail.sync_run')
      .values({ tenant_id: 'ghost', trigger: 'cli' })
      .execute();
    expect(await healthTenants(h.database.db)).toContain('ghost');
    const ghost = await cli('tenants', 'retire', 'ghost');
    expect(ghost.code).toBe(0);
    expect(ghost.out).toMatch(/^ghost: active -> retired: /);
    expect(await healthTenants(h.database.db)).not.toContain('ghost');

    const forced = await cli('tenants', 'enable', 'acme', '--force');
    expect(forced.code).toBe(0);
    expect(forced.out).toMatch(/^acme: retired -> active: /);
    expect(await statusOf(h.database.db, 'acme')).toBe('active');
  });
});

/** An empty database on the test server (not the migrated template), dropped by `close`. */
async function emptyServerDatabase(): Promise<{ database: Database; close(): Promise<void> }> {
  const target = inject('testDatabase');
  if (target === undefined) throw new Error(NEEDS_SERVER);
  const name = `govtrail_t_registry_${process.pid}_${randomBytes(4).toString('hex')}`;
  const admin = async (statement: string) => {
    const client = new pg.Client({ connectionString: target.serverUrl });
    await client.connect();
    try {
      await client.query(statement);
    } finally {
      await client.end();
    }
  };
  await admin(`create database ${name}`);
  const u = new URL(target.serverUrl);
  u.pathname = `/${name}`;
  const database = await openDatabase({ url: u.toString() });
  return {
    database,
    async close() {
      await database.close();
      await admin(`drop database if exists ${name} with (force)`);
    },
  };
}

describe.skipIf(!onServer)(`migration 0007${onServer ? '' : ` (${NEEDS_SERVER})`}`, () => {
  it('registers every tenant already in the run ledger as active, so one configured once by mistake can be retired', async () => {
    const { database, close } = await emptyServerDatabase();
    try {
      const all = readMigrations();
      await migrate(
        database,
        silentLogger,
        all.filter((m) => m.version < 7),
      );
      await database.db
        .insertInto('govtrail.sync_run')
        .values([
          { tenant_id: 'old', trigger: 'schedule', started_at: '2026-01-02T03:04:05Z' },
          { tenant_id: 'old', trigger: 'schedule', started_at: '2026-02-01T00:00:00Z' },
          { tenant_id: 'mistake', trigger: 'cli', started_at: '2026-03-01T00:00:00Z' },
        ])
        .execute();
      await migrate(database, silentLogger, all);
      const rows = await database.db
        .selectFrom('govtrail.tenant')
        .select(['tenant_id', 'status', 'first_seen_at', 'enabled_by', 'client_id'])
        .orderBy('tenant_id')
        .execute();
      expect(rows).toEqual([
        {
          tenant_id: 'mistake',
          status: 'active',
          first_seen_at: new Date('2026-03-01T00:00:00Z'),
          enabled_by: 'migration 0007',
          client_id: null,
        },
        {
          tenant_id: 'old',
          status: 'active',
          first_seen_at: new Date('2026-01-02T03:04:05Z'),
          enabled_by: 'migration 0007',
          client_id: null,
        },
      ]);
      expect(await setTenantStatus(database.db, 'mistake', 'retired', { by: 'test' })).toMatchObject({
        outcome: 'changed',
      });
      expect(await healthTenants(database.db)).toEqual(['old']);
    } finally {
      await close();
    }
  });
});
