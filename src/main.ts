#!/usr/bin/env -S MALLOC_ARENA_MAX=1 node --max-semi-space-size=4 --heap-growing-percent=50
/**
 * The `govtrail` binary. Its first line starts Node with a small young generation (4 MiB per
 * semi-space), a heap that grows by 50 % over what is live instead of up to 4×, and one malloc
 * arena: a 100 000-entry backfill's peak RSS 423-431 -> 136-143 MiB (docs/deploy.md "Memory",
 * bench/RESULTS.md (n) and (s)). V8 sizes
 * its heap before any code runs, so this line is the only place govtrail can say so; the other
 * ways it is started (npm start, the image's ENTRYPOINT, the benchmarks) take the same flags from
 * here (src/runtime/launch.ts).
 */
import { mkdirSync } from 'node:fs';
import module from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';

/**
 * Turns on Node's on-disk compile cache, which spares compiling govtrail and its packages again on
 * every start (`govtrail --help`: 104 -> 91 ms, bench/RESULTS.md). It lives in
 * $TMPDIR/govtrail-compile-cache. A directory that cannot be made or written only costs that
 * time: every failure is ignored. The directory is made here, not by Node, and not recursively:
 * Node 24's own (recursive) creation never returns when TMPDIR points into /proc.
 */
function enableCompileCache(): void {
  try {
    const dir = path.join(tmpdir(), 'govtrail-compile-cache');
    try {
      mkdirSync(dir);
    } catch (err) {
      if ((err as { code?: unknown }).code !== 'EEXIST') return;
    }
    module.enableCompileCache?.(dir);
  } catch {
    // no cache: a slower start, nothing else
  }
}

enableCompileCache();
// The build's bundled packages, in dist/vendor/ beside dist/src/ (none when run from src/).
const { useVendorBundles } = await import('./runtime/vendor.js');
useVendorBundles(new URL('../vendor/', import.meta.url));
// Imported after the cache is on, so that the CLI's own modules are compiled through it.
const { runCli } = await import('./cli.js');
process.exitCode = await runCli(process.argv);
