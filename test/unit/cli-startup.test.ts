/**
 * Offline commands load no database or HTTP client (issue 21): `govtrail --help`, every command's
 * `--help`, and `verify-pack` itself run as child processes that log every module they resolve,
 * and none of the database drivers, the query builder, the HTTP client or the mail transport may
 * be among them.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { COMMANDS } from '../../src/cli.js';
import { baseEnv } from '../helpers/cli-process.js';

const ROOT = new URL('../../', import.meta.url).pathname;
const HOOK = path.join(ROOT, 'test/helpers/log-module-loads.mjs');
const FORBIDDEN = ['kysely', 'pg', '@electric-sql/pglite', 'undici', 'nodemailer'];

const scratch = mkdtempSync(path.join(tmpdir(), 'govtrail-loads-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** The packages (node_modules/<name>) and the files of src/ a CLI run resolved, and its exit code. */
function packagesLoadedBy(args: readonly string[]): {
  code: number | null;
  packages: Set<string>;
  sources: string[];
} {
  const file = path.join(scratch, `${args.join('_').replace(/[^\w-]/g, '_')}.txt`);
  const r = spawnSync(process.execPath, ['--import', HOOK, '--import', 'tsx', 'src/main.ts', ...args], {
    cwd: ROOT,
    env: { ...baseEnv(), GOVTRAIL_TEST_LOADS_FILE: file, GOVTRAIL_DATA_DIR: path.join(scratch, 'data') },
    encoding: 'utf8',
    timeout: 60_000,
  });
  const packages = new Set<string>();
  const sources = new Set<string>();
  for (const url of readFileSync(file, 'utf8').split('\n')) {
    const m = /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url);
    // tsx and esbuild run the sources in the test; the installed build does without them.
    if (m?.[1] !== undefined && m[1] !== 'tsx' && m[1] !== 'esbuild') packages.add(m[1]);
    const src = /\/(src\/[^?]+)/.exec(url);
    if (src?.[1] !== undefined && m === null) sources.add(src[1]);
  }
  return { code: r.status, packages, sources: [...sources].sort() };
}

const forbiddenIn = (packages: Set<string>) => FORBIDDEN.filter((p) => packages.has(p));

describe('offline commands load no database or HTTP client', () => {
  it('govtrail --help loads no command module and none of them', () => {
    const r = packagesLoadedBy(['--help']);
    expect(r.code).toBe(0);
    expect(forbiddenIn(r.packages)).toEqual([]);
    expect([...r.packages]).toEqual(['commander']);
    expect(r.sources.filter((f) => f.startsWith('src/commands/'))).toEqual([
      'src/commands/exit.ts',
      'src/commands/options.ts',
    ]);
  }, 60_000);

  it.each(COMMANDS.map((c) => c.name))(
    'govtrail %s --help',
    (name) => {
      const r = packagesLoadedBy([name, '--help']);
      expect(r.code).toBe(0);
      expect(forbiddenIn(r.packages)).toEqual([]);
    },
    60_000,
  );

  it('govtrail verify-pack DIR (a directory that is no pack: exit 1)', () => {
    const r = packagesLoadedBy(['verify-pack', '--hashes-only', scratch]);
    expect(r.code).toBe(1);
    expect(forbiddenIn(r.packages)).toEqual([]);
  }, 60_000);

  it('the check sees a command that does load them (settings opens the store)', () => {
    const r = packagesLoadedBy(['settings']);
    expect(forbiddenIn(r.packages)).toContain('kysely');
  }, 60_000);
});
