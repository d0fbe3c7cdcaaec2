/**
 * How govtrail's process is started: the Node.js flags and environment its binary's first line
 * (`#!/usr/bin/env -S …` in src/main.ts) gives it, for the start paths that do not go through that
 * line — `npm start`, the benchmarks, the tests that spawn the build — to start it the same way.
 * The image's ENTRYPOINT repeats them (a test compares the two). Why these flags: docs/deploy.md
 * ("Memory") and bench/RESULTS.md (n).
 */
import { readFileSync } from 'node:fs';

export interface Launch {
  /** Environment the binary sets before Node starts (glibc's malloc reads it at start-up). */
  readonly env: Readonly<Record<string, string>>;
  /** Flags given to node before the script. */
  readonly nodeArgs: readonly string[];
}

/**
 * The launch a `#!/usr/bin/env -S [NAME=VALUE …] node [--flag …]` line describes: the assignments
 * before `node`, the flags after it (a plain `#!/usr/bin/env node`: none). Throws on any other
 * first line.
 */
export function parseShebang(line: string): Launch {
  if (line.trimEnd() === '#!/usr/bin/env node') return { env: {}, nodeArgs: [] };
  const m = /^#!\/usr\/bin\/env -S (.*)$/.exec(line.trimEnd());
  if (m === null) throw new Error(`not an env -S shebang: ${line}`);
  const words = (m[1] as string).split(/\s+/).filter((w) => w !== '');
  const at = words.indexOf('node');
  if (at === -1) throw new Error(`the shebang does not run node: ${line}`);
  const env: Record<string, string> = {};
  for (const w of words.slice(0, at)) {
    const eq = w.indexOf('=');
    if (eq <= 0) throw new Error(`not an assignment before node in the shebang: ${w}`);
    env[w.slice(0, eq)] = w.slice(eq + 1);
  }
  return { env, nodeArgs: words.slice(at + 1) };
}

/** The launch of the script at `path` (the build's dist/src/main.js), from its first line. */
export function launchOf(path: string): Launch {
  const text = readFileSync(path, 'utf8');
  const end = text.indexOf('\n');
  return parseShebang(end === -1 ? text : text.slice(0, end));
}
