/**
 * C1, C2, C3, C5 on the pure judge: random histories (snapshots, hard deletes, entries sharing an
 * instant, sub-microsecond differences) against random baselines with exceptions give exactly the
 * periods a brute-force judge gives; the periods tile time from the first snapshot with no gap and
 * no overlap; judging from any instant on and splicing equals judging everything; the shares sum
 * to 1 and equal the time-weighted truth.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type Baseline, parseBaseline } from '../../src/core/conformance/baseline.js';
import {
  type ControlPeriod,
  durationsOf,
  HistoryJudge,
  type JudgedEntry,
  judgeHistory,
  keyNanos,
  sharesOf,
  splicePeriods,
} from '../../src/core/conformance/judge.js';
import { DEFAULT_RANKS } from '../../src/core/diff.js';
import { brutePeriods, bruteStatusAt, keyAt, shape } from '../helpers/conformance.js';

const BASE = Date.UTC(2026, 9, 1);
const LOADED = keyAt(BASE, 50);
const TYPES = ['MCP_CLIENT_TYPE_SHARED', 'MCP_CLIENT_TYPE_SERVICE', 'MCP_CLIENT_TYPE_PERSONAL'];
const VERBOSITY = [
  'AUDIT_VERBOSITY_MINIMAL',
  'AUDIT_VERBOSITY_STANDARD',
  'AUDIT_VERBOSITY_FULL',
  'AUDIT_VERBOSITY_UNSPECIFIED',
];

const snapshotArb = fc.record(
  {
    requireToolApproval: fc.boolean(),
    auditVerbosity: fc.constantFrom(...VERBOSITY),
    allowedClientTypes: fc.subarray(TYPES),
    defaultClientLifecycle: fc.record({
      retentionDeleteAfter: fc.constantFrom('0s', '3600s', '31536000s', '86400s'),
    }),
  },
  { requiredKeys: [] },
);

/** Entries at whole seconds 0..100 plus a few nanoseconds, some sharing an instant; ids unique. */
const historyArb = fc
  .array(
    fc.record({
      second: fc.integer({ min: 0, max: 100 }),
      nanos: fc.constantFrom(0, 0, 1, 999),
      deleteBias: fc.integer({ min: 0, max: 9 }),
      snapshot: snapshotArb,
      ticket: fc.option(fc.constantFrom('SEC-1', 'SEC-2'), { nil: null }),
    }),
    { minLength: 0, maxLength: 25 },
  )
  .map((rows) =>
    rows
      .map(
        (r, i): JudgedEntry => ({
          key: keyAt(BASE, r.second, r.nanos),
          entryId: `e${String(i).padStart(3, '0')}`,
          snapshot: r.deleteBias === 0 ? null : r.snapshot,
          actorKind: 'ACTOR_KIND_USER',
          actorUserId: `u${i % 3}`,
          ticket: r.ticket,
        }),
      )
      .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : a.entryId < b.entryId ? -1 : 1)),
  );

const EXPECTS = [
  ['require_tool_approval', '{ equals: true }', ['false']],
  ['audit_verbosity', '{ at_least: AUDIT_VERBOSITY_STANDARD }', ['AUDIT_VERBOSITY_MINIMAL', 'null']],
  [
    'allowed_client_types',
    '{ subset_of: [MCP_CLIENT_TYPE_SHARED, MCP_CLIENT_TYPE_SERVICE] }',
    ['[]', '[MCP_CLIENT_TYPE_SHARED, MCP_CLIENT_TYPE_PERSONAL]'],
  ],
  ['retention_delete_after', '{ at_least: 30d }', ['3600s', '86400s', 'null']],
  ['audit_verbosity', '{ one_of: [AUDIT_VERBOSITY_FULL] }', ['AUDIT_VERBOSITY_STANDARD']],
] as const;

const baselineArb = fc
  .record({
    controls: fc.subarray([0, 1, 2, 3, 4], { minLength: 1 }),
    exceptions: fc.array(
      fc.record({
        control: fc.integer({ min: 0, max: 4 }),
        value: fc.nat(),
        tenant: fc.constantFrom('acme', 'other'),
        approved: fc.option(fc.integer({ min: -10, max: 110 }), { nil: null }),
        length: fc.integer({ min: 1, max: 80 }),
      }),
      { maxLength: 4 },
    ),
  })
  .map(({ controls, exceptions }) => {
    const lines = ['baseline: random', 'controls:'];
    for (const c of controls) {
      const [field, expect] = EXPECTS[c] as (typeof EXPECTS)[number];
      lines.push(`  - id: C${c}`, `    field: ${field}`, `    expect: ${expect}`);
    }
    const usable = exceptions.filter((x) => controls.includes(x.control));
    if (usable.length > 0) lines.push('exceptions:');
    for (const x of usable) {
      const values = (EXPECTS[x.control] as (typeof EXPECTS)[number])[2];
      const start = x.approved ?? 50;
      lines.push(
        `  - control: C${x.control}`,
        `    tenants: [${x.tenant}]`,
        `    value: ${values[x.value % values.length]}`,
        '    rationale: test',
        '    approved_by: tester',
        ...(x.approved === null ? [] : [`    approved_at: ${keyAt(BASE, x.approved)}`]),
        `    expires: ${keyAt(BASE, start + x.length)}`,
      );
    }
    return parseBaseline(`${lines.join('\n')}\n`, 'random.yaml', DEFAULT_RANKS);
  });

const ctx = { tenant: 'acme', loadedAtKey: LOADED };

function byControl(periods: readonly ControlPeriod[]): Map<string, ControlPeriod[]> {
  const m = new Map<string, ControlPeriod[]>();
  for (const p of periods) m.set(p.controlId, [...(m.get(p.controlId) ?? []), p]);
  return m;
}

/** Judges from `startKey` on and splices onto the periods judged before it, as a run does. */
function judgeIncrementally(
  entries: readonly JudgedEntry[],
  baseline: Baseline,
  startKey: string,
): ControlPeriod[] {
  const early = judgeHistory(
    entries.filter((e) => e.key < startKey),
    baseline,
    ctx,
  );
  const kept = early.filter((p) => p.fromKey < startKey);
  const before = new Map<string, ControlPeriod>();
  for (const p of kept) before.set(p.controlId, p);
  const fresh = judgeHistory(
    entries.filter((e) => e.key >= startKey),
    baseline,
    ctx,
  );
  const { rewrite, insert } = splicePeriods(before, fresh, startKey);
  const rewritten = new Map(rewrite.map((p) => [`${p.controlId} ${p.fromKey}`, p]));
  const all = [...kept.map((p) => rewritten.get(`${p.controlId} ${p.fromKey}`) ?? p), ...insert];
  // Periods judged before the start that the fresh judgement replaces are dropped (a run deletes them).
  return all.sort((a, b) =>
    a.controlId < b.controlId ? -1 : a.controlId > b.controlId ? 1 : a.fromKey < b.fromKey ? -1 : 1,
  );
}

describe('the judge against a brute force', () => {
  it('C1: random histories × random baselines give the brute-force periods, tiling time', () => {
    fc.assert(
      fc.property(historyArb, baselineArb, (entries, baseline) => {
        const periods = judgeHistory(entries, baseline, ctx);
        expect(periods.map(shape)).toEqual(brutePeriods(entries, baseline, 'acme', LOADED));
        for (const list of byControl(periods).values()) {
          expect(list[0]?.fromKey).toBe(entries[0]?.key);
          for (let i = 1; i < list.length; i++) {
            expect(list[i - 1]?.toKey).toBe(list[i]?.fromKey);
            expect(list[i - 1]?.status).not.toBe(list[i]?.status);
          }
          expect(list[list.length - 1]?.toKey).toBeNull();
        }
      }),
      { numRuns: 400 },
    );
  });

  it('C5: pages of any size, and judging from any instant then splicing, give the same periods', () => {
    fc.assert(
      fc.property(historyArb, baselineArb, fc.integer({ min: 0, max: 24 }), (entries, baseline, cut) => {
        const whole = judgeHistory(entries, baseline, ctx);
        const judge = new HistoryJudge(baseline, ctx);
        for (const e of entries) judge.push(e);
        expect(judge.finish()).toEqual(whole);
        const start = entries[Math.min(cut, entries.length - 1)]?.key;
        if (start === undefined) return;
        const spliced = judgeIncrementally(entries, baseline, start);
        expect(spliced.map(shape)).toEqual(
          [...whole]
            .sort((a, b) =>
              a.controlId < b.controlId ? -1 : a.controlId > b.controlId ? 1 : a.fromKey < b.fromKey ? -1 : 1,
            )
            .map(shape),
        );
      }),
      { numRuns: 300 },
    );
  });

  it('C2: shares over [from, to) sum to 1 and equal the time in each status sampled at every instant', () => {
    fc.assert(
      fc.property(
        historyArb,
        baselineArb,
        fc.integer({ min: -20, max: 120 }),
        fc.integer({ min: 1, max: 140 }),
        (entries, baseline, fromS, len) => {
          const from = keyAt(BASE, fromS);
          const to = keyAt(BASE, fromS + len);
          const periods = byControl(judgeHistory(entries, baseline, ctx));
          for (const control of baseline.controls) {
            const d = durationsOf(periods.get(control.id) ?? [], from, to);
            const total = d.pass + d.fail + d.excepted + d.deleted + d.unknown;
            expect(total).toBe(keyNanos(to) - keyNanos(from));
            const shares = sharesOf(d);
            expect(Object.values(shares).reduce((a, b) => a + b, 0)).toBeCloseTo(1, 9);
            // The truth: the status at the start of every nanosecond interval between the instants
            // where anything can change, weighted by its length.
            const cuts = [
              ...new Set([
                from,
                to,
                ...entries.map((e) => e.key),
                ...baseline.exceptions.flatMap((x) => [x.approvedAt ?? LOADED, x.expires]),
              ]),
            ]
              .filter((k) => k >= from && k <= to)
              .sort();
            const truth = { pass: 0n, fail: 0n, excepted: 0n, deleted: 0n, unknown: 0n };
            for (let i = 0; i + 1 < cuts.length; i++) {
              const s = bruteStatusAt(entries, baseline, 'acme', LOADED, control.id, cuts[i] as string);
              truth[s] += keyNanos(cuts[i + 1] as string) - keyNanos(cuts[i] as string);
            }
            expect(d).toEqual(truth);
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe('exception boundaries (C3)', () => {
  const text = `baseline: b
controls:
  - id: AIG-03
    field: allowed_client_types
    expect: { subset_of: [MCP_CLIENT_TYPE_SHARED, MCP_CLIENT_TYPE_SERVICE] }
exceptions:
  - control: AIG-03
    tenants: [acme]
    value: [MCP_CLIENT_TYPE_PERSONAL, MCP_CLIENT_TYPE_SHARED]
    rationale: pilot
    approved_by: ciso
    approved_at: ${keyAt(BASE, 10)}
    expires: ${keyAt(BASE, 30)}
`;
  const baseline = parseBaseline(text, 'b.yaml', DEFAULT_RANKS);
  const entry = (s: number, id: string, types: string[]): JudgedEntry => ({
    key: keyAt(BASE, s),
    entryId: id,
    snapshot: { allowedClientTypes: types },
    actorKind: 'ACTOR_KIND_USER',
    actorUserId: 'u',
    ticket: null,
  });
  const statuses = (entries: JudgedEntry[], tenant = 'acme') =>
    judgeHistory(entries, baseline, { tenant, loadedAtKey: LOADED }).map((p) => [
      p.status,
      p.fromKey.slice(17, 19),
      p.entryId,
    ]);

  it('becomes excepted at approved_at and fail the instant it expires, with no entry', () => {
    expect(statuses([entry(0, 'a', ['MCP_CLIENT_TYPE_SHARED', 'MCP_CLIENT_TYPE_PERSONAL'])])).toEqual([
      ['fail', '00', 'a'],
      ['excepted', '10', null],
      ['fail', '30', null],
    ]);
  });
  it('accepts only its value: a different failing value is fail again, its value back is excepted', () => {
    expect(
      statuses([
        entry(0, 'a', ['MCP_CLIENT_TYPE_PERSONAL', 'MCP_CLIENT_TYPE_SHARED']),
        entry(15, 'b', []),
        entry(20, 'c', ['MCP_CLIENT_TYPE_SHARED', 'MCP_CLIENT_TYPE_PERSONAL']),
      ]),
    ).toEqual([
      ['fail', '00', 'a'],
      ['excepted', '10', null],
      ['fail', '15', 'b'],
      ['excepted', '20', 'c'],
      ['fail', '30', null],
    ]);
  });
  it('holds only for its tenants', () => {
    expect(
      statuses([entry(0, 'a', ['MCP_CLIENT_TYPE_SHARED', 'MCP_CLIENT_TYPE_PERSONAL'])], 'other'),
    ).toEqual([['fail', '00', 'a']]);
  });
  it('without approved_at, holds from the first load of the baseline text', () => {
    const b = parseBaseline(text.replace(/ {4}approved_at: .*\n/, ''), 'b.yaml', DEFAULT_RANKS);
    const loadedAtKey = keyAt(BASE, 5);
    const got = judgeHistory([entry(0, 'a', ['MCP_CLIENT_TYPE_SHARED', 'MCP_CLIENT_TYPE_PERSONAL'])], b, {
      tenant: 'acme',
      loadedAtKey,
    });
    expect(got.map((p) => [p.status, p.fromKey])).toEqual([
      ['fail', keyAt(BASE, 0)],
      ['excepted', loadedAtKey],
      ['fail', keyAt(BASE, 30)],
    ]);
  });
  it('a hard delete is deleted even under an exception, and a re-create is judged afresh', () => {
    expect(
      statuses([
        entry(0, 'a', ['MCP_CLIENT_TYPE_SHARED', 'MCP_CLIENT_TYPE_PERSONAL']),
        { ...entry(12, 'b', []), snapshot: null },
        entry(14, 'c', ['MCP_CLIENT_TYPE_SHARED', 'MCP_CLIENT_TYPE_PERSONAL']),
        entry(16, 'd', ['MCP_CLIENT_TYPE_SHARED']),
      ]),
    ).toEqual([
      ['fail', '00', 'a'],
      ['excepted', '10', null],
      ['deleted', '12', 'b'],
      ['excepted', '14', 'c'],
      ['pass', '16', 'd'],
    ]);
  });
});
