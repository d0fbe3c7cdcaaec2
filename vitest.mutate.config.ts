/**
 * The vitest project that `npm run mutate` (StrykerJS, stryker.config.mjs) runs against every
 * mutant: only the unit and property tests of the pure core. No global setup, so no PostgreSQL,
 * no testcontainers and no sandbox server — a mutant run costs milliseconds, not a database.
 * A test file that exercises a mutated module joins this list (docs/testing.md, "Habit").
 */

import { defineConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * Unit test files before property test files. Stryker stops a mutant's run at its first failing
 * test, and the property files take seconds each (thousands of generated cases), so a mutant that
 * a unit test kills should not wait for them; vitest's own order runs the slowest files first.
 */
class UnitTestsFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const slow = (f: TestSpecification): number => (f.moduleId.includes('/test/property/') ? 1 : 0);
    return (await super.sort(files)).sort((a, b) => slow(a) - slow(b));
  }
}

export default defineConfig({
  test: {
    include: [
      // every mutated module: it loads (catches a mutant that throws at import)
      'test/unit/core-modules-load.test.ts',
      // core/normalise/
      'test/unit/core-normalise-*.test.ts',
      'test/property/normalise.test.ts',
      'test/property/canonical.test.ts',
      'test/property/entry-key.test.ts',
      'test/property/time.test.ts',
      // core/diff.ts
      'test/unit/core-diff*.test.ts',
      // core/rules/ (and the backfill walk, which evaluates rules)
      'test/unit/core-rules*.test.ts',
      'test/unit/rules-test.test.ts',
      'test/unit/backfill-walk.test.ts',
      // core/backoff.ts
      'test/unit/source-backoff*.test.ts',
      // core/stop-rule.ts
      'test/unit/sync-stop-rule*.test.ts',
      // sync/served.ts
      'test/unit/sync-served.test.ts',
      // the rest of core/: OCSF mapping, redaction, routing, error table, settings values and
      // YAML errors (through the config tests), cron, bounded concurrency, display format
      'test/unit/ocsf-*.test.ts',
      'test/unit/redact.test.ts',
      'test/unit/core-routing.test.ts',
      'test/unit/alerts-payloads.test.ts',
      'test/unit/errors-readme.test.ts',
      'test/unit/config*.test.ts',
      'test/unit/alerts-config.test.ts',
      'test/unit/sync-fleet.test.ts',
      'test/unit/worker-slots.test.ts',
      'test/unit/client-types-shown.test.ts',
      // core/conformance/, core/oscal/, core/json-text.ts, core/id-filter.ts
      'test/unit/conformance-*.test.ts',
      'test/property/conformance-judge.test.ts',
      'test/unit/oscal-*.test.ts',
      'test/unit/json-text.test.ts',
      'test/property/json-text-differential.test.ts',
      'test/unit/id-filter.test.ts',
    ],
    sequence: { sequencer: UnitTestsFirst },
    testTimeout: 30_000,
    pool: 'forks',
  },
});
