/**
 * One job per room (docs/design/architecture.md "Where new code goes"): no module of src/ is over
 * 500 lines but a data table listed here. A module that grows past it is a room holding several
 * jobs: split it along its seams rather than raise the limit.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const LIMIT = 500;
/** Modules that are data tables (a list, a schema), not code: none today. */
const DATA_TABLES: readonly string[] = [];

function modules(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    return e.isDirectory() ? modules(p) : e.name.endsWith('.ts') ? [p] : [];
  });
}

/** `file: N lines` for every module over the limit. */
function oversized(files: ReadonlyMap<string, string>): string[] {
  return [...files]
    .map(([file, text]) => [file, text.split('\n').length - (text.endsWith('\n') ? 1 : 0)] as const)
    .filter(([file, lines]) => lines > LIMIT && !DATA_TABLES.includes(file))
    .map(([file, lines]) => `${file}: ${lines} lines`);
}

it(`no module of src/ is over ${LIMIT} lines`, () => {
  const files = new Map(
    modules(path.join(ROOT, 'src')).map((f) => [path.relative(ROOT, f), readFileSync(f, 'utf8')]),
  );
  expect(oversized(files)).toEqual([]);
});

it('fails on a module over the limit', () => {
  const big = `${'x;\n'.repeat(LIMIT + 1)}`;
  expect(oversized(new Map([['src/sync/big.ts', big]]))).toEqual([`src/sync/big.ts: ${LIMIT + 1} lines`]);
  expect(oversized(new Map([['src/sync/ok.ts', 'x;\n'.repeat(LIMIT)]]))).toEqual([]);
});
