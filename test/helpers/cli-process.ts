/**
 * The CLI as the tests run it: as a child process (from source, through tsx) where the process
 * itself matters (does it exit, with which code), or in-process where only the code and the output
 * do (cheaper on the 2-core machine).
 */
import { spawn } from 'node:child_process';
import { vi } from 'vitest';
import { runCli } from '../../src/cli.js';

const ROOT = new URL('../../', import.meta.url).pathname;

/** A process still running after this long is taken to hang (the commands here need seconds). */
export const HANG_MS = 90_000;

export interface Ended {
  /** Exit code, or 'hung' when the process had to be killed at the deadline. */
  readonly code: number | 'hung';
  readonly stdout: string;
  readonly stderr: string;
}

/** Environment of the parent minus what would point a child at another database or config. */
export function baseEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (v === undefined || k.startsWith('GOVTRAIL_') || k === 'DATABASE_URL') continue;
    env[k] = v;
  }
  return env;
}

/** Runs the CLI (from source, through tsx) and waits for it to end, or kills it at the deadline. */
export function runGovtrail(args: readonly string[], env: Record<string, string>): Promise<Ended> {
  return runNode(['--import', 'tsx', 'src/main.ts', ...args], env);
}

/**
 * Runs `node ARGV` in the repository (the base environment, LOG_LEVEL=warn, then `env`) and waits
 * for it to end, or kills it at the deadline.
 */
export function runNode(argv: readonly string[], env: Record<string, string>): Promise<Ended> {
  const child = spawn(process.execPath, argv, {
    cwd: ROOT,
    env: { ...baseEnv(), LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => {
    stdout += d.toString();
  });
  child.stderr.on('data', (d: Buffer) => {
    stderr += d.toString();
  });
  return new Promise<Ended>((resolve) => {
    let hung = false;
    const timer = setTimeout(() => {
      hung = true;
      child.kill('SIGKILL');
    }, HANG_MS);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code: hung ? 'hung' : (code ?? -1), stdout, stderr });
    });
  });
}

/**
 * Runs the CLI in-process with `env` stubbed over the environment; its exit code and output. The
 * caller restores the environment (vi.unstubAllEnvs) after each test.
 */
export async function runCliCaptured(
  argv: readonly string[],
  env: Record<string, string>,
): Promise<{ code: number; stdout: string; stderr: string }> {
  for (const [k, v] of Object.entries(env)) vi.stubEnv(k, v);
  let stdout = '';
  let stderr = '';
  const out = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: unknown) => {
    stdout += String(chunk);
    return true;
  });
  const err = vi.spyOn(process.stderr, 'write').mockImplementation((chunk: unknown) => {
    stderr += String(chunk);
    return true;
  });
  try {
    const code = await runCli(['node', 'govtrail', ...argv]);
    return { code, stdout, stderr };
  } finally {
    out.mockRestore();
    err.mockRestore();
  }
}
