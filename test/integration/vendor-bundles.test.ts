/**
 * The built binary's vendored packages (scripts/bundle-vendor.mjs, src/runtime/vendor.ts): each
 * bundle exports every name its package exports, and a real `govtrail sync` run with the bundles
 * loads them and never the installed packages, and stores what the source serves. And the build's
 * copy of the shipped rule pack (src/config/rule-pack.ts): the same pack, used only for its text.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { builtPackData, defaultRulesPath } from '../../src/config/rule-pack.js';
import { parseRulePack } from '../../src/core/rules/rules.js';
import { type Sandbox, startSandbox } from '../../src/sandbox/index.js';
import { HANG_MS, runNode } from '../helpers/cli-process.js';

const ROOT = new URL('../../', import.meta.url).pathname;
const HOOK = path.join(ROOT, 'test/helpers/log-module-loads.mjs');
const PACKAGES = ['kysely', 'zod', 'yaml'];

/** The names a module can import from `namespace` (as the bundler lists them). */
function importable(namespace: object): string[] {
  return Object.keys(namespace)
    .filter((n) => n !== '__esModule' && /^[A-Za-z_$][\w$]*$/.test(n))
    .sort();
}

describe('vendored bundles', () => {
  const scratch = mkdtempSync(path.join(tmpdir(), 'govtrail-vendor-'));
  const vendor = path.join(scratch, 'vendor');
  let sandbox: Sandbox;

  beforeAll(async () => {
    const r = spawnSync(process.execPath, [path.join(ROOT, 'scripts/bundle-vendor.mjs'), vendor], {
      cwd: ROOT,
      encoding: 'utf8',
    });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    sandbox = await startSandbox({ entries: 40, seed: 11 });
  }, 60_000);
  afterAll(async () => {
    await sandbox?.close();
    rmSync(scratch, { recursive: true, force: true });
  });

  it.each(PACKAGES)('the bundle of %s exports every name the package does', async (name) => {
    const files = JSON.parse(readFileSync(path.join(vendor, 'vendor.json'), 'utf8')) as Record<
      string,
      string
    >;
    const bundle = (await import(path.join(vendor, files[name] as string))) as object;
    const installed = (await import(name)) as object;
    expect(importable(bundle)).toEqual(importable(installed));
    expect(importable(bundle).length).toBeGreaterThan(10);
  });

  it("the build's copy of the shipped rule pack makes the same pack as its YAML", () => {
    const text = readFileSync(defaultRulesPath(), 'utf8');
    const copy = builtPackData(text, path.join(vendor, 'default-rules.json'));
    expect(copy).toBeDefined();
    const pack = parseRulePack(copy ?? text);
    expect(pack).toEqual(parseRulePack(text));
    expect(pack.rules.length).toBeGreaterThan(10);
  });

  it('a copy made from another text is not used: the YAML is parsed', () => {
    const text = readFileSync(defaultRulesPath(), 'utf8');
    expect(builtPackData(`${text}\n# edited\n`, path.join(vendor, 'default-rules.json'))).toBeUndefined();
    expect(builtPackData(text, path.join(vendor, 'no-such-copy.json'))).toBeUndefined();
  });

  it(
    'a sync with the bundles loads them, not the installed packages, and stores every entry',
    async () => {
      const loads = path.join(scratch, 'loads.txt');
      const r = await runNode(
        ['--import', HOOK, '--import', 'tsx', 'test/helpers/vendored-cli.ts', vendor, 'sync'],
        {
          GOVTRAIL_TEST_LOADS_FILE: loads,
          GOVTRAIL_DATA_DIR: path.join(scratch, 'data'),
          GOVTRAIL_BASE_URL: sandbox.baseUrl,
          GOVTRAIL_CLIENT_ID: sandbox.credentials.secret.clientId,
          GOVTRAIL_CLIENT_SECRET: sandbox.credentials.secret.clientSecret,
          GOVTRAIL_TENANT: 'acme',
        },
      );
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toMatch(/acme\s+succeeded\s+40\s+40\s/);
      const urls = readFileSync(loads, 'utf8').split('\n');
      for (const name of PACKAGES) {
        expect(urls.some((u) => u.startsWith('file://') && u.endsWith(`/vendor/${name}.js`))).toBe(true);
        expect(urls.filter((u) => u.includes(`/node_modules/${name}/`))).toEqual([]);
      }
    },
    HANG_MS,
  );
});
