/**
 * Locates files shipped with the package (sql/, rules/), whether govtrail runs from src/ (tests,
 * tsx) or from dist/src/ after the build: walk up from this module to the package root.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

let cached: string | undefined;

/** The directory holding govtrail's package.json. */
export function packageRoot(): string {
  if (cached !== undefined) return cached;
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (;;) {
    if (existsSync(path.join(dir, 'package.json')) && existsSync(path.join(dir, 'sql'))) {
      cached = dir;
      return dir;
    }
    const parent = path.dirname(dir);
    if (parent === dir)
      throw new Error('cannot locate the govtrail package root (no package.json beside sql/)');
    dir = parent;
  }
}

let version: string | undefined;

/** govtrail's version, from its package.json (read once); `unknown` when it cannot be read. */
export function govtrailVersion(): string {
  if (version === undefined) {
    try {
      version = (JSON.parse(readFileSync(packagePath('package.json'), 'utf8')) as { version: string })
        .version;
    } catch {
      version = 'unknown';
    }
  }
  return version;
}

/** Absolute path of a file shipped in the package, e.g. `packagePath('sql')`. */
export function packagePath(...segments: string[]): string {
  return path.join(packageRoot(), ...segments);
}
