import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { defaultRulesPath, loadRulePack } from '../../src/config/rule-pack.js';
import { DEFAULT_RANKS, diffSnapshots } from '../../src/core/diff.js';
import { GovtrailError } from '../../src/core/errors.js';
import {
  evaluateRules,
  parseRulePack,
  type RuleContext,
  type RulePack,
  syncFailingAlert,
} from '../../src/core/rules/rules.js';
import type { WireSettings } from '../../src/core/wire.js';

const DEFAULT_YAML = readFileSync(defaultRulesPath(), 'utf8');
const AT = '2025-03-04T05:06:07.000000000Z';

function ctx(prev: WireSettings, next: WireSettings, pack: RulePack, recent: string[] = [AT]): RuleContext {
  return {
    tenantId: 't1',
    entry: {
      tenantId: 't1',
      entryId: 'E1',
      createdAtText: AT,
      createdAtKey: AT,
      createdAt: new Date(AT),
      changeKind: 'CHANGE_KIND_PUT',
      actorKind: 'ACTOR_KIND_API',
      actorUserId: null,
      syslogEventId: null,
      traceId: null,
      raw: {},
    },
    annotations: [
      {
        tenantId: 't1',
        entryId: 'E1',
        ordinal: 0,
        key: 'ticket',
        kind: 'ANNOTATION_KIND_TICKET',
        rawValue: 'SEC-1',
        displayValue: 'SEC-1',
        displayLabel: null,
        displayUrl: null,
      },
    ],
    snapshot: next,
    changes: diffSnapshots(prev, next, pack.ranks),
    recentEntryKeys: recent,
  };
}

/** The RULES_INVALID message of parsing `override`, or a failure when it parses. */
function errorOf(override: string, name = 'rules.yaml'): string {
  try {
    parseRulePack(DEFAULT_YAML, override, name);
  } catch (err) {
    expect(err).toBeInstanceOf(GovtrailError);
    expect((err as GovtrailError).code).toBe('RULES_INVALID');
    return (err as Error).message;
  }
  throw new Error('expected the override to be rejected');
}

const minutesBefore = (n: number) =>
  `${new Date(Date.parse(AT) - n * 60_000).toISOString().slice(0, 19)}.000000000Z`;

describe('the default rule pack', () => {
  const pack = loadRulePack();

  it('parses and has exactly the eighteen rules of docs/design/alerts.md, all enabled and complete', () => {
    expect(pack.rules.map((r) => r.id)).toEqual(
      Array.from({ length: 18 }, (_, i) => `AIGOV-${String(i + 1).padStart(3, '0')}`),
    );
    for (const r of pack.rules) {
      expect(r.enabled).toBe(true);
      expect(r.version).toBe(1);
      expect(r.runbook.length).toBeGreaterThan(20);
      expect(r.runbook).not.toContain('\n');
    }
  });

  it('matches the severities of the docs/design/alerts.md table', () => {
    expect(Object.fromEntries(pack.rules.map((r) => [r.id, r.severity]))).toEqual({
      'AIGOV-001': 'high',
      'AIGOV-002': 'high',
      'AIGOV-003': 'high',
      'AIGOV-004': 'medium',
      'AIGOV-005': 'high',
      'AIGOV-006': 'medium',
      'AIGOV-007': 'low',
      'AIGOV-008': 'medium',
      'AIGOV-009': 'medium',
      'AIGOV-010': 'medium',
      'AIGOV-011': 'medium',
      'AIGOV-012': 'high',
      'AIGOV-013': 'low',
      'AIGOV-014': 'low',
      'AIGOV-015': 'low',
      'AIGOV-016': 'low',
      'AIGOV-017': 'high',
      'AIGOV-018': 'high',
    });
  });

  it('ships the ranks of docs/design/alerts.md', () => {
    expect(pack.ranks).toEqual(DEFAULT_RANKS);
  });

  it('is found from the package root', () => {
    expect(path.relative(process.cwd(), defaultRulesPath())).toBe(path.join('rules', 'default-rules.yaml'));
  });

  it('is frozen, so no caller can change it for the others', () => {
    expect(Object.isFrozen(pack.rules)).toBe(true);
  });
});

describe('override files', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'govtrail-rules-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('an empty override changes nothing', () => {
    expect(parseRulePack(DEFAULT_YAML, '# nothing\n', 'o.yaml')).toEqual(parseRulePack(DEFAULT_YAML));
  });

  it('disables a rule', () => {
    const pack = parseRulePack(DEFAULT_YAML, 'rules:\n  - { id: AIGOV-013, enabled: false }\n', 'o.yaml');
    expect(pack.rules).toHaveLength(18);
    expect(pack.rules.find((r) => r.id === 'AIGOV-013')?.enabled).toBe(false);
    expect(pack.rules.find((r) => r.id === 'AIGOV-013')?.runbook).toContain('ticket');
  });

  it('changes a severity, and the alert carries it', () => {
    const pack = parseRulePack(DEFAULT_YAML, 'rules:\n  - id: AIGOV-007\n    severity: critical\n', 'o.yaml');
    const drafts = evaluateRules(pack, ctx({}, { surfaceRequestableTools: true }, pack));
    expect(drafts.find((d) => d.ruleId === 'AIGOV-007')?.severity).toBe('critical');
  });

  it('re-parameterises the burst rule by restating its condition', () => {
    const pack = parseRulePack(
      DEFAULT_YAML,
      'rules:\n  - id: AIGOV-015\n    condition: { entries_in_window: { count: 5, window: 2h } }\n',
      'o.yaml',
    );
    const three = [minutesBefore(90), minutesBefore(10), AT];
    const five = [minutesBefore(110), minutesBefore(100), minutesBefore(90), minutesBefore(10), AT];
    const fires = (recent: string[]) =>
      evaluateRules(pack, ctx({}, { enabled: true }, pack, recent)).some((d) => d.ruleId === 'AIGOV-015');
    expect(fires(three)).toBe(false);
    expect(fires(five)).toBe(true);
  });

  it('re-parameterises the sync-failing threshold', () => {
    const pack = parseRulePack(
      DEFAULT_YAML,
      'rules:\n  - id: AIGOV-017\n    condition: { consecutive_failed_runs: 5 }\n',
      'o.yaml',
    );
    const input = { tenantId: 't1', lastRunId: 9, lastErrorCode: 'NETWORK', lastErrorMessage: 'reset' };
    expect(syncFailingAlert(pack, { ...input, consecutiveFailures: 3 })).toBeNull();
    expect(syncFailingAlert(pack, { ...input, consecutiveFailures: 5 })?.ruleId).toBe('AIGOV-017');
  });

  it('adds a rule built from the same conditions', () => {
    const pack = parseRulePack(
      DEFAULT_YAML,
      [
        'rules:',
        '  - id: ACME-001',
        '    name: judge-disabled',
        '    version: 1',
        '    enabled: true',
        '    severity: critical',
        '    title: The untrusted-content judge was turned off',
        '    condition:',
        '      all_of:',
        '        - field_changed: { field: extra_fields.untrustedJudgeDisable, direction: [loosened] }',
        '        - not: { actor_kind_in: [ACTOR_KIND_WORKFLOW] }',
        '    runbook: Turn the judge back on unless security approved this.',
        '',
      ].join('\n'),
      'acme.yaml',
    );
    expect(pack.rules).toHaveLength(19);
    const draft = evaluateRules(pack, ctx({}, { untrustedJudgeDisable: true }, pack)).find(
      (d) => d.ruleId === 'ACME-001',
    );
    expect(draft).toMatchObject({
      severity: 'critical',
      title: 'The untrusted-content judge was turned off',
    });
    expect(draft?.context.changes.map((c) => c.field)).toEqual(['extra_fields.untrustedJudgeDisable']);
  });

  it('replace: true keeps only the override rules', () => {
    const pack = parseRulePack(
      DEFAULT_YAML,
      'replace: true\nrules:\n  - { id: X-1, name: support, version: 2, enabled: true, severity: low, condition: { actor_kind_in: [ACTOR_KIND_SUPPORT] }, runbook: Look. }\n',
      'o.yaml',
    );
    expect(pack.rules.map((r) => r.id)).toEqual(['X-1']);
    expect(pack.ranks).toEqual(DEFAULT_RANKS);
  });

  it('replaces the ranks it lists, and the diff follows them', () => {
    const pack = parseRulePack(
      DEFAULT_YAML,
      'ranks:\n  auditVerbosity: [AUDIT_VERBOSITY_FULL, AUDIT_VERBOSITY_STANDARD, AUDIT_VERBOSITY_MINIMAL]\n',
      'o.yaml',
    );
    expect(pack.ranks.defaultToolClassification).toEqual(DEFAULT_RANKS.defaultToolClassification);
    const c = ctx(
      { auditVerbosity: 'AUDIT_VERBOSITY_MINIMAL' },
      { auditVerbosity: 'AUDIT_VERBOSITY_FULL' },
      pack,
    );
    expect(c.changes[0]?.direction).toBe('loosened');
    expect(evaluateRules(pack, c).some((d) => d.ruleId === 'AIGOV-003')).toBe(true);
  });

  it('loads an override file from disk, naming it in errors', () => {
    const good = path.join(dir, 'good.yaml');
    writeFileSync(good, 'rules:\n  - { id: AIGOV-001, severity: critical }\n');
    expect(loadRulePack(good).rules.find((r) => r.id === 'AIGOV-001')?.severity).toBe('critical');
    const bad = path.join(dir, 'bad.yaml');
    writeFileSync(bad, 'rules:\n  - { id: AIGOV-001, sevrity: critical }\n');
    expect(() => loadRulePack(bad)).toThrow(`${bad}: rule AIGOV-001: unknown key "sevrity"`);
    expect(() => loadRulePack(path.join(dir, 'missing.yaml'))).toThrow(
      /missing\.yaml: cannot read the rule file/,
    );
  });
});

describe('override validation errors name the file, the rule and the key', () => {
  it.each([
    [
      'an unknown rule key',
      'rules:\n  - { id: AIGOV-003, severty: high }\n',
      'rules.yaml: rule AIGOV-003: unknown key "severty"',
    ],
    [
      'a bad severity',
      'rules:\n  - { id: AIGOV-003, severity: urgent }\n',
      'rules.yaml: rule AIGOV-003: severity: must be one of low, medium, high, critical (got "urgent")',
    ],
    [
      'an unknown field name',
      'rules:\n  - id: AIGOV-002\n    condition: { field_changed: { field: require_approval } }\n',
      'rules.yaml: rule AIGOV-002: condition.field_changed.field: unknown field "require_approval"',
    ],
    [
      'an unknown condition key',
      'rules:\n  - id: AIGOV-002\n    condition: { field_changd: { field: enabled } }\n',
      'rules.yaml: rule AIGOV-002: condition: unknown key "field_changd"',
    ],
    [
      'an unknown key deep in a condition',
      'rules:\n  - id: AIGOV-009\n    condition: { any_of: [ { field_changed: { field: enabled, dir: [loosened] } } ] }\n',
      'rules.yaml: rule AIGOV-009: condition.any_of[0].field_changed: unknown key "dir"',
    ],
    [
      'a bad direction',
      'rules:\n  - id: AIGOV-003\n    condition: { field_changed: { field: audit_verbosity, direction: [weaker] } }\n',
      'rules.yaml: rule AIGOV-003: condition.field_changed.direction[0]: must be one of loosened, tightened, changed (got "weaker")',
    ],
    [
      'two keys in one condition',
      'rules:\n  - id: AIGOV-012\n    condition: { actor_kind_in: [ACTOR_KIND_SUPPORT], change_kind_in: [CHANGE_KIND_PUT] }\n',
      'rules.yaml: rule AIGOV-012: condition: a condition has exactly one key, got change_kind_in, actor_kind_in',
    ],
    [
      'a bad window',
      'rules:\n  - id: AIGOV-015\n    condition: { entries_in_window: { count: 3, window: an hour } }\n',
      'rules.yaml: rule AIGOV-015: condition.entries_in_window.window: must be a duration',
    ],
    [
      'a run-level condition nested in any_of',
      'rules:\n  - id: AIGOV-015\n    condition: { any_of: [ { consecutive_failed_runs: 3 } ] }\n',
      'rules.yaml: rule AIGOV-015: condition.any_of[0]: consecutive_failed_runs is run-level',
    ],
    [
      'an incomplete new rule',
      'rules:\n  - { id: ACME-9, severity: low, enabled: true }\n',
      'rules.yaml: rule ACME-9: name: is required',
    ],
    [
      'a wrong type',
      'rules:\n  - { id: AIGOV-001, enabled: "yes" }\n',
      'rules.yaml: rule AIGOV-001: enabled: expected boolean, got "yes"',
    ],
    ['an unknown top-level key', 'rulez: []\n', 'rules.yaml: unknown key "rulez"'],
    [
      'a rule listed twice',
      'rules:\n  - { id: AIGOV-001, enabled: false }\n  - { id: AIGOV-001 }\n',
      'rules.yaml: rule AIGOV-001: id used twice',
    ],
    ['a rule without id', 'rules:\n  - { enabled: false }\n', 'rules.yaml: rules[0]: id: is required'],
    ['invalid YAML', 'rules: [\n', 'rules.yaml: not valid YAML'],
  ])('%s', (_what, override, message) => {
    expect(errorOf(override)).toContain(message);
  });

  it('names the shipped file for a problem in it', () => {
    expect(() => parseRulePack(DEFAULT_YAML.replace('severity: low', 'severity: lowish'))).toThrow(
      /^default-rules\.yaml: rule AIGOV-007: severity: must be one of/,
    );
  });
});
