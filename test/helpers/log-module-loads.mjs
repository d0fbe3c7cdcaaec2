// Preloaded with `node --import` by test/unit/cli-startup.test.ts: appends the URL of every module
// the process resolves or loads (import and require, packages and files) to the file named by
// GOVTRAIL_TEST_LOADS_FILE, one a line.
import { appendFileSync } from 'node:fs';
import { registerHooks } from 'node:module';

const file = process.env.GOVTRAIL_TEST_LOADS_FILE;
if (file) {
  registerHooks({
    resolve(specifier, context, next) {
      const resolved = next(specifier, context);
      appendFileSync(file, `${resolved.url}\n`);
      return resolved;
    },
    // Also each module loaded: a hook registered after this one (the vendored bundles', which
    // answers a resolve itself) hides that resolve from the one above, not the load.
    load(url, context, next) {
      appendFileSync(file, `${url}\n`);
      return next(url, context);
    },
  });
}
