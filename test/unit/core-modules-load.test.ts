/**
 * The pure core builds tables, schemas and regular expressions when it is imported (the rule
 * file schema, the snapshot field table, the default ranks). A module that throws while loading
 * fails every test file that imports it before any test runs; this test fails instead, by name.
 * (Literal import paths, so that vitest's `related` module graph links each module to this file.)
 */
import { describe, expect, it } from 'vitest';

const MODULES: ReadonlyArray<readonly [string, () => Promise<unknown>]> = [
  ['normalise/canonical', () => import('../../src/core/normalise/canonical.js')],
  ['normalise/duration', () => import('../../src/core/normalise/duration.js')],
  ['normalise/entry', () => import('../../src/core/normalise/entry.js')],
  ['normalise/fields', () => import('../../src/core/normalise/fields.js')],
  ['normalise/ksuid', () => import('../../src/core/normalise/ksuid.js')],
  ['normalise/time', () => import('../../src/core/normalise/time.js')],
  ['changes/diff', () => import('../../src/core/diff.js')],
  ['alerts/rule-schema', () => import('../../src/core/rules/pack-schema.js')],
  ['alerts/rules', () => import('../../src/core/rules/rules.js')],
  ['tenant-api/backoff', () => import('../../src/core/backoff.js')],
  ['sync/stop-rule', () => import('../../src/core/stop-rule.js')],
  ['sync/served', () => import('../../src/sync/served.js')],
  ['alert', () => import('../../src/core/alert.js')],
  ['cron', () => import('../../src/core/cron.js')],
  ['errors', () => import('../../src/core/errors.js')],
  ['format', () => import('../../src/core/format.js')],
  ['pool', () => import('../../src/core/pool.js')],
  ['redact', () => import('../../src/core/redact.js')],
  ['routing', () => import('../../src/core/routing.js')],
  ['setting-values', () => import('../../src/core/setting-values.js')],
  ['wire', () => import('../../src/core/wire.js')],
  ['yaml-error', () => import('../../src/core/yaml-error.js')],
  ['normalise/depth', () => import('../../src/core/normalise/depth.js')],
  ['normalise/types', () => import('../../src/core/normalise/types.js')],
  ['ocsf/constants', () => import('../../src/core/ocsf/constants.js')],
  ['ocsf/mapping', () => import('../../src/core/ocsf/mapping.js')],
  ['ocsf/index', () => import('../../src/core/ocsf/index.js')],
  ['ocsf/compliance', () => import('../../src/core/ocsf/compliance.js')],
  ['oscal/assessment-results', () => import('../../src/core/oscal/assessment-results.js')],
];

describe('the pure core', () => {
  it.each(MODULES)('%s loads without throwing', async (_name, load) => {
    await expect(load()).resolves.toBeTypeOf('object');
  });
});
