// `npm start`: the pipeline on whatever is configured. With no tenant configured it runs the demo
// (sandbox tenant + embedded database); with one, a sync of every configured tenant.
import { existsSync, readFileSync } from 'node:fs';
import { parseEnv } from 'node:util';
import { spawnSync } from 'node:child_process';

const env = { ...(existsSync('.env') ? parseEnv(readFileSync('.env', 'utf8')) : {}), ...process.env };
const configured = Boolean(env.GOVTRAIL_CLIENT_ID || env.GOVTRAIL_CONFIG);
const command = configured ? 'sync' : 'demo';
const result = spawnSync(process.execPath, ['dist/src/main.js', command, ...process.argv.slice(2)], { stdio: 'inherit' });
process.exitCode = result.status ?? 1;
