/**
 * The deliberate bugs of `npm run mutate:invariants` must keep applying to the source as it moves:
 * a mutation whose text no longer matches would guard nothing. The mutation runs themselves are
 * slow and stay out of CI; this check is instant and runs on every CI run.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { MUTATIONS, patchProblems } from '../../scripts/invariant-mutations.js';

const ROOT = path.resolve(import.meta.dirname, '../..');

describe('the invariant mutation list', () => {
  it('has unique names and at least the mutations the test-strength issue asks for', () => {
    const names = MUTATIONS.map((m) => m.name);
    expect(new Set(names).size).toBe(names.length);
    for (const required of [
      'lookback-ignored',
      'checkpoint-last-seen',
      'duplicates-kept',
      'no-advisory-lock',
      'checkpoint-outside-transaction',
      'alerts-after-commit',
      'repeated-token-undetected',
      '401-not-refreshed',
      'delete-recreate-blind',
      'reserved-content-not-compared',
    ])
      expect(names).toContain(required);
  });

  it('cites the invariant each one breaks by its design name, not by an issue number', () => {
    const uncited = MUTATIONS.filter(
      (m) => !/\b[SCRLT]\d{1,2}\b|docs\/design\/[\w-]+\.md/.test(m.breaks) || /\bissue \d+/i.test(m.breaks),
    ).map((m) => m.name);
    expect(uncited).toEqual([]);
    // An invariant cited by its name (S1, C3, R2, L1, T1) is one the design documents define.
    const design = readdirSync(path.join(ROOT, 'docs/design'))
      .map((f) => readFileSync(path.join(ROOT, 'docs/design', f), 'utf8'))
      .join('\n');
    const undefinedNames = MUTATIONS.flatMap((m) => m.breaks.match(/\b[SCRLT]\d{1,2}\b/g) ?? []).filter(
      (name) => !new RegExp(`\\b${name}\\b`).test(design),
    );
    expect(undefinedNames).toEqual([]);
  });

  for (const m of MUTATIONS) {
    it(`${m.name} still applies to the source and names test files that exist`, () => {
      expect(patchProblems(ROOT, m)).toEqual([]);
      for (const t of m.tests) expect(existsSync(path.join(ROOT, t)), t).toBe(true);
    });
  }
});
