/**
 * Comments and docs cite code by its path (`src/sync/execute-run.ts`, `src/outputs/pack/`): a path
 * left behind by a move sends a reader nowhere. Fails, naming the file and line, on a `src/…` path
 * that does not exist in a doc (Markdown) or in a comment of the code (TypeScript, SQL). A path
 * with a placeholder (`src/<layer>/`, `src/*`) is a pattern, not a citation; `.js` in an import-style
 * path stands for its `.ts`.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const SCANNED = ['src', 'test', 'bench', 'scripts', 'sql', 'docs'];
const ROOT_DOCS = /\.md$/;
const TEXT = /\.(ts|mjs|md|sql)$/;
/** A `src/…` path, not the tail of a longer one. */
const CITED = /(?<![\w/.-])src\/[\w./<>*-]*[\w*>/]/g;
/** Lines of code files that are comments; every line of a doc. */
const COMMENT = /^\s*(\/\/|\/\*|\*|--)/;

function walk(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) return e.name === 'node_modules' || e.name === 'fixtures' ? [] : walk(p);
    return TEXT.test(e.name) ? [p] : [];
  });
}

/** Whether a cited path names a file or folder of `root`. */
function exists(root: string, cited: string): boolean {
  const p = cited.replace(/[/.]+$/, '');
  return [p, p.replace(/\.js$/, '.ts'), `${p}.ts`].some((c) => existsSync(path.join(root, c)));
}

/** `file:line cites src/…, which does not exist`, one per dangling citation in `text`. */
function danglingCitations(root: string, file: string, text: string): string[] {
  const doc = file.endsWith('.md');
  const out: string[] = [];
  for (const [i, line] of text.split('\n').entries()) {
    if (!doc && !COMMENT.test(line)) continue;
    for (const m of line.matchAll(CITED)) {
      const cited = m[0];
      if (/[<>*]/.test(cited) || exists(root, cited)) continue;
      out.push(`${file}:${i + 1} cites ${cited}, which does not exist`);
    }
  }
  return out;
}

describe('paths cited in comments and docs', () => {
  it('name files and folders that exist', () => {
    const files = [
      ...SCANNED.flatMap((d) => walk(path.join(ROOT, d))),
      ...readdirSync(ROOT)
        .filter((f) => ROOT_DOCS.test(f))
        .map((f) => path.join(ROOT, f)),
    ];
    const dangling = files.flatMap((f) =>
      danglingCitations(ROOT, path.relative(ROOT, f), readFileSync(f, 'utf8')),
    );
    expect(dangling).toEqual([]);
  });

  it('fails on a path left behind by a move, and passes patterns and imports', () => {
    expect(danglingCitations(ROOT, 'x.ts', ' * the steps of src/sync/steps.ts, as before')).toEqual([
      'x.ts:1 cites src/sync/steps.ts, which does not exist',
    ]);
    expect(danglingCitations(ROOT, 'README.md', 'see `src/report/`')).toEqual([
      'README.md:1 cites src/report/, which does not exist',
    ]);
    expect(
      danglingCitations(ROOT, 'x.ts', '// src/sync/execute-run.js, src/<layer>/, src/outputs/pack/'),
    ).toEqual([]);
    // Code is not a comment: a string in a test may name a path on purpose.
    expect(danglingCitations(ROOT, 'x.ts', "const file = 'src/x/y.ts';")).toEqual([]);
  });
});
