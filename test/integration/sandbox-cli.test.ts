import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import path from 'node:path';
import { CommanderError } from 'commander';
import { afterEach, describe, expect, it } from 'vitest';
import { sandboxCommand } from '../../src/commands/sandbox.js';

const ROOT = path.resolve(import.meta.dirname, '../..');

/** Parses arguments in-process; rejects with the CommanderError instead of exiting. */
async function parse(args: string[]): Promise<{ error: unknown; stderr: string }> {
  let stderr = '';
  const command = sandboxCommand()
    .exitOverride()
    .configureOutput({ writeErr: (s) => (stderr += s), writeOut: () => {} });
  try {
    await command.parseAsync(['node', 'sandbox', ...args]);
    return { error: undefined, stderr };
  } catch (error) {
    return { error, stderr };
  }
}

describe('govtrail sandbox options', () => {
  it.each([
    [['--port', 'abc'], /--port/],
    [['--port', '70000'], /--port/],
    [['--entries', '-3'], /--entries/],
    [['--faults', 'teapot:0.5'], /unknown kind/],
    [['--paging', 'cursor'], /--paging/],
    [['--start', 'yesterday'], /RFC 3339/],
    [['--append-every', '0'], /--append-every/],
  ])('refuses %j with a usage error', async (args, message) => {
    const { error, stderr } = await parse(args);
    expect(error).toBeInstanceOf(CommanderError);
    expect((error as CommanderError).code).toMatch(/^commander\.(invalidArgument|optionMissingArgument)$/);
    expect(stderr).toMatch(message);
  });

  it('explains every option in --help', () => {
    const help = sandboxCommand().helpInformation();
    for (const flag of [
      '--port <n>',
      '--host <address>',
      '--entries <n>',
      '--seed <n>',
      '--client-id <id>',
      '--client-secret <secret>',
      '--token-ttl <seconds>',
      '--faults <spec>',
      '--append-every <ms>',
      '--json',
    ]) {
      expect(help).toContain(flag);
    }
    expect(help).toMatch(/retry-after/);
    expect(help).toMatch(/keyset/);
  });
});

let child: ChildProcess | undefined;
afterEach(() => {
  // Only the child this file started, by its own pid.
  if (child?.exitCode === null && child.pid !== undefined) process.kill(child.pid, 'SIGKILL');
  child = undefined;
});

function run(args: string[]): ChildProcess {
  const script =
    "const { sandboxCommand } = await import('./src/commands/sandbox.ts');" +
    "await sandboxCommand().parseAsync(['node', 'sandbox', ...JSON.parse(process.env.SANDBOX_ARGS)]);";
  child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
    cwd: ROOT,
    env: { ...process.env, SANDBOX_ARGS: JSON.stringify(args) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return child;
}

async function firstLine(p: ChildProcess): Promise<string> {
  let text = '';
  for await (const chunk of p.stdout!) {
    text += String(chunk);
    if (text.includes('\n')) return text.slice(0, text.indexOf('\n'));
  }
  throw new Error(`the sandbox printed no line; stderr: ${p.stderr?.read()}`);
}

describe('govtrail sandbox as a process', () => {
  it('prints one JSON line, serves the tenant, appends on a timer, and exits cleanly on SIGTERM', async () => {
    const p = run(['--json', '--entries', '50', '--seed', '4', '--append-every', '20', '--token-ttl', '120']);
    let stdout = '';
    const line = await firstLine(p);
    p.stdout!.on('data', (chunk) => (stdout += String(chunk)));
    const info = JSON.parse(line) as {
      baseUrl: string;
      credentials: Record<'secret' | 'key' | 'nonAdmin', { clientId: string; clientSecret: string }>;
      entries: number;
    };
    expect(info.baseUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(Object.keys(info.credentials).sort()).toEqual(['key', 'nonAdmin', 'secret']);
    expect(info.credentials.key.clientSecret).toMatch(/^secret-token:conductorone\.com:v1:/);

    const res = await fetch(`${info.baseUrl}/auth/v1/token`, {
      method: 'POST',
      body: new URLSearchParams({
        grant_type: 'client_credentials',
        client_id: info.credentials.secret.clientId,
        client_secret: info.credentials.secret.clientSecret,
      }),
    });
    expect(await res.json()).toMatchObject({ expires_in: 120 });

    const size = async () =>
      ((await (await fetch(`${info.baseUrl}/_sandbox/stats`)).json()) as { size: number }).size;
    await expect.poll(size, { timeout: 5000, interval: 50 }).toBeGreaterThan(52);

    const exited = once(p, 'exit');
    p.kill('SIGTERM');
    const [code] = await exited;
    expect(code).toBe(0);
    expect(stdout).toBe('');
  });

  it('prints ready-to-paste environment blocks and curl commands for every credential', async () => {
    const p = run([
      '--entries',
      '5',
      '--client-id',
      'demo-admin-12345@127.0.0.1/pcc',
      '--client-secret',
      's3cret',
    ]);
    let text = '';
    for await (const chunk of p.stdout!) {
      text += String(chunk);
      if (text.includes('Ctrl+C')) break;
    }
    expect(text).toMatch(/^Sandbox tenant listening on http:\/\/127\.0\.0\.1:\d+/);
    expect(text).toContain('GOVTRAIL_CLIENT_ID=demo-admin-12345@127.0.0.1/pcc GOVTRAIL_CLIENT_SECRET=s3cret');
    expect(text.match(/^GOVTRAIL_BASE_URL=/gm)).toHaveLength(3);
    expect(text.match(/^curl -s -X POST .*\/auth\/v1\/token/gm)).toHaveLength(3);
    expect(text).toContain('client_assertion=ey');
    const exited = once(p, 'exit');
    p.kill('SIGINT');
    expect((await exited)[0]).toBe(0);
  });
});
