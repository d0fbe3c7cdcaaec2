/**
 * The evidence pack's conformance answer in plain words (pure): YES/NO to "now" and "at every
 * moment", the failing controls with their opener and ticket, the accepted gaps with their
 * exception (retroactive ones marked), and the rows of periods.csv and exceptions.csv.
 */
import { describe, expect, it } from 'vitest';
import { parseBaseline } from '../../src/core/conformance/baseline.js';
import type { ControlPeriod } from '../../src/core/conformance/judge.js';
import { tenantReport } from '../../src/core/conformance/report.js';
import { DEFAULT_RANKS } from '../../src/core/diff.js';
import {
  type ConformanceFacts,
  conformanceAnswer,
  exceptionRows,
  periodRows,
  summaryRows,
} from '../../src/outputs/pack/conformance-text.js';

const baseline = parseBaseline(
  `baseline: t
controls:
  - id: C1
    title: approval
    field: require_tool_approval
    expect: { equals: true }
  - id: C2
    title: verbosity
    field: audit_verbosity
    expect: { at_least: AUDIT_VERBOSITY_STANDARD }
exceptions:
  - control: C1
    tenants: [acme]
    value: false
    rationale: pilot
    approved_by: ciso@example.com
    approved_at: 2026-01-02T00:00:00Z
    ticket: SEC-9
    expires: 2026-01-03T00:00:00Z
`,
  't.yaml',
  DEFAULT_RANKS,
);
const k = (d: string, h = '00') => `2026-01-${d}T${h}:00:00.000000000Z`;
const p = (
  controlId: string,
  status: ControlPeriod['status'],
  fromKey: string,
  toKey: string | null,
  entryId: string | null,
  ticket: string | null = null,
): ControlPeriod => ({
  controlId,
  status,
  fromKey,
  toKey,
  entryId,
  actorKind: entryId === null ? null : 'ACTOR_KIND_API',
  actorUserId: null,
  ticket,
  value: status === 'pass',
});

function facts(periods: ControlPeriod[], loadedAtKey = k('05')): ConformanceFacts {
  return {
    tenantId: 'acme',
    baseline,
    loadedAtKey,
    fromKey: k('01'),
    toKey: k('05'),
    atKey: k('05'),
    report: tenantReport('acme', baseline, periods, k('01'), k('05')),
    periods,
  };
}

describe('the conformance answer', () => {
  const periods = [
    p('C1', 'fail', k('01'), k('02'), 'E1'),
    p('C1', 'excepted', k('02'), k('03'), null),
    p('C1', 'fail', k('03'), k('04'), null),
    p('C1', 'pass', k('04'), null, 'E2', 'SEC-2'),
    p('C2', 'pass', k('01'), k('04', '12'), 'E1'),
    p('C2', 'fail', k('04', '12'), null, 'E3', 'SEC-3'),
  ];

  it('says NO now with the failing control, its opener and ticket; NO at every moment, with the shares', () => {
    const text = conformanceAnswer(facts(periods)).replace(/\s+/g, ' ');
    expect(text).toContain('Does tenant acme meet the declared policy now? NO.');
    expect(text).toContain('1 of the 2 controls fail: C2 "verbosity"');
    expect(text).toContain('set by entry E3 by ACTOR_KIND_API, ticket SEC-3');
    expect(text).toContain('Did it meet it at every moment of the period? NO.');
    // C1: pass 1 day, excepted 1 day, fail 2 days; C2: pass 3.5 days, fail 0.5 day: 5.5 of 8 control-days compliant.
    expect(text).toContain('compliant 68.75 % of the time (pass 56.25 %, excepted 12.50 %), failing 31.25 %');
    expect(text).toMatch(/2 controls failed at some instant \(C1, C2\), in 3 periods/);
    expect(text).toContain('1 of the 3 fail periods were opened by a change without a ticket');
    expect(text).toContain(
      'C1 accepts false ("pilot", approved by ciso@example.com, ticket SEC-9, until 2026-01-03',
    );
    expect(text).toContain('RETROACTIVE');
  });

  it('says YES when nothing fails, and names no retroactive exception loaded before its approval', () => {
    const ok = [p('C1', 'pass', k('01'), null, 'E1'), p('C2', 'pass', k('01'), null, 'E1')];
    const text = conformanceAnswer(facts(ok, k('01'))).replace(/\s+/g, ' ');
    expect(text).toContain('now? YES.');
    expect(text).toContain('moment of the period? YES.');
    expect(text).not.toContain('RETROACTIVE');
  });

  it('rows: periods.csv has each fail and excepted period with the exception; exceptions.csv the one in the period', () => {
    const f = facts(periods);
    const rows = periodRows(f);
    expect(rows.map((r) => [r[1], r[3], r[4]?.slice(8, 13)])).toEqual([
      ['C1', 'fail', '01T00'],
      ['C1', 'excepted', '02T00'],
      ['C1', 'fail', '03T00'],
      ['C2', 'fail', '04T12'],
    ]);
    expect(rows[1]?.slice(-4)).toEqual([
      'pilot',
      'ciso@example.com',
      'SEC-9',
      '2026-01-03T00:00:00.000000000Z',
    ]);
    expect(rows[3]?.[6]).toBe('true'); // open at the end
    expect(exceptionRows(f)).toEqual([
      [
        'acme',
        'C1',
        'false',
        'pilot',
        'ciso@example.com',
        k('02'),
        'true',
        'SEC-9',
        '2026-01-03T00:00:00.000000000Z',
        'false',
      ],
    ]);
    const summary = summaryRows(f);
    expect(summary.map((r) => [r[1], r[7]])).toEqual([
      ['C1', 'pass'],
      ['C2', 'fail'],
      ['(all controls)', ''],
    ]);
  });
});
