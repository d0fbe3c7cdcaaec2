/**
 * The baseline file (docs/design/conformance.md): what loads, and every refusal — one line naming
 * the file, the line and the problem, with the code BASELINE_INVALID (exit code 2).
 */
import { describe, expect, it } from 'vitest';
import { parseBaseline } from '../../src/core/conformance/baseline.js';
import { effectiveValue, fieldRef, meets } from '../../src/core/conformance/expect.js';
import { DEFAULT_RANKS } from '../../src/core/diff.js';
import { exitCodeFor, GovtrailError } from '../../src/core/errors.js';

const GOOD = `baseline: acme-ai-governance
title: ACME AI governance policy
controls:
  - id: AIG-01
    title: Tool calls need approval
    field: require_tool_approval
    expect: { equals: true }
    severity: high
    frameworks:
      NIST-SP-800-53r5: [CM-3, AC-6]
      SOC2-TSC-2017: [CC8.1]
  - id: AIG-02
    field: audit_verbosity
    expect: { at_least: AUDIT_VERBOSITY_STANDARD }
  - id: AIG-03
    field: allowed_client_types
    expect: { subset_of: [MCP_CLIENT_TYPE_SHARED, MCP_CLIENT_TYPE_SERVICE] }
  - id: AIG-04
    field: retention_delete_after
    expect: { at_least: 365d }
exceptions:
  - control: AIG-03
    tenants: [acme]
    value: [MCP_CLIENT_TYPE_SHARED, MCP_CLIENT_TYPE_PERSONAL]
    rationale: Pilot of personal clients for the data team
    approved_by: ciso@acme.example
    approved_at: 2026-10-01T00:00:00Z
    ticket: SEC-1234
    expires: 2027-03-31T00:00:00Z
`;

function refusal(text: string): string {
  try {
    parseBaseline(text, 'policy.yaml', DEFAULT_RANKS);
  } catch (err) {
    expect(err).toBeInstanceOf(GovtrailError);
    expect((err as GovtrailError).code).toBe('BASELINE_INVALID');
    expect(exitCodeFor(err)).toBe(2);
    const message = (err as Error).message;
    expect(message.split('\n')).toHaveLength(1);
    return message;
  }
  throw new Error('the baseline loaded');
}

describe('baseline file', () => {
  it('loads the contract example with its controls, frameworks, exception and sha256', () => {
    const b = parseBaseline(GOOD, 'policy.yaml', DEFAULT_RANKS);
    expect(b.id).toBe('acme-ai-governance');
    expect(b.controls.map((c) => c.id)).toEqual(['AIG-01', 'AIG-02', 'AIG-03', 'AIG-04']);
    expect(b.controls[0]?.frameworks).toEqual({
      'NIST-SP-800-53r5': ['CM-3', 'AC-6'],
      'SOC2-TSC-2017': ['CC8.1'],
    });
    expect(b.controls[1]?.severity).toBe('medium');
    expect(b.exceptions[0]).toMatchObject({
      control: 'AIG-03',
      approvedAt: '2026-10-01T00:00:00.000000000Z',
      expires: '2027-03-31T00:00:00.000000000Z',
      ticket: 'SEC-1234',
    });
    expect(b.sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(parseBaseline(`${GOOD}\n`, 'p', DEFAULT_RANKS).sha256).not.toBe(b.sha256);
  });

  const cases: [string, string, RegExp][] = [
    [
      'unknown field',
      GOOD.replace('field: audit_verbosity', 'field: audit_verbosty'),
      /^policy\.yaml:13: control AIG-02: unknown field "audit_verbosty"/,
    ],
    [
      'unranked value in at_least',
      GOOD.replace('AUDIT_VERBOSITY_STANDARD', 'AUDIT_VERBOSITY_LOUD'),
      /^policy\.yaml:14: control AIG-02: at_least: unranked value "AUDIT_VERBOSITY_LOUD"/,
    ],
    [
      'at_least on an unranked enum',
      GOOD.replace('field: audit_verbosity', 'field: default_tool_classification').replace(
        'AUDIT_VERBOSITY_STANDARD',
        'X',
      ),
      /^policy\.yaml:14: control AIG-02: at_least: unranked value "X"/,
    ],
    [
      'duplicate control id',
      GOOD.replace('id: AIG-02', 'id: AIG-01'),
      /^policy\.yaml:12: duplicate control id AIG-01$/,
    ],
    [
      'exception for an unknown control',
      GOOD.replace('control: AIG-03', 'control: AIG-09'),
      /^policy\.yaml:22: exception for unknown control "AIG-09"$/,
    ],
    [
      'exception without rationale',
      GOOD.replace(/ {4}rationale: .*\n/, ''),
      /^policy\.yaml:22: exception for AIG-03: rationale is required/,
    ],
    [
      'exception without approver',
      GOOD.replace(/ {4}approved_by: .*\n/, ''),
      /^policy\.yaml:22: exception for AIG-03: approved_by is required/,
    ],
    [
      'exception without expiry',
      GOOD.replace(/ {4}expires: .*\n/, ''),
      /^policy\.yaml:22: exception for AIG-03: expires is required/,
    ],
    [
      'exception without value',
      GOOD.replace(/ {4}value: .*\n/, ''),
      /^policy\.yaml:22: exception for AIG-03: value is required/,
    ],
    [
      'exception expiring before approval',
      GOOD.replace('expires: 2027-03-31T00:00:00Z', 'expires: 2026-01-01T00:00:00Z'),
      /^policy\.yaml:29: exception for AIG-03: expires must be after approved_at$/,
    ],
    [
      'a bad expiry time',
      GOOD.replace('expires: 2027-03-31T00:00:00Z', 'expires: next spring'),
      /^policy\.yaml:29: exception for AIG-03: expires must be an RFC 3339 time/,
    ],
    [
      'exception without tenants',
      GOOD.replace('tenants: [acme]', 'tenants: []'),
      /^policy\.yaml:23: exception for AIG-03: tenants/,
    ],
    [
      'a bad baseline id',
      GOOD.replace('acme-ai-governance', 'ACME Policy'),
      /^policy\.yaml:1: baseline: the id is required/,
    ],
    [
      'no controls',
      'baseline: x\ncontrols: []\n',
      /^policy\.yaml:2: controls: a non-empty list is required$/,
    ],
    [
      'an unknown top-level key',
      `${GOOD}extra: 1\n`,
      /^policy\.yaml:30: the baseline file: unknown key "extra"/,
    ],
    [
      'an unknown control key',
      GOOD.replace('    severity: high', '    severty: high'),
      /^policy\.yaml:8: a control: unknown key "severty"/,
    ],
    [
      'an unknown expectation',
      GOOD.replace('{ equals: true }', '{ is: true }'),
      /^policy\.yaml:7: control AIG-01: unknown expectation "is"/,
    ],
    [
      'two expectations',
      GOOD.replace('{ equals: true }', '{ equals: true, not_empty: true }'),
      /^policy\.yaml:7: control AIG-01: expect must be a mapping with exactly one/,
    ],
    [
      'a wrong value type',
      GOOD.replace('{ equals: true }', '{ equals: "yes" }'),
      /^policy\.yaml:7: control AIG-01: equals: require_tool_approval is true or false/,
    ],
    [
      'a bad duration',
      GOOD.replace('at_least: 365d', 'at_least: a year'),
      /^policy\.yaml:20: control AIG-04: at_least: a duration such as 365d/,
    ],
    [
      'subset_of on a boolean',
      GOOD.replace('{ equals: true }', '{ subset_of: [A] }'),
      /^policy\.yaml:7: control AIG-01: subset_of applies to a list field/,
    ],
    [
      'a bad severity',
      GOOD.replace('severity: high', 'severity: urgent'),
      /^policy\.yaml:8: control AIG-01: severity must be one of/,
    ],
    ['a YAML syntax error', 'baseline: x\ncontrols: [\n', /^policy\.yaml:\d+: /],
    [
      'a duplicate YAML key',
      'baseline: x\nbaseline: y\ncontrols: []\n',
      /^policy\.yaml:\d+: Map keys must be unique$/,
    ],
    ['not a mapping', '- a\n- b\n', /^policy\.yaml:1: the baseline file must be a mapping$/],
  ];
  for (const [what, text, message] of cases) {
    it(`refuses ${what} with one line naming the file and line`, () => {
      expect(refusal(text)).toMatch(message);
    });
  }
});

describe('expectations over effective values', () => {
  const f = (name: string) => {
    const r = fieldRef(name);
    if (r === undefined) throw new Error(name);
    return r;
  };
  it('reads an omitted value as its proto3 default', () => {
    expect(effectiveValue(f('require_tool_approval'), {})).toBe(false);
    expect(effectiveValue(f('allowed_client_types'), {})).toEqual([]);
    expect(
      effectiveValue(f('audit_verbosity'), { auditVerbosity: 'AUDIT_VERBOSITY_UNSPECIFIED' }),
    ).toBeNull();
    expect(effectiveValue(f('retention_delete_after'), {})).toBeNull();
    expect(effectiveValue(f('extra_fields.untrustedJudgeDisable'), {})).toBe(false);
    expect(effectiveValue(f('extra_fields.newThing'), {})).toBeNull();
  });
  it('the empty list means every client type and is a subset of nothing', () => {
    const e = { kind: 'subset_of', values: ['A', 'B'] } as const;
    expect(meets(f('allowed_client_types'), [], e)).toBe(false);
    expect(meets(f('allowed_client_types'), ['A'], e)).toBe(true);
    expect(meets(f('allowed_client_types'), ['A', 'C'], e)).toBe(false);
  });
  it('ranks enums by the pack, unranked and unset values fail a bound', () => {
    const b = parseBaseline(GOOD, 'p', DEFAULT_RANKS);
    const c = b.controls[1];
    if (c === undefined) throw new Error();
    expect(meets(c.field, 'AUDIT_VERBOSITY_FULL', c.expect)).toBe(true);
    expect(meets(c.field, 'AUDIT_VERBOSITY_STANDARD', c.expect)).toBe(true);
    expect(meets(c.field, 'AUDIT_VERBOSITY_MINIMAL', c.expect)).toBe(false);
    expect(meets(c.field, 'AUDIT_VERBOSITY_NEW', c.expect)).toBe(false);
    expect(meets(c.field, null, c.expect)).toBe(false);
  });
  it('compares durations by seconds; a zero lifecycle duration means never', () => {
    const b = parseBaseline(GOOD, 'p', DEFAULT_RANKS);
    const c = b.controls[3];
    if (c === undefined) throw new Error();
    expect(meets(c.field, '31536000s', c.expect)).toBe(true);
    expect(meets(c.field, '31535999.5s', c.expect)).toBe(false);
    expect(meets(c.field, '0s', c.expect)).toBe(true);
    expect(meets(c.field, null, c.expect)).toBe(false);
    const most = { kind: 'at_most', bound: { type: 'duration', seconds: 3600, text: '1h' } } as const;
    expect(meets(f('inactivity_close_after'), '3600s', most)).toBe(true);
    expect(meets(f('inactivity_close_after'), '0s', most)).toBe(false);
    expect(meets(f('discovery_interval'), '0s', most)).toBe(true);
  });
  it('numbers on extra fields, one_of, not_empty and list equality as sets', () => {
    const n = { kind: 'at_least', bound: { type: 'number', value: 3 } } as const;
    expect(meets(f('extra_fields.x'), 3, n)).toBe(true);
    expect(meets(f('extra_fields.x'), 2, n)).toBe(false);
    expect(meets(f('extra_fields.x'), '3', n)).toBe(false);
    expect(meets(f('audit_verbosity'), 'B', { kind: 'one_of', values: ['A', 'B'] })).toBe(true);
    expect(meets(f('audit_verbosity'), null, { kind: 'not_empty' })).toBe(false);
    expect(meets(f('allowed_client_types'), ['B', 'A', 'A'], { kind: 'equals', value: ['A', 'B'] })).toBe(
      true,
    );
  });
});
