import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ERROR_CODES, exitCodeFor, GovtrailError } from '../../src/core/errors.js';

describe('error codes', () => {
  it('the README table lists exactly the codes of src/core/errors.ts, with the same meaning', () => {
    const readme = readFileSync(path.resolve(import.meta.dirname, '../../README.md'), 'utf8');
    const section = readme.split('## Error codes')[1]?.split('\n## ')[0] ?? '';
    const rows = [...section.matchAll(/^\| `([A-Z_]+)` \| (.+) \|$/gm)].map((m) => [m[1], m[2]]);
    expect(Object.fromEntries(rows)).toEqual(ERROR_CODES);
  });

  it('maps configuration and usage errors to exit code 2, everything else to 1', () => {
    expect(exitCodeFor(new GovtrailError('CONFIG', 'x'))).toBe(2);
    expect(exitCodeFor(new GovtrailError('USAGE', 'x'))).toBe(2);
    expect(exitCodeFor(new GovtrailError('NETWORK', 'x'))).toBe(1);
    expect(exitCodeFor(new Error('x'))).toBe(1);
  });
});
