/**
 * Rule evaluation and the rule file format through the exported API (docs/design/alerts.md): what fires,
 * what an alert carries, and how a bad rule file is refused. Every pack is parsed inside a test,
 * so a rule pack that no longer parses fails these tests by name.
 */
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { defaultRulesPath, loadRulePack } from '../../src/config/rule-pack.js';
import { diffSnapshots } from '../../src/core/diff.js';
import { GovtrailError } from '../../src/core/errors.js';
import { normaliseEntry } from '../../src/core/normalise/entry.js';
import type { AnnotationRow, EntryRow } from '../../src/core/normalise/types.js';
import { compileCondition } from '../../src/core/rules/conditions.js';
import { parseWindowSeconds } from '../../src/core/rules/pack-schema.js';
import {
  backfillDigest,
  type DiscrepancyFacts,
  discrepancyAlerts,
  evaluateRules,
  firingRuleIds,
  parseRulePack,
  type RuleContext,
  type RulePack,
  syncFailingAlert,
  unrecognisedValues,
} from '../../src/core/rules/rules.js';
import type { WireSettings } from '../../src/core/wire.js';
import { startSandbox } from '../../src/sandbox/index.js';

const TENANT = 'acme';
const ENTRY_ID = '2vYJmWBbS0sLCn3sYc6l1jOQ2bX';
const AT = '2025-03-04T05:06:07.123456789Z';
const P = 'MCP_CLIENT_TYPE_PERSONAL';
const S = 'MCP_CLIENT_TYPE_SHARED';

function defaultYaml(): string {
  return readFileSync(defaultRulesPath(), 'utf8');
}

/** A pack of only the given rules (YAML list items), on the default ranks. */
function packOf(rules: string): RulePack {
  return parseRulePack(defaultYaml(), `replace: true\nrules:\n${rules}`, 'test.yaml');
}

/** One complete rule as a YAML list item; `body` adds keys (condition, title, …) at rule level. */
function rule(id: string, body: string, name = 'custom-rule'): string {
  return [
    `  - id: ${id}`,
    `    name: ${name}`,
    '    version: 2',
    '    enabled: true',
    '    severity: medium',
    '    runbook: Look at the change and ask its actor why.',
    ...body.split('\n').map((l) => `    ${l}`),
  ].join('\n');
}

function annotation(
  kind: string,
  displayValue: string | null,
  rawValue: string | null,
  ordinal = 0,
): AnnotationRow {
  return {
    tenantId: TENANT,
    entryId: ENTRY_ID,
    ordinal,
    key: 'k',
    kind,
    rawValue,
    displayValue,
    displayLabel: null,
    displayUrl: null,
  };
}

interface Scenario {
  prev?: WireSettings | null;
  next?: WireSettings | null;
  entry?: Partial<EntryRow>;
  annotations?: AnnotationRow[];
  recent?: string[];
}

function ctx(s: Scenario, pack: RulePack): RuleContext {
  const next = s.next === undefined ? {} : s.next;
  return {
    tenantId: TENANT,
    entry: {
      tenantId: TENANT,
      entryId: ENTRY_ID,
      createdAtText: AT,
      createdAtKey: AT,
      createdAt: new Date('2025-03-04T05:06:07.123Z'),
      changeKind: 'CHANGE_KIND_PUT',
      actorKind: 'ACTOR_KIND_API',
      actorUserId: '2vYJmQ0pXgV7Ik8iKc0uXhKxA9P',
      syslogEventId: null,
      traceId: null,
      raw: {},
      ...s.entry,
    },
    annotations: s.annotations ?? [annotation('ANNOTATION_KIND_TICKET', 'SEC-1', 'SEC-1')],
    snapshot: next,
    changes: diffSnapshots(s.prev === undefined ? {} : s.prev, next, pack.ranks),
    recentEntryKeys: s.recent ?? [AT],
  };
}

function facts(kind: DiscrepancyFacts['kind']): DiscrepancyFacts {
  return { kind, discrepancyId: 1, runId: 2, storedSha256: 'aa'.repeat(32), sourceSha256: 'bb'.repeat(32) };
}

/** The RULES_INVALID message of parsing an override, or a failure when it parses. */
function refusal(override: string, name?: string): string {
  try {
    if (name === undefined) parseRulePack(defaultYaml(), override);
    else parseRulePack(defaultYaml(), override, name);
  } catch (err) {
    expect(err).toBeInstanceOf(GovtrailError);
    expect((err as GovtrailError).code).toBe('RULES_INVALID');
    return (err as Error).message;
  }
  throw new Error('the override was accepted');
}

describe('loading the shipped pack', () => {
  it('loadRulePack parses the shipped file, the same as parseRulePack of its text', () => {
    const pack = loadRulePack();
    expect(pack.rules.length).toBeGreaterThanOrEqual(18);
    expect(pack).toEqual(parseRulePack(defaultYaml()));
    expect(defaultRulesPath().endsWith(path.join('rules', 'default-rules.yaml'))).toBe(true);
  });

  it('loads an override file by path, and names an unreadable one with the reason', () => {
    const missing = path.join(tmpdir(), 'govtrail-no-such-rules-file.yaml');
    let caught: unknown;
    try {
      loadRulePack(missing);
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(GovtrailError);
    expect((caught as GovtrailError).code).toBe('RULES_INVALID');
    expect((caught as Error).message).toMatch(
      new RegExp(`^${missing.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: cannot read the rule file: ENOENT`),
    );
    expect(((caught as Error).cause as NodeJS.ErrnoException).code).toBe('ENOENT');
  });
});

describe('which rules an entry fires', () => {
  it('firingRuleIds names the enabled per-entry rules that fire, in pack order, as evaluateRules raises them', () => {
    const pack = loadRulePack();
    const scenarios: Scenario[] = [
      { prev: { requireToolApproval: true }, next: null, entry: { changeKind: 'CHANGE_KIND_HARD_DELETE' } },
      { prev: {}, next: { enabled: true }, entry: { actorKind: 'ACTOR_KIND_SUPPORT' }, annotations: [] },
      { prev: { enabled: true }, next: { enabled: true } },
    ];
    const ids = scenarios.map((s) => firingRuleIds(pack, ctx(s, pack)));
    expect(ids).toEqual([['AIGOV-001'], ['AIGOV-011', 'AIGOV-012', 'AIGOV-013'], []]);
    for (const [i, s] of scenarios.entries()) {
      expect(evaluateRules(pack, ctx(s, pack)).map((d) => d.ruleId)).toEqual(ids[i]);
    }
  });

  it('leaves out disabled rules, run-level rules and rules about findings', () => {
    const pack = packOf(
      [
        rule('ON', 'condition: { change_kind_in: [CHANGE_KIND_PUT] }'),
        rule('OFF', 'condition: { change_kind_in: [CHANGE_KIND_PUT] }').replace(
          'enabled: true',
          'enabled: false',
        ),
        rule('RUN', 'condition: { consecutive_failed_runs: 3 }'),
        rule(
          'FOUND',
          'condition: { any_of: [ { change_kind_in: [CHANGE_KIND_PUT] }, { source_discrepancy: { kinds: [backdated] } } ] }',
        ),
      ].join('\n'),
    );
    const c = { ...ctx({}, pack), discrepancy: facts('backdated') };
    expect(firingRuleIds(pack, c)).toEqual(['ON']);
    expect(evaluateRules(pack, c).map((d) => d.ruleId)).toEqual(['ON']);
    expect(discrepancyAlerts(pack, c).map((d) => d.ruleId)).toEqual(['FOUND']);
  });
});

describe('firingRuleIds and evaluateRules agree', () => {
  it('on every entry of a sandbox history, with the default pack and with nested conditions', async () => {
    const nested = packOf(
      [
        rule(
          'N1',
          'condition: { not: { any_of: [ { field_changed: { direction: [loosened] } }, { unrecognised_values: true } ] } }',
        ),
        rule(
          'N2',
          'condition: { all_of: [ { entries_in_window: { count: 2, window: 1h } }, { not: { actor_kind_in: [ACTOR_KIND_API] } } ] }',
        ),
        rule(
          'N3',
          'condition: { any_of: [ { annotation_missing: { kind: ANNOTATION_KIND_REASON } }, { field_changed: { to: [[]] } } ] }',
        ),
        rule(
          'N4',
          'condition: { all_of: [ { field_changed: { field: audit_verbosity } }, { field_changed: { from: [AUDIT_VERBOSITY_FULL] } } ] }',
        ),
      ].join('\n'),
    );
    const sb = await startSandbox({ entries: 1500, seed: 3 });
    const entries = [...sb.history.jsonLines()].reverse().map((t) => {
      const n = normaliseEntry(TENANT, JSON.parse(t));
      if (!n.ok) throw new Error(n.reason);
      return n.value;
    });
    await sb.close();
    const packs = [loadRulePack(), nested];
    const fired = new Map<string, number>();
    let prev: WireSettings | null = null;
    const keys: string[] = [];
    for (const e of entries) {
      keys.push(e.entry.createdAtKey);
      const c: RuleContext = {
        tenantId: TENANT,
        entry: e.entry,
        annotations: e.annotations,
        snapshot: e.snapshotWire,
        changes: diffSnapshots(prev, e.snapshotWire),
        recentEntryKeys: keys,
      };
      for (const pack of packs) {
        const ids = firingRuleIds(pack, c);
        expect(evaluateRules(pack, c).map((d) => d.ruleId)).toEqual(ids);
        for (const id of ids) fired.set(id, (fired.get(id) ?? 0) + 1);
      }
      if (e.snapshotWire !== null) prev = e.snapshotWire;
    }
    // The nested rules each fired on some entries and not on others.
    for (const id of ['N1', 'N2', 'N3', 'N4'])
      expect(fired.get(id)).toSatisfy((n) => n > 0 && n < entries.length);
  });
});

describe('rule conditions', () => {
  it('all_of scopes the alert to the field changes that matched, and keeps the details of every part', () => {
    const pack = packOf(
      rule(
        'BOTH',
        'condition: { all_of: [ { field_changed: { field: require_tool_approval } }, { unrecognised_values: true } ] }',
      ),
    );
    const [draft] = evaluateRules(
      pack,
      ctx(
        {
          prev: { requireToolApproval: true },
          next: { enabled: true },
          entry: { changeKind: 'CHANGE_KIND_RESTORE' },
        },
        pack,
      ),
    );
    expect(draft?.context.changes.map((c) => c.field)).toEqual(['require_tool_approval']);
    expect(draft?.context.allChanges.map((c) => c.field)).toEqual(['enabled', 'require_tool_approval']);
    expect(draft?.context.details).toEqual({
      unrecognised: [{ where: 'changeKind', value: 'CHANGE_KIND_RESTORE' }],
    });
  });

  it('to: matches when the new value is any one of the listed values', () => {
    const pack = packOf(
      rule(
        'VERB',
        'condition: { field_changed: { field: audit_verbosity, to: [AUDIT_VERBOSITY_MINIMAL, AUDIT_VERBOSITY_STANDARD] } }',
      ),
    );
    const fires = (to: string) =>
      firingRuleIds(
        pack,
        ctx({ prev: { auditVerbosity: 'AUDIT_VERBOSITY_FULL' }, next: { auditVerbosity: to } }, pack),
      );
    expect(fires('AUDIT_VERBOSITY_STANDARD')).toEqual(['VERB']);
    expect(fires('AUDIT_VERBOSITY_MINIMAL')).toEqual(['VERB']);
    expect(fires('AUDIT_VERBOSITY_FULL')).toEqual([]);
  });

  it('from: [null] matches an unset value and an explicit UNSPECIFIED alike', () => {
    const pack = packOf(
      rule('WAS-UNSET', 'condition: { field_changed: { field: audit_verbosity, from: [null] } }'),
    );
    const fires = (prev: WireSettings) =>
      firingRuleIds(pack, ctx({ prev, next: { auditVerbosity: 'AUDIT_VERBOSITY_FULL' } }, pack));
    expect(fires({})).toEqual(['WAS-UNSET']);
    expect(fires({ auditVerbosity: 'AUDIT_VERBOSITY_UNSPECIFIED' })).toEqual(['WAS-UNSET']);
    expect(fires({ auditVerbosity: 'AUDIT_VERBOSITY_MINIMAL' })).toEqual([]);
  });

  it('from: [null] on any field does not match a value of another type', () => {
    const pack = packOf(rule('WAS-UNSET', 'condition: { field_changed: { from: [null] } }'));
    const c = ctx({ prev: { requireToolApproval: true, allowedClientTypes: [P] }, next: {} }, pack);
    expect(firingRuleIds(pack, c)).toEqual([]);
  });

  it('compares lists as sets: order and repeats do not matter, and only lists match a list', () => {
    const pack = packOf(
      rule(
        'PS',
        'condition: { field_changed: { to: [[MCP_CLIENT_TYPE_SHARED, MCP_CLIENT_TYPE_PERSONAL]] } }',
      ),
    );
    const fires = (next: WireSettings) =>
      firingRuleIds(pack, ctx({ prev: { requireToolApproval: true }, next }, pack));
    expect(fires({ allowedClientTypes: [P, S] })).toEqual(['PS']);
    expect(fires({ allowedClientTypes: [P, S, P] })).toEqual(['PS']);
    expect(fires({ allowedClientTypes: [P] })).toEqual([]);
    expect(fires({ requireToolApproval: true, allowedClientTypes: [S] })).toEqual([]);
  });

  it('compares durations by seconds, and a duration never matches a value that is not one', () => {
    const pack = packOf(rule('MINUTE', 'condition: { field_changed: { from: [60s] } }'));
    const fires = (prev: WireSettings, next: WireSettings) => firingRuleIds(pack, ctx({ prev, next }, pack));
    expect(fires({ discoveryInterval: '60.000s' }, { discoveryInterval: '120s' })).toEqual(['MINUTE']);
    expect(fires({ discoveryInterval: '61s' }, { discoveryInterval: '120s' })).toEqual([]);
    expect(fires({ requireToolApproval: true }, {})).toEqual([]);
    const wasTrue = packOf(rule('WAS-TRUE', 'condition: { field_changed: { from: [true] } }'));
    const c = ctx({ prev: { discoveryInterval: '60s' }, next: { discoveryInterval: '120s' } }, wasTrue);
    expect(firingRuleIds(wasTrue, c)).toEqual([]);
  });
});

describe('entries_in_window (AIGOV-015 and rules like it)', () => {
  const minus = (minutes: number) =>
    `${new Date(Date.parse('2025-03-04T05:06:07Z') - minutes * 60_000).toISOString().slice(0, 19)}.123456789Z`;

  it('counts another entry at the very same instant as this one', () => {
    const pack = loadRulePack();
    const c = ctx({ next: { enabled: true }, recent: [minus(30), AT, AT] }, pack);
    expect(firingRuleIds(pack, c)).toContain('AIGOV-015');
  });

  it('counts only keys in the nine-digit UTC form', () => {
    const pack = loadRulePack();
    const c = ctx({ next: { enabled: true }, recent: ['2025-03-04T05:06:00Z', minus(10), AT] }, pack);
    expect(firingRuleIds(pack, c)).not.toContain('AIGOV-015');
  });

  it('counts an entry whose own key is malformed as alone, without failing', () => {
    const pack = loadRulePack();
    for (const own of [`x${AT}`, `${AT}x`, '']) {
      const recent = [`${minus(20)}x`, `${minus(10)}x`, own];
      const c = ctx({ next: { enabled: true }, entry: { createdAtKey: own }, recent }, pack);
      expect(firingRuleIds(pack, c), own).not.toContain('AIGOV-015');
    }
  });
});

describe('alert content', () => {
  it('ticket values prefer the display value and fall back on the raw value; empty reasons are left out', () => {
    const pack = loadRulePack();
    const [draft] = evaluateRules(
      pack,
      ctx(
        {
          prev: { requireToolApproval: true },
          next: { requireToolApproval: false },
          annotations: [
            annotation('ANNOTATION_KIND_TICKET', 'SEC 1', 'SEC-1', 0),
            annotation('ANNOTATION_KIND_TICKET', '', 'SEC-2', 1),
            annotation('ANNOTATION_KIND_TICKET', null, null, 2),
            annotation('ANNOTATION_KIND_REASON', 'audit finding', 'audit', 3),
            annotation('ANNOTATION_KIND_REASON', null, 'raw reason', 4),
            annotation('ANNOTATION_KIND_REASON', '', '', 5),
          ],
        },
        pack,
      ),
    );
    expect(draft?.context.tickets).toEqual([
      { value: 'SEC 1', url: null },
      { value: 'SEC-2', url: null },
      { value: null, url: null },
    ]);
    expect(draft?.context.reasons).toEqual(['audit finding', 'raw reason']);
    expect(draft?.summary).toBe(
      'requireToolApproval: true → false. PUT by API user 2vYJmQ0pXgV7Ik8iKc0uXhKxA9P at 2025-03-04T05:06:07.123456789Z, ticket SEC 1, SEC-2, ?.',
    );
  });

  it('says "Change", "an unknown actor" and "no ticket" when the entry does not say', () => {
    const pack = packOf(rule('ANY', 'condition: { not: { change_kind_in: [CHANGE_KIND_PUT] } }'));
    const [draft] = evaluateRules(
      pack,
      ctx({ entry: { changeKind: null, actorKind: null, actorUserId: null }, annotations: [] }, pack),
    );
    expect(draft?.summary).toBe('Change by an unknown actor at 2025-03-04T05:06:07.123456789Z, no ticket.');
  });

  it('lists at most ten changes in the summary and counts the rest', () => {
    const pack = packOf(rule('ANY-FIELD', 'condition: { field_changed: {} }'));
    const prev = Object.fromEntries(
      Array.from({ length: 12 }, (_, i) => [`knob${String(i).padStart(2, '0')}`, 0]),
    );
    const next = Object.fromEntries(
      Array.from({ length: 12 }, (_, i) => [`knob${String(i).padStart(2, '0')}`, 1]),
    );
    const [draft] = evaluateRules(pack, ctx({ prev, next }, pack));
    expect(draft?.context.changes).toHaveLength(12);
    const listed = Array.from({ length: 10 }, (_, i) => `knob${String(i).padStart(2, '0')}: 0 → 1`).join(
      '; ',
    );
    expect(draft?.summary).toBe(
      `${listed}; and 2 more. PUT by API user 2vYJmQ0pXgV7Ik8iKc0uXhKxA9P at 2025-03-04T05:06:07.123456789Z, ticket SEC-1.`,
    );
  });

  it('names every unrecognised value in the summary', () => {
    const pack = loadRulePack();
    const draft = evaluateRules(
      pack,
      ctx({ entry: { changeKind: 'CHANGE_KIND_RESTORE', actorKind: 'ACTOR_KIND_ROBOT' } }, pack),
    ).find((d) => d.ruleId === 'AIGOV-014');
    expect(draft?.summary).toBe(
      'RESTORE by ROBOT user 2vYJmQ0pXgV7Ik8iKc0uXhKxA9P at 2025-03-04T05:06:07.123456789Z, ticket SEC-1. Unrecognised: changeKind "CHANGE_KIND_RESTORE", actor.kind "ACTOR_KIND_ROBOT".',
    );
  });

  it('titles an alert from the rule name when the rule has no title', () => {
    const pack = packOf(
      rule('NAMED', 'condition: { change_kind_in: [CHANGE_KIND_PUT] }', 'code_mode--switched-on_'),
    );
    expect(evaluateRules(pack, ctx({}, pack))[0]?.title).toBe('Code mode switched on');
  });

  it('opens the summary of a finding with a sentence of its own for each kind', () => {
    const pack = packOf(
      rule(
        'FOUND',
        'condition: { source_discrepancy: { kinds: [changed_at_source, missing_at_source, expired_at_source, backdated] } }',
      ),
    );
    const base = ctx({}, pack);
    const kinds = ['changed_at_source', 'missing_at_source', 'expired_at_source', 'backdated'] as const;
    const summaries = kinds.map(
      (kind) => discrepancyAlerts(pack, { ...base, discrepancy: facts(kind) })[0]?.summary ?? '',
    );
    const plain =
      'PUT by API user 2vYJmQ0pXgV7Ik8iKc0uXhKxA9P at 2025-03-04T05:06:07.123456789Z, ticket SEC-1.';
    expect(new Set(summaries).size).toBe(4);
    for (const s of summaries) {
      expect(s.endsWith(` ${plain}`)).toBe(true);
      expect(s.length).toBeGreaterThan(plain.length + 20);
    }
  });
});

describe('unrecognisedValues', () => {
  it('does not count null or absent values as unknown', () => {
    const pack = loadRulePack();
    const c = ctx(
      {
        entry: { changeKind: null, actorKind: null },
        annotations: [{ ...annotation('ANNOTATION_KIND_TICKET', 'x', 'x'), kind: null }],
        next: { auditVerbosity: null, allowedClientTypes: null },
      },
      pack,
    );
    expect(unrecognisedValues(c)).toEqual([]);
  });
});

describe('run-level alerts', () => {
  const RUN_CONTEXT = {
    entryId: null,
    changeKind: null,
    actor: { kind: null, userId: null },
    tickets: [],
    reasons: [],
    changes: [],
    allChanges: [],
    syslogEventId: null,
    traceId: null,
  };

  it('a backfill digest fires from min_entries on, ranks the per-rule counts and leaves out zeros', () => {
    const pack = packOf(
      rule('DIGEST', 'condition: { backfill_digest: { min_entries: 3 } }', 'first-run-digest'),
    );
    const input = {
      tenantId: TENANT,
      runId: 9,
      entriesStored: 3,
      firstEntry: { entryId: 'E1', createdAtText: '2025-01-01T00:00:00Z' },
      lastEntry: { entryId: 'E3', createdAtText: '2025-03-01T00:00:00Z' },
      perRuleCounts: { 'AIGOV-013': 2, 'AIGOV-002': 2, 'AIGOV-015': 5, 'AIGOV-001': 0 },
    };
    expect(backfillDigest(pack, { ...input, entriesStored: 2 })).toBeNull();
    expect(backfillDigest(pack, input)).toEqual({
      ruleId: 'DIGEST',
      ruleVersion: 2,
      severity: 'medium',
      title: 'First run digest',
      summary:
        'The first run of tenant acme stored 3 history entries from 2025-01-01T00:00:00Z to 2025-03-01T00:00:00Z. Per-entry rules would have raised: AIGOV-015 ×5, AIGOV-002 ×2, AIGOV-013 ×2.',
      entryId: null,
      dedupeKey: 'DIGEST:acme:run-9',
      context: {
        ...RUN_CONTEXT,
        tenantId: TENANT,
        changedAt: '2025-03-01T00:00:00Z',
        runbook: 'Look at the change and ask its actor why.',
        ruleName: 'first-run-digest',
        details: {
          runId: 9,
          entriesStored: 3,
          firstEntry: input.firstEntry,
          lastEntry: input.lastEntry,
          perRuleCounts: { 'AIGOV-015': 5, 'AIGOV-002': 2, 'AIGOV-013': 2 },
        },
      },
    });
  });

  it('a backfill digest without both ends of the span, or without counts, says so plainly', () => {
    const pack = packOf(rule('DIGEST', 'condition: { backfill_digest: { min_entries: 1 } }'));
    const draft = backfillDigest(pack, {
      tenantId: TENANT,
      runId: 'r1',
      entriesStored: 4,
      firstEntry: { entryId: 'E1', createdAtText: '2025-01-01T00:00:00Z' },
      perRuleCounts: {},
    });
    expect(draft?.summary).toBe(
      'The first run of tenant acme stored 4 history entries. Per-entry rules would have raised no alerts.',
    );
    expect(draft?.context.changedAt).toBeNull();
    const onlyLast = backfillDigest(pack, {
      tenantId: TENANT,
      runId: 'r1',
      entriesStored: 4,
      lastEntry: { entryId: 'E4', createdAtText: '2025-02-01T00:00:00Z' },
      perRuleCounts: { 'AIGOV-013': 0 },
    });
    expect(onlyLast?.summary).toBe(
      'The first run of tenant acme stored 4 history entries. Per-entry rules would have raised no alerts.',
    );
    expect(onlyLast?.context.changedAt).toBe('2025-02-01T00:00:00Z');
    expect(draft?.context.details).toEqual({
      runId: 'r1',
      entriesStored: 4,
      firstEntry: { entryId: 'E1', createdAtText: '2025-01-01T00:00:00Z' },
      lastEntry: null,
      perRuleCounts: {},
    });
  });

  it('sync failing quotes the last error, or says that none was recorded', () => {
    const pack = packOf(
      rule('FAILING', 'condition: { consecutive_failed_runs: 2 }\ntitle: Sync keeps failing'),
    );
    const input = { tenantId: TENANT, consecutiveFailures: 2, lastRunId: 41 };
    const summary = (lastErrorCode: string | null, lastErrorMessage: string | null) =>
      syncFailingAlert(pack, { ...input, lastErrorCode, lastErrorMessage })?.summary;
    const tail = 'Alerts for new changes are delayed until a run succeeds.';
    expect(summary('NETWORK', 'connection reset')).toBe(
      `The last 2 runs for tenant acme failed (last run 41: NETWORK: connection reset). ${tail}`,
    );
    expect(summary(null, 'boom')).toBe(
      `The last 2 runs for tenant acme failed (last run 41: error: boom). ${tail}`,
    );
    expect(summary('ABORTED', null)).toBe(
      `The last 2 runs for tenant acme failed (last run 41: ABORTED: ). ${tail}`,
    );
    expect(summary(null, null)).toBe(
      `The last 2 runs for tenant acme failed (last run 41: no error recorded). ${tail}`,
    );
    const draft = syncFailingAlert(pack, { ...input, lastErrorCode: 'NETWORK', lastErrorMessage: 'reset' });
    expect(draft?.title).toBe('Sync keeps failing');
    expect(draft?.context).toEqual({
      ...RUN_CONTEXT,
      tenantId: TENANT,
      changedAt: null,
      runbook: 'Look at the change and ask its actor why.',
      ruleName: 'custom-rule',
      details: { consecutiveFailures: 2, lastRunId: 41, lastErrorCode: 'NETWORK', lastErrorMessage: 'reset' },
    });
  });
});

describe('parseWindowSeconds', () => {
  it('reads windows made of whole numbers of s, m, h and d, in any combination', () => {
    expect(parseWindowSeconds('10s')).toBe(10);
    expect(parseWindowSeconds('90m')).toBe(5400);
    expect(parseWindowSeconds('1h30m')).toBe(5400);
    expect(parseWindowSeconds('2d')).toBe(172_800);
    expect(parseWindowSeconds('1d1h1m1s')).toBe(90_061);
  });

  it('refuses zero, text around the window, fractions and unknown units', () => {
    for (const w of ['0h', '0m0s', '', 'h', 'x1h', '1hx', '1.5h', '1w', '1 h', '-1h']) {
      expect(parseWindowSeconds(w), w).toBeUndefined();
    }
  });
});

describe('rule file validation names the file, the rule and the key', () => {
  const item = (extra: string) => `rules:\n${rule('X-1', extra)}\n`;

  it('a condition needs exactly one key', () => {
    expect(refusal(item('condition: {}'))).toBe(
      'override: rule X-1: condition: a condition needs one of: field_changed, change_kind_in, actor_kind_in, annotation_missing, unrecognised_values, source_discrepancy, entries_in_window, any_of, all_of, not, backfill_digest, consecutive_failed_runs',
    );
    expect(refusal(item('condition: { change_kind_in: [A], actor_kind_in: [B] }'))).toBe(
      'override: rule X-1: condition: a condition has exactly one key, got change_kind_in, actor_kind_in (combine them with all_of)',
    );
  });

  it('an unknown field lists the known ones', () => {
    expect(refusal(item('condition: { field_changed: { field: nope } }'))).toBe(
      'override: rule X-1: condition.field_changed.field: unknown field "nope" (known: allowed_client_types, audit_verbosity, auto_discovery_enabled, default_tool_classification, discovery_interval, inactivity_close_after, inactivity_hide_after, retention_delete_after, enabled, prefer_code_mode_over_direct_tools, require_tool_approval, surface_requestable_tools, or extra_fields.<wireName>)',
    );
  });

  it('a window must be a duration', () => {
    expect(refusal(item('condition: { entries_in_window: { count: 3, window: x1h } }'))).toBe(
      'override: rule X-1: condition.entries_in_window.window: must be a duration such as 1h, 30m, 1h30m or 2d',
    );
  });

  it('accepts any positive backfill threshold', () => {
    expect(
      packOf(rule('D', 'condition: { backfill_digest: { min_entries: 5 } }')).rules[0]?.condition,
    ).toEqual({
      backfill_digest: { min_entries: 5 },
    });
  });

  it('a rule id is letters, digits, ".", "_" or "-", starting with a letter or digit, at most 64 long', () => {
    const longest = `a${'b'.repeat(63)}`;
    expect(packOf(rule(longest, 'condition: { change_kind_in: [A] }')).rules[0]?.id).toBe(longest);
    for (const id of ['"bad id!"', '"-x"', '".x"', `${longest}c`]) {
      expect(refusal(`rules:\n  - { id: ${id} }\n`)).toMatch(
        /: id: must be letters, digits, "\.", "_" or "-"$/,
      );
    }
  });

  it('labels a rule without a usable id by its position', () => {
    expect(refusal('rules:\n  - null\n')).toBe('override: rules[0]: expected object, got null');
    expect(refusal('rules:\n  - { id: 7 }\n')).toBe('override: rules[0]: id: expected string, got 7');
    expect(refusal('rules:\n  - { id: "" }\n')).toBe(
      'override: rules[0]: id: must be letters, digits, ".", "_" or "-"',
    );
  });

  it("run-level conditions only as a rule's whole condition, and without severity overrides", () => {
    expect(refusal(item('condition: { not: { consecutive_failed_runs: 3 } }'))).toBe(
      "override: rule X-1: condition.not: consecutive_failed_runs is run-level and can only be a rule's whole condition",
    );
    expect(
      refusal(
        item('condition: { all_of: [ { change_kind_in: [A] }, { backfill_digest: { min_entries: 2 } } ] }'),
      ),
    ).toBe(
      "override: rule X-1: condition.all_of[1]: backfill_digest is run-level and can only be a rule's whole condition",
    );
    expect(
      refusal(
        item(
          'condition: { consecutive_failed_runs: 3 }\nseverity_overrides: [ { when: { change_kind_in: [A] }, severity: high } ]',
        ),
      ),
    ).toBe('override: rule X-1: severity_overrides: a run-level rule has no entry to test them against');
    expect(
      refusal(
        item(
          'condition: { change_kind_in: [A] }\nseverity_overrides: [ { when: { backfill_digest: { min_entries: 2 } }, severity: high } ]',
        ),
      ),
    ).toBe(
      "override: rule X-1: severity_overrides[0].when: backfill_digest is run-level and can only be a rule's whole condition",
    );
  });

  it('refuses YAML with a repeated key, with the reason and position and no excerpt of the file', () => {
    expect(refusal('rules: []\nrules: []\n', 'mine.yaml')).toBe(
      'mine.yaml: not valid YAML: Map keys must be unique at line 2, column 1',
    );
  });

  it('refuses a rank list that names a value twice', () => {
    expect(refusal('ranks:\n  auditVerbosity: [AUDIT_VERBOSITY_FULL, AUDIT_VERBOSITY_FULL]\n')).toBe(
      'override: ranks.auditVerbosity: lists a value twice',
    );
  });

  it('names one unknown key, or several', () => {
    expect(refusal('rulez: []\n')).toBe('override: unknown key "rulez"');
    expect(refusal('rulez: []\nfoo: 1\n')).toBe('override: unknown keys "rulez", "foo"');
  });

  it('refuses a shipped pack that uses an id twice', () => {
    const twice = defaultYaml().replace('id: AIGOV-002', 'id: AIGOV-001');
    expect(() => parseRulePack(twice)).toThrow('default-rules.yaml: rule AIGOV-001: id used twice');
  });
});

describe('a compiled source_discrepancy condition', () => {
  it('matches a discrepancy of a listed kind only, and never an entry without one', async () => {
    const pack = loadRulePack(defaultRulesPath());
    const test = compileCondition({ source_discrepancy: { kinds: ['backdated'] } });
    const base = ctx({}, pack);
    expect(test({ ...base, discrepancy: facts('backdated') })).toBe(true);
    expect(test({ ...base, discrepancy: facts('missing_at_source') })).toBe(false);
    expect(test(base)).toBe(false);
  });
});
