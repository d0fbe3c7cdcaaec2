/**
 * Which baseline judges a tenant: its own `baseline:` in GOVTRAIL_CONFIG, else its groups' (which
 * must agree), else GOVTRAIL_BASELINE; and reading a baseline file from disk.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { baselineFileFor, loadBaselineFile } from '../../src/config/baseline.js';
import { loadConfig } from '../../src/config/settings.js';
import { DEFAULT_RANKS } from '../../src/core/diff.js';
import { ConfigError, GovtrailError } from '../../src/core/errors.js';

describe('baseline resolution', () => {
  it("the tenant's own baseline wins, else its group's, else the global one", () => {
    const groups = [
      { group: 'eu', baseline: '/eu.yaml' },
      { group: 'all', baseline: undefined },
    ];
    expect(baselineFileFor('acme', '/own.yaml', groups, '/global.yaml')).toBe('/own.yaml');
    expect(baselineFileFor('acme', undefined, groups, '/global.yaml')).toBe('/eu.yaml');
    expect(baselineFileFor('acme', undefined, [], '/global.yaml')).toBe('/global.yaml');
    expect(baselineFileFor('acme', undefined, [], undefined)).toBeUndefined();
  });
  it('refuses groups that name different baselines for a tenant without its own', () => {
    const groups = [
      { group: 'eu', baseline: '/eu.yaml' },
      { group: 'us', baseline: '/us.yaml' },
    ];
    expect(() => baselineFileFor('acme', undefined, groups, undefined)).toThrow(ConfigError);
    expect(baselineFileFor('acme', '/own.yaml', groups, undefined)).toBe('/own.yaml');
  });
  it('reads GOVTRAIL_BASELINE and per-tenant baseline: of GOVTRAIL_CONFIG, relative to the file', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'govtrail-baseline-'));
    const file = path.join(dir, 'tenants.yaml');
    writeFileSync(
      file,
      `tenants:
  - name: acme
    base_url: http://127.0.0.1:1
    client_id: a
    client_secret: s
    baseline: policies/strict.yaml
  - name: beta
    base_url: http://127.0.0.1:1
    client_id: b
    client_secret: s
`,
    );
    const config = loadConfig(
      { GOVTRAIL_CONFIG: file, GOVTRAIL_BASELINE: 'global.yaml' },
      { dotenv: false, cwd: dir },
    );
    expect(config.baselinePath).toBe(path.join(dir, 'global.yaml'));
    expect(config.tenantBaselines).toEqual({ acme: path.join(dir, 'policies/strict.yaml') });
  });
  it('an unreadable baseline file is one line naming the file, with exit code 2', () => {
    const missing = path.join(tmpdir(), 'no-such-baseline.yaml');
    try {
      loadBaselineFile(missing, DEFAULT_RANKS);
      throw new Error('loaded');
    } catch (err) {
      expect(err).toBeInstanceOf(GovtrailError);
      expect((err as Error).message).toBe(`${missing}:1: cannot read the baseline file (ENOENT)`);
    }
  });
});
