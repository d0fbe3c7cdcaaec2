// `npm start`: the pipeline on whatever is configured. With no tenant configured it runs the demo
// (sandbox tenant + embedded database); with one (GOVTRAIL_CLIENT_ID, or tenants listed in the
// GOVTRAIL_CONFIG file), the scheduled worker with /healthz and /metrics.
//
// govtrail runs in this process (no child): a signal reaches it once, whoever sends it — the
// terminal's Ctrl-C, `timeout -s INT`, or `kill -TERM` on npm (the start script execs this file, so
// npm forwards its signals here) — and the worker drains once, with nothing left behind.
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseEnv } from 'node:util';
// The binary's own Node flags and environment (its shebang), as `govtrail` would start.
import { launchOf } from '../dist/src/runtime/launch.js';

const env = { ...(existsSync('.env') ? parseEnv(readFileSync('.env', 'utf8')) : {}), ...process.env };
const configured = Boolean(env.GOVTRAIL_CLIENT_ID || env.GOVTRAIL_CONFIG);
const command = configured ? 'worker' : 'demo';
// The binary's Node flags and environment (its first line) apply to `npm start` too: Node takes
// them only at start, so this process replaces itself once with them (execve: the same process,
// no child, so a signal still reaches govtrail once).
const launch = launchOf('dist/src/main.js');
if (!launch.nodeArgs.every((flag) => process.execArgv.includes(flag))) {
  process.execve(
    process.execPath,
    [
      process.execPath,
      ...launch.nodeArgs,
      ...process.execArgv,
      fileURLToPath(import.meta.url),
      ...process.argv.slice(2),
    ],
    { ...process.env, ...launch.env },
  );
}
const main = new URL('../dist/src/main.js', import.meta.url);
process.argv = [process.argv[0], main.pathname, command, ...process.argv.slice(2)];
await import(main.href);
