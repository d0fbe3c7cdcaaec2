/**
 * Field-level diffs end to end: the direction of every diffed field as govtrail.field_change
 * holds it after a real sync, and a late arrival recomputing the diff of the entry after it (the
 * invariant test in sync-invariants.test.ts checks new values only; this checks old values,
 * directions and the alerts around it).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SandboxEntry } from '../../src/sandbox/index.js';
import {
  alertRows,
  appendSteps,
  BASELINE,
  fieldChanges,
  idOf,
  runScenario,
  type Step,
  ticket,
} from '../helpers/alerts.js';
import { createHarness, type Harness } from '../helpers/harness.js';

const P = 'MCP_CLIENT_TYPE_PERSONAL';
const S = 'MCP_CLIENT_TYPE_SHARED';
const V = 'MCP_CLIENT_TYPE_SERVICE';

interface DirectionCase {
  readonly name: string;
  /** The change, or a function of the previous served snapshot returning the whole next snapshot. */
  readonly set?: Record<string, unknown>;
  readonly snapshot?: (prev: Record<string, unknown>) => Record<string, unknown>;
  readonly field: string;
  readonly old: unknown;
  readonly new: unknown;
  readonly direction: 'loosened' | 'tightened' | 'changed';
}

const lifecycle = (k: string, v: string) => ({ defaultClientLifecycle: { [k]: v } });

/** Applied in order on top of BASELINE, one entry a day. */
const cases: DirectionCase[] = [
  {
    name: 'tool approval off',
    set: { requireToolApproval: false },
    field: 'require_tool_approval',
    old: true,
    new: false,
    direction: 'loosened',
  },
  {
    name: 'tool approval on',
    set: { requireToolApproval: true },
    field: 'require_tool_approval',
    old: false,
    new: true,
    direction: 'tightened',
  },
  {
    name: 'audit FULL → MINIMAL',
    set: { auditVerbosity: 'AUDIT_VERBOSITY_MINIMAL' },
    field: 'audit_verbosity',
    old: 'AUDIT_VERBOSITY_FULL',
    new: 'AUDIT_VERBOSITY_MINIMAL',
    direction: 'loosened',
  },
  {
    name: 'audit MINIMAL → STANDARD',
    set: { auditVerbosity: 'AUDIT_VERBOSITY_STANDARD' },
    field: 'audit_verbosity',
    old: 'AUDIT_VERBOSITY_MINIMAL',
    new: 'AUDIT_VERBOSITY_STANDARD',
    direction: 'tightened',
  },
  {
    name: 'audit → unknown value',
    set: { auditVerbosity: 'AUDIT_VERBOSITY_DEBUG' },
    field: 'audit_verbosity',
    old: 'AUDIT_VERBOSITY_STANDARD',
    new: 'AUDIT_VERBOSITY_DEBUG',
    direction: 'changed',
  },
  {
    name: 'audit unknown → UNSPECIFIED',
    set: { auditVerbosity: 'AUDIT_VERBOSITY_UNSPECIFIED' },
    field: 'audit_verbosity',
    old: 'AUDIT_VERBOSITY_DEBUG',
    new: 'AUDIT_VERBOSITY_UNSPECIFIED',
    direction: 'changed',
  },
  {
    name: 'audit UNSPECIFIED → FULL (no rank: never tightened)',
    set: { auditVerbosity: 'AUDIT_VERBOSITY_FULL' },
    field: 'audit_verbosity',
    old: 'AUDIT_VERBOSITY_UNSPECIFIED',
    new: 'AUDIT_VERBOSITY_FULL',
    direction: 'changed',
  },
  {
    name: 'client types grow',
    set: { allowedClientTypes: [P, S] },
    field: 'allowed_client_types',
    old: [P],
    new: [P, S],
    direction: 'loosened',
  },
  {
    name: 'client types shrink',
    set: { allowedClientTypes: [S] },
    field: 'allowed_client_types',
    old: [P, S],
    new: [S],
    direction: 'tightened',
  },
  {
    name: 'client types swapped',
    set: { allowedClientTypes: [V] },
    field: 'allowed_client_types',
    old: [S],
    new: [V],
    direction: 'changed',
  },
  {
    name: 'client types → absent (all)',
    set: { allowedClientTypes: [] },
    field: 'allowed_client_types',
    old: [V],
    new: [],
    direction: 'loosened',
  },
  {
    name: 'client types all → [PERSONAL]',
    set: { allowedClientTypes: [P] },
    field: 'allowed_client_types',
    old: [],
    new: [P],
    direction: 'tightened',
  },
  {
    name: 'client types → explicit [] on the wire (all)',
    snapshot: (prev) => ({ ...prev, allowedClientTypes: [] }),
    field: 'allowed_client_types',
    old: [P],
    new: [],
    direction: 'loosened',
  },
  {
    name: 'classification WRITE → READ',
    set: { defaultToolClassification: 'TOOL_CLASSIFICATION_READ' },
    field: 'default_tool_classification',
    old: 'TOOL_CLASSIFICATION_WRITE',
    new: 'TOOL_CLASSIFICATION_READ',
    direction: 'loosened',
  },
  {
    name: 'classification READ → DANGEROUS',
    set: { defaultToolClassification: 'TOOL_CLASSIFICATION_DANGEROUS' },
    field: 'default_tool_classification',
    old: 'TOOL_CLASSIFICATION_READ',
    new: 'TOOL_CLASSIFICATION_DANGEROUS',
    direction: 'tightened',
  },
  {
    name: 'classification → unknown value',
    set: { defaultToolClassification: 'TOOL_CLASSIFICATION_HARMLESS' },
    field: 'default_tool_classification',
    old: 'TOOL_CLASSIFICATION_DANGEROUS',
    new: 'TOOL_CLASSIFICATION_HARMLESS',
    direction: 'changed',
  },
  {
    name: 'auto-discovery on',
    set: { autoDiscoveryEnabled: true },
    field: 'auto_discovery_enabled',
    old: false,
    new: true,
    direction: 'loosened',
  },
  {
    name: 'auto-discovery off',
    set: { autoDiscoveryEnabled: false },
    field: 'auto_discovery_enabled',
    old: true,
    new: false,
    direction: 'tightened',
  },
  {
    name: 'requestable tools surfaced',
    set: { surfaceRequestableTools: true },
    field: 'surface_requestable_tools',
    old: false,
    new: true,
    direction: 'loosened',
  },
  {
    name: 'requestable tools hidden',
    set: { surfaceRequestableTools: false },
    field: 'surface_requestable_tools',
    old: true,
    new: false,
    direction: 'tightened',
  },
  {
    name: 'code mode on',
    set: { preferCodeModeOverDirectTools: true },
    field: 'prefer_code_mode_over_direct_tools',
    old: false,
    new: true,
    direction: 'changed',
  },
  {
    name: 'traffic switch off',
    set: { enabled: false },
    field: 'enabled',
    old: true,
    new: false,
    direction: 'changed',
  },
  {
    name: 'close after 30 d → 0 (disabled)',
    set: lifecycle('inactivityCloseAfter', '0s'),
    field: 'inactivity_close_after',
    old: '2592000s',
    new: '0s',
    direction: 'loosened',
  },
  {
    name: 'close after 0 → 1 d',
    set: lifecycle('inactivityCloseAfter', '86400s'),
    field: 'inactivity_close_after',
    old: '0s',
    new: '86400s',
    direction: 'tightened',
  },
  {
    name: 'hide after 7 d → 14 d',
    set: lifecycle('inactivityHideAfter', '1209600s'),
    field: 'inactivity_hide_after',
    old: '604800s',
    new: '1209600s',
    direction: 'loosened',
  },
  {
    name: 'hide after 14 d → 1 h',
    set: lifecycle('inactivityHideAfter', '3600s'),
    field: 'inactivity_hide_after',
    old: '1209600s',
    new: '3600s',
    direction: 'tightened',
  },
  {
    name: 'retention 365 d → 30 d',
    set: lifecycle('retentionDeleteAfter', '2592000s'),
    field: 'retention_delete_after',
    old: '31536000s',
    new: '2592000s',
    direction: 'loosened',
  },
  {
    name: 'retention 30 d → 0 (never delete)',
    set: lifecycle('retentionDeleteAfter', '0s'),
    field: 'retention_delete_after',
    old: '2592000s',
    new: '0s',
    direction: 'tightened',
  },
  {
    name: 'retention never → 365 d',
    set: lifecycle('retentionDeleteAfter', '31536000s'),
    field: 'retention_delete_after',
    old: '0s',
    new: '31536000s',
    direction: 'loosened',
  },
  {
    name: 'untrusted-content judge disabled (known extra field)',
    set: { untrustedJudgeDisable: true },
    field: 'extra_fields.untrustedJudgeDisable',
    old: false,
    new: true,
    direction: 'loosened',
  },
];

describe('field_change directions end to end', () => {
  let h: Harness;
  const ids: string[] = [];
  beforeAll(async () => {
    h = await createHarness({ entries: 20, seed: 31 });
    appendSteps(h.sandbox, [{ annotations: [ticket('SEC-1')], set: { ...BASELINE } }]);
    expect((await h.sync()).status).toBe('succeeded');
    for (const c of cases) {
      const prev = (h.sandbox.history.entries()[0] as SandboxEntry).snapshot as Record<string, unknown>;
      const step: Step =
        c.snapshot !== undefined ? { snapshot: c.snapshot(prev) } : { set: c.set as Record<string, unknown> };
      ids.push(idOf(appendSteps(h.sandbox, [step])[0] as SandboxEntry));
    }
    const run = await h.sync();
    expect(run.status).toBe('succeeded');
    expect(run.counters.entriesInserted).toBe(cases.length);
  });
  afterAll(async () => {
    await h?.close();
  });

  it.each(cases.map((c, i) => ({ ...c, i })))('$name: $field $direction', async (c) => {
    const rows = await fieldChanges(h.database.db, [ids[c.i] as string]);
    expect(rows.map(({ entry_id: _, ...r }) => r)).toEqual([
      { field: c.field, old_value: c.old, new_value: c.new, direction: c.direction },
    ]);
  });
});

describe('late arrival', () => {
  it('recomputes the diff of the stored entry after it, and alerts only on the late entry', async () => {
    // Baseline (FULL) → B: STANDARD (loosened, AIGOV-003 on the second run).
    const s = await runScenario({ after: [{ set: { auditVerbosity: 'AUDIT_VERBOSITY_STANDARD' } }] });
    const h = s.h;
    try {
      const b = s.entries[0] as SandboxEntry;
      const bId = idOf(b);
      expect(s.alerts.map((a) => `${a.rule_id}:${a.entry_id}`)).toEqual([`AIGOV-003:${bId}`]);
      expect(await fieldChanges(h.database.db, [bId])).toMatchObject([
        {
          field: 'audit_verbosity',
          old_value: 'AUDIT_VERBOSITY_FULL',
          new_value: 'AUDIT_VERBOSITY_STANDARD',
          direction: 'loosened',
        },
      ]);

      // L shows up late, five minutes before B (inside the 15-minute lookback): FULL → MINIMAL.
      const at = new Date(Date.parse(b.metadata?.createdAt as string) - 5 * 60_000).toISOString();
      const late = h.sandbox.history.insertLate({ at, set: { auditVerbosity: 'AUDIT_VERBOSITY_MINIMAL' } });
      const lId = idOf(late);
      const run = await h.sync();
      expect(run.status).toBe('succeeded');
      expect(run.counters.entriesInserted).toBe(1);

      const rows = await fieldChanges(h.database.db, [lId, bId]);
      expect(rows.filter((r) => r.entry_id === lId)).toEqual([
        {
          entry_id: lId,
          field: 'audit_verbosity',
          old_value: 'AUDIT_VERBOSITY_FULL',
          new_value: 'AUDIT_VERBOSITY_MINIMAL',
          direction: 'loosened',
        },
      ]);
      // B now reads MINIMAL → STANDARD: tightened.
      expect(rows.filter((r) => r.entry_id === bId)).toEqual([
        {
          entry_id: bId,
          field: 'audit_verbosity',
          old_value: 'AUDIT_VERBOSITY_MINIMAL',
          new_value: 'AUDIT_VERBOSITY_STANDARD',
          direction: 'tightened',
        },
      ]);
      const alerts = await alertRows(h.database.db, run.runId);
      expect(alerts.map((a) => `${a.rule_id}:${a.entry_id}`)).toEqual([`AIGOV-003:${lId}`]);
      expect(alerts[0]?.context.changes).toEqual([
        expect.objectContaining({ oldValue: 'AUDIT_VERBOSITY_FULL', newValue: 'AUDIT_VERBOSITY_MINIMAL' }),
      ]);
      // B's alert stays as raised; nothing is duplicated.
      expect((await alertRows(h.database.db)).filter((a) => a.entry_id === bId)).toHaveLength(1);
    } finally {
      await h.close();
    }
  });
  it('recomputes the diff of the next entry with a snapshot when a PUT without one lies between', async () => {
    // Baseline (FULL) → B: a PUT served without a snapshot → C: STANDARD, five minutes later.
    const s = await runScenario({
      after: [{ snapshot: null }, { after: 5 * 60, set: { auditVerbosity: 'AUDIT_VERBOSITY_STANDARD' } }],
    });
    const h = s.h;
    try {
      const [b, c] = s.entries as [SandboxEntry, SandboxEntry];
      const cId = idOf(c);
      expect(await fieldChanges(h.database.db, [idOf(b), cId])).toEqual([
        {
          entry_id: cId,
          field: 'audit_verbosity',
          old_value: 'AUDIT_VERBOSITY_FULL',
          new_value: 'AUDIT_VERBOSITY_STANDARD',
          direction: 'loosened',
        },
      ]);
      // L arrives late, before B: FULL → MINIMAL. C now reads MINIMAL → STANDARD.
      const at = new Date(Date.parse(b.metadata?.createdAt as string) - 60_000).toISOString();
      const late = h.sandbox.history.insertLate({ at, set: { auditVerbosity: 'AUDIT_VERBOSITY_MINIMAL' } });
      expect((await h.sync()).counters.entriesInserted).toBe(1);
      expect((await fieldChanges(h.database.db, [cId])).map((r) => [r.old_value, r.direction])).toEqual([
        ['AUDIT_VERBOSITY_MINIMAL', 'tightened'],
      ]);
      expect(
        (await fieldChanges(h.database.db, [idOf(late)])).map((r) => [r.old_value, r.new_value]),
      ).toEqual([['AUDIT_VERBOSITY_FULL', 'AUDIT_VERBOSITY_MINIMAL']]);
    } finally {
      await h.close();
    }
  });
});
