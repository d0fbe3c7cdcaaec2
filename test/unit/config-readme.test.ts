/**
 * The README's settings table is the user's list of variables, so it must hold every variable
 * govtrail reads. Two views of "what govtrail reads", both compared with the table:
 * - knownVariables(): the variables loadConfig looks up (the same set that decides which
 *   variables are warned about as unknown, "did you mean"), and
 * - a scan of the code for variable names (src/, the npm start script, the ./govtrail entry
 *   point), so that a variable read anywhere else, or added later, is caught too.
 * And the near misses a first hour makes are warned about with the variable meant.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { configWarnings, knownVariables } from '../../src/config/warnings.js';

const ROOT = path.resolve(import.meta.dirname, '../..');

/** Every variable name the README's configuration table documents, `…_X` shorthands expanded. */
function documentedVariables(): { names: Set<string>; literal: Set<string>; patterns: RegExp[] } {
  const readme = readFileSync(path.join(ROOT, 'README.md'), 'utf8');
  const start = readme.indexOf('| variable | meaning | default |');
  expect(start, 'README: the settings table').toBeGreaterThan(0);
  const rows = readme.slice(start).split('\n\n')[0]?.split('\n') ?? [];
  const names = new Set<string>();
  const literal = new Set<string>();
  const patterns: RegExp[] = [];
  for (const row of rows) {
    const full = [...row.matchAll(/\b(?:GOVTRAIL_[A-Z0-9_]*[A-Z0-9]|DATABASE_URL|LOG_LEVEL)\b/g)].map(
      (m) => m[0],
    );
    for (const n of full) {
      names.add(n);
      literal.add(n);
    }
    // `GOVTRAIL_<SINK>_MIN_SEVERITY`: any sink's.
    for (const m of row.matchAll(/`(GOVTRAIL_[A-Z_]*)<[A-Z]+>(_[A-Z_]+)`/g)) {
      patterns.push(new RegExp(`^${m[1]}[A-Z_]+${m[2]}$`));
    }
    // `…_SUFFIX` (and `…_SUFFIX[_FILE]`): the suffix on a prefix of a full name of the same row.
    for (const m of row.matchAll(/…(_[A-Z0-9_]*[A-Z0-9])/g)) {
      for (const n of full) {
        const words = n.split('_');
        for (let k = 1; k < words.length; k++) names.add(`${words.slice(0, k).join('_')}${m[1]}`);
      }
    }
  }
  return { names, literal, patterns };
}

function isDocumented(name: string, doc: ReturnType<typeof documentedVariables>): boolean {
  // A secret may be given as NAME_FILE (the README says so above the table).
  const base = name.endsWith('_FILE') ? name.slice(0, -'_FILE'.length) : name;
  return [name, base].some((n) => doc.names.has(n) || doc.patterns.some((p) => p.test(n)));
}

/** Every file of src/ (recursively), and the two entry points outside it. */
function codeFiles(): string[] {
  const files: string[] = [];
  const walk = (dir: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (/\.(ts|mjs|js)$/.test(e.name)) files.push(p);
    }
  };
  walk(path.join(ROOT, 'src'));
  return [...files, path.join(ROOT, 'scripts/start.mjs'), path.join(ROOT, 'govtrail')];
}

/** The variable names written in the code (string literals, messages and comments alike). */
function scannedVariables(): Set<string> {
  const names = new Set<string>();
  for (const file of codeFiles()) {
    const text = readFileSync(file, 'utf8');
    for (const m of text.matchAll(/\b(?:GOVTRAIL_[A-Z0-9_]*[A-Z0-9]|DATABASE_URL|LOG_LEVEL)\b(?![<*])/g)) {
      names.add(m[0]);
    }
  }
  return names;
}

describe('the README settings table', () => {
  const doc = documentedVariables();

  it('documents every variable the configuration reads', () => {
    const missing = [...knownVariables()].filter((v) => !isDocumented(v, doc)).sort();
    expect(missing).toEqual([]);
  });

  it('documents every variable named in the code', () => {
    const scanned = scannedVariables();
    // The scan sees what it should: the variables read far from loadConfig's main path.
    expect(scanned).toContain('GOVTRAIL_CLIENT_ID');
    expect(scanned).toContain('GOVTRAIL_SMTP_HOST');
    const missing = [...scanned].filter((v) => !isDocumented(v, doc)).sort();
    expect(missing).toEqual([]);
  });

  it('names no variable that govtrail does not read', () => {
    const known = knownVariables();
    const stale = [...doc.literal].filter((n) => !known.has(n) && !known.has(`${n}_FILE`)).sort();
    expect(stale).toEqual([]);
  });
});

describe('near misses of a variable govtrail reads', () => {
  it('warns about each, with the variable meant', () => {
    expect(
      configWarnings(
        {
          DATABSE_URL: 'postgres://x@127.0.0.1/db',
          GOVTRAIL_CLIENT_SECERT: 's',
          GOVTAIL_BASE_URL: 'http://127.0.0.1:8080',
          LOG_LEVL: 'debug',
        },
        { dotenv: false },
      ),
    ).toEqual([
      'DATABSE_URL is not a govtrail setting: ignored (did you mean DATABASE_URL?)',
      'GOVTAIL_BASE_URL is not a govtrail setting: ignored (did you mean GOVTRAIL_BASE_URL?)',
      'GOVTRAIL_CLIENT_SECERT is not a govtrail setting: ignored (did you mean GOVTRAIL_CLIENT_SECRET?)',
      'LOG_LEVL is not a govtrail setting: ignored (did you mean LOG_LEVEL?)',
    ]);
  });

  it("leaves other programs' variables alone", () => {
    expect(
      configWarnings(
        { PATH: '/usr/bin', HOME: '/root', TEST_DATABASE_URL: 'postgres://x', NODE_ENV: 'test', PGHOST: 'h' },
        { dotenv: false },
      ),
    ).toEqual([]);
  });
});
