/**
 * The pure mapping of a control's status change to an OCSF 1.8.0 Compliance Finding (2003): the
 * `compliance` object (control, standards, status), the finding's status and uid, activities, and
 * every event built here validates against the schema export of test/fixtures/ocsf.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseBaseline } from '../../src/core/conformance/baseline.js';
import type { ControlPeriod } from '../../src/core/conformance/judge.js';
import { DEFAULT_RANKS } from '../../src/core/diff.js';
import {
  type ComplianceChangeInput,
  type ComplianceStatus,
  complianceChangesOf,
  complianceChangeToFinding,
  complianceFindingUid,
  type OcsfOptions,
} from '../../src/core/ocsf/index.js';
import { ocsfClassOf, validateOcsfEvent } from '../helpers/ocsf.js';

const options: OcsfOptions = { now: new Date('2026-03-01T12:00:00.000Z'), productVersion: '9.8.7' };

function change(over: Partial<ComplianceChangeInput> = {}): ComplianceChangeInput {
  return {
    tenantId: 'acme',
    baseline: { id: 'govtrail-recommended', sha256: 'a'.repeat(64) },
    control: {
      id: 'AIG-01',
      title: 'Tool calls need approval',
      severity: 'high',
      field: 'require_tool_approval',
      expect: 'equals true',
      frameworks: { 'NIST-SP-800-53r5': ['AC-3', 'AC-6'], 'SOC2-TSC-2017': ['CC6.1'], EMPTY: [] },
    },
    status: 'fail',
    previousStatus: 'pass',
    at: '2026-02-03T04:05:06.123456789Z',
    entryId: '2q8mB3k5ZyR7cB0cUqYlq1XyTtV',
    actorKind: 'ACTOR_KIND_API',
    actorUserId: 'user-1',
    ticket: 'SEC-9',
    ...over,
  };
}

describe('Compliance Finding (2003)', () => {
  it('the schema fixture holds class 2003 with the compliance object', () => {
    const cls = ocsfClassOf(2003);
    expect(cls?.name).toBe('compliance_finding');
    expect(cls?.attributes['compliance']?.requirement).toBe('required');
  });

  it('a move to fail: New, the control severity, the control and its standards', () => {
    const e = complianceChangeToFinding(change(), options);
    expect(validateOcsfEvent(e)).toEqual([]);
    expect(e.class_uid).toBe(2003);
    expect(e.type_uid).toBe(200302);
    expect(e.activity_name).toBe('Update');
    expect(e.severity_id).toBe(4);
    expect(e.status).toBe('New');
    expect(e.time).toBe(Date.parse('2026-02-03T04:05:06.123Z'));
    expect(e.metadata.original_time).toBe('2026-02-03T04:05:06.123456789Z');
    expect(e.compliance).toMatchObject({
      control: 'AIG-01',
      desc: 'Tool calls need approval',
      standards: ['NIST-SP-800-53r5', 'SOC2-TSC-2017'],
      requirements: ['NIST-SP-800-53r5 AC-3', 'NIST-SP-800-53r5 AC-6', 'SOC2-TSC-2017 CC6.1'],
      status_id: 3,
      status: 'Fail',
    });
    expect(e.finding_info.uid).toBe(complianceFindingUid('acme', 'govtrail-recommended', 'AIG-01'));
    expect(e.evidences[0]?.actor).toEqual({ app_name: 'ACTOR_KIND_API', user: { uid: 'user-1' } });
    expect(e.evidences[0]?.data).toMatchObject({ entry_id: '2q8mB3k5ZyR7cB0cUqYlq1XyTtV', ticket: 'SEC-9' });
  });

  it.each<[ComplianceStatus, number, string, number, string]>([
    ['pass', 1, 'Pass', 4, 'Resolved'],
    ['fail', 3, 'Fail', 1, 'New'],
    ['deleted', 3, 'Fail', 1, 'New'],
    ['excepted', 99, 'Excepted', 3, 'Suppressed'],
    ['unknown', 0, 'Unknown', 0, 'Unknown'],
  ])('%s: compliance status %i %s, finding status %i %s, valid', (status, cId, cName, fId, fName) => {
    const e = complianceChangeToFinding(change({ status }), options);
    expect(validateOcsfEvent(e)).toEqual([]);
    expect([e.compliance.status_id, e.compliance.status, e.status_id, e.status]).toEqual([
      cId,
      cName,
      fId,
      fName,
    ]);
    expect(e.severity_id).toBe(status === 'fail' || status === 'deleted' ? 4 : 1);
  });

  it('the first period is a Create; an expiry (no entry, no actor, no ticket) still validates', () => {
    const e = complianceChangeToFinding(
      change({ previousStatus: null, entryId: null, actorKind: null, actorUserId: null, ticket: null }),
      options,
    );
    expect(validateOcsfEvent(e)).toEqual([]);
    expect(e.activity_id).toBe(1);
    expect(e.type_uid).toBe(200301);
    expect(e.evidences[0]?.actor).toBeUndefined();
    expect(e.metadata.tags).toBeUndefined();
    expect(e.message).toContain('exception boundary');
  });

  it('the event uid is unique per change, the finding uid shared by the changes of one control', () => {
    const a = complianceChangeToFinding(change(), options);
    const b = complianceChangeToFinding(change({ at: '2026-02-04T00:00:00Z', status: 'pass' }), options);
    expect(a.metadata.uid).not.toBe(b.metadata.uid);
    expect(a.finding_info.uid).toBe(b.finding_info.uid);
  });

  it('a bad time is refused, not emitted as NaN', () => {
    expect(() => complianceChangeToFinding(change({ at: 'yesterday' }), options)).toThrow(/RFC 3339/);
  });
});

describe('the status changes of a period, from stored control periods', () => {
  const text = `baseline: b
controls:
  - id: C1
    title: approval
    field: require_tool_approval
    expect: { equals: true }
    frameworks: { NIST-SP-800-53r5: [AC-6] }
  - id: C2
    field: audit_verbosity
    expect: { at_least: AUDIT_VERBOSITY_STANDARD }
exceptions:
  - control: C1
    tenants: [acme]
    value: false
    rationale: pilot
    approved_by: ciso@example.com
    approved_at: 2026-01-03T00:00:00Z
    expires: 2026-01-04T00:00:00Z
`;
  const baseline = parseBaseline(text, 'b.yaml', DEFAULT_RANKS);
  const period = (
    controlId: string,
    status: ControlPeriod['status'],
    fromKey: string,
    toKey: string | null,
    entryId: string | null = 'E',
  ): ControlPeriod => ({
    controlId,
    status,
    fromKey,
    toKey,
    entryId,
    actorKind: entryId === null ? null : 'ACTOR_KIND_API',
    actorUserId: null,
    ticket: null,
    value: null,
  });
  const k = (d: string) => `2026-01-${d}T00:00:00.000000000Z`;
  const periods = [
    period('C1', 'pass', k('01'), k('02')),
    period('C1', 'fail', k('02'), k('03')),
    period('C1', 'excepted', k('03'), k('04'), null),
    period('C1', 'fail', k('04'), null, null),
    period('C2', 'fail', k('01'), k('05')),
    period('C2', 'pass', k('05'), null),
  ];

  it('one change per period opening in [from, to), oldest first, with the status before', () => {
    const changes = complianceChangesOf('acme', baseline, k('01'), periods, k('02'), k('05'));
    expect(changes.map((c) => [c.at.slice(8, 10), c.control.id, c.previousStatus, c.status])).toEqual([
      ['02', 'C1', 'pass', 'fail'],
      ['03', 'C1', 'fail', 'excepted'],
      ['04', 'C1', 'excepted', 'fail'],
    ]);
    expect(changes[1]?.exceptionRationale).toBe('pilot');
    expect(changes[0]?.control).toMatchObject({
      field: 'require_tool_approval',
      frameworks: { 'NIST-SP-800-53r5': ['AC-6'] },
    });
  });

  it('a control first period is a Create; every event validates', () => {
    const changes = complianceChangesOf('acme', baseline, k('01'), periods, k('01'), k('06'));
    expect(changes.filter((c) => c.previousStatus === null).map((c) => c.control.id)).toEqual(['C1', 'C2']);
    const events = changes.map((c) => complianceChangeToFinding(c, options));
    expect(events.map((e) => e.activity_id)).toEqual([1, 1, 2, 2, 2, 2]);
    for (const e of events) expect(validateOcsfEvent(e)).toEqual([]);
  });

  it('the recommended baseline parses, and its every control validates as a finding', () => {
    const recommended = parseBaseline(
      readFileSync('baselines/recommended.yaml', 'utf8'),
      'recommended.yaml',
      DEFAULT_RANKS,
    );
    expect(recommended.controls.length).toBe(9);
    const all = recommended.controls.map((c) => period(c.id, 'fail', k('01'), null));
    const events = complianceChangesOf('acme', recommended, k('01'), all, k('01'), k('02')).map((c) =>
      complianceChangeToFinding(c, options),
    );
    expect(events).toHaveLength(9);
    for (const e of events) expect(validateOcsfEvent(e)).toEqual([]);
  });
});
