/**
 * Rules as code (docs/design/alerts.md, "Rules as code"): the `tests:` of each rule, run against
 * the rule alone — an entry built from the test's settings before and after (or given whole),
 * diffed with the pack's ranks and evaluated exactly as a sync evaluates a stored entry; run-level
 * and discrepancy rules through their own functions. Pure: `govtrail rules test` prints the
 * results, as a table or JUnit XML.
 */
import type { AlertDraft } from '../alert.js';
import { diffSnapshots } from '../diff.js';
import { normaliseEntry } from '../normalise/entry.js';
import type { WireSettings } from '../wire.js';
import type { Rule, RulePack, RuleTestSpec, SourceDiscrepancyKind } from './pack-schema.js';
import { backfillDigest, discrepancyAlerts, evaluateRules, syncFailingAlert } from './rules.js';

/** The outcome of one test of one rule. */
export interface RuleTestResult {
  readonly ruleId: string;
  readonly ruleName: string;
  readonly test: string;
  readonly passed: boolean;
  /** What happened, when it is not what the test expects (or why the test could not run). */
  readonly failure?: string | undefined;
}

const TENANT = 'rules-test';
const AT = Date.parse('2025-01-06T12:00:00Z');

/** The wire entry of a test: given whole, or built from its fields. */
function wireEntry(t: RuleTestSpec, id: string, atMs: number): Record<string, unknown> {
  if (t.entry !== undefined) return t.entry as Record<string, unknown>;
  const hardDelete = t.after === null;
  return {
    metadata: {
      id,
      createdAt: new Date(atMs).toISOString(),
      changeKind: t.change_kind ?? (hardDelete ? 'CHANGE_KIND_HARD_DELETE' : 'CHANGE_KIND_PUT'),
      actor: { kind: t.actor_kind ?? 'ACTOR_KIND_API', userId: 'rules-test-user' },
      annotations: (t.annotations ?? []).map((kind, i) => ({
        kind,
        rawValue: `TEST-${i + 1}`,
        displayValue: `TEST-${i + 1}`,
      })),
    },
    ...(hardDelete ? {} : { snapshot: { ...(t.before ?? {}), ...(t.after ?? {}) } }),
  };
}

/** The drafts the rule raises for the test's situation. */
function raised(rule: Rule, pack: RulePack, t: RuleTestSpec): AlertDraft[] {
  // The rule alone, enabled: a test is about the rule's logic, whatever the pack switches on.
  const only: RulePack = { rules: [{ ...rule, enabled: true }], ranks: pack.ranks };
  if (rule.condition.backfill_digest !== undefined) {
    const d = backfillDigest(only, {
      tenantId: TENANT,
      runId: 1,
      entriesStored: t.run?.first_run_entries ?? 0,
      perRuleCounts: {},
    });
    return d === null ? [] : [d];
  }
  if (rule.condition.consecutive_failed_runs !== undefined) {
    const d = syncFailingAlert(only, {
      tenantId: TENANT,
      consecutiveFailures: t.run?.consecutive_failed_runs ?? 0,
      lastRunId: 1,
      lastErrorCode: 'NETWORK',
      lastErrorMessage: 'rules test',
    });
    return d === null ? [] : [d];
  }
  const normalised = normaliseEntry(TENANT, wireEntry(t, 'rules-test-entry', AT));
  if (!normalised.ok) throw new Error(`the test's entry is not valid: ${normalised.reason}`);
  const { entry, annotations, snapshotWire } = normalised.value;
  const before = t.before === undefined ? null : (t.before as WireSettings);
  // Entries of the tenant just before this one, a minute apart: what entries_in_window counts.
  const recentEntryKeys = [
    ...Array.from({ length: t.recent_entries ?? 0 }, (_, i) => {
      const r = normaliseEntry(
        TENANT,
        wireEntry({ ...t, entry: undefined }, `recent-${i}`, AT - (i + 1) * 60_000),
      );
      return r.ok ? r.value.entry.createdAtKey : '';
    }).reverse(),
    entry.createdAtKey,
  ];
  const ctx = {
    tenantId: TENANT,
    entry,
    annotations,
    snapshot: snapshotWire,
    changes: diffSnapshots(before, snapshotWire, pack.ranks),
    recentEntryKeys,
  };
  if (rule.condition.source_discrepancy !== undefined) {
    return discrepancyAlerts(only, {
      ...ctx,
      discrepancy: {
        kind: (t.discrepancy ?? 'changed_at_source') as SourceDiscrepancyKind,
        discrepancyId: 1,
        runId: 1,
        storedSha256: 'a'.repeat(64),
        sourceSha256: 'b'.repeat(64),
      },
    });
  }
  return evaluateRules(only, ctx);
}

/** Runs one test. */
export function runRuleTest(rule: Rule, pack: RulePack, t: RuleTestSpec): RuleTestResult {
  const base = { ruleId: rule.id, ruleName: rule.name, test: t.name };
  let drafts: AlertDraft[];
  try {
    drafts = raised(rule, pack, t);
  } catch (err) {
    return { ...base, passed: false, failure: err instanceof Error ? err.message : String(err) };
  }
  const fired = drafts[0];
  if (!t.expect.fires) {
    return fired === undefined
      ? { ...base, passed: true }
      : {
          ...base,
          passed: false,
          failure: `expected no alert, but it fired (${fired.severity}: ${fired.title})`,
        };
  }
  if (fired === undefined)
    return { ...base, passed: false, failure: 'expected an alert, but it did not fire' };
  if (t.expect.severity !== undefined && fired.severity !== t.expect.severity) {
    return {
      ...base,
      passed: false,
      failure: `expected severity ${t.expect.severity}, but it fired with ${fired.severity}`,
    };
  }
  return { ...base, passed: true };
}

/** Runs every test of every rule of the pack, in pack order. */
export function runRuleTests(pack: RulePack): RuleTestResult[] {
  return pack.rules.flatMap((rule) => (rule.tests ?? []).map((t) => runRuleTest(rule, pack, t)));
}

/** Rules that lack a test that fires or one that must not (every built-in rule has both). */
export function rulesMissingTests(pack: RulePack): Array<{ ruleId: string; missing: string }> {
  const out: Array<{ ruleId: string; missing: string }> = [];
  for (const r of pack.rules) {
    const tests = r.tests ?? [];
    if (!tests.some((t) => t.expect.fires)) out.push({ ruleId: r.id, missing: 'a test that fires' });
    if (!tests.some((t) => !t.expect.fires)) out.push({ ruleId: r.id, missing: 'a test that must not fire' });
  }
  return out;
}

const xml = (s: string) =>
  s
    .replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f]/g, '')
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;');

/** JUnit XML of the results: one testsuite per rule, one testcase per test, a failure element per failing one. */
export function junitXml(results: readonly RuleTestResult[]): string {
  const byRule = new Map<string, RuleTestResult[]>();
  for (const r of results) byRule.set(r.ruleId, [...(byRule.get(r.ruleId) ?? []), r]);
  const failures = results.filter((r) => !r.passed).length;
  const lines = [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="govtrail rules" tests="${results.length}" failures="${failures}">`,
  ];
  for (const [ruleId, rs] of byRule) {
    const f = rs.filter((r) => !r.passed).length;
    lines.push(
      `  <testsuite name="${xml(`${ruleId} ${rs[0]?.ruleName ?? ''}`)}" tests="${rs.length}" failures="${f}">`,
    );
    for (const r of rs) {
      const head = `    <testcase classname="${xml(ruleId)}" name="${xml(r.test)}"`;
      if (r.passed) lines.push(`${head}/>`);
      else {
        lines.push(`${head}>`, `      <failure message="${xml(r.failure ?? 'failed')}"/>`, '    </testcase>');
      }
    }
    lines.push('  </testsuite>');
  }
  lines.push('</testsuites>');
  return `${lines.join('\n')}\n`;
}
