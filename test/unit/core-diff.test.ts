import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DEFAULT_RANKS, type Direction, diffSnapshots, type FieldChange } from '../../src/core/diff.js';
import type { WireSettings } from '../../src/core/wire.js';

/** The one change of `field` between two snapshots (fails when there is not exactly one row for it). */
function change(
  prev: WireSettings | null,
  next: WireSettings | null,
  field: string,
): FieldChange | undefined {
  const rows = diffSnapshots(prev, next).filter((c) => c.field === field);
  expect(rows.length).toBeLessThanOrEqual(1);
  return rows[0];
}

function direction(prev: WireSettings, next: WireSettings, field: string): Direction | undefined {
  return change(prev, next, field)?.direction;
}

const P = 'MCP_CLIENT_TYPE_PERSONAL';
const S = 'MCP_CLIENT_TYPE_SHARED';
const life = (l: Record<string, string | null>): WireSettings => ({ defaultClientLifecycle: l });

describe('diffSnapshots: booleans', () => {
  it.each([
    ['require_tool_approval', 'requireToolApproval', true, false, 'loosened'],
    ['require_tool_approval', 'requireToolApproval', false, true, 'tightened'],
    ['auto_discovery_enabled', 'autoDiscoveryEnabled', false, true, 'loosened'],
    ['auto_discovery_enabled', 'autoDiscoveryEnabled', true, false, 'tightened'],
    ['surface_requestable_tools', 'surfaceRequestableTools', false, true, 'loosened'],
    ['surface_requestable_tools', 'surfaceRequestableTools', true, false, 'tightened'],
    ['enabled', 'enabled', true, false, 'changed'],
    ['enabled', 'enabled', false, true, 'changed'],
    ['prefer_code_mode_over_direct_tools', 'preferCodeModeOverDirectTools', false, true, 'changed'],
    ['prefer_code_mode_over_direct_tools', 'preferCodeModeOverDirectTools', true, false, 'changed'],
  ] as const)('%s %s → %s is %s', (column, wire, from, to, expected) => {
    const c = change({ [wire]: from }, { [wire]: to }, column);
    expect(c).toEqual({ field: column, oldValue: from, newValue: to, direction: expected });
  });

  it('treats an absent boolean as false: absent vs false is no change', () => {
    expect(diffSnapshots({ requireToolApproval: false }, {})).toEqual([]);
    expect(diffSnapshots({}, { autoDiscoveryEnabled: null })).toEqual([]);
  });

  it('reports true → absent as a change to false', () => {
    expect(change({ requireToolApproval: true }, {}, 'require_tool_approval')).toEqual({
      field: 'require_tool_approval',
      oldValue: true,
      newValue: false,
      direction: 'loosened',
    });
  });
});

describe('diffSnapshots: allowedClientTypes (empty = all types)', () => {
  it('[PERSONAL] → [] widens to all types: loosened', () => {
    expect(change({ allowedClientTypes: [P] }, { allowedClientTypes: [] }, 'allowed_client_types')).toEqual({
      field: 'allowed_client_types',
      oldValue: [P],
      newValue: [],
      direction: 'loosened',
    });
  });

  it('[] → [PERSONAL] narrows from all types: tightened', () => {
    expect(direction({ allowedClientTypes: [] }, { allowedClientTypes: [P] }, 'allowed_client_types')).toBe(
      'tightened',
    );
  });

  it('absent means all types, like []', () => {
    expect(direction({}, { allowedClientTypes: [P] }, 'allowed_client_types')).toBe('tightened');
    expect(direction({ allowedClientTypes: [P] }, {}, 'allowed_client_types')).toBe('loosened');
    expect(diffSnapshots({ allowedClientTypes: [] }, {})).toEqual([]);
  });

  it('a superset is loosened, a subset tightened, a swap changed', () => {
    expect(
      direction({ allowedClientTypes: [P] }, { allowedClientTypes: [P, S] }, 'allowed_client_types'),
    ).toBe('loosened');
    expect(
      direction({ allowedClientTypes: [P, S] }, { allowedClientTypes: [S] }, 'allowed_client_types'),
    ).toBe('tightened');
    expect(direction({ allowedClientTypes: [P] }, { allowedClientTypes: [S] }, 'allowed_client_types')).toBe(
      'changed',
    );
  });

  it('compares as a set but stores the list as received', () => {
    expect(diffSnapshots({ allowedClientTypes: [P, S] }, { allowedClientTypes: [S, P, S] })).toEqual([]);
    const c = change({ allowedClientTypes: [P] }, { allowedClientTypes: [S, P] }, 'allowed_client_types');
    expect(c?.newValue).toEqual([S, P]);
  });
});

describe('diffSnapshots: ranked enums', () => {
  const av = (v: string | null | undefined): WireSettings => (v === undefined ? {} : { auditVerbosity: v });
  const tc = (v: string): WireSettings => ({ defaultToolClassification: v });

  it.each([
    ['AUDIT_VERBOSITY_FULL', 'AUDIT_VERBOSITY_MINIMAL', 'loosened'],
    ['AUDIT_VERBOSITY_STANDARD', 'AUDIT_VERBOSITY_MINIMAL', 'loosened'],
    ['AUDIT_VERBOSITY_MINIMAL', 'AUDIT_VERBOSITY_FULL', 'tightened'],
    ['AUDIT_VERBOSITY_FULL', 'AUDIT_VERBOSITY_UNSPECIFIED', 'changed'],
    ['AUDIT_VERBOSITY_UNSPECIFIED', 'AUDIT_VERBOSITY_FULL', 'changed'],
    ['AUDIT_VERBOSITY_MINIMAL', 'AUDIT_VERBOSITY_FORENSIC', 'changed'],
    ['AUDIT_VERBOSITY_FORENSIC', 'AUDIT_VERBOSITY_FULL', 'changed'],
  ] as const)('auditVerbosity %s → %s is %s', (from, to, expected) => {
    expect(direction(av(from), av(to), 'audit_verbosity')).toBe(expected);
  });

  it('absent → a ranked value is changed (unranked), never tightened', () => {
    expect(change(av(undefined), av('AUDIT_VERBOSITY_FULL'), 'audit_verbosity')).toEqual({
      field: 'audit_verbosity',
      oldValue: null,
      newValue: 'AUDIT_VERBOSITY_FULL',
      direction: 'changed',
    });
  });

  it('absent, null and UNSPECIFIED are equal', () => {
    expect(diffSnapshots(av(undefined), av('AUDIT_VERBOSITY_UNSPECIFIED'))).toEqual([]);
    expect(diffSnapshots(av(null), av('AUDIT_VERBOSITY_UNSPECIFIED'))).toEqual([]);
  });

  it.each([
    ['TOOL_CLASSIFICATION_DANGEROUS', 'TOOL_CLASSIFICATION_READ', 'loosened'],
    ['TOOL_CLASSIFICATION_WRITE', 'TOOL_CLASSIFICATION_SENSITIVE', 'tightened'],
    ['TOOL_CLASSIFICATION_WRITE', 'TOOL_CLASSIFICATION_UNSPECIFIED', 'changed'],
    ['TOOL_CLASSIFICATION_WRITE', 'TOOL_CLASSIFICATION_HARMLESS', 'changed'],
  ] as const)('defaultToolClassification %s → %s is %s', (from, to, expected) => {
    expect(direction(tc(from), tc(to), 'default_tool_classification')).toBe(expected);
  });

  it('uses the ranks it is given', () => {
    const reversed = { ...DEFAULT_RANKS, auditVerbosity: [...DEFAULT_RANKS.auditVerbosity].reverse() };
    const rows = diffSnapshots(av('AUDIT_VERBOSITY_FULL'), av('AUDIT_VERBOSITY_MINIMAL'), reversed);
    expect(rows[0]?.direction).toBe('tightened');
  });
});

describe('diffSnapshots: durations', () => {
  it.each([
    ['inactivityCloseAfter', 'inactivity_close_after', '3600s', '7200s', 'loosened'],
    ['inactivityCloseAfter', 'inactivity_close_after', '7200s', '3600s', 'tightened'],
    ['inactivityCloseAfter', 'inactivity_close_after', '3600s', '0s', 'loosened'],
    ['inactivityCloseAfter', 'inactivity_close_after', '0s', '3600s', 'tightened'],
    ['inactivityHideAfter', 'inactivity_hide_after', '60s', '120.5s', 'loosened'],
    ['inactivityHideAfter', 'inactivity_hide_after', '120s', '0.000s', 'loosened'],
    ['inactivityHideAfter', 'inactivity_hide_after', '0s', '1s', 'tightened'],
    ['retentionDeleteAfter', 'retention_delete_after', '2592000s', '604800s', 'loosened'],
    ['retentionDeleteAfter', 'retention_delete_after', '604800s', '2592000s', 'tightened'],
    ['retentionDeleteAfter', 'retention_delete_after', '0s', '604800s', 'loosened'],
    ['retentionDeleteAfter', 'retention_delete_after', '604800s', '0s', 'tightened'],
  ] as const)('%s %s → %s is %s', (wire, column, from, to, expected) => {
    expect(change(life({ [wire]: from }), life({ [wire]: to }), column)).toEqual({
      field: column,
      oldValue: from,
      newValue: to,
      direction: expected,
    });
  });

  it('to or from unset is changed', () => {
    expect(direction(life({}), life({ inactivityCloseAfter: '60s' }), 'inactivity_close_after')).toBe(
      'changed',
    );
    expect(direction(life({ retentionDeleteAfter: '60s' }), {}, 'retention_delete_after')).toBe('changed');
  });

  it('compares by seconds: "60s", "60.0s" and "60.000s" are the same', () => {
    expect(
      diffSnapshots(life({ inactivityCloseAfter: '60s' }), life({ inactivityCloseAfter: '60.0s' })),
    ).toEqual([]);
    expect(diffSnapshots({ discoveryInterval: '60s' }, { discoveryInterval: '60.000s' })).toEqual([]);
  });

  it('discoveryInterval is changed either way', () => {
    expect(
      direction({ discoveryInterval: '60s' }, { discoveryInterval: '3600s' }, 'discovery_interval'),
    ).toBe('changed');
  });

  it('keeps an unparseable duration as received, direction changed', () => {
    expect(
      change(
        life({ inactivityCloseAfter: '60s' }),
        life({ inactivityCloseAfter: 'soon' }),
        'inactivity_close_after',
      ),
    ).toEqual({
      field: 'inactivity_close_after',
      oldValue: '60s',
      newValue: 'soon',
      direction: 'changed',
    });
  });
});

describe('diffSnapshots: extra fields and timestamps', () => {
  it('diffs unmapped top-level fields as extra_fields.<name>, direction changed', () => {
    expect(diffSnapshots({ codeModeConcurrency: 4 }, { codeModeConcurrency: 8 })).toEqual([
      { field: 'extra_fields.codeModeConcurrency', oldValue: 4, newValue: 8, direction: 'changed' },
    ]);
    expect(diffSnapshots({}, { newThing: { a: 1 } })).toEqual([
      { field: 'extra_fields.newThing', oldValue: null, newValue: { a: 1 }, direction: 'changed' },
    ]);
  });

  it('deep-compares extra fields regardless of key order', () => {
    expect(diffSnapshots({ x: { a: 1, b: [1, 2] } }, { x: { b: [1, 2], a: 1 } })).toEqual([]);
    expect(diffSnapshots({ x: { a: 1, b: [1, 2] } }, { x: { a: 1, b: [2, 1] } })).toHaveLength(1);
  });

  it('diffs unknown lifecycle keys as extra_fields.defaultClientLifecycle.<key>', () => {
    expect(diffSnapshots(life({ pruneAfter: '1s' }), life({ pruneAfter: '2s' }))).toEqual([
      {
        field: 'extra_fields.defaultClientLifecycle.pruneAfter',
        oldValue: '1s',
        newValue: '2s',
        direction: 'changed',
      },
    ]);
  });

  it('untrustedJudgeDisable false → true is loosened (it removes the prompt-injection guard)', () => {
    expect(
      direction(
        { untrustedJudgeDisable: false },
        { untrustedJudgeDisable: true },
        'extra_fields.untrustedJudgeDisable',
      ),
    ).toBe('loosened');
    expect(direction({}, { untrustedJudgeDisable: true }, 'extra_fields.untrustedJudgeDisable')).toBe(
      'loosened',
    );
    expect(direction({ untrustedJudgeDisable: true }, {}, 'extra_fields.untrustedJudgeDisable')).toBe(
      'tightened',
    );
    expect(diffSnapshots({}, { untrustedJudgeDisable: false })).toEqual([]);
  });

  it('never diffs createdAt and updatedAt', () => {
    expect(
      diffSnapshots(
        { createdAt: '2025-01-01T00:00:00Z', updatedAt: '2025-01-01T00:00:00Z' },
        { createdAt: '2025-02-01T00:00:00Z', updatedAt: '2025-03-01T00:00:00Z' },
      ),
    ).toEqual([]);
  });
});

describe('diffSnapshots: first entry and hard delete', () => {
  it('lists only non-default fields of the first snapshot, old value null, direction changed', () => {
    const rows = diffSnapshots(null, {
      requireToolApproval: true,
      autoDiscoveryEnabled: false,
      auditVerbosity: 'AUDIT_VERBOSITY_UNSPECIFIED',
      defaultToolClassification: 'TOOL_CLASSIFICATION_WRITE',
      allowedClientTypes: [],
      defaultClientLifecycle: { inactivityCloseAfter: '0s' },
      codeModeConcurrency: 2,
      createdAt: '2025-01-01T00:00:00Z',
    });
    expect(rows).toEqual([
      {
        field: 'default_tool_classification',
        oldValue: null,
        newValue: 'TOOL_CLASSIFICATION_WRITE',
        direction: 'changed',
      },
      { field: 'inactivity_close_after', oldValue: null, newValue: '0s', direction: 'changed' },
      { field: 'require_tool_approval', oldValue: null, newValue: true, direction: 'changed' },
      { field: 'extra_fields.codeModeConcurrency', oldValue: null, newValue: 2, direction: 'changed' },
    ]);
  });

  it('treats undefined like null for the previous snapshot', () => {
    expect(diffSnapshots(undefined, { allowedClientTypes: [P] })).toEqual([
      { field: 'allowed_client_types', oldValue: null, newValue: [P], direction: 'changed' },
    ]);
  });

  it('yields nothing for a hard delete (null next snapshot)', () => {
    expect(diffSnapshots({ requireToolApproval: true }, null)).toEqual([]);
    expect(diffSnapshots({ requireToolApproval: true }, undefined)).toEqual([]);
  });
});

const arbDuration = fc.constantFrom('0s', '60s', '60.000s', '3600s', '1.5s', 'later', null);
const arbSnapshot: fc.Arbitrary<WireSettings> = fc.record(
  {
    allowedClientTypes: fc.option(
      fc.subarray([P, S, 'MCP_CLIENT_TYPE_SERVICE', 'MCP_CLIENT_TYPE_ROBOT', 'MCP_CLIENT_TYPE_UNSPECIFIED']),
    ),
    auditVerbosity: fc.option(
      fc.constantFrom(
        'AUDIT_VERBOSITY_UNSPECIFIED',
        'AUDIT_VERBOSITY_MINIMAL',
        'AUDIT_VERBOSITY_STANDARD',
        'AUDIT_VERBOSITY_FULL',
        'AUDIT_VERBOSITY_FORENSIC',
      ),
    ),
    defaultToolClassification: fc.option(
      fc.constantFrom(
        'TOOL_CLASSIFICATION_READ',
        'TOOL_CLASSIFICATION_DANGEROUS',
        'TOOL_CLASSIFICATION_UNSPECIFIED',
      ),
    ),
    autoDiscoveryEnabled: fc.option(fc.boolean()),
    requireToolApproval: fc.option(fc.boolean()),
    surfaceRequestableTools: fc.option(fc.boolean()),
    enabled: fc.option(fc.boolean()),
    preferCodeModeOverDirectTools: fc.option(fc.boolean()),
    discoveryInterval: arbDuration,
    defaultClientLifecycle: fc.option(
      fc.record(
        {
          inactivityCloseAfter: arbDuration,
          inactivityHideAfter: arbDuration,
          retentionDeleteAfter: arbDuration,
          pruneAfter: arbDuration,
        },
        { requiredKeys: [] },
      ),
    ),
    untrustedJudgeDisable: fc.option(fc.boolean()),
    codeModeConcurrency: fc.option(fc.integer({ min: 0, max: 3 })),
    createdAt: fc.constantFrom('2025-01-01T00:00:00Z', '2025-06-01T00:00:00Z'),
  },
  { requiredKeys: [] },
) as fc.Arbitrary<WireSettings>;

const flip: Record<Direction, Direction> = {
  loosened: 'tightened',
  tightened: 'loosened',
  changed: 'changed',
};

describe('diffSnapshots: properties', () => {
  it('a snapshot diffed with itself (or a JSON copy of itself) is empty', () => {
    fc.assert(
      fc.property(arbSnapshot, (a) => {
        expect(diffSnapshots(a, a)).toEqual([]);
        expect(diffSnapshots(a, JSON.parse(JSON.stringify(a)) as WireSettings)).toEqual([]);
      }),
    );
  });

  it('diff(a, b) and diff(b, a) name the same fields, with opposite directions', () => {
    fc.assert(
      fc.property(arbSnapshot, arbSnapshot, (a, b) => {
        const ab = diffSnapshots(a, b);
        const ba = diffSnapshots(b, a);
        expect(ab.map((c) => c.field)).toEqual(ba.map((c) => c.field));
        for (const [i, c] of ab.entries()) {
          expect(ba[i]?.direction).toBe(flip[c.direction]);
          expect(ba[i]?.oldValue).toEqual(c.newValue);
        }
      }),
    );
  });

  it('every value is JSON-serialisable and round-trips', () => {
    fc.assert(
      fc.property(fc.option(arbSnapshot), arbSnapshot, (a, b) => {
        const rows = diffSnapshots(a, b);
        expect(JSON.parse(JSON.stringify(rows))).toEqual(rows);
      }),
    );
  });
});
