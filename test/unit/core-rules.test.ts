import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { defaultRulesPath, loadRulePack } from '../../src/config/rule-pack.js';
import type { AlertDraft } from '../../src/core/alert.js';
import { diffSnapshots } from '../../src/core/diff.js';
import type { AnnotationRow, EntryRow } from '../../src/core/normalise/types.js';
import {
  backfillDigest,
  type DiscrepancyFacts,
  discrepancyAlerts,
  evaluateRules,
  isDiscrepancyLevel,
  isRunLevel,
  parseRulePack,
  type RuleContext,
  type RulePack,
  syncFailingAlert,
} from '../../src/core/rules/rules.js';
import type { WireSettings } from '../../src/core/wire.js';

const pack = loadRulePack();
const TENANT = 'acme';
const ENTRY_ID = '2vYJmWBbS0sLCn3sYc6l1jOQ2bX';
const AT = '2025-03-04T05:06:07.123456789Z';

function annotation(kind: string, value = 'x', url = '', ordinal = 0): AnnotationRow {
  return {
    tenantId: TENANT,
    entryId: ENTRY_ID,
    ordinal,
    key: 'k',
    kind,
    rawValue: value,
    displayValue: value,
    displayLabel: 'Label',
    displayUrl: url,
  };
}

const TICKETED = [annotation('ANNOTATION_KIND_TICKET', 'SEC-1', 'https://jira.example/browse/SEC-1')];

interface Scenario {
  prev?: WireSettings | null;
  next?: WireSettings | null;
  entry?: Partial<EntryRow>;
  annotations?: AnnotationRow[];
  recent?: string[];
}

/** A context as the sync step builds it: changes come from the real diff with the pack's ranks. */
function ctx(s: Scenario, p: RulePack = pack): RuleContext {
  const prev = s.prev === undefined ? {} : s.prev;
  const next = s.next === undefined ? {} : s.next;
  const entry: EntryRow = {
    tenantId: TENANT,
    entryId: ENTRY_ID,
    createdAtText: '2025-03-04T05:06:07.123456789Z',
    createdAtKey: AT,
    createdAt: new Date('2025-03-04T05:06:07.123Z'),
    changeKind: 'CHANGE_KIND_PUT',
    actorKind: 'ACTOR_KIND_API',
    actorUserId: '2vYJmQ0pXgV7Ik8iKc0uXhKxA9P',
    syslogEventId: '2vYJmWZ0f1tOa8b6Gm8o0Vp7kXc',
    traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
    raw: {},
    ...s.entry,
  };
  return {
    tenantId: TENANT,
    entry,
    annotations: s.annotations ?? TICKETED,
    snapshot: next,
    changes: diffSnapshots(prev, next, p.ranks),
    recentEntryKeys: s.recent ?? [AT],
  };
}

function fired(s: Scenario, p: RulePack = pack): Map<string, AlertDraft> {
  return new Map(evaluateRules(p, ctx(s, p)).map((d) => [d.ruleId, d]));
}

const P = 'MCP_CLIENT_TYPE_PERSONAL';
const S = 'MCP_CLIENT_TYPE_SHARED';
const keyMinus = (minutes: number): string =>
  `${new Date(Date.parse('2025-03-04T05:06:07Z') - minutes * 60_000).toISOString().slice(0, 19)}.123456789Z`;

interface RuleCase {
  fires: Scenario;
  severity: string;
  /** Fields expected in context.changes; undefined = every change of the entry. */
  fields?: string[];
  quiet: Array<[string, Scenario]>;
}

/** One firing and several must-not-fire scenarios for every per-entry rule of the default pack. */
const CASES: Record<string, RuleCase> = {
  'AIGOV-001': {
    fires: {
      prev: { requireToolApproval: true },
      next: null,
      entry: { changeKind: 'CHANGE_KIND_HARD_DELETE' },
    },
    severity: 'high',
    fields: [],
    quiet: [['a PUT', { prev: {}, next: { enabled: true } }]],
  },
  'AIGOV-002': {
    fires: { prev: { requireToolApproval: true }, next: { requireToolApproval: false } },
    severity: 'high',
    fields: ['require_tool_approval'],
    quiet: [
      ['approval turned on', { prev: { requireToolApproval: false }, next: { requireToolApproval: true } }],
      [
        'a first snapshot without approval',
        { prev: null, next: { requireToolApproval: false, enabled: true } },
      ],
    ],
  },
  'AIGOV-003': {
    fires: {
      prev: { auditVerbosity: 'AUDIT_VERBOSITY_FULL' },
      next: { auditVerbosity: 'AUDIT_VERBOSITY_MINIMAL' },
    },
    severity: 'high',
    fields: ['audit_verbosity'],
    quiet: [
      [
        'raised',
        {
          prev: { auditVerbosity: 'AUDIT_VERBOSITY_MINIMAL' },
          next: { auditVerbosity: 'AUDIT_VERBOSITY_FULL' },
        },
      ],
      [
        'to UNSPECIFIED',
        {
          prev: { auditVerbosity: 'AUDIT_VERBOSITY_FULL' },
          next: { auditVerbosity: 'AUDIT_VERBOSITY_UNSPECIFIED' },
        },
      ],
      [
        'to an unknown value',
        {
          prev: { auditVerbosity: 'AUDIT_VERBOSITY_FULL' },
          next: { auditVerbosity: 'AUDIT_VERBOSITY_NONE' },
        },
      ],
    ],
  },
  'AIGOV-004': {
    fires: { prev: { allowedClientTypes: [P] }, next: { allowedClientTypes: [P, S] } },
    severity: 'medium',
    fields: ['allowed_client_types'],
    quiet: [
      ['narrowed', { prev: { allowedClientTypes: [] }, next: { allowedClientTypes: [P] } }],
      ['swapped', { prev: { allowedClientTypes: [P] }, next: { allowedClientTypes: [S] } }],
    ],
  },
  'AIGOV-005': {
    fires: {
      prev: { defaultToolClassification: 'TOOL_CLASSIFICATION_DANGEROUS' },
      next: { defaultToolClassification: 'TOOL_CLASSIFICATION_READ' },
    },
    severity: 'high',
    fields: ['default_tool_classification'],
    quiet: [
      [
        'raised',
        {
          prev: { defaultToolClassification: 'TOOL_CLASSIFICATION_READ' },
          next: { defaultToolClassification: 'TOOL_CLASSIFICATION_WRITE' },
        },
      ],
      [
        'to UNSPECIFIED',
        {
          prev: { defaultToolClassification: 'TOOL_CLASSIFICATION_WRITE' },
          next: { defaultToolClassification: 'TOOL_CLASSIFICATION_UNSPECIFIED' },
        },
      ],
    ],
  },
  'AIGOV-006': {
    fires: { prev: {}, next: { autoDiscoveryEnabled: true } },
    severity: 'medium',
    fields: ['auto_discovery_enabled'],
    quiet: [
      ['turned off', { prev: { autoDiscoveryEnabled: true }, next: { autoDiscoveryEnabled: false } }],
      ['a first snapshot', { prev: null, next: { autoDiscoveryEnabled: true } }],
    ],
  },
  'AIGOV-007': {
    fires: { prev: { surfaceRequestableTools: false }, next: { surfaceRequestableTools: true } },
    severity: 'low',
    fields: ['surface_requestable_tools'],
    quiet: [['hidden again', { prev: { surfaceRequestableTools: true }, next: {} }]],
  },
  'AIGOV-008': {
    fires: { prev: { preferCodeModeOverDirectTools: true }, next: { preferCodeModeOverDirectTools: false } },
    severity: 'medium',
    fields: ['prefer_code_mode_over_direct_tools'],
    quiet: [
      ['a first snapshot', { prev: null, next: { preferCodeModeOverDirectTools: true } }],
      ['another field', { prev: {}, next: { enabled: true } }],
    ],
  },
  'AIGOV-009': {
    fires: {
      prev: { defaultClientLifecycle: { inactivityCloseAfter: '3600s', inactivityHideAfter: '60s' } },
      next: { defaultClientLifecycle: { inactivityCloseAfter: '0s', inactivityHideAfter: '30s' } },
    },
    severity: 'medium',
    fields: ['inactivity_close_after'],
    quiet: [
      [
        'shortened',
        {
          prev: { defaultClientLifecycle: { inactivityHideAfter: '7200s' } },
          next: { defaultClientLifecycle: { inactivityHideAfter: '3600s' } },
        },
      ],
      ['unset → set', { prev: {}, next: { defaultClientLifecycle: { inactivityHideAfter: '3600s' } } }],
      [
        'the same duration written differently',
        {
          prev: { defaultClientLifecycle: { inactivityHideAfter: '60s' } },
          next: { defaultClientLifecycle: { inactivityHideAfter: '60.0s' } },
        },
      ],
    ],
  },
  'AIGOV-010': {
    fires: {
      prev: { defaultClientLifecycle: { retentionDeleteAfter: '0s' } },
      next: { defaultClientLifecycle: { retentionDeleteAfter: '604800s' } },
    },
    severity: 'medium',
    fields: ['retention_delete_after'],
    quiet: [
      [
        'set to never delete',
        {
          prev: { defaultClientLifecycle: { retentionDeleteAfter: '604800s' } },
          next: { defaultClientLifecycle: { retentionDeleteAfter: '0s' } },
        },
      ],
      [
        'lengthened',
        {
          prev: { defaultClientLifecycle: { retentionDeleteAfter: '60s' } },
          next: { defaultClientLifecycle: { retentionDeleteAfter: '120s' } },
        },
      ],
    ],
  },
  'AIGOV-011': {
    fires: { prev: { enabled: true }, next: { enabled: false } },
    severity: 'medium',
    fields: ['enabled'],
    quiet: [['a first snapshot', { prev: null, next: { enabled: true } }]],
  },
  'AIGOV-012': {
    fires: { prev: {}, next: { enabled: true }, entry: { actorKind: 'ACTOR_KIND_SUPPORT' } },
    severity: 'high',
    quiet: [['an API actor', { prev: {}, next: { enabled: true } }]],
  },
  'AIGOV-013': {
    fires: { prev: {}, next: { requireToolApproval: true }, annotations: [] },
    severity: 'low',
    quiet: [
      ['a ticketed change', { prev: {}, next: { requireToolApproval: true } }],
      [
        'a workflow change',
        { prev: {}, next: { enabled: true }, annotations: [annotation('ANNOTATION_KIND_WORKFLOW')] },
      ],
      [
        'an automation change',
        { prev: {}, next: { enabled: true }, annotations: [annotation('ANNOTATION_KIND_AUTOMATION')] },
      ],
    ],
  },
  'AIGOV-014': {
    fires: { prev: {}, next: { enabled: true }, entry: { changeKind: 'CHANGE_KIND_RESTORE' } },
    severity: 'low',
    quiet: [
      [
        'only known values',
        { prev: {}, next: { auditVerbosity: 'AUDIT_VERBOSITY_FULL', allowedClientTypes: [P] } },
      ],
    ],
  },
  'AIGOV-015': {
    fires: { prev: {}, next: { enabled: true }, recent: [keyMinus(50), keyMinus(10), AT] },
    severity: 'low',
    quiet: [
      ['two entries in an hour', { prev: {}, next: { enabled: true }, recent: [keyMinus(30), AT] }],
      [
        'three entries over more than an hour',
        { prev: {}, next: { enabled: true }, recent: [keyMinus(61), keyMinus(10), AT] },
      ],
    ],
  },
};

describe('AIGOV-018 history-changed-at-source (discrepancyAlerts)', () => {
  const facts = (
    kind: DiscrepancyFacts['kind'],
    source: string | null = 'ab'.repeat(32),
  ): DiscrepancyFacts => ({
    kind,
    discrepancyId: 7,
    runId: 3,
    storedSha256: 'cd'.repeat(32),
    sourceSha256: source,
  });

  it('fires, high, on a rewrite, a hole and a backdated entry, deduplicated per finding', () => {
    for (const kind of ['changed_at_source', 'missing_at_source', 'backdated'] as const) {
      const source = kind === 'missing_at_source' ? null : 'ab'.repeat(32);
      const drafts = discrepancyAlerts(pack, { ...ctx({}), discrepancy: facts(kind, source) });
      expect(drafts.map((d) => [d.ruleId, d.severity])).toEqual([['AIGOV-018', 'high']]);
      expect(drafts[0]?.dedupeKey).toBe(`AIGOV-018:${TENANT}:${ENTRY_ID}:${kind}:${source ?? 'none'}`);
      expect(drafts[0]?.context.details['discrepancy']).toMatchObject({ kind, discrepancyId: 7, runId: 3 });
      expect(drafts[0]?.context.runbook).toMatch(/source_discrepancy/);
    }
  });

  it('gives a further rewrite of the same entry its own dedupe key', () => {
    const a = discrepancyAlerts(pack, {
      ...ctx({}),
      discrepancy: facts('changed_at_source', '01'.repeat(32)),
    });
    const b = discrepancyAlerts(pack, {
      ...ctx({}),
      discrepancy: facts('changed_at_source', '02'.repeat(32)),
    });
    expect(a[0]?.dedupeKey).not.toBe(b[0]?.dedupeKey);
  });

  it('does not fire for entries past the source retention', () => {
    expect(discrepancyAlerts(pack, { ...ctx({}), discrepancy: facts('expired_at_source', null) })).toEqual(
      [],
    );
  });

  it('is never raised by the per-entry evaluation, and no per-entry rule fires on a finding', () => {
    const loosening: Scenario = { prev: { requireToolApproval: true }, next: { requireToolApproval: false } };
    expect(fired(loosening).has('AIGOV-018')).toBe(false);
    const drafts = discrepancyAlerts(pack, { ...ctx(loosening), discrepancy: facts('changed_at_source') });
    expect(drafts.map((d) => d.ruleId)).toEqual(['AIGOV-018']);
  });

  it('builds from the source_discrepancy condition in a user rule, combined with others', () => {
    const custom = parseRulePack(
      readFileSync(defaultRulesPath(), 'utf8'),
      [
        'rules:',
        '  - id: ACME-018',
        '    name: support-rewrote-history',
        '    version: 1',
        '    enabled: true',
        '    severity: critical',
        '    condition:',
        '      all_of:',
        '        - source_discrepancy: { kinds: [changed_at_source] }',
        '        - actor_kind_in: [ACTOR_KIND_SUPPORT]',
        '    runbook: Escalate to the vendor.',
      ].join('\n'),
    );
    const support = { ...ctx({}), entry: { ...ctx({}).entry, actorKind: 'ACTOR_KIND_SUPPORT' } };
    expect(
      discrepancyAlerts(custom, { ...support, discrepancy: facts('changed_at_source') }).map((d) => d.ruleId),
    ).toEqual(['AIGOV-018', 'ACME-018']);
    expect(
      discrepancyAlerts(custom, { ...support, discrepancy: facts('backdated') }).map((d) => d.ruleId),
    ).toEqual(['AIGOV-018']);
  });

  it('refuses an unknown discrepancy kind in a rule file', () => {
    expect(() =>
      parseRulePack(
        readFileSync(defaultRulesPath(), 'utf8'),
        'rules:\n  - id: AIGOV-018\n    condition:\n      source_discrepancy: { kinds: [rewritten] }\n',
      ),
    ).toThrow(/source_discrepancy/);
  });
});

describe('evaluateRules on the default pack', () => {
  it('has a case for every per-entry rule', () => {
    const perEntry = pack.rules.filter((r) => !isRunLevel(r) && !isDiscrepancyLevel(r)).map((r) => r.id);
    expect(Object.keys(CASES).sort()).toEqual(perEntry.sort());
  });

  for (const [id, c] of Object.entries(CASES)) {
    describe(id, () => {
      it(`fires with severity ${c.severity} and the relevant changes`, () => {
        const draft = fired(c.fires).get(id);
        expect(draft).toBeDefined();
        expect(draft?.severity).toBe(c.severity);
        expect(draft?.ruleVersion).toBe(1);
        expect(draft?.dedupeKey).toBe(`${id}:${TENANT}:${ENTRY_ID}`);
        expect(draft?.entryId).toBe(ENTRY_ID);
        const all = ctx(c.fires).changes.map((ch) => ch.field);
        expect(draft?.context.changes.map((ch) => ch.field)).toEqual(c.fields ?? all);
        expect(draft?.context.allChanges.map((ch) => ch.field)).toEqual(all);
        expect(draft?.context.runbook).toBe(pack.rules.find((r) => r.id === id)?.runbook);
      });
      for (const [what, scenario] of c.quiet) {
        it(`does not fire for ${what}`, () => {
          expect(fired(scenario).has(id)).toBe(false);
        });
      }
    });
  }
});

describe('alert content', () => {
  it('carries actor, tickets, reasons, correlation ids and a human title and summary', () => {
    const draft = fired({
      prev: { requireToolApproval: true },
      next: { requireToolApproval: false },
      annotations: [...TICKETED, annotation('ANNOTATION_KIND_REASON', 'vendor migration', '', 1)],
    }).get('AIGOV-002');
    expect(draft?.title).toBe('Tool approval was turned off');
    expect(draft?.summary).toContain('requireToolApproval: true → false');
    expect(draft?.summary).toContain('ticket SEC-1');
    expect(draft?.context).toMatchObject({
      tenantId: TENANT,
      entryId: ENTRY_ID,
      changedAt: '2025-03-04T05:06:07.123456789Z',
      changeKind: 'CHANGE_KIND_PUT',
      actor: { kind: 'ACTOR_KIND_API', userId: '2vYJmQ0pXgV7Ik8iKc0uXhKxA9P' },
      tickets: [{ value: 'SEC-1', url: 'https://jira.example/browse/SEC-1' }],
      reasons: ['vendor migration'],
      syslogEventId: '2vYJmWZ0f1tOa8b6Gm8o0Vp7kXc',
      traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
      ruleName: 'tool-approval-disabled',
      changes: [
        {
          field: 'require_tool_approval',
          label: 'requireToolApproval',
          oldValue: true,
          newValue: false,
          direction: 'loosened',
        },
      ],
    });
    expect(JSON.parse(JSON.stringify(draft?.context))).toEqual(draft?.context);
  });

  it('a ticket without a URL has url null', () => {
    const draft = fired({
      prev: { enabled: true },
      next: { enabled: false },
      annotations: [annotation('ANNOTATION_KIND_TICKET', 'CHG-7', '')],
    }).get('AIGOV-011');
    expect(draft?.context.tickets).toEqual([{ value: 'CHG-7', url: null }]);
  });
});

describe('severity overrides', () => {
  it('AIGOV-004 is high when the client types become all types', () => {
    const draft = fired({ prev: { allowedClientTypes: [P] }, next: { allowedClientTypes: [] } }).get(
      'AIGOV-004',
    );
    expect(draft?.severity).toBe('high');
    expect(draft?.title).toBe('Client types widened to all types');
    expect(draft?.summary).toContain('allowedClientTypes: [PERSONAL] → all client types');
  });

  it('AIGOV-004 is high when the list disappears (absent = all types)', () => {
    expect(fired({ prev: { allowedClientTypes: [P] }, next: {} }).get('AIGOV-004')?.severity).toBe('high');
  });

  it('AIGOV-004 is medium when the set grows but stays a subset', () => {
    const draft = fired({ prev: { allowedClientTypes: [P] }, next: { allowedClientTypes: [P, S] } }).get(
      'AIGOV-004',
    );
    expect(draft?.severity).toBe('medium');
    expect(draft?.title).toBe('Client types were widened');
  });

  it('AIGOV-013 is medium when the same entry loosens anything', () => {
    const draft = fired({ prev: { requireToolApproval: true }, next: {}, annotations: [] }).get('AIGOV-013');
    expect(draft?.severity).toBe('medium');
    expect(draft?.title).toBe('Governance was loosened without a ticket');
  });

  it('AIGOV-013 stays low for an unticketed tightening', () => {
    expect(
      fired({ prev: {}, next: { requireToolApproval: true }, annotations: [] }).get('AIGOV-013')?.severity,
    ).toBe('low');
  });
});

describe('rule details', () => {
  it('AIGOV-014 names each unrecognised value and where it was seen', () => {
    const draft = fired({
      prev: {},
      next: {
        allowedClientTypes: [P, 'MCP_CLIENT_TYPE_ROBOT'],
        auditVerbosity: 'AUDIT_VERBOSITY_FORENSIC',
        defaultToolClassification: 'TOOL_CLASSIFICATION_X',
      },
      entry: { changeKind: 'CHANGE_KIND_RESTORE', actorKind: 'ACTOR_KIND_ROBOT' },
      annotations: [...TICKETED, annotation('ANNOTATION_KIND_SIGNOFF', 'ok', '', 1)],
    }).get('AIGOV-014');
    expect(draft?.context.details['unrecognised']).toEqual([
      { where: 'changeKind', value: 'CHANGE_KIND_RESTORE' },
      { where: 'actor.kind', value: 'ACTOR_KIND_ROBOT' },
      { where: 'annotations[1].kind', value: 'ANNOTATION_KIND_SIGNOFF' },
      { where: 'snapshot.allowedClientTypes', value: 'MCP_CLIENT_TYPE_ROBOT' },
      { where: 'snapshot.auditVerbosity', value: 'AUDIT_VERBOSITY_FORENSIC' },
      { where: 'snapshot.defaultToolClassification', value: 'TOOL_CLASSIFICATION_X' },
    ]);
    expect(draft?.summary).toContain('changeKind "CHANGE_KIND_RESTORE"');
  });

  it('AIGOV-015 carries the burst count and fires once per burst, on the entry that reaches the threshold', () => {
    const third = fired({ prev: {}, next: { enabled: true }, recent: [keyMinus(50), keyMinus(10), AT] }).get(
      'AIGOV-015',
    );
    expect(third?.context.details['burst']).toEqual({ count: 3, window: '1h' });
    expect(third?.summary).toContain('3 entries within 1h');
    const fourth = fired({
      prev: {},
      next: { enabled: true },
      recent: [keyMinus(55), keyMinus(50), keyMinus(10), AT],
    });
    expect(fourth.has('AIGOV-015')).toBe(false);
  });

  it('AIGOV-015 counts the entry itself when the caller left it out', () => {
    expect(
      fired({ prev: {}, next: { enabled: true }, recent: [keyMinus(50), keyMinus(10)] }).has('AIGOV-015'),
    ).toBe(true);
  });

  it('AIGOV-015 ignores entries after this one and before the window', () => {
    const older = Array.from({ length: 500 }, (_, i) => keyMinus(600 - i));
    const later = '2025-03-04T05:30:00.000000000Z';
    const recent = [...older, keyMinus(50), keyMinus(10), AT, later];
    expect(fired({ prev: {}, next: {}, recent }).get('AIGOV-015')?.context.details['burst']).toEqual({
      count: 3,
      window: '1h',
    });
  });

  it('AIGOV-015 counts at nanosecond precision at the window edge', () => {
    const edge = '2025-03-04T04:06:07.123456789Z';
    const justOut = '2025-03-04T04:06:07.123456788Z';
    expect(fired({ prev: {}, next: {}, recent: [edge, keyMinus(10), AT] }).has('AIGOV-015')).toBe(true);
    expect(fired({ prev: {}, next: {}, recent: [justOut, keyMinus(10), AT] }).has('AIGOV-015')).toBe(false);
  });
});

describe('disabled rules', () => {
  const allOff = parseRulePack(
    readDefault(),
    `rules:\n${pack.rules.map((r) => `  - { id: ${r.id}, enabled: false }`).join('\n')}\n`,
    'off.yaml',
  );

  it('a disabled rule never fires, whatever the entry', () => {
    const arbSnap = fc.record(
      {
        requireToolApproval: fc.boolean(),
        allowedClientTypes: fc.subarray([P, S, 'MCP_CLIENT_TYPE_ROBOT']),
        auditVerbosity: fc.constantFrom('AUDIT_VERBOSITY_MINIMAL', 'AUDIT_VERBOSITY_FULL', 'X'),
        enabled: fc.boolean(),
      },
      { requiredKeys: [] },
    );
    fc.assert(
      fc.property(
        fc.option(arbSnap),
        fc.option(arbSnap),
        fc.constantFrom('CHANGE_KIND_PUT', 'CHANGE_KIND_HARD_DELETE', 'CHANGE_KIND_NEW'),
        fc.constantFrom('ACTOR_KIND_SUPPORT', 'ACTOR_KIND_API'),
        (prev, next, changeKind, actorKind) => {
          const scenario: Scenario = {
            prev,
            next,
            entry: { changeKind, actorKind },
            annotations: [],
            recent: [keyMinus(2), keyMinus(1), AT],
          };
          expect(evaluateRules(allOff, ctx(scenario, allOff))).toEqual([]);
          expect(evaluateRules(pack, ctx(scenario)).length).toBeGreaterThan(0);
        },
      ),
    );
    expect(
      backfillDigest(allOff, { tenantId: TENANT, runId: 1, entriesStored: 5, perRuleCounts: {} }),
    ).toBeNull();
    expect(
      syncFailingAlert(allOff, {
        tenantId: TENANT,
        consecutiveFailures: 3,
        lastRunId: 1,
        lastErrorCode: null,
        lastErrorMessage: null,
      }),
    ).toBeNull();
  });

  it('disabling one rule leaves the others firing', () => {
    const p = parseRulePack(readDefault(), 'rules:\n  - id: AIGOV-002\n    enabled: false\n', 'o.yaml');
    const got = fired({ prev: { requireToolApproval: true }, next: {} }, p);
    expect(got.has('AIGOV-002')).toBe(false);
    expect(
      fired({ prev: { requireToolApproval: true }, next: {}, annotations: [] }, p).has('AIGOV-013'),
    ).toBe(true);
  });
});

describe('run-level rules', () => {
  it('AIGOV-016 summarises a backfill in one low alert keyed by run', () => {
    const draft = backfillDigest(pack, {
      tenantId: TENANT,
      runId: 7,
      entriesStored: 120,
      firstEntry: { entryId: 'a', createdAtText: '2024-01-01T00:00:00Z' },
      lastEntry: { entryId: 'b', createdAtText: '2025-03-01T00:00:00Z' },
      perRuleCounts: { 'AIGOV-013': 80, 'AIGOV-002': 1, 'AIGOV-003': 0 },
    });
    expect(draft).toMatchObject({
      ruleId: 'AIGOV-016',
      severity: 'low',
      entryId: null,
      dedupeKey: 'AIGOV-016:acme:run-7',
      title: 'Settings history backfilled',
    });
    expect(draft?.summary).toContain(
      'stored 120 history entries from 2024-01-01T00:00:00Z to 2025-03-01T00:00:00Z',
    );
    expect(draft?.summary).toContain('AIGOV-013 ×80, AIGOV-002 ×1');
    expect(draft?.context.details['perRuleCounts']).toEqual({ 'AIGOV-013': 80, 'AIGOV-002': 1 });
  });

  it('AIGOV-016 raises nothing when the backfill stored no entries', () => {
    expect(
      backfillDigest(pack, { tenantId: TENANT, runId: 7, entriesStored: 0, perRuleCounts: {} }),
    ).toBeNull();
  });

  it('AIGOV-017 fires at exactly three consecutive failures, keyed by the last run', () => {
    const input = {
      tenantId: TENANT,
      lastRunId: 12,
      lastErrorCode: 'AUTH_REJECTED',
      lastErrorMessage: 'token endpoint said 401',
    };
    expect(syncFailingAlert(pack, { ...input, consecutiveFailures: 2 })).toBeNull();
    const draft = syncFailingAlert(pack, { ...input, consecutiveFailures: 3 });
    expect(draft).toMatchObject({
      ruleId: 'AIGOV-017',
      severity: 'high',
      dedupeKey: 'AIGOV-017:acme:run-12',
      entryId: null,
    });
    expect(draft?.summary).toContain('AUTH_REJECTED: token endpoint said 401');
    expect(draft?.context.details).toMatchObject({ consecutiveFailures: 3, lastRunId: 12 });
    expect(syncFailingAlert(pack, { ...input, consecutiveFailures: 4 })).toBeNull();
  });

  it('run-level rules never fire per entry', () => {
    const ids = evaluateRules(pack, ctx({ prev: {}, next: { enabled: true }, annotations: [] })).map(
      (d) => d.ruleId,
    );
    expect(ids).not.toContain('AIGOV-016');
    expect(ids).not.toContain('AIGOV-017');
  });
});

function readDefault(): string {
  return readFileSync(defaultRulesPath(), 'utf8');
}
