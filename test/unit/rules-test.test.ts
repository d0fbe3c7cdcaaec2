/**
 * Rules as code (docs/design/alerts.md, "Rules as code", T1): every built-in rule ships a test that
 * fires and one that must not, and they pass; a rule whose condition is broken fails its tests, by
 * name, and `govtrail rules test` then exits 1 (JUnit with a failure element).
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { runCli } from '../../src/cli.js';
import { defaultRulesPath, loadRulePack } from '../../src/config/rule-pack.js';
import { parseRulePack } from '../../src/core/rules/pack-schema.js';
import { junitXml, rulesMissingTests, runRuleTests } from '../../src/core/rules/rule-tests.js';

const DEFAULT = readFileSync(defaultRulesPath(), 'utf8');

afterEach(() => {
  vi.restoreAllMocks();
});

async function cli(...args: string[]): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  vi.spyOn(process.stdout, 'write').mockImplementation((c: string | Uint8Array) => {
    out.push(String(c));
    return true;
  });
  vi.spyOn(process.stderr, 'write').mockImplementation((c: string | Uint8Array) => {
    err.push(String(c));
    return true;
  });
  const code = await runCli(['node', 'govtrail', ...args]);
  vi.restoreAllMocks();
  return { code, out: out.join(''), err: err.join('') };
}

function ruleFile(yaml: string): string {
  const file = path.join(mkdtempSync(path.join(tmpdir(), 'govtrail-rules-')), 'rules.yaml');
  writeFileSync(file, yaml);
  return file;
}

describe('the built-in pack', () => {
  it('every rule has a test that fires and one that must not', () => {
    expect(rulesMissingTests(loadRulePack())).toEqual([]);
  });

  it('every test passes', () => {
    const results = runRuleTests(loadRulePack());
    expect(results.length).toBeGreaterThanOrEqual(36);
    expect(results.filter((r) => !r.passed)).toEqual([]);
  });
});

describe('a broken rule', () => {
  const broken =
    'rules:\n  - id: AIGOV-002\n    condition:\n      field_changed: { field: require_tool_approval, from: [false] }\n';

  it('fails its tests, each named with what happened', () => {
    const failed = runRuleTests(parseRulePack(DEFAULT, broken)).filter((r) => !r.passed);
    expect(failed).toEqual([
      {
        ruleId: 'AIGOV-002',
        ruleName: 'tool-approval-disabled',
        test: 'approval turned off fires',
        passed: false,
        failure: 'expected an alert, but it did not fire',
      },
      {
        ruleId: 'AIGOV-002',
        ruleName: 'tool-approval-disabled',
        test: 'approval turned on does not',
        passed: false,
        failure: 'expected no alert, but it fired (high: Tool approval was turned off)',
      },
    ]);
  });

  it('a wrong severity fails', () => {
    const pack = parseRulePack(DEFAULT, 'rules:\n  - id: AIGOV-003\n    severity: low\n');
    expect(
      runRuleTests(pack)
        .filter((r) => !r.passed)
        .map((r) => r.failure),
    ).toEqual(['expected severity high, but it fired with low']);
  });

  it('govtrail rules test --format junit exits 1 and names the failing test; the built-in pack exits 0', async () => {
    const ok = await cli('rules', 'test', '--format', 'junit');
    expect(ok.code).toBe(0);
    expect(ok.out).toMatch(/<testsuites name="govtrail rules" tests="\d+" failures="0">/);

    const bad = await cli('rules', 'test', '--format', 'junit', '--rules', ruleFile(broken));
    expect(bad.code).toBe(1);
    expect(bad.out).toContain('failures="2"');
    expect(bad.out).toContain(
      '<testcase classname="AIGOV-002" name="approval turned off fires">\n      <failure message="expected an alert, but it did not fire"/>',
    );
    expect(bad.err).toContain(
      'AIGOV-002 "approval turned off fires" failed: expected an alert, but it did not fire',
    );
  });

  it('a user rule with its own tests is tested; an invalid test is exit 2 naming the key', async () => {
    const own = ruleFile(
      [
        'rules:',
        '  - id: ACME-1',
        '    name: verbosity-standard',
        '    version: 1',
        '    enabled: true',
        '    severity: medium',
        '    condition: { field_changed: { field: audit_verbosity, to: [AUDIT_VERBOSITY_STANDARD] } }',
        '    runbook: Check it.',
        '    tests:',
        '      - name: to STANDARD fires',
        '        before: { auditVerbosity: AUDIT_VERBOSITY_FULL }',
        '        after: { auditVerbosity: AUDIT_VERBOSITY_STANDARD }',
        '        expect: { fires: true, severity: medium }',
        '',
      ].join('\n'),
    );
    const r = await cli('rules', 'test', '--rules', own);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/ACME-1 +to STANDARD fires +ok/);
    const invalid = await cli(
      'rules',
      'test',
      '--rules',
      ruleFile('rules:\n  - id: AIGOV-002\n    tests: [{ name: x, expect: { fire: true } }]\n'),
    );
    expect(invalid.code).toBe(2);
    expect(invalid.err).toMatch(/rule AIGOV-002: tests\[0\]\.expect/);
  });

  it('junitXml escapes test names', () => {
    expect(
      junitXml([{ ruleId: 'R', ruleName: 'n', test: 'a <b> & "c"', passed: false, failure: 'x<y' }]),
    ).toContain('name="a &lt;b&gt; &amp; &quot;c&quot;">\n      <failure message="x&lt;y"/>');
  });
});
