/**
 * diffSnapshots on odd input (docs/design/sync.md S6: stored as received, never a crash), and the names the
 * diff gives fields (docs/design/data-model.md, field_change). Exact rows throughout.
 */
import { describe, expect, it } from 'vitest';
import {
  DIFFED_FIELDS,
  DIRECTIONS,
  diffSnapshots,
  isDiffFieldName,
  wireNameOf,
} from '../../src/core/diff.js';
import type { WireSettings } from '../../src/core/wire.js';

const P = 'MCP_CLIENT_TYPE_PERSONAL';
/** A snapshot with values of unexpected types, as the wire can carry them (any field may hold anything). */
const odd = (s: Record<string, unknown>) => s as WireSettings;
/** Something that is not a snapshot object at all. */
const notAnObject = (v: unknown) => v as WireSettings;

describe('field names', () => {
  it('the directions are loosened, tightened and changed', () => {
    expect(DIRECTIONS).toEqual(['loosened', 'tightened', 'changed']);
  });

  it('diffs every settings_snapshot column but settings_created_at and settings_updated_at', () => {
    expect(DIFFED_FIELDS).toEqual([
      'allowed_client_types',
      'audit_verbosity',
      'auto_discovery_enabled',
      'default_tool_classification',
      'discovery_interval',
      'inactivity_close_after',
      'inactivity_hide_after',
      'retention_delete_after',
      'enabled',
      'prefer_code_mode_over_direct_tools',
      'require_tool_approval',
      'surface_requestable_tools',
    ]);
  });

  it('names a field by its wire path for humans', () => {
    expect(wireNameOf('require_tool_approval')).toBe('requireToolApproval');
    expect(wireNameOf('inactivity_close_after')).toBe('defaultClientLifecycle.inactivityCloseAfter');
    expect(wireNameOf('extra_fields.codeModeConcurrency')).toBe('codeModeConcurrency');
    expect(wireNameOf('extra_fields.defaultClientLifecycle.pruneAfter')).toBe(
      'defaultClientLifecycle.pruneAfter',
    );
    expect(wireNameOf('something_else')).toBe('something_else');
  });

  it('knows the names the diff can produce: diffed columns and extra_fields.<name>', () => {
    for (const f of DIFFED_FIELDS) expect(isDiffFieldName(f), f).toBe(true);
    expect(isDiffFieldName('extra_fields.codeModeConcurrency')).toBe(true);
    expect(isDiffFieldName('extra_fields.x')).toBe(true);
    for (const f of [
      'settings_created_at',
      'settings_updated_at',
      'extra_fields.',
      'requireToolApproval',
      '',
    ]) {
      expect(isDiffFieldName(f), f).toBe(false);
    }
  });
});

describe('diffSnapshots: snapshots that are not objects', () => {
  it('yields nothing when the new snapshot is not an object', () => {
    for (const next of ['x', [P], 5])
      expect(diffSnapshots({ requireToolApproval: true }, notAnObject(next))).toEqual([]);
  });

  it('treats a previous snapshot that is not an object as none: a first snapshot', () => {
    for (const prev of ['x', [P], 5]) {
      expect(diffSnapshots(notAnObject(prev), { requireToolApproval: true })).toEqual([
        { field: 'require_tool_approval', oldValue: null, newValue: true, direction: 'changed' },
      ]);
    }
  });
});

describe('diffSnapshots: values of an unexpected type are kept as received, direction changed', () => {
  it('a non-string enum', () => {
    expect(diffSnapshots(odd({ auditVerbosity: 7 }), { auditVerbosity: 'AUDIT_VERBOSITY_FULL' })).toEqual([
      { field: 'audit_verbosity', oldValue: 7, newValue: 'AUDIT_VERBOSITY_FULL', direction: 'changed' },
    ]);
  });

  it('a client type list that is not a list, either way', () => {
    expect(diffSnapshots(odd({ allowedClientTypes: P }), { allowedClientTypes: [P] })).toEqual([
      { field: 'allowed_client_types', oldValue: P, newValue: [P], direction: 'changed' },
    ]);
    expect(diffSnapshots({ allowedClientTypes: [P] }, odd({ allowedClientTypes: P }))).toEqual([
      { field: 'allowed_client_types', oldValue: [P], newValue: P, direction: 'changed' },
    ]);
  });

  it('a boolean that is not a boolean is not true', () => {
    expect(diffSnapshots(odd({ requireToolApproval: 'yes' }), { requireToolApproval: true })).toEqual([
      { field: 'require_tool_approval', oldValue: 'yes', newValue: true, direction: 'changed' },
    ]);
  });

  it('untrustedJudgeDisable to or from a value that is not a boolean', () => {
    expect(diffSnapshots({ untrustedJudgeDisable: false }, { untrustedJudgeDisable: 'yes' })).toEqual([
      { field: 'extra_fields.untrustedJudgeDisable', oldValue: false, newValue: 'yes', direction: 'changed' },
    ]);
    expect(diffSnapshots({ untrustedJudgeDisable: 'yes' }, { untrustedJudgeDisable: true })).toEqual([
      { field: 'extra_fields.untrustedJudgeDisable', oldValue: 'yes', newValue: true, direction: 'changed' },
    ]);
  });

  it('odd-typed client type items are members of the set, one each', () => {
    expect(diffSnapshots(odd({ allowedClientTypes: [1, 2] }), odd({ allowedClientTypes: [12] }))).toEqual([
      { field: 'allowed_client_types', oldValue: [1, 2], newValue: [12], direction: 'changed' },
    ]);
  });
});

describe('diffSnapshots: absent, null and empty', () => {
  it('an absent, null or empty client type list is the same permission: all types', () => {
    expect(diffSnapshots({}, { allowedClientTypes: [] })).toEqual([]);
    expect(diffSnapshots({ allowedClientTypes: null }, { allowedClientTypes: [] })).toEqual([]);
    expect(diffSnapshots({ allowedClientTypes: [] }, {})).toEqual([]);
  });

  it('a lifecycle duration going from unset to set has the old value null', () => {
    expect(diffSnapshots({}, { defaultClientLifecycle: { inactivityCloseAfter: '60s' } })).toEqual([
      { field: 'inactivity_close_after', oldValue: null, newValue: '60s', direction: 'changed' },
    ]);
    expect(
      diffSnapshots(
        { defaultClientLifecycle: { inactivityCloseAfter: null } },
        { defaultClientLifecycle: {} },
      ),
    ).toEqual([]);
  });

  it('a negative lifecycle duration has no meaning: to or from it is changed', () => {
    const close = (v: string) => ({ defaultClientLifecycle: { inactivityCloseAfter: v } });
    expect(diffSnapshots(close('-60s'), close('60s'))).toEqual([
      { field: 'inactivity_close_after', oldValue: '-60s', newValue: '60s', direction: 'changed' },
    ]);
    expect(diffSnapshots(close('60s'), close('-60s'))).toEqual([
      { field: 'inactivity_close_after', oldValue: '60s', newValue: '-60s', direction: 'changed' },
    ]);
  });
});

describe('diffSnapshots: extra fields on one side only', () => {
  // Snapshots chained as a history diffs them: each is the "after" of one diff and the "before" of
  // the next. A name one side lacks is read from that side as absent; a top-level key
  // `defaultClientLifecycle.x` has the name of lifecycle key `x`, and the lifecycle's value is read.
  const a = odd({ alpha: 1, gamma: 'g', 'defaultClientLifecycle.x': 'top', untrustedJudgeDisable: true });
  const b = odd({ beta: 2, gamma: 'g', defaultClientLifecycle: { x: 'lc' } });
  const c = odd({ gamma: 'h', 'defaultClientLifecycle.x': 'top' });
  const row = (field: string, oldValue: unknown, newValue: unknown, direction = 'changed') => ({
    field: `extra_fields.${field}`,
    oldValue,
    newValue,
    direction,
  });

  it('merges both sides in name order, one row per name', () => {
    expect(diffSnapshots(null, a)).toEqual([
      row('alpha', null, 1),
      row('gamma', null, 'g'),
      row('untrustedJudgeDisable', null, true),
    ]);
    expect(diffSnapshots(a, b)).toEqual([
      row('alpha', 1, null),
      row('beta', null, 2),
      row('defaultClientLifecycle.x', null, 'lc'),
      row('untrustedJudgeDisable', true, false, 'tightened'),
    ]);
    expect(diffSnapshots(b, c)).toEqual([
      row('beta', 2, null),
      row('defaultClientLifecycle.x', 'lc', null),
      row('gamma', 'g', 'h'),
    ]);
    expect(diffSnapshots(c, a)).toEqual([
      row('alpha', null, 1),
      row('gamma', 'h', 'g'),
      row('untrustedJudgeDisable', false, true, 'loosened'),
    ]);
  });

  it('gives one row for the two keys of one name in one snapshot', () => {
    const both = odd({ 'defaultClientLifecycle.x': 'top', defaultClientLifecycle: { x: 'lc' } });
    expect(diffSnapshots(null, both)).toEqual([row('defaultClientLifecycle.x', null, 'lc')]);
    expect(diffSnapshots(both, b)).toEqual([row('beta', null, 2), row('gamma', null, 'g')]);
  });
});
