/**
 * Every query of the committed Grafana dashboard (dashboards/grafana/govtrail.json), with its macros
 * expanded as Grafana's PostgreSQL data source expands them, run as govtrail_reader against a synced
 * sandbox tenant: each returns rows, with the columns its panel names (organize transformation,
 * stat field, series overrides, bar chart axis). A renamed view column fails it. And the views that
 * migration 0005 adds for the dashboard agree with the views they summarise.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DASHBOARD_FILE, type DashboardQuery, dashboardQueries } from '../../scripts/dashboard.js';
import { createAlerting } from '../../src/app/alerting.js';
import { reconcileTenant } from '../../src/app/tenant-run.js';
import { loadBaselineFile } from '../../src/config/baseline.js';
import { DEFAULT_RANKS } from '../../src/core/diff.js';
import type { Session } from '../../src/store/database.js';
import { recordAlertEvents } from '../../src/store/write/alert-events.js';
import { judgeTenant } from '../../src/sync/conformance.js';
import { expandGrafanaSql, grafanaInterval, type TimeRange } from '../helpers/grafana-macros.js';
import { createHarness, type Harness } from '../helpers/harness.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const model = JSON.parse(readFileSync(path.join(ROOT, DASHBOARD_FILE), 'utf8')) as unknown;
const queries = dashboardQueries(model);

let h: Harness;
let range: TimeRange;

beforeAll(async () => {
  // Per-entry alerts on the first run, so that the alert panels have rules and severities to show.
  h = await createHarness({ entries: 120, scenarios: true }, { GOVTRAIL_BACKFILL_PER_ENTRY_ALERTS: 'true' });
  expect((await h.sync()).status).toBe('succeeded');
  // A rewrite at the source, found by a reconcile: a discrepancy and a reconcile run.
  const served = h.sandbox.history.entries();
  h.sandbox.history.rewrite(served[60]?.metadata?.id as string, { set: { discoveryInterval: '777s' } });
  const reconcile = await reconcileTenant({
    database: h.database,
    config: h.config,
    logger: h.logger,
    tenant: h.tenant(),
    trigger: 'cli',
    alerting: createAlerting(h.config, h.logger, h.database),
  });
  expect(reconcile.status).toBe('succeeded');
  // A failed sync, for the failed-runs panels.
  expect((await h.sync({ tenant: { clientSecret: 'not-the-secret' } })).status).toBe('failed');
  // Judged by the shipped recommended baseline, for the Compliance row.
  // Judged in a transaction, as a run judges (the judge reads through a cursor).
  await h.database.db
    .transaction()
    .execute((trx) =>
      judgeTenant(trx, 'acme', loadBaselineFile('baselines/recommended.yaml', DEFAULT_RANKS), null),
    );
  // One alert handled, for the alert-handling panels' times.
  const handled = await sql<{
    alert_id: string;
  }>`select min(alert_id)::text as alert_id from govtrail.alert`.execute(h.database.db);
  const id = Number(handled.rows[0]?.alert_id);
  await recordAlertEvents(h.database.db, [id], { kind: 'acknowledged', actor: 'alice' });
  await recordAlertEvents(h.database.db, [id], { kind: 'resolved', actor: 'alice', note: 'done' });
  const oldest = served.at(-1)?.metadata?.createdAt as string;
  range = { from: new Date(Date.parse(oldest) - 86_400_000), to: new Date(Date.now() + 3_600_000) };
});
afterAll(async () => {
  await h?.close();
});

type Row = Record<string, unknown>;

/**
 * Runs a panel query as Grafana would send it, as govtrail_reader, inside a savepoint of the
 * caller's transaction (the role and any error end with it).
 */
async function runAsReader(session: Session, q: DashboardQuery): Promise<Row[]> {
  const { sql: text } = expandGrafanaSql(q.rawSql, {
    range,
    variables: { tenant: 'acme' },
    intervalMs: grafanaInterval(range, q.minInterval),
  });
  await sql`savepoint panel`.execute(session);
  try {
    await sql`set local role govtrail_reader`.execute(session);
    const { rows } = await sql.raw<Row>(text).execute(session);
    await sql`release savepoint panel`.execute(session);
    return rows;
  } catch (err) {
    await sql`rollback to savepoint panel`.execute(session);
    throw err;
  } finally {
    await sql`reset role`.execute(session).catch(() => {});
  }
}

/** The columns a panel refers to by name, read from its JSON. */
function expectedColumns(q: DashboardQuery): { columns: string[]; exhaustive: boolean } {
  const p = q.source as {
    transformations?: Array<{ id: string; options?: { indexByName?: Row; renameByName?: Row } }>;
    fieldConfig?: { overrides?: Array<{ matcher: { id: string; options?: unknown } }> };
    options?: { reduceOptions?: { fields?: string }; xField?: string };
  };
  const columns = new Set<string>();
  let exhaustive = false;
  if (q.format === 'time_series') columns.add('time');
  for (const t of p.transformations ?? []) {
    if (t.id !== 'organize') continue;
    exhaustive = true;
    for (const k of Object.keys(t.options?.indexByName ?? {})) columns.add(k);
    for (const k of Object.keys(t.options?.renameByName ?? {})) columns.add(k);
  }
  for (const o of p.fieldConfig?.overrides ?? []) {
    if (o.matcher.id === 'byName' && typeof o.matcher.options === 'string') columns.add(o.matcher.options);
  }
  const single = /^\/\^(\w+)\$\/$/.exec(p.options?.reduceOptions?.fields ?? '');
  if (single?.[1] !== undefined) columns.add(single[1]);
  if (typeof p.options?.xField === 'string') columns.add(p.options.xField);
  return { columns: [...columns], exhaustive };
}

/** What is wrong with a query's answer for its panel; empty when nothing is. */
function problems(q: DashboardQuery, rows: Row[]): string[] {
  const out: string[] = [];
  if (rows.length === 0) return ['returned no rows'];
  const returned = Object.keys(rows[0] as Row);
  const { columns, exhaustive } = expectedColumns(q);
  if (q.kind !== 'variable' && columns.length === 0) out.push('names no column: nothing to check');
  for (const c of columns) if (!returned.includes(c)) out.push(`has no column ${c}`);
  if (exhaustive)
    for (const c of returned) if (!columns.includes(c)) out.push(`returns ${c}, which it does not show`);
  if (q.format === 'time_series') {
    const times = rows.map((r) => Number(r['time']));
    if (times.some((t) => !Number.isFinite(t))) out.push('time is not numeric');
    if (times.some((t, i) => i > 0 && t < (times[i - 1] as number))) out.push('rows are not in time order');
  }
  return out;
}

async function inTransaction<T>(fn: (s: Session) => Promise<T>): Promise<T> {
  return h.database.withSession(async (s) => {
    await sql`begin`.execute(s);
    try {
      return await fn(s);
    } finally {
      await sql`rollback`.execute(s);
    }
  });
}

describe('the committed dashboard', () => {
  it('has a query for every panel but the rows, and the tenant variable', () => {
    const panels = (model as { panels: Array<{ type: string; targets?: unknown[] }> }).panels;
    const withData = panels.filter((p) => p.type !== 'row');
    expect(withData.every((p) => (p.targets ?? []).length === 1)).toBe(true);
    expect(queries.map((q) => q.name)).toContain('variable tenant');
    expect(queries).toHaveLength(withData.length + 1);
  });

  it.each(queries.map((q) => [q.name, q] as const))(
    '%s returns rows with the columns its panel shows',
    async (_n, q) => {
      const rows = await inTransaction((s) => runAsReader(s, q));
      expect(problems(q, rows)).toEqual([]);
    },
  );

  it('reads only what govtrail_reader may read: the views, source_discrepancy and the dashboard functions', () => {
    const readable = /govtrail\.(\w+)/g;
    const names = new Set(queries.flatMap((q) => [...q.rawSql.matchAll(readable)].map((m) => m[1])));
    expect([...names].sort()).toEqual([
      'alert_log',
      'alert_state',
      'change_log',
      'changes_without_ticket',
      'compliance_daily',
      'control_period',
      'control_status_current',
      'exporter_health',
      'posture_daily',
      'run_log',
      'setting_periods',
      'settings_current',
      'source_discrepancy',
    ]);
  });
});

describe('the check itself', () => {
  it('fails the panels that read a view column once it is renamed', async () => {
    const failing = await inTransaction(async (s) => {
      await sql`alter view govtrail.alert_log rename column severity to severity_renamed`.execute(s);
      await sql`alter view govtrail.exporter_health rename column seconds_since_success to since_success`.execute(
        s,
      );
      const out: string[] = [];
      for (const q of queries) {
        try {
          await runAsReader(s, q);
        } catch (err) {
          expect((err as Error).message).toMatch(/column .* does not exist/);
          out.push(q.name);
        }
      }
      return out;
    });
    expect(failing).toEqual([
      'panel 14 Alerts by severity',
      'panel 15 Alerts by rule',
      'panel 17 Since the last successful sync',
      'panel 28 Freshness by tenant',
      'panel 29 Stalest tenants (10)',
    ]);
  });

  it('fails the Compliance panels once a conformance view column they read is renamed', async () => {
    const failing = await inTransaction(async (s) => {
      await sql`alter view govtrail.compliance_daily rename column compliant_share to compliant_renamed`.execute(
        s,
      );
      await sql`alter view govtrail.control_status_current rename column status to status_renamed`.execute(s);
      const out: string[] = [];
      for (const q of queries) {
        try {
          await runAsReader(s, q);
        } catch {
          out.push(q.name.replace(/^panel \d+ /, ''));
        }
      }
      return out;
    });
    expect(failing).toEqual([
      'Compliant over the range',
      'Controls failing now',
      'Controls failing now',
      'Compliance per day',
      'Compliance by tenant',
    ]);
  });

  it('reports a column the panel shows that the query no longer returns', async () => {
    const q = queries.find((x) => x.name.includes('Alerts by rule')) as DashboardQuery;
    const renamed = { ...q, rawSql: q.rawSql.replace('as last_raised_at', 'as last_raised') };
    const rows = await inTransaction((s) => runAsReader(s, renamed));
    expect(problems(renamed, rows)).toEqual([
      'has no column last_raised_at',
      'returns last_raised, which it does not show',
    ]);
  });
});

describe('the views of migration 0005', () => {
  it('posture_daily has the value in force at the end of each day and that day’s changes by direction', async () => {
    const { rows } = await sql<{ checked: number; wrong: number; loosened: number }>`
      with p as (
        select p.*, t.is_deleted as t_deleted, c.loosened as c_loosened, c.tightened as c_tightened, c.changes as c_changes,
               case p.setting
                 when 'require_tool_approval' then to_jsonb(t.require_tool_approval)
                 when 'audit_verbosity' then to_jsonb(t.audit_verbosity)
                 when 'allowed_client_types' then to_jsonb(coalesce(t.allowed_client_types, '{}'))
               end as expected
        from govtrail.posture_daily p
        left join lateral govtrail.settings_as_of(p.tenant_id, p.day_start + interval '1 day' - interval '1 microsecond') t
          on true
        cross join lateral (
          select count(*) filter (where c.direction = 'loosened')::int as loosened,
                 count(*) filter (where c.direction = 'tightened')::int as tightened, count(*)::int as changes
          from govtrail.change_log c
          where c.tenant_id = p.tenant_id and c.field = p.setting
            and c.changed_at >= p.day_start and c.changed_at < p.day_start + interval '1 day') c
        where p.tenant_id = 'acme' and p.setting in ('require_tool_approval', 'audit_verbosity', 'allowed_client_types')
      )
      select count(*)::int as checked,
             count(*) filter (where p.is_deleted is distinct from coalesce(p.t_deleted, false)
                                 or p.value is distinct from case when p.t_deleted is false then p.expected end
                                 or (p.loosened, p.tightened, p.changes) is distinct from (p.c_loosened, p.c_tightened, p.c_changes)
             )::int as wrong,
             sum(p.loosened)::int as loosened
      from p`.execute(h.database.db);
    expect(rows[0]?.checked).toBeGreaterThan(1000);
    expect(rows[0]?.loosened).toBeGreaterThan(10);
    expect(rows[0]?.wrong).toBe(0);
  });

  it('setting_periods are the runs of one value in settings_timeline, whole even when the range cuts them', async () => {
    const islands = async (from: string, to: string) =>
      (
        await sql<{ valid_from: string; valid_to: string | null; value: unknown; is_deleted: boolean }>`
          with t as (
            select valid_from, entry_id, is_deleted,
                   case when not is_deleted then to_jsonb(require_tool_approval) end as value
            from govtrail.settings_timeline where tenant_id = 'acme'
          ), s as (
            select *, (lag(is_deleted) over w, lag(value) over w) is distinct from (is_deleted, value) as starts
            from t window w as (order by valid_from, entry_id)
          ), p as (
            select valid_from, lead(valid_from) over (order by valid_from, entry_id) as valid_to, value, is_deleted
            from s where starts
          )
          select valid_from::text, valid_to::text, value, is_deleted from p
          where valid_from <= ${to}::timestamptz and (valid_to is null or valid_to > ${from}::timestamptz)
          order by valid_from`.execute(h.database.db)
      ).rows;
    const periods = async (from: string, to: string) =>
      (
        await sql<{ valid_from: string; valid_to: string | null; value: unknown; is_deleted: boolean }>`
          select valid_from::text, valid_to::text, value, is_deleted
          from govtrail.setting_periods('acme', 'require_tool_approval', ${from}::timestamptz, ${to}::timestamptz)
          order by valid_from`.execute(h.database.db)
      ).rows;
    const whole = await islands('-infinity', 'infinity');
    expect(whole.length).toBeGreaterThan(4);
    expect(await periods('-infinity', 'infinity')).toEqual(whole);
    // A range that starts and ends inside periods.
    const a = whole[1] as { valid_from: string; valid_to: string };
    const b = whole[whole.length - 2] as { valid_from: string; valid_to: string };
    const from = new Date(Date.parse(a.valid_from) + 1000).toISOString();
    const to = new Date(Date.parse(b.valid_from) + 1000).toISOString();
    const cut = await periods(from, to);
    expect(cut).toEqual(await islands(from, to));
    expect(cut[0]?.valid_from).toBe(a.valid_from);
    expect(cut.at(-1)?.valid_to).toBe(b.valid_to);
  });

  it('setting_periods begins with a first entry whose value is the default, and ends a deletion at a same-value re-creation', async () => {
    // Neither leaves a field_change row of the setting: the first entry diffs against an empty
    // snapshot (false = absent), the re-creation against the snapshot before the deletion.
    const x = await createHarness({ entries: 0 });
    try {
      const hist = x.sandbox.history;
      hist.appendEntry({
        at: '2025-03-01T10:00:00Z',
        changeKind: 'CHANGE_KIND_CREATE',
        set: { requireToolApproval: false },
      });
      hist.appendEntry({ at: '2025-03-02T10:00:00Z', set: { requireToolApproval: true } });
      hist.appendEntry({
        at: '2025-03-03T10:00:00Z',
        changeKind: 'CHANGE_KIND_HARD_DELETE',
        annotations: [],
      });
      hist.appendEntry({
        at: '2025-03-04T10:00:00Z',
        changeKind: 'CHANGE_KIND_CREATE',
        set: { requireToolApproval: true },
      });
      expect((await x.sync()).status).toBe('succeeded');
      const periods = async (from: string, to: string) =>
        (
          await sql<{ valid_from: Date; valid_to: Date | null; value: unknown; is_deleted: boolean }>`
            select valid_from, valid_to, value, is_deleted
            from govtrail.setting_periods('acme', 'require_tool_approval', ${from}::timestamptz, ${to}::timestamptz)`.execute(
            x.database.db,
          )
        ).rows.map((r) => [
          r.valid_from.toISOString().slice(0, 10),
          r.valid_to?.toISOString().slice(0, 10) ?? null,
          r.value,
          r.is_deleted,
        ]);
      expect(await periods('-infinity', 'infinity')).toEqual([
        ['2025-03-01', '2025-03-02', false, false],
        ['2025-03-02', '2025-03-03', true, false],
        ['2025-03-03', '2025-03-04', null, true],
        ['2025-03-04', null, true, false],
      ]);
      // A range inside the deletion: the whole deletion period.
      expect(await periods('2025-03-03T12:00:00Z', '2025-03-03T13:00:00Z')).toEqual([
        ['2025-03-03', '2025-03-04', null, true],
      ]);
    } finally {
      await x.close();
    }
  });

  it('documents every column of posture_daily and run_log', async () => {
    const { rows } = await sql<{ name: string }>`
      select c.relname || '.' || a.attname as name
      from pg_attribute a join pg_class c on c.oid = a.attrelid
      where c.relnamespace = 'govtrail'::regnamespace and c.relname in ('posture_daily', 'run_log')
        and a.attnum > 0 and col_description(c.oid, a.attnum) is null`.execute(h.database.db);
    expect(rows).toEqual([]);
  });
});
