/**
 * Every per-entry rule of the default pack (AIGOV-001…015), end to end: a sandbox history where
 * the rule must fire and one where it must not, synced into PostgreSQL by the real sync. Each case
 * backfills a small history ending in a known baseline (BASELINE, with a ticket), appends the
 * scenario entries a day apart unless told otherwise, runs a second sync and reads that run's
 * govtrail.alert rows.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { AlertChange } from '../../src/core/alert.js';
import type { SandboxEntry } from '../../src/sandbox/index.js';
import {
  type AlertRow,
  alertRows,
  appendSteps,
  HOUR,
  idOf,
  runScenario,
  type Step,
  ticket,
} from '../helpers/alerts.js';
import type { Harness } from '../helpers/harness.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const noTicket = { annotations: [] };
const deleted: Step = { changeKind: 'CHANGE_KIND_HARD_DELETE' };

interface FireCase {
  readonly name: string;
  readonly rule: string;
  readonly before?: Step[];
  readonly after: Step[];
  readonly severity: 'low' | 'medium' | 'high';
  /** Changes the alert's context.changes must hold (old/new/direction). */
  readonly changes?: Partial<AlertChange>[];
}

const fires: FireCase[] = [
  { name: 'hard delete', rule: 'AIGOV-001', after: [deleted], severity: 'high' },
  {
    name: 'requireToolApproval true → false',
    rule: 'AIGOV-002',
    after: [{ set: { requireToolApproval: false } }],
    severity: 'high',
    changes: [{ field: 'require_tool_approval', oldValue: true, newValue: false, direction: 'loosened' }],
  },
  {
    name: 'requireToolApproval true → false, right after a PUT served without a snapshot',
    rule: 'AIGOV-002',
    after: [{ snapshot: null }, { set: { requireToolApproval: false } }],
    severity: 'high',
    changes: [{ field: 'require_tool_approval', oldValue: true, newValue: false, direction: 'loosened' }],
  },
  {
    name: 'requireToolApproval true → false, the run after a PUT served without a snapshot',
    rule: 'AIGOV-002',
    before: [{ snapshot: null }, { snapshot: null }],
    after: [{ set: { requireToolApproval: false } }],
    severity: 'high',
    changes: [{ field: 'require_tool_approval', oldValue: true, newValue: false, direction: 'loosened' }],
  },
  {
    name: 'auditVerbosity FULL → MINIMAL',
    rule: 'AIGOV-003',
    after: [{ set: { auditVerbosity: 'AUDIT_VERBOSITY_MINIMAL' } }],
    severity: 'high',
    changes: [
      {
        field: 'audit_verbosity',
        oldValue: 'AUDIT_VERBOSITY_FULL',
        newValue: 'AUDIT_VERBOSITY_MINIMAL',
        direction: 'loosened',
      },
    ],
  },
  {
    name: 'client types [PERSONAL] → [] (all types)',
    rule: 'AIGOV-004',
    after: [{ set: { allowedClientTypes: [] } }],
    severity: 'high',
    changes: [
      {
        field: 'allowed_client_types',
        oldValue: ['MCP_CLIENT_TYPE_PERSONAL'],
        newValue: [],
        direction: 'loosened',
      },
    ],
  },
  {
    name: 'client types [PERSONAL] → [PERSONAL, SHARED]',
    rule: 'AIGOV-004',
    after: [{ set: { allowedClientTypes: ['MCP_CLIENT_TYPE_PERSONAL', 'MCP_CLIENT_TYPE_SHARED'] } }],
    severity: 'medium',
    changes: [
      {
        field: 'allowed_client_types',
        oldValue: ['MCP_CLIENT_TYPE_PERSONAL'],
        newValue: ['MCP_CLIENT_TYPE_PERSONAL', 'MCP_CLIENT_TYPE_SHARED'],
        direction: 'loosened',
      },
    ],
  },
  {
    name: 'defaultToolClassification WRITE → READ',
    rule: 'AIGOV-005',
    after: [{ set: { defaultToolClassification: 'TOOL_CLASSIFICATION_READ' } }],
    severity: 'high',
    changes: [
      {
        field: 'default_tool_classification',
        oldValue: 'TOOL_CLASSIFICATION_WRITE',
        newValue: 'TOOL_CLASSIFICATION_READ',
        direction: 'loosened',
      },
    ],
  },
  {
    name: 'autoDiscoveryEnabled false → true',
    rule: 'AIGOV-006',
    after: [{ set: { autoDiscoveryEnabled: true } }],
    severity: 'medium',
    changes: [{ field: 'auto_discovery_enabled', oldValue: false, newValue: true, direction: 'loosened' }],
  },
  {
    name: 'surfaceRequestableTools false → true',
    rule: 'AIGOV-007',
    after: [{ set: { surfaceRequestableTools: true } }],
    severity: 'low',
    changes: [{ field: 'surface_requestable_tools', oldValue: false, newValue: true, direction: 'loosened' }],
  },
  {
    name: 'preferCodeModeOverDirectTools false → true',
    rule: 'AIGOV-008',
    after: [{ set: { preferCodeModeOverDirectTools: true } }],
    severity: 'medium',
    changes: [
      { field: 'prefer_code_mode_over_direct_tools', oldValue: false, newValue: true, direction: 'changed' },
    ],
  },
  {
    name: 'preferCodeModeOverDirectTools true → false (toggled either way)',
    rule: 'AIGOV-008',
    before: [{ set: { preferCodeModeOverDirectTools: true } }],
    after: [{ set: { preferCodeModeOverDirectTools: false } }],
    severity: 'medium',
    changes: [{ field: 'prefer_code_mode_over_direct_tools', oldValue: true, newValue: false }],
  },
  {
    name: 'inactivityCloseAfter 30 d → 0 (transition disabled)',
    rule: 'AIGOV-009',
    after: [{ set: { defaultClientLifecycle: { inactivityCloseAfter: '0s' } } }],
    severity: 'medium',
    changes: [
      { field: 'inactivity_close_after', oldValue: '2592000s', newValue: '0s', direction: 'loosened' },
    ],
  },
  {
    name: 'inactivityHideAfter 7 d → 14 d',
    rule: 'AIGOV-009',
    after: [{ set: { defaultClientLifecycle: { inactivityHideAfter: '1209600s' } } }],
    severity: 'medium',
    changes: [
      { field: 'inactivity_hide_after', oldValue: '604800s', newValue: '1209600s', direction: 'loosened' },
    ],
  },
  {
    name: 'retentionDeleteAfter 365 d → 30 d',
    rule: 'AIGOV-010',
    after: [{ set: { defaultClientLifecycle: { retentionDeleteAfter: '2592000s' } } }],
    severity: 'medium',
    changes: [
      { field: 'retention_delete_after', oldValue: '31536000s', newValue: '2592000s', direction: 'loosened' },
    ],
  },
  {
    name: 'enabled true → false',
    rule: 'AIGOV-011',
    after: [{ set: { enabled: false } }],
    severity: 'medium',
    changes: [{ field: 'enabled', oldValue: true, newValue: false }],
  },
  {
    name: 'a vendor support change',
    rule: 'AIGOV-012',
    after: [
      {
        actor: { kind: 'ACTOR_KIND_SUPPORT' },
        set: { defaultToolClassification: 'TOOL_CLASSIFICATION_SENSITIVE' },
      },
    ],
    severity: 'high',
  },
  {
    name: 'no ticket, nothing loosened (low)',
    rule: 'AIGOV-013',
    after: [{ ...noTicket, set: { defaultToolClassification: 'TOOL_CLASSIFICATION_SENSITIVE' } }],
    severity: 'low',
  },
  {
    name: 'no ticket, and the same entry loosens (medium)',
    rule: 'AIGOV-013',
    after: [{ ...noTicket, set: { requireToolApproval: false } }],
    severity: 'medium',
    changes: [{ field: 'require_tool_approval', direction: 'loosened' }],
  },
  {
    name: 'an unknown settings enum value',
    rule: 'AIGOV-014',
    after: [{ set: { auditVerbosity: 'AUDIT_VERBOSITY_DEBUG' } }],
    severity: 'low',
  },
  {
    name: 'an unknown actor kind',
    rule: 'AIGOV-014',
    after: [
      {
        actor: { kind: 'ACTOR_KIND_SCIM' },
        set: { defaultToolClassification: 'TOOL_CLASSIFICATION_SENSITIVE' },
      },
    ],
    severity: 'low',
  },
  {
    name: 'an unknown change kind',
    rule: 'AIGOV-014',
    after: [
      {
        changeKind: 'CHANGE_KIND_PATCH',
        set: { defaultToolClassification: 'TOOL_CLASSIFICATION_SENSITIVE' },
      },
    ],
    severity: 'low',
  },
  {
    name: 'an unknown annotation kind',
    rule: 'AIGOV-014',
    after: [
      {
        annotations: [
          ticket('SEC-7'),
          { kind: 'ANNOTATION_KIND_APPROVAL', key: 'approval_id', rawValue: 'A-1' },
        ],
        set: { defaultToolClassification: 'TOOL_CLASSIFICATION_SENSITIVE' },
      },
    ],
    severity: 'low',
  },
  {
    name: 'three entries within an hour',
    rule: 'AIGOV-015',
    after: [
      { set: { defaultToolClassification: 'TOOL_CLASSIFICATION_SENSITIVE' } },
      { after: 15 * 60, set: { defaultToolClassification: 'TOOL_CLASSIFICATION_DANGEROUS' } },
      { after: 20 * 60, set: { defaultToolClassification: 'TOOL_CLASSIFICATION_SENSITIVE' } },
    ],
    severity: 'low',
  },
];

interface QuietCase {
  readonly name: string;
  readonly rule: string;
  readonly before?: Step[];
  readonly after: Step[];
}

const tighten: Step = { set: { defaultToolClassification: 'TOOL_CLASSIFICATION_SENSITIVE' } };

const quiet: QuietCase[] = [
  { name: 'a PUT, not a delete', rule: 'AIGOV-001', after: [tighten] },
  {
    name: 'requireToolApproval false → true',
    rule: 'AIGOV-002',
    before: [{ set: { requireToolApproval: false } }],
    after: [{ set: { requireToolApproval: true } }],
  },
  {
    name: 'auditVerbosity MINIMAL → STANDARD',
    rule: 'AIGOV-003',
    before: [{ set: { auditVerbosity: 'AUDIT_VERBOSITY_MINIMAL' } }],
    after: [{ set: { auditVerbosity: 'AUDIT_VERBOSITY_STANDARD' } }],
  },
  {
    name: 'auditVerbosity FULL → an unranked value',
    rule: 'AIGOV-003',
    after: [{ set: { auditVerbosity: 'AUDIT_VERBOSITY_DEBUG' } }],
  },
  {
    name: 'client types [] (all) → [PERSONAL]',
    rule: 'AIGOV-004',
    before: [{ set: { allowedClientTypes: [] } }],
    after: [{ set: { allowedClientTypes: ['MCP_CLIENT_TYPE_PERSONAL'] } }],
  },
  {
    name: 'client types [PERSONAL, SHARED] → [SHARED]',
    rule: 'AIGOV-004',
    before: [{ set: { allowedClientTypes: ['MCP_CLIENT_TYPE_PERSONAL', 'MCP_CLIENT_TYPE_SHARED'] } }],
    after: [{ set: { allowedClientTypes: ['MCP_CLIENT_TYPE_SHARED'] } }],
  },
  {
    name: 'client types [PERSONAL] → [SHARED] (neither wider nor narrower)',
    rule: 'AIGOV-004',
    after: [{ set: { allowedClientTypes: ['MCP_CLIENT_TYPE_SHARED'] } }],
  },
  {
    name: 'defaultToolClassification WRITE → SENSITIVE',
    rule: 'AIGOV-005',
    after: [tighten],
  },
  {
    name: 'defaultToolClassification WRITE → an unranked value',
    rule: 'AIGOV-005',
    after: [{ set: { defaultToolClassification: 'TOOL_CLASSIFICATION_HARMLESS' } }],
  },
  {
    name: 'autoDiscoveryEnabled true → false',
    rule: 'AIGOV-006',
    before: [{ set: { autoDiscoveryEnabled: true } }],
    after: [{ set: { autoDiscoveryEnabled: false } }],
  },
  {
    name: 'surfaceRequestableTools true → false',
    rule: 'AIGOV-007',
    before: [{ set: { surfaceRequestableTools: true } }],
    after: [{ set: { surfaceRequestableTools: false } }],
  },
  {
    // A re-creation is diffed against the settings before the delete (docs/design/integrity.md): the same
    // value is no change.
    name: 'preferCodeModeOverDirectTools re-created as it was before the delete',
    rule: 'AIGOV-008',
    before: [deleted],
    after: [
      { changeKind: 'CHANGE_KIND_CREATE', set: { ...baselineLike(), preferCodeModeOverDirectTools: false } },
    ],
  },
  {
    name: 'inactivityCloseAfter 30 d → 1 d',
    rule: 'AIGOV-009',
    after: [{ set: { defaultClientLifecycle: { inactivityCloseAfter: '86400s' } } }],
  },
  {
    name: 'inactivityHideAfter 0 (disabled) → 7 d',
    rule: 'AIGOV-009',
    before: [{ set: { defaultClientLifecycle: { inactivityHideAfter: '0s' } } }],
    after: [{ set: { defaultClientLifecycle: { inactivityHideAfter: '604800s' } } }],
  },
  {
    name: 'retentionDeleteAfter 365 d → 0 (never delete)',
    rule: 'AIGOV-010',
    after: [{ set: { defaultClientLifecycle: { retentionDeleteAfter: '0s' } } }],
  },
  {
    name: 'retentionDeleteAfter 30 d → 365 d',
    rule: 'AIGOV-010',
    before: [{ set: { defaultClientLifecycle: { retentionDeleteAfter: '2592000s' } } }],
    after: [{ set: { defaultClientLifecycle: { retentionDeleteAfter: '31536000s' } } }],
  },
  {
    name: 'enabled re-created as it was before the delete',
    rule: 'AIGOV-011',
    before: [deleted],
    after: [{ changeKind: 'CHANGE_KIND_CREATE', set: { ...baselineLike(), enabled: true } }],
  },
  { name: 'an API user', rule: 'AIGOV-012', after: [{ actor: { kind: 'ACTOR_KIND_API' }, ...tighten }] },
  { name: 'a ticketed change', rule: 'AIGOV-013', after: [{ annotations: [ticket('SEC-9')], ...tighten }] },
  {
    name: 'a WORKFLOW-annotated change without a ticket',
    rule: 'AIGOV-013',
    after: [
      {
        actor: { kind: 'ACTOR_KIND_WORKFLOW' },
        annotations: [{ kind: 'ANNOTATION_KIND_WORKFLOW' }],
        set: { requireToolApproval: false },
      },
    ],
  },
  {
    name: 'an AUTOMATION-annotated change without a ticket',
    rule: 'AIGOV-013',
    after: [
      {
        actor: { kind: 'ACTOR_KIND_INTERNAL' },
        annotations: [{ kind: 'ANNOTATION_KIND_AUTOMATION', rawValue: 'nightly-policy-sync' }],
        ...tighten,
      },
    ],
  },
  { name: 'known values only', rule: 'AIGOV-014', after: [tighten] },
  {
    name: 'two entries within an hour',
    rule: 'AIGOV-015',
    after: [tighten, { after: 20 * 60, set: { defaultToolClassification: 'TOOL_CLASSIFICATION_DANGEROUS' } }],
  },
  {
    name: 'three entries, but not within one hour',
    rule: 'AIGOV-015',
    after: [
      tighten,
      { after: 40 * 60, set: { defaultToolClassification: 'TOOL_CLASSIFICATION_DANGEROUS' } },
      { after: 40 * 60, set: { defaultToolClassification: 'TOOL_CLASSIFICATION_SENSITIVE' } },
    ],
  },
];

/** The baseline's known values, for a re-creation after a delete (which starts from random settings). */
function baselineLike(): Record<string, unknown> {
  return {
    allowedClientTypes: ['MCP_CLIENT_TYPE_PERSONAL'],
    auditVerbosity: 'AUDIT_VERBOSITY_FULL',
    defaultToolClassification: 'TOOL_CLASSIFICATION_WRITE',
    requireToolApproval: true,
  };
}

function ticketsOf(entry: SandboxEntry): { value: string | null; url: string | null }[] {
  return (entry.metadata?.annotations ?? [])
    .filter((a) => a.kind === 'ANNOTATION_KIND_TICKET')
    .map((a) => ({ value: a.displayValue ?? a.rawValue ?? null, url: a.displayUrl ?? null }));
}

function ofRule(alerts: readonly AlertRow[], rule: string): AlertRow[] {
  return alerts.filter((a) => a.rule_id === rule);
}

describe('default rules fire end to end', () => {
  it.each(fires)('$rule fires ($severity) on $name', async (c) => {
    const s = await runScenario({ ...(c.before !== undefined ? { before: c.before } : {}), after: c.after });
    h = s.h;
    const last = s.entries.at(-1) as SandboxEntry;
    const matching = ofRule(s.alerts, c.rule);
    expect(matching).toHaveLength(1);
    const alert = matching[0] as AlertRow;
    expect(alert.severity).toBe(c.severity);
    expect(alert.entry_id).toBe(idOf(last));
    expect(alert.dedupe_key).toBe(`${c.rule}:acme:${idOf(last)}`);
    expect(alert.run_id).toBe(s.run.runId);
    const ctx = alert.context;
    expect(ctx.entryId).toBe(idOf(last));
    expect(ctx.changedAt).toBe(last.metadata?.createdAt);
    expect(ctx.changeKind).toBe(last.metadata?.changeKind);
    expect(ctx.actor).toEqual({
      kind: last.metadata?.actor?.kind ?? null,
      userId: last.metadata?.actor?.userId ?? null,
    });
    expect(ctx.tickets).toEqual(ticketsOf(last));
    expect(ctx.traceId).toBe(last.metadata?.traceId ?? null);
    expect(ctx.syslogEventId).toBe(last.metadata?.syslogEventId ?? null);
    expect(ctx.runbook).not.toBe('');
    if (c.changes !== undefined)
      expect(ctx.changes).toEqual(expect.arrayContaining(c.changes.map((x) => expect.objectContaining(x))));
  });

  it('AIGOV-012 carries the support user and the ticket of the change', async () => {
    const s = await runScenario({
      after: [
        {
          actor: { kind: 'ACTOR_KIND_SUPPORT', userId: 'support-user-7' },
          annotations: [ticket('SUP-2291'), { kind: 'ANNOTATION_KIND_REASON', rawValue: 'Customer asked' }],
          set: { autoDiscoveryEnabled: true },
        },
      ],
    });
    h = s.h;
    const [alert] = ofRule(s.alerts, 'AIGOV-012');
    expect(alert?.context).toMatchObject({
      actor: { kind: 'ACTOR_KIND_SUPPORT', userId: 'support-user-7' },
      tickets: [{ value: 'SUP-2291', url: 'https://acme.atlassian.net/browse/SUP-2291' }],
      reasons: ['Customer asked'],
    });
    // Not about a field: it carries every change of the entry.
    expect(alert?.context.changes).toEqual([
      expect.objectContaining({ field: 'auto_discovery_enabled', oldValue: false, newValue: true }),
    ]);
    // The same entry also fires AIGOV-006; a ticketed change does not fire AIGOV-013.
    expect(s.alerts.map((a) => a.rule_id).sort()).toEqual(['AIGOV-006', 'AIGOV-012']);
  });

  it('AIGOV-015 fires once, on the entry that brings the count to three', async () => {
    const s = await runScenario({
      after: [
        tighten,
        { after: 10 * 60, set: { defaultToolClassification: 'TOOL_CLASSIFICATION_DANGEROUS' } },
        { after: 10 * 60, set: { defaultToolClassification: 'TOOL_CLASSIFICATION_SENSITIVE' } },
        { after: 2 * HOUR, set: { defaultToolClassification: 'TOOL_CLASSIFICATION_DANGEROUS' } },
      ],
    });
    h = s.h;
    const burst = ofRule(s.alerts, 'AIGOV-015');
    expect(burst.map((a) => a.entry_id)).toEqual([idOf(s.entries[2] as SandboxEntry)]);
    expect(burst[0]?.context.details).toMatchObject({ burst: { count: 3 } });
  });
  it('AIGOV-015 counts entries stored by an earlier run', async () => {
    const s = await runScenario({
      after: [
        tighten,
        { after: 20 * 60, set: { defaultToolClassification: 'TOOL_CLASSIFICATION_DANGEROUS' } },
      ],
    });
    h = s.h;
    expect(ofRule(s.alerts, 'AIGOV-015')).toEqual([]);
    const [third] = appendSteps(h.sandbox, [
      { after: 20 * 60, set: { defaultToolClassification: 'TOOL_CLASSIFICATION_SENSITIVE' } },
    ]) as [SandboxEntry];
    const run = await h.sync();
    expect(run.status).toBe('succeeded');
    const burst = ofRule(await alertRows(h.database.db, run.runId), 'AIGOV-015');
    expect(burst.map((a) => a.entry_id)).toEqual([idOf(third)]);
  });
});

describe('default rules stay quiet end to end', () => {
  it.each(quiet)('$rule does not fire on $name', async (c) => {
    const s = await runScenario({ ...(c.before !== undefined ? { before: c.before } : {}), after: c.after });
    h = s.h;
    // The run did store the scenario and evaluate rules on it.
    expect(s.run.counters.entriesInserted).toBe(c.after.length);
    expect(ofRule(s.alerts, c.rule)).toEqual([]);
  });
});
