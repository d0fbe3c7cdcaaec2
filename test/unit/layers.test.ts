/**
 * The layers of src/ (docs/design/architecture.md), enforced: every import of every source file is
 * read and checked against the rules below, and a violation fails with the importing file, the
 * import and the rule it breaks.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { checkLayers, importsOf, LAYER_ORDER } from '../helpers/layers.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) return sourceFiles(p);
    return e.name.endsWith('.ts') ? [p] : [];
  });
}

function tree(): Map<string, string> {
  const files = new Map<string, string>();
  for (const abs of sourceFiles(path.join(ROOT, 'src'))) {
    files.set(path.relative(ROOT, abs).split(path.sep).join('/'), readFileSync(abs, 'utf8'));
  }
  return files;
}

describe('the layers of src/', () => {
  it('hold on the tree: no file imports across a rule', () => {
    expect(checkLayers(tree())).toEqual([]);
  });

  it('every folder of src/ has a place in the order', () => {
    const folders = new Set([...tree().keys()].map((f) => f.split('/')[1] ?? ''));
    for (const f of folders) {
      if (f.endsWith('.ts')) continue;
      expect([...LAYER_ORDER, 'sandbox'], `src/${f}/ is in no layer`).toContain(f);
    }
  });

  it('reads static, re-exported, side-effect and dynamic imports', () => {
    const text = [
      "import { a } from './a.js';",
      "import type { B } from '../b.js';",
      "export * from './c.js';",
      "import './d.js';",
      "const e = await import('./e.js');",
      'import {\n  f,\n  g,\n} from "kysely";',
    ].join('\n');
    expect(importsOf(text).map((i) => i.specifier)).toEqual([
      './a.js',
      '../b.js',
      './c.js',
      './d.js',
      './e.js',
      'kysely',
    ]);
  });

  // Each rule, broken once on purpose: the check must name the file and the import.
  it.each([
    ['src/core/diff.ts', "import { x } from '../store/database.js';", 'core imports only core'],
    ['src/core/diff.ts', "import { readFileSync } from 'node:fs';", 'core does no I/O'],
    ['src/core/diff.ts', "import { request } from 'undici';", 'core does no I/O'],
    ['src/sync/execute-run.ts', "import { sql } from 'kysely';", 'only store/ imports'],
    ['src/alerts/deliver.ts', "import pg from 'pg';", 'only store/ imports'],
    [
      'src/sandbox/server.ts',
      "import { x } from '../core/wire.js';",
      'sandbox/ imports nothing else of src/',
    ],
    ['src/store/database.ts', "import { x } from '../sync/execute-run.js';", 'store/ may not import sync/'],
    [
      'src/sync/execute-run.ts',
      "import { x } from '../commands/options.js';",
      'sync/ may not import commands/',
    ],
    [
      'src/outputs/report/html.ts',
      "import { x } from '../../app/context.js';",
      'outputs/ may not import app/',
    ],
    [
      'src/store/database.ts',
      "const m = await import('../worker/engine.js');",
      'store/ may not import worker/',
    ],
  ])('fails on %s importing `%s`', (file, line, rule) => {
    const files = tree();
    const before = new Set(checkLayers(files));
    files.set(file, `${files.get(file) ?? ''}\n${line}\n`);
    const violations = checkLayers(files).filter((v) => !before.has(v));
    expect(violations).toHaveLength(1);
    expect(violations[0]).toContain(file);
    expect(violations[0]).toContain(rule);
  });
});
