/**
 * An empty client type list allows every client type, and proto3 JSON omits it, so an absent list
 * is stored as NULL with allows_all_client_types = true. People must read "all client types" for
 * it — in `settings`, the report's posture timeline, changes, alerts and the demo — never "unset"
 * (issue 20, item 15). A value that was not a list at all (NULL, allows_all false) stays "unset".
 */
import { describe, expect, it } from 'vitest';
import { ALL_CLIENT_TYPES, formatValue, settingInForce } from '../../src/core/format.js';
import { postureTimeline } from '../../src/outputs/report/charts.js';
import type { TimelineRow } from '../../src/store/read/views.js';

const FIELD = 'allowed_client_types';

function row(settings: Record<string, unknown>, from: string, to: string | null): TimelineRow {
  return {
    tenantId: 'acme',
    entryId: `e-${from}`,
    validFrom: new Date(from),
    validTo: to === null ? null : new Date(to),
    isDeleted: false,
    changeKind: 'CHANGE_KIND_PUT',
    actorKind: null,
    actorUserId: null,
    tickets: [],
    settings,
  };
}

describe('all client types', () => {
  it('an empty list reads "all client types"', () => {
    expect(ALL_CLIENT_TYPES).toBe('all client types');
    expect(formatValue(FIELD, [])).toBe('all client types');
  });

  it('an absent list (NULL, allows_all_client_types) is in force as the empty list', () => {
    const absent = { [FIELD]: null, allows_all_client_types: true };
    expect(settingInForce(absent, FIELD)).toEqual([]);
    expect(formatValue(FIELD, settingInForce(absent, FIELD))).toBe('all client types');
  });

  it('a value that was not a list stays unset', () => {
    const broken = { [FIELD]: null, allows_all_client_types: false };
    expect(formatValue(FIELD, settingInForce(broken, FIELD))).toBe('unset');
  });

  it('the posture timeline labels an absent list "all client types", as one period with an empty one', () => {
    const svg = postureTimeline(
      [
        row(
          { [FIELD]: ['MCP_CLIENT_TYPE_PERSONAL'], allows_all_client_types: false },
          '2025-01-01T00:00:00Z',
          '2025-02-01T00:00:00Z',
        ),
        row({ [FIELD]: null, allows_all_client_types: true }, '2025-02-01T00:00:00Z', '2025-03-01T00:00:00Z'),
        row({ [FIELD]: [], allows_all_client_types: true }, '2025-03-01T00:00:00Z', null),
      ],
      [FIELD],
      new Map(),
      new Date('2025-01-01T00:00:00Z'),
      new Date('2025-04-01T00:00:00Z'),
    );
    expect(svg).toContain(`${FIELD}: all client types\n2025-02-01T00:00:00.000Z – 2025-04-01T00:00:00.000Z`);
    expect(svg).not.toContain(`${FIELD}: unset`);
  });
});
