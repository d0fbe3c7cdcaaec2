/**
 * The first hour of a new user, as the processes they start behave: the demo told off a terminal
 * (no JSON log lines in the story, the report path last, this run's alerts counted, settings
 * named as `govtrail settings` names them, a report that shows the changes), and the usual
 * mistakes (a read-only command run from another directory, a misspelt variable, a misspelt key
 * of the tenants file), each answered by one line before anything else goes wrong.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { baseEnv } from '../helpers/cli-process.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const TSX = import.meta.resolve('tsx');

/** The CLI from source, in `cwd`, with stdout and stderr piped (not a terminal). */
function govtrail(
  args: readonly string[],
  options: { cwd: string; env?: Record<string, string> },
): Promise<{ code: number; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, ['--import', TSX, path.join(ROOT, 'src/main.ts'), ...args], {
    cwd: options.cwd,
    env: { ...baseEnv(), LOG_LEVEL: '', ...options.env },
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
  return new Promise((resolve) => {
    child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
  });
}

const tempDir = () => mkdtempSync(path.join(tmpdir(), 'govtrail-first-hour-'));

describe('the demo off a terminal', () => {
  it('tells the story without log lines, names its database, counts its own alerts and ends with the report', async () => {
    const cwd = tempDir();
    const first = await govtrail(['demo', '--entries', '60'], { cwd });
    expect(first.code, first.stderr).toBe(0);
    const lines = `${first.stdout}\n${first.stderr}`.split('\n');
    expect(lines.filter((l) => l.startsWith('{'))).toEqual([]);
    expect(first.stdout).toContain(`Database: embedded PostgreSQL in ${path.join(cwd, '.govtrail')}`);
    expect(first.stdout).toContain(
      `Logs (stderr is not a terminal): ${path.join(cwd, '.govtrail', 'demo.log')}`,
    );
    expect(readFileSync(path.join(cwd, '.govtrail', 'demo.log'), 'utf8')).toMatch(/"msg":"sync started"/);
    // The last line printed is the report, and the report shows the demo's changes and alerts.
    const report = first.stdout.trimEnd().split('\n').at(-1) as string;
    expect(report).toBe(path.join(cwd, '.govtrail', 'report.html'));
    const html = readFileSync(report, 'utf8');
    expect(html).not.toMatch(/No changes in this period/);
    expect(html).toContain('AIGOV-018');
    // The settings as `govtrail settings` names them.
    expect(first.stdout).toMatch(/^ {2}require_tool_approval {2,}\S/m);
    expect(first.stdout).not.toMatch(/^ {2}requireToolApproval {2,}/m);
    const raised = /Alerts raised by this run \((\d+)\)/.exec(first.stdout);
    expect(Number(raised?.[1])).toBeGreaterThan(0);

    const second = await govtrail(['demo', '--entries', '60'], { cwd });
    expect(second.code, second.stderr).toBe(0);
    expect(second.stdout).toContain('Alerts raised by this run: none');
    expect(second.stdout).toMatch(/\(0 new in this run\)/);
  }, 180_000);
});

describe('mistakes of the first hour', () => {
  it('a read-only command run where no database is says so, and creates none', async () => {
    const cwd = tempDir();
    for (const args of [['settings'], ['changes'], ['report', '--out', 'r.html'], ['alerts', 'list']]) {
      const r = await govtrail(args, { cwd });
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr).toBe(
        `govtrail: GOVTRAIL_DATA_DIR: no embedded database in ${path.join(cwd, '.govtrail')}: run govtrail demo or govtrail sync first, run from the directory that holds .govtrail, or set DATABASE_URL\n`,
      );
    }
    expect(readdirSync(cwd)).toEqual([]);
    expect(existsSync(path.join(cwd, '.govtrail'))).toBe(false);
  }, 120_000);

  it('a misspelt variable is warned about, with the one meant, before the failure it causes', async () => {
    const cwd = tempDir();
    const r = await govtrail(['sync'], {
      cwd,
      env: { GOVTRAIL_CLIENT_ID: 'calm-otter-1@127.0.0.1/pcc', GOVTRAIL_CLIENT_SECERT: 's' },
    });
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(
      'govtrail: warning: GOVTRAIL_CLIENT_SECERT is not a govtrail setting: ignored (did you mean GOVTRAIL_CLIENT_SECRET?)\n' +
        'govtrail: GOVTRAIL_CLIENT_SECRET: is required (or GOVTRAIL_CLIENT_SECRET_FILE)\n',
    );
  }, 60_000);

  it('a misspelt key of a tenant in the file names the key meant', async () => {
    const cwd = tempDir();
    const file = path.join(cwd, 'tenants.yaml');
    writeFileSync(
      file,
      'tenants:\n  - name: acme\n    base_url: http://127.0.0.1:9\n    client_id: c\n    client_secret: s\n    page_sise: 50\n',
    );
    const r = await govtrail(['sync'], { cwd, env: { GOVTRAIL_CONFIG: file } });
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(
      `govtrail: GOVTRAIL_CONFIG: ${file}: tenants[0]: page_sise (did you mean page_size?): not a key of a tenant\n`,
    );
  }, 60_000);
});
