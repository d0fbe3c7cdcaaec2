/**
 * The import rules of src/ (docs/design/architecture.md) as a function over file texts, so the
 * test can check the tree and also prove that each rule fails when broken.
 *
 * A folder directly under src/ is a layer. Layers are ordered from the bottom; a file may import
 * its own layer and the layers below it, never one above (which also rules out cycles between
 * folders). src/sandbox/ stands apart: it imports nothing else of src/, and nothing of src/
 * outside it imports it except the composition layers that start it (app/, commands/).
 */
import path from 'node:path';

/** From the bottom: each may import only itself and what comes before it. */
export const LAYER_ORDER = [
  'core',
  'runtime',
  'source',
  'store',
  'alerts',
  'config',
  'sync',
  'outputs',
  'worker',
  'app',
  'commands',
  '(root)',
] as const;

/** Packages and built-in modules that do I/O: never in src/core/. */
const IO_MODULES = [
  'node:fs',
  'node:fs/promises',
  'node:net',
  'node:http',
  'node:https',
  'node:dgram',
  'node:tls',
  'node:child_process',
  'undici',
  'pg',
  'kysely',
  'pino',
  'nodemailer',
  '@electric-sql/pglite',
];

/** Database drivers and the query builder: only src/store/ imports them. */
const STORE_ONLY = ['kysely', 'pg', 'pg-copy-streams', '@electric-sql/pglite'];

export interface ImportRef {
  specifier: string;
  line: number;
}

const IMPORT_RE =
  /(?:^|[;\s])(?:import|export)\s+(?:type\s+)?(?:[\w*{}\s,$]+?\s+from\s+)?['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/g;

/** Every module specifier a file imports or re-exports, statically or with `import()`. */
export function importsOf(text: string): ImportRef[] {
  const refs: ImportRef[] = [];
  for (const m of text.matchAll(IMPORT_RE)) {
    const specifier = m[1] ?? m[2];
    if (specifier === undefined) continue;
    refs.push({ specifier, line: text.slice(0, m.index).split('\n').length });
  }
  return refs;
}

function layerOf(file: string): string {
  const parts = file.split('/');
  return parts.length === 2 ? '(root)' : (parts[1] ?? '(root)');
}

function packageOf(specifier: string): string {
  if (specifier.startsWith('node:')) return specifier;
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : (parts[0] ?? specifier);
}

/**
 * The violations in a tree of files (`src/…` path → text), one line each:
 * `src/<layer>/<file>.ts:3 imports '…' — rule`. Empty when the tree keeps every rule.
 */
export function checkLayers(files: ReadonlyMap<string, string>): string[] {
  const violations: string[] = [];
  const rank = new Map<string, number>(LAYER_ORDER.map((l, i) => [l, i]));
  for (const [file, text] of files) {
    const from = layerOf(file);
    for (const { specifier, line } of importsOf(text)) {
      const at = `${file}:${line} imports '${specifier}'`;
      if (!specifier.startsWith('.')) {
        const pkg = packageOf(specifier);
        const bare = pkg.startsWith('node:') ? pkg : pkg;
        if (from === 'core' && (IO_MODULES.includes(bare) || IO_MODULES.includes(`node:${bare}`)))
          violations.push(`${at} — core does no I/O`);
        else if (from !== 'store' && STORE_ONLY.includes(pkg))
          violations.push(`${at} — only store/ imports ${pkg}`);
        continue;
      }
      const target = path.posix.normalize(path.posix.join(path.posix.dirname(file), specifier));
      if (!target.startsWith('src/')) continue;
      const to = layerOf(target);
      if (to === from) continue;
      if (from === 'sandbox') {
        violations.push(`${at} — sandbox/ imports nothing else of src/`);
        continue;
      }
      if (from === 'core') {
        violations.push(`${at} — core imports only core`);
        continue;
      }
      if (to === 'sandbox') {
        if (from !== 'app' && from !== 'commands' && from !== '(root)')
          violations.push(`${at} — only app/ and commands/ start the sandbox`);
        continue;
      }
      const a = rank.get(from);
      const b = rank.get(to);
      if (a === undefined || b === undefined) {
        violations.push(`${at} — ${a === undefined ? from : to}/ is in no layer`);
      } else if (b > a) {
        violations.push(`${at} — ${from}/ may not import ${to}/ (it is above it)`);
      }
    }
  }
  return violations;
}
