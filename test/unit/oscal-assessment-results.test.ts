/**
 * The pure mapping of a conformance report to an OSCAL 1.2.1 assessment-results document: one
 * result per tenant, an observation per control, a finding per control that failed at any instant,
 * framework references, the baseline in back-matter; every document validates against NIST's
 * published schema (test/fixtures/oscal) with ajv.
 */
import { describe, expect, it } from 'vitest';
import {
  conformanceToOscal,
  type OscalControlResultInput,
  type OscalInput,
  oscalInputOfReport,
  oscalToken,
  type ReportLike,
  uuidV5,
} from '../../src/core/oscal/assessment-results.js';
import { oscalProblems } from '../helpers/oscal.js';

const zero = { pass: 0, fail: 0, excepted: 0, deleted: 0, unknown: 0 };

function control(id: string, over: Partial<OscalControlResultInput> = {}): OscalControlResultInput {
  return {
    control: {
      id,
      title: `Control ${id}`,
      severity: 'high',
      field: 'require_tool_approval',
      expect: 'equals true',
      frameworks: {
        'NIST-SP-800-53r5': ['AC-3', 'AC-6'],
        'SOC2-TSC-2017': ['CC6.1'],
        'ISO/IEC 27001': ['A.5.15'],
      },
    },
    share: { ...zero, pass: 1 },
    statusAtEnd: 'pass',
    periods: [],
    ...over,
  };
}

const failing = control('AIG-02', {
  share: { ...zero, pass: 0.5, fail: 0.25, excepted: 0.125, unknown: 0.125 },
  statusAtEnd: 'fail',
  periods: [
    {
      status: 'fail',
      from: '2026-01-02T00:00:00.123456789Z',
      to: '2026-01-03T00:00:00Z',
      openedBy: { entryId: 'E1', actorKind: 'ACTOR_KIND_API', actorUserId: 'u1', ticket: 'SEC-1' },
      closedBy: { entryId: 'E2', actorKind: 'ACTOR_KIND_WORKFLOW', actorUserId: null, ticket: null },
    },
    {
      status: 'excepted',
      from: '2026-01-05T00:00:00Z',
      to: '2026-01-06T00:00:00Z',
      openedBy: null,
      closedBy: null,
    },
    {
      status: 'fail',
      from: '2026-01-06T00:00:00Z',
      to: null,
      openedBy: { entryId: null, actorKind: null, actorUserId: null, ticket: null },
      closedBy: null,
    },
  ],
});

function input(over: Partial<OscalInput> = {}): OscalInput {
  return {
    baseline: {
      id: 'govtrail-recommended',
      title: 'Recommended',
      sha256: 'ab'.repeat(32),
      text: 'baseline: x\n',
    },
    from: '2026-01-01T00:00:00Z',
    to: '2026-01-09T00:00:00Z',
    tenants: [
      {
        tenant: 'acme',
        share: { ...zero, pass: 0.75, fail: 0.125, excepted: 0.0625, unknown: 0.0625 },
        controls: [control('AIG-01'), failing],
      },
      { tenant: 'beta', share: { ...zero, pass: 1 }, controls: [control('AIG-01')] },
    ],
    generatedAt: new Date('2026-01-10T00:00:00Z'),
    productVersion: '1.2.3',
    ...over,
  };
}

describe('OSCAL assessment-results', () => {
  it('validates against NIST OSCAL 1.2.1 (ajv, draft-07)', () => {
    expect(oscalProblems(conformanceToOscal(input()))).toEqual([]);
  });

  it('the validator is real: a document without results, or with a bad uuid, is refused', () => {
    const doc = conformanceToOscal(input());
    const { results: _results, ...noResults } = doc['assessment-results'];
    expect(oscalProblems({ 'assessment-results': noResults }).join('\n')).toMatch(/results/);
    const badUuid = structuredClone(doc);
    badUuid['assessment-results'].uuid = 'not-a-uuid';
    expect(oscalProblems(badUuid).join('\n')).toMatch(/uuid/);
    const badToken = structuredClone(doc);
    (badToken['assessment-results'].results[0] as { props: { name: string }[] }).props[0]!.name = '1 bad';
    expect(oscalProblems(badToken)).not.toEqual([]);
  });

  it('one result per tenant, an observation per control, a finding per control that failed', () => {
    const ar = conformanceToOscal(input())['assessment-results'];
    expect(ar.results.map((r) => r.title)).toEqual([
      'Tenant acme against baseline govtrail-recommended',
      'Tenant beta against baseline govtrail-recommended',
    ]);
    const [acme, beta] = ar.results;
    expect(acme?.observations?.length).toBe(2);
    expect(acme?.findings?.map((f) => f.target['target-id'])).toEqual(['AIG-02']);
    expect(acme?.findings?.[0]?.['related-observations'][0]?.['observation-uuid']).toBe(
      acme?.observations?.[1]?.uuid,
    );
    expect(beta?.findings).toBeUndefined();
    expect(acme?.start).toBe('2026-01-01T00:00:00Z');
    expect(acme?.end).toBe('2026-01-09T00:00:00Z');
  });

  it('framework references travel as namespaced properties, one per reference', () => {
    const obs = conformanceToOscal(input())['assessment-results'].results[0]?.observations?.[0];
    const refs = obs?.props
      .filter((p) => p.name === 'framework-reference')
      .map((p) => `${p.class} ${p.value}`);
    expect(refs).toEqual([
      'NIST-SP-800-53r5 AC-3',
      'NIST-SP-800-53r5 AC-6',
      'SOC2-TSC-2017 CC6.1',
      'ISO-IEC-27001 A.5.15',
    ]);
  });

  it('each fail and excepted period is evidence with entry, actor and ticket', () => {
    const obs = conformanceToOscal(input())['assessment-results'].results[0]?.observations?.[1];
    const ev = obs?.['relevant-evidence'] ?? [];
    expect(ev).toHaveLength(3);
    expect(ev[0]?.description).toContain('opened by entry E1, actor ACTOR_KIND_API user u1, ticket SEC-1');
    expect(ev[0]?.props.map((p) => p.name)).toContain('closed-by-entry');
    expect(ev[2]?.description).toContain('still open');
    expect(ev[2]?.props.find((p) => p.name === 'to')?.value).toBe('2026-01-09T00:00:00Z');
  });

  it('a deleted period is a finding too; an excepted-only control is not', () => {
    const deleted = control('AIG-03', {
      share: { ...zero, pass: 0.5, deleted: 0.5 },
      statusAtEnd: 'deleted',
      periods: [
        { status: 'deleted', from: '2026-01-05T00:00:00Z', to: null, openedBy: null, closedBy: null },
      ],
    });
    const excepted = control('AIG-04', {
      share: { ...zero, pass: 0.5, excepted: 0.5 },
      statusAtEnd: 'excepted',
      periods: [
        { status: 'excepted', from: '2026-01-05T00:00:00Z', to: null, openedBy: null, closedBy: null },
      ],
    });
    const doc = conformanceToOscal(
      input({ tenants: [{ tenant: 'acme', share: zero, controls: [deleted, excepted] }] }),
    );
    expect(oscalProblems(doc)).toEqual([]);
    const findings = doc['assessment-results'].results[0]?.findings ?? [];
    expect(findings.map((f) => f.target['target-id'])).toEqual(['AIG-03']);
    expect(findings[0]?.description).toContain('hard delete');
  });

  it('the baseline text and its sha256 are in back-matter, and import-ap points at it', () => {
    const ar = conformanceToOscal(input())['assessment-results'];
    const res = ar['back-matter'].resources[0];
    expect(ar['import-ap'].href).toBe(`#${res?.uuid}`);
    expect(res?.rlinks[0]?.hashes[0]).toEqual({ algorithm: 'SHA-256', value: 'ab'.repeat(32) });
    expect(Buffer.from(res?.base64?.value ?? '', 'base64').toString('utf8')).toBe('baseline: x\n');
  });

  it('no tenant is refused (OSCAL needs a result); no text, odd control ids: still valid', () => {
    expect(() => conformanceToOscal(input({ tenants: [] }))).toThrow(/at least one tenant/);
    const odd = control('1 odd/id', {});
    const doc = conformanceToOscal(
      input({
        baseline: { id: 'x', title: null, sha256: 'cd'.repeat(32), text: null },
        tenants: [{ tenant: 'acme', share: zero, controls: [odd] }],
      }),
    );
    expect(oscalProblems(doc)).toEqual([]);
  });

  it('is deterministic: uuids are name-based (v5), unique within a document', () => {
    const a = JSON.stringify(conformanceToOscal(input()));
    expect(JSON.stringify(conformanceToOscal(input()))).toBe(a);
    const uuids = [...a.matchAll(/"(?:uuid|observation-uuid)":"([^"]+)"/g)].map((m) => m[1]);
    expect(
      uuids.every((u) =>
        /^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/.test(u ?? ''),
      ),
    ).toBe(true);
    const own = [...a.matchAll(/"uuid":"([^"]+)"/g)].map((m) => m[1]);
    expect(new Set(own).size).toBe(own.length);
    expect(uuidV5('a')).not.toBe(uuidV5('b'));
    expect(oscalToken('9x y')).toBe('_9x-y');
  });
});

describe('from a baseline report (the public JSON of `baseline report`)', () => {
  const cause = (entry: string | null, ticket: string | null = null) => ({
    entry_id: entry,
    actor_kind: entry === null ? null : 'ACTOR_KIND_API',
    actor_user_id: null,
    ticket,
  });
  const report: ReportLike = {
    baseline: { id: 'b', sha256: 'ef'.repeat(32), title: 'B' },
    from: '2026-01-01T00:00:00.000000000Z',
    to: '2026-01-05T00:00:00.000000000Z',
    tenants: [
      {
        tenant: 'acme',
        share: { ...zero, pass: 0.5, fail: 0.25, excepted: 0.25 },
        controls: [
          {
            id: 'C1',
            title: 'approval',
            field: 'require_tool_approval',
            severity: 'high',
            frameworks: { 'NIST-SP-800-53r5': ['AC-6'] },
            share: { ...zero, pass: 0.25, fail: 0.5, excepted: 0.25 },
            fail_periods: [
              {
                from: '2026-01-03T00:00:00.000000000Z',
                to: '2026-01-05T00:00:00.000000000Z',
                status: 'fail',
                opened_by: cause(null),
                closed_by: null,
              },
              {
                from: '2026-01-01T00:00:00.000000000Z',
                to: '2026-01-02T00:00:00.000000000Z',
                status: 'fail',
                opened_by: cause('E1', 'SEC-1'),
                closed_by: cause('E2'),
              },
            ],
            excepted_periods: [
              {
                from: '2026-01-02T00:00:00.000000000Z',
                to: '2026-01-03T00:00:00.000000000Z',
                status: 'excepted',
                opened_by: cause('E2'),
                closed_by: cause(null),
              },
            ],
          },
          {
            id: 'C2',
            title: 'verbosity',
            field: 'audit_verbosity',
            severity: 'medium',
            frameworks: {},
            share: { ...zero, pass: 1 },
            fail_periods: [],
            excepted_periods: [],
          },
        ],
      },
    ],
  };
  const input = oscalInputOfReport(report, {
    text: 'baseline: b\n',
    expectText: (id) => (id === 'C1' ? '{ equals: true }' : '{ at_least: AUDIT_VERBOSITY_STANDARD }'),
    statusAtEnd: (_t, id) => (id === 'C1' ? 'fail' : 'pass'),
    generatedAt: new Date('2026-01-06T00:00:00Z'),
    productVersion: '1.0.0',
  });

  it('periods oldest first, fail and excepted together; the one open at the end has no end', () => {
    const c1 = input.tenants[0]?.controls[0];
    expect(c1?.periods.map((p) => [p.status, p.from.slice(8, 10), p.to?.slice(8, 10) ?? null])).toEqual([
      ['fail', '01', '02'],
      ['excepted', '02', '03'],
      ['fail', '03', null],
    ]);
    expect(c1?.periods[0]?.openedBy).toEqual({
      entryId: 'E1',
      actorKind: 'ACTOR_KIND_API',
      actorUserId: null,
      ticket: 'SEC-1',
    });
    expect(c1?.control.expect).toBe('{ equals: true }');
  });

  it('validates, with one finding (C1) and nanosecond times as OSCAL date-times', () => {
    const doc = conformanceToOscal(input);
    expect(oscalProblems(doc)).toEqual([]);
    expect(doc['assessment-results'].results[0]?.findings?.map((f) => f.target['target-id'])).toEqual(['C1']);
    expect(doc['assessment-results'].results[0]?.start).toBe('2026-01-01T00:00:00.000000000Z');
  });
});
