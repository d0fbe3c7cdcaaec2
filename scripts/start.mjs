// `npm start`: the pipeline on whatever is configured. With no tenant configured it runs the demo
// (sandbox tenant + embedded database); with one (GOVTRAIL_CLIENT_ID, or tenants listed in the
// GOVTRAIL_CONFIG file), the scheduled worker with /healthz and /metrics.
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { parseEnv } from 'node:util';
// The binary's own Node flags and environment (its shebang), as `govtrail` would start.
import { launchOf } from '../dist/src/runtime/launch.js';

const env = { ...(existsSync('.env') ? parseEnv(readFileSync('.env', 'utf8')) : {}), ...process.env };
const configured = Boolean(env.GOVTRAIL_CLIENT_ID || env.GOVTRAIL_CONFIG);
const command = configured ? 'worker' : 'demo';
const launch = launchOf('dist/src/main.js');
const child = spawn(
  process.execPath,
  [...launch.nodeArgs, 'dist/src/main.js', command, ...process.argv.slice(2)],
  {
    stdio: 'inherit',
    env: { ...process.env, ...launch.env },
  },
);
// The worker drains on SIGTERM/SIGINT: pass them on instead of dying first and orphaning it.
// (Ctrl-C reaches the child through the terminal's process group already; a second forward would
// count as the "second signal" that exits at once, so SIGINT is only forwarded when not from a TTY.)
process.on('SIGTERM', () => child.kill('SIGTERM'));
process.on('SIGINT', () => {
  if (!process.stdin.isTTY) child.kill('SIGINT');
});
child.on('exit', (code, signal) => {
  process.exitCode = code ?? (signal === 'SIGINT' ? 130 : 1);
});
