/**
 * The built binary's vendored packages (scripts/bundle-vendor.mjs): `npm run build` bundles a few
 * packages of many modules each (kysely, zod, yaml) into one ES module apiece, in dist/vendor/,
 * with vendor.json naming them. `useVendorBundles` makes this process resolve those package names
 * to the bundles, so that a command start loads one file per package instead of hundreds (about
 * 170 ms less CPU per start, bench/RESULTS.md (r)). Where there is no vendor.json — running from
 * src/ (the tests, tsx), or a build without it — nothing changes: the packages load as installed.
 */
import { readFileSync } from 'node:fs';
import module from 'node:module';

/**
 * Resolves each package vendor.json in `dir` names to its bundle there, for every later import or
 * require of this process. Returns the names redirected ([] without a usable vendor.json, or on a
 * Node without module.registerHooks).
 */
export function useVendorBundles(dir: URL): string[] {
  let files: Record<string, string>;
  try {
    files = JSON.parse(readFileSync(new URL('vendor.json', dir), 'utf8')) as Record<string, string>;
  } catch {
    return [];
  }
  const bundles = new Map(Object.entries(files).map(([name, file]) => [name, new URL(file, dir).href]));
  if (module.registerHooks === undefined || bundles.size === 0) return [];
  module.registerHooks({
    resolve(specifier, context, next) {
      const url = bundles.get(specifier);
      return url === undefined ? next(specifier, context) : { url, format: 'module', shortCircuit: true };
    },
  });
  return [...bundles.keys()];
}
