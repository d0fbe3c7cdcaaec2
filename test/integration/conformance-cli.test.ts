/**
 * `govtrail baseline report` and `baseline check` on a hand-made day (acceptance of
 * docs/design/conformance.md): hourly changes, an exception that expires mid-day, a hard delete
 * and a re-create, and a late arrival stored by a second run. The periods and shares the report
 * prints equal a brute-force computation written here, to the millisecond; the JSON shapes are the
 * contract's; the JUnit XML is read back by a real XML parser.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { sql } from 'kysely';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { parseBaseline } from '../../src/core/conformance/baseline.js';
import type { JudgedEntry } from '../../src/core/conformance/judge.js';
import { DEFAULT_RANKS } from '../../src/core/diff.js';
import { keyMillis } from '../../src/core/normalise/time.js';
import type { SandboxEntry } from '../../src/sandbox/index.js';
import { runCliCaptured } from '../helpers/cli-process.js';
import { brutePeriods, bruteStatusAt } from '../helpers/conformance.js';
import { NEEDS_SERVER, onServer } from '../helpers/database.js';
import { createHarness, type Harness } from '../helpers/harness.js';

const DAY = '2026-03-02';
const T0 = Date.parse(`${DAY}T00:00:00Z`);
const HOUR_MS = 3_600_000;
const SHARED = 'MCP_CLIENT_TYPE_SHARED';
const PERSONAL = 'MCP_CLIENT_TYPE_PERSONAL';

const BASELINE_TEXT = `baseline: acceptance-day
title: Acceptance day
controls:
  - id: AIG-01
    title: Tool calls need approval
    field: require_tool_approval
    expect: { equals: true }
    severity: high
    frameworks:
      NIST-SP-800-53r5: [CM-3]
  - id: AIG-02
    title: Audit at least standard
    field: audit_verbosity
    expect: { at_least: AUDIT_VERBOSITY_STANDARD }
  - id: AIG-03
    title: Only shared and service clients
    field: allowed_client_types
    expect: { subset_of: [${SHARED}, MCP_CLIENT_TYPE_SERVICE] }
exceptions:
  - control: AIG-03
    tenants: [acme]
    value: [${SHARED}, ${PERSONAL}]
    rationale: Pilot of personal clients
    approved_by: ciso@acme.example
    approved_at: 2026-03-01T00:00:00Z
    ticket: SEC-1234
    expires: ${DAY}T12:30:00Z
`;

/** The snapshot served at hour h (a full replacement, so the brute force needs no merging). */
function snapshotAt(h: number): Record<string, unknown> {
  return {
    requireToolApproval: h % 3 !== 0 && h !== 23,
    auditVerbosity: h % 4 === 1 ? 'AUDIT_VERBOSITY_MINIMAL' : 'AUDIT_VERBOSITY_FULL',
    allowedClientTypes: h < 14 ? [SHARED, PERSONAL] : [SHARED],
  };
}

/** Hour h at a time with nanoseconds (the key decides order, not PostgreSQL's microseconds). */
const atHour = (h: number, minutes = 0) =>
  `${new Date(T0 + h * HOUR_MS + minutes * 60_000).toISOString().slice(0, 19)}.123456789Z`;

let h: Harness;
let dir: string;
const served: { entry: SandboxEntry; snapshot: Record<string, unknown> | null; at: string }[] = [];

beforeAll(async () => {
  if (!onServer) return;
  dir = mkdtempSync(path.join(tmpdir(), 'govtrail-conf-'));
  writeFileSync(path.join(dir, 'baseline.yaml'), BASELINE_TEXT);
  // The runs judge as they store (control_period), and the commands read what they stored.
  h = await createHarness({ entries: 1, seed: 3 }, { GOVTRAIL_BASELINE: path.join(dir, 'baseline.yaml') });
  for (let hour = 0; hour < 24; hour++) {
    const at = atHour(hour);
    if (hour === 15) {
      const entry = h.sandbox.history.appendEntry({ at, changeKind: 'CHANGE_KIND_HARD_DELETE' });
      served.push({ entry, snapshot: null, at });
      continue;
    }
    const snapshot = snapshotAt(hour);
    const entry = h.sandbox.history.appendEntry({
      at,
      ...(hour === 16 ? { changeKind: 'CHANGE_KIND_CREATE' } : {}),
      snapshot,
      annotations: [
        { kind: 'ANNOTATION_KIND_TICKET', rawValue: `SEC-${100 + hour}`, displayValue: `SEC-${100 + hour}` },
      ],
    });
    served.push({ entry, snapshot, at });
  }
  const first = await h.sync();
  if (first.status !== 'succeeded') throw new Error(`first run ${first.status}`);
  // A late arrival inside the lookback window: made at 22:55, served after 23:00 was stored.
  const lateAt = atHour(22, 55);
  const late = {
    requireToolApproval: false,
    auditVerbosity: 'AUDIT_VERBOSITY_FULL',
    allowedClientTypes: [SHARED],
  };
  served.push({
    entry: h.sandbox.history.insertLate({ at: lateAt, snapshot: late, annotations: [] }),
    snapshot: late,
    at: lateAt,
  });
  const second = await h.sync();
  if (second.status !== 'succeeded') throw new Error(`second run ${second.status}`);
  const { rows } = await sql<{ n: number }>`select count(*)::int as n from govtrail.control_period`.execute(
    h.database.db,
  );
  if (rows[0]?.n === 0) throw new Error('the runs judged nothing');
}, 120_000);

afterAll(async () => {
  await h?.close();
});

afterEach(() => {
  vi.unstubAllEnvs();
});

function env(): Record<string, string> {
  return {
    DATABASE_URL: h.testDb.url as string,
    GOVTRAIL_BASELINE: path.join(dir, 'baseline.yaml'),
    LOG_LEVEL: 'error',
  };
}

/** What the tenant served, as the brute force reads it (the seeded entry before the day included). */
function truth(): JudgedEntry[] {
  return served.map(({ entry, snapshot, at }) => ({
    key: at,
    entryId: entry.metadata?.id as string,
    snapshot,
    actorKind: null,
    actorUserId: null,
    ticket: null,
  }));
}

describe.skipIf(!onServer)(`baseline report on a hand-made day (${NEEDS_SERVER})`, () => {
  it('periods and shares equal a brute-force computation, to the millisecond', async () => {
    const r = await runCliCaptured(
      ['baseline', 'report', '--from', DAY, '--to', '2026-03-03', '--format', 'json'],
      env(),
    );
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const report = JSON.parse(r.stdout);
    const baseline = parseBaseline(BASELINE_TEXT, 'b', DEFAULT_RANKS);
    expect(report.baseline).toMatchObject({ id: 'acceptance-day', sha256: baseline.sha256 });
    expect(report.from).toBe(`${DAY}T00:00:00.000000000Z`);
    const tenant = report.tenants[0];
    expect(tenant.tenant).toBe('acme');
    // The seeded entry lies before the day: no time of the day is unknown.
    const entries = truth();
    const fromMs = T0;
    const toMs = T0 + 24 * HOUR_MS;
    const cuts = [
      ...new Set([`${DAY}T00:00:00.000000000Z`, `${DAY}T12:30:00.000000000Z`, ...entries.map((e) => e.key)]),
    ]
      .filter((k) => keyMillis(k) >= fromMs && keyMillis(k) < toMs)
      .sort();
    const seededKey = (
      await sql<{ k: string }>`select created_at_text as k from govtrail.history_entry
      where tenant_id = 'acme' order by created_at limit 1`.execute(h.database.db)
    ).rows[0]?.k as string;
    const seededId = (
      await sql<{ id: string }>`select entry_id as id from govtrail.history_entry
      where tenant_id = 'acme' order by created_at limit 1`.execute(h.database.db)
    ).rows[0]?.id as string;
    const seededSnapshot =
      (
        await sql<{ s: Record<string, unknown> }>`select raw->'snapshot' as s from govtrail.history_entry
      where tenant_id = 'acme' order by created_at limit 1`.execute(h.database.db)
      ).rows[0]?.s ?? null;
    const all: JudgedEntry[] = [
      {
        key: seededKey.replace(/(\.\d+)?Z$/, (m) => `${(m.slice(0, -1) || '.').padEnd(10, '0')}Z`),
        entryId: seededId,
        snapshot: seededSnapshot,
        actorKind: null,
        actorUserId: null,
        ticket: null,
      },
      ...entries,
    ];
    const loaded = '2026-03-01T00:00:00.000000000Z';
    for (const control of baseline.controls) {
      const ms = { pass: 0, fail: 0, excepted: 0, deleted: 0, unknown: 0 };
      const bounds = [...cuts, '2026-03-03T00:00:00.000000000Z'];
      for (let i = 0; i + 1 < bounds.length; i++) {
        const s = bruteStatusAt(all, baseline, 'acme', loaded, control.id, bounds[i] as string);
        // Every cut is a whole millisecond plus .123456789 s or a whole second: the lengths in ms are exact to 1 ms.
        ms[s] += keyMillis(bounds[i + 1] as string) - keyMillis(bounds[i] as string);
      }
      const got = tenant.controls.find((c: { id: string }) => c.id === control.id);
      for (const status of ['pass', 'fail', 'excepted', 'deleted', 'unknown'] as const) {
        expect(Math.abs(got.share[status] * 86_400_000 - ms[status])).toBeLessThanOrEqual(1);
      }
      // Fail periods: the brute force's fail and deleted periods that overlap the day, same bounds and openers.
      const expected = brutePeriods(all, baseline, 'acme', loaded)
        .filter((p) => p.controlId === control.id && (p.status === 'fail' || p.status === 'deleted'))
        .filter((p) => p.toKey === null || p.toKey > `${DAY}T00:00:00.000000000Z`)
        .map((p) => ({
          from: p.fromKey,
          to:
            p.toKey === null || p.toKey > '2026-03-03T00:00:00.000000000Z'
              ? '2026-03-03T00:00:00.000000000Z'
              : p.toKey,
          entry: p.entryId,
        }));
      expect(
        got.fail_periods.map((f: { from: string; to: string; opened_by: { entry_id: string | null } }) => ({
          from: f.from,
          to: f.to,
          entry: f.opened_by.entry_id,
        })),
      ).toEqual(expected);
      expect(got.fail_count).toBe(expected.length);
    }
    const sum = Object.values(tenant.share as Record<string, number>).reduce((a, b) => a + b, 0);
    expect(sum).toBeCloseTo(1, 9);
  });

  it('the exception expiring at 12:30 turns excepted into fail with no entry; the delete and re-create are periods of their own', async () => {
    const r = await runCliCaptured(
      ['baseline', 'report', '--from', DAY, '--to', '2026-03-03', '--format', 'json'],
      env(),
    );
    const aig3 = JSON.parse(r.stdout).tenants[0].controls.find((c: { id: string }) => c.id === 'AIG-03');
    expect(aig3.excepted_periods[0]).toMatchObject({ to: `${DAY}T12:30:00.000000000Z` });
    expect(aig3.fail_periods[0]).toMatchObject({
      from: `${DAY}T12:30:00.000000000Z`,
      status: 'fail',
      opened_by: { entry_id: null, cause: 'exception_expired' },
    });
    expect(aig3.fail_periods[1]).toMatchObject({
      from: atHour(15),
      status: 'deleted',
      opened_by: { cause: 'entry' },
    });
  });

  it('compliance_daily and control_status_current agree with the report, as govtrail_reader reads them', async () => {
    const r = await runCliCaptured(
      ['baseline', 'report', '--from', DAY, '--to', '2026-03-03', '--format', 'json'],
      env(),
    );
    const controls = JSON.parse(r.stdout).tenants[0].controls as {
      id: string;
      share: Record<string, number>;
    }[];
    const { rows } = await sql<{
      control_id: string;
      pass: number;
      fail: number;
      excepted: number;
      deleted: number;
      unknown: number;
    }>`
      select control_id, pass_share::float8 as pass, fail_share::float8 as fail, excepted_share::float8 as excepted,
             deleted_share::float8 as deleted, unknown_share::float8 as unknown
      from govtrail.compliance_daily where tenant_id = 'acme' and day = ${DAY}::date order by control_id`.execute(
      h.database.db,
    );
    expect(rows.map((x) => x.control_id)).toEqual(['AIG-01', 'AIG-02', 'AIG-03']);
    for (const row of rows) {
      const c = controls.find((x) => x.id === row.control_id) as { share: Record<string, number> };
      // The view works in microseconds (valid_from / valid_to), the report in nanoseconds.
      for (const s of ['pass', 'fail', 'excepted', 'deleted', 'unknown'] as const) {
        expect(Math.abs(row[s] - (c.share[s] as number))).toBeLessThan(1e-8);
      }
    }
    const current = await sql<{ control_id: string; status: string }>`
      select control_id, status from govtrail.control_status_current where tenant_id = 'acme' order by control_id`.execute(
      h.database.db,
    );
    expect(current.rows.find((x) => x.control_id === 'AIG-01')?.status).toBe('fail');
  });

  it('report --format json has the contract shape; csv and table print', async () => {
    const r = await runCliCaptured(
      ['baseline', 'report', '--from', DAY, '--to', '2026-03-03', '--format', 'json'],
      env(),
    );
    const doc = JSON.parse(r.stdout);
    expect(Object.keys(doc)).toEqual(expect.arrayContaining(['baseline', 'from', 'to', 'tenants']));
    expect(Object.keys(doc.baseline)).toEqual(expect.arrayContaining(['id', 'sha256']));
    const t = doc.tenants[0];
    expect(Object.keys(t.share).sort()).toEqual(['deleted', 'excepted', 'fail', 'pass', 'unknown']);
    const c = t.controls[0];
    expect(Object.keys(c)).toEqual(expect.arrayContaining(['id', 'share', 'fail_periods']));
    const f = c.fail_periods[0];
    expect(Object.keys(f)).toEqual(expect.arrayContaining(['from', 'to', 'opened_by', 'closed_by']));
    expect(Object.keys(f.opened_by)).toEqual(expect.arrayContaining(['entry_id', 'actor_kind', 'ticket']));
    const csv = await runCliCaptured(
      ['baseline', 'report', '--from', DAY, '--to', '2026-03-03', '--format', 'csv'],
      env(),
    );
    expect(csv.stdout.split('\r\n')[0]).toBe(
      'tenant,control,pass_pct,fail_pct,excepted_pct,deleted_pct,unknown_pct,fail_periods,longest_fail_s',
    );
    const table = await runCliCaptured(['baseline', 'report', '--from', DAY, '--to', '2026-03-03'], env());
    expect(table.stdout).toMatch(/acme\s+AIG-01/);
  });

  it('check: exit 1 on fail, the contract JSON, changes since the previous check, JUnit a parser reads', async () => {
    const json = await runCliCaptured(['baseline', 'check', '--format', 'json'], env());
    expect(json.code).toBe(1);
    const doc = JSON.parse(json.stdout);
    expect(Object.keys(doc)).toEqual(expect.arrayContaining(['baseline', 'at', 'tenants']));
    const controls = doc.tenants[0].controls;
    // Since 23:00 approval is off: a failure the first check reports as new, the next as still failing.
    expect(controls.find((c: { id: string }) => c.id === 'AIG-01')).toMatchObject({
      status: 'fail',
      value: false,
      since: atHour(22, 55),
      change: 'new_fail',
    });
    expect(controls.find((c: { id: string }) => c.id === 'AIG-03')).toMatchObject({
      status: 'pass',
      change: null,
    });
    for (const c of controls)
      expect(Object.keys(c)).toEqual(expect.arrayContaining(['id', 'status', 'value', 'since', 'change']));
    const again = JSON.parse((await runCliCaptured(['baseline', 'check', '--format', 'json'], env())).stdout);
    expect(again.tenants[0].controls.find((c: { id: string }) => c.id === 'AIG-01').change).toBe(
      'still_failing',
    );
    const junit = await runCliCaptured(['baseline', 'check', '--format', 'junit'], env());
    expect(junit.code).toBe(1);
    expect(XMLValidator.validate(junit.stdout)).toBe(true);
    const xml = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '' }).parse(junit.stdout);
    const suite = xml.testsuites.testsuite;
    expect(suite.name).toBe('acme');
    const cases = [suite.testcase].flat();
    expect(cases).toHaveLength(3);
    expect(Number(suite.tests)).toBe(3);
    const failing = cases.filter((c: { failure?: unknown }) => c.failure !== undefined).length;
    expect(Number(suite.failures)).toBe(failing);
  });
});
