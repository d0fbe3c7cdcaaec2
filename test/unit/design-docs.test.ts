/**
 * The design lives in the repository (docs/design/README.md): no file of the project may cite a
 * document that a clone does not have. Fails, naming the file and line, on a citation of the old
 * shared folder outside the repository, of a design document that does not exist under
 * docs/design/ (or of any Markdown file the repository does not hold), or of the old names for the
 * tenant API's documentation and the style conventions.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** What is scanned: the project's own text, not dependencies or build output. */
const SCANNED = ['src', 'test', 'bench', 'scripts', 'sql', 'rules', 'docs', 'dashboards', 'deploy', '.ci'];
const SCANNED_ROOT_FILES = /\.(md|ts|mjs|json|ya?ml)$|^Dockerfile$/;
const TEXT = /\.(ts|mjs|js|md|sql|ya?ml|json|sh|txt)$|^(Dockerfile|run)$/;

function walk(dir: string): string[] {
  let entries: import('node:fs').Dirent[];
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return [];
  }
  return entries.flatMap((e) => {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) return e.name === 'node_modules' ? [] : walk(p);
    return TEXT.test(e.name) ? [p] : [];
  });
}

function projectFiles(): Map<string, string> {
  const files = new Map<string, string>();
  const add = (abs: string) =>
    files.set(path.relative(ROOT, abs).split(path.sep).join('/'), readFileSync(abs, 'utf8'));
  for (const d of SCANNED) for (const f of walk(path.join(ROOT, d))) add(f);
  for (const e of readdirSync(ROOT, { withFileTypes: true }))
    if (e.isFile() && SCANNED_ROOT_FILES.test(e.name) && e.name !== 'package-lock.json')
      add(path.join(ROOT, e.name));
  return files;
}

// Built from pieces so that this file does not cite what it forbids.
const FORBIDDEN: ReadonlyArray<{ re: RegExp; why: string }> = [
  { re: new RegExp(`(^|[^\\w-])${'shared'}/`), why: 'cites the shared folder outside the repository' },
  {
    re: new RegExp(`\\b(the|product|API) ${'brief'}\\b`, 'i'),
    why: "cites the tenant API's documentation by its old name: cite docs/design/tenant-api.md",
  },
  {
    re: new RegExp(`\\b${'style'} rule\\b`, 'i'),
    why: 'cites a numbered convention: cite docs/design/style.md by its name',
  },
];

const MD_REF = /(?<![\w-])((?:[\w.-]+\/)*)([\w-]+)\.md\b/g;

/**
 * Every citation in `files` of a document the repository does not hold, one line each:
 * `file:line: … — why`. `designDocs` are the file names under docs/design/, `markdown` the names of
 * every Markdown file of the repository.
 */
function outsideCitations(
  files: ReadonlyMap<string, string>,
  designDocs: ReadonlySet<string>,
  markdown: ReadonlySet<string>,
): string[] {
  const found: string[] = [];
  for (const [file, text] of files) {
    text.split('\n').forEach((line, i) => {
      const at = `${file}:${i + 1}: ${line.trim().slice(0, 120)}`;
      for (const { re, why } of FORBIDDEN) if (re.test(line)) found.push(`${at} — ${why}`);
      for (const m of line.matchAll(MD_REF)) {
        const dir = m[1] ?? '';
        const name = `${m[2]}.md`;
        if (/(^|\/)design\/$/.test(dir) && !designDocs.has(name))
          found.push(`${at} — ${dir}${name} is not a document of docs/design/`);
        else if (!markdown.has(name)) found.push(`${at} — ${dir}${name} is not a document of the repository`);
      }
    });
  }
  return found;
}

function documents(): { designDocs: Set<string>; markdown: Set<string> } {
  const designDocs = new Set(readdirSync(path.join(ROOT, 'docs/design')).filter((f) => f.endsWith('.md')));
  const markdown = new Set(
    [...projectFiles().keys()].filter((f) => f.endsWith('.md')).map((f) => path.posix.basename(f)),
  );
  return { designDocs, markdown };
}

describe('citations of the design', () => {
  it('every file of the project cites only documents the repository holds', () => {
    const { designDocs, markdown } = documents();
    expect(outsideCitations(projectFiles(), designDocs, markdown)).toEqual([]);
  });

  it('docs/design/ holds the documents the project cites most', () => {
    const { designDocs } = documents();
    for (const name of [
      'README.md',
      'product.md',
      'sync.md',
      'integrity.md',
      'data-model.md',
      'alerts.md',
      'scaling.md',
      'tenant-api.md',
      'alert-destinations.md',
      'architecture.md',
      'style.md',
    ])
      expect(designDocs, name).toContain(name);
  });

  // Each kind of citation, planted once: the check must name the file and the line.
  it.each([
    ['a path into the shared folder', `see ../${'shared'}/design/sync.md for the contract`],
    ['the old name of the tenant API documentation', `as ${'the'} brief says, section 8.1`],
    ['the old name of the product document', `(${'product'} brief, "Authenticate")`],
    ['a numbered convention', `(${'style'} rule 12)`],
    ['a design document that does not exist', `the stop rule of docs/design/${'paging'}.md`],
    ['a bare Markdown name the repository lacks', `see product-${'brief'}.md, "Scaling out"`],
  ])('fails on %s', (_kind, line) => {
    const { designDocs, markdown } = documents();
    const files = new Map([['src/core/example.ts', `/**\n * One line.\n * ${line}\n */\n`]]);
    const found = outsideCitations(files, designDocs, markdown);
    expect(found).toHaveLength(1);
    expect(found[0]).toContain('src/core/example.ts:3:');
  });

  it('accepts citations of documents that exist, bare or by path', () => {
    const { designDocs, markdown } = documents();
    const files = new Map([
      [
        'src/core/example.ts',
        '// docs/design/sync.md S7; integrity.md; [deploy](../deploy.md); design/alerts.md; bench/RESULTS.md',
      ],
    ]);
    expect(outsideCitations(files, designDocs, markdown)).toEqual([]);
  });
});
