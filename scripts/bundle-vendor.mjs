/**
 * `node scripts/bundle-vendor.mjs [OUT]` (part of `npm run build`; OUT defaults to dist/vendor):
 * the packages of VENDORED, each bundled into one ES module OUT/<name>.js that exports every name
 * the package exports, and OUT/vendor.json naming them. The built binary resolves those package
 * names to these files (src/runtime/vendor.ts), so that a command start loads one file per package
 * instead of hundreds: kysely alone is 262 modules, and resolving, reading and linking them cost
 * 100-160 ms of every `govtrail sync` or `reconcile` start, against 17-20 ms bundled
 * (bench/RESULTS.md (r)). The code is the package's own, unchanged; only the module boundaries go.
 *
 * It also writes OUT/default-rules.json, the shipped rule pack's YAML as data (below).
 *
 * Not vendored: undici, whose index evaluates its whole fetch/WebSocket stack whatever is asked
 * (a bundle saved 10-25 ms of its 110), pg and pino (a few modules each), and anything that reads
 * files beside its own modules (PGlite's WASM, pino's transport worker).
 */
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
/** Package name → the file it is bundled into. */
export const VENDORED = { kysely: 'kysely.js', zod: 'zod.js', yaml: 'yaml.js' };

const out = path.resolve(process.argv[2] ?? path.join(ROOT, 'dist/vendor'));
mkdirSync(out, { recursive: true });

for (const [name, file] of Object.entries(VENDORED)) {
  // The names the package exports as Node loads it: the bundle re-exports exactly those, listed,
  // so that a CommonJS package's names are static exports of the bundle too.
  const namespace = await import(name);
  // Names a module can import: not 'default' (below), nor what Node adds to a CommonJS module's
  // namespace for interop ('module.exports', '__esModule').
  const names = Object.keys(namespace).filter(
    (n) => n !== 'default' && n !== '__esModule' && /^[A-Za-z_$][\w$]*$/.test(n),
  );
  const hasDefault = 'default' in namespace;
  const entry = [
    `export { ${names.join(', ')} } from ${JSON.stringify(name)};`,
    hasDefault ? `export { default } from ${JSON.stringify(name)};` : '',
  ].join('\n');
  await build({
    stdin: { contents: entry, resolveDir: ROOT, sourcefile: `${name}-vendor-entry.js`, loader: 'js' },
    bundle: true,
    format: 'esm',
    platform: 'node',
    target: 'node22',
    outfile: path.join(out, file),
    // A CommonJS package's require() of Node's own modules, inside an ES module.
    banner: {
      js: "import { createRequire as __vendorRequire } from 'node:module';\nconst require = __vendorRequire(import.meta.url);",
    },
    legalComments: 'inline',
    logLevel: 'warning',
  });
}
writeFileSync(path.join(out, 'vendor.json'), `${JSON.stringify(VENDORED, null, 2)}\n`);

// The shipped rule pack's YAML as data, with the sha256 of the text it was parsed from: the pack is
// loaded by nearly every command, and parsing its YAML is 47-52 ms of a start. The binary uses the
// copy only while the YAML is still that text (src/config/rule-pack.ts). The options are those of
// parseYamlDoc in src/core/rules/pack-schema.ts (a test compares the packs made both ways).
const { parse } = await import('yaml');
const rules = readFileSync(path.join(ROOT, 'rules/default-rules.yaml'), 'utf8');
const copy = {
  sha256: createHash('sha256').update(rules).digest('hex'),
  parsed: parse(rules, { prettyErrors: false, uniqueKeys: true }),
};
writeFileSync(path.join(out, 'default-rules.json'), `${JSON.stringify(copy)}\n`);
