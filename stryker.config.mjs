// Mutation testing of govtrail's pure core: `npm run mutate` (not part of `npm test` or CI).
// How to read the result, the before/after scores and the survivors judged equivalent:
// docs/testing.md.
import { tmpdir } from 'node:os';
import path from 'node:path';

/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  packageManager: 'npm',
  testRunner: 'vitest',
  vitest: {
    // Only the unit and property tests of the pure modules: no database, no sandbox servers.
    configFile: 'vitest.mutate.config.ts',
  },
  // The pure core (docs/design/style.md, "pure core, imperative shell"). A new pure module joins this list.
  mutate: ['src/core/**/*.ts', 'src/sync/served.ts'],
  coverageAnalysis: 'perTest',
  // No type checker. The project's TypeScript 7 has no JS compiler API, which both
  // @stryker-mutator/typescript-checker and Stryker's own tsconfig rewriting step call
  // (`ts.parseConfigFileTextToJson is not a function`). That step only runs when the file named
  // here exists, so it names a file that does not: the project's tsconfig needs no rewriting
  // anyway (no `extends` or `references` that leave the sandbox). Mutants that would not compile
  // are still caught: they fail at run time and count as killed, or are reported as survivors.
  checkers: [],
  tsconfigFile: 'tsconfig.stryker-does-not-exist.json',
  // Stryker copies the project into a sandbox; leave out what the tests never read.
  ignorePatterns: ['dist', 'bench', 'reports', 'coverage', 'test-artifacts', '.govtrail', 'docs'],
  // The sandbox (a copy of the project, biome.json included) lives outside the checkout: inside
  // it, `biome check .` would find a second root configuration and refuse to run for as long as
  // a mutation run lasts. (`.stryker-tmp/` stays in .gitignore for runs that override this.)
  tempDirName: path.join(tmpdir(), `govtrail-stryker-${process.pid}`),
  reporters: ['clear-text', 'html', 'json', 'progress'],
  clearTextReporter: { reportScoreTable: true, reportMutants: true, reportTests: false, logTests: false },
  htmlReporter: { fileName: 'reports/mutation/mutation.html' },
  jsonReporter: { fileName: 'reports/mutation/mutation.json' },
  // high: green in the table; low: red below it. break: the run exits non-zero below 85 %, so a
  // change that leaves the core's tests unable to notice a bug shows up as a failed `npm run mutate`.
  thresholds: { high: 90, low: 80, break: 85 },
  concurrency: 2,
  timeoutMS: 10_000,
};
