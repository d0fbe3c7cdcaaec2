/**
 * Usage errors end with exit code 2 and one line naming what to fix, never a stack trace, a SQL
 * error or exit 1 (issue 20, items 12, 13 and 18). Those of the process itself (worker port in
 * use, GOVTRAIL_DATA_DIR naming a file, a bad rule file) run the CLI as a child process; argument
 * errors run it in-process (runCli) to spare the 2-core machine.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { startSandbox } from '../../src/sandbox/index.js';
import { HANG_MS, runCliCaptured, runGovtrail } from '../helpers/cli-process.js';
import { createTestDatabase, NEEDS_SERVER, onServer, type TestDatabase } from '../helpers/database.js';

/** The lines govtrail writes to stderr about the error (commander's help hint aside). */
const oneLine = (stderr: string) => stderr.split('\n').filter((l) => /^(govtrail: |error: )/.test(l));

describe('usage errors of the process: exit 2, one line', () => {
  it(
    'GOVTRAIL_DATA_DIR naming a file',
    async () => {
      const dir = mkdtempSync(path.join(tmpdir(), 'govtrail-datadir-'));
      const file = path.join(dir, 'not-a-directory');
      writeFileSync(file, 'x');
      // A command that only reads (settings) and one that creates the embedded database (migrate).
      for (const command of ['settings', 'migrate']) {
        const r = await runGovtrail([command], { GOVTRAIL_DATA_DIR: file });
        expect(r.code).toBe(2);
        expect(oneLine(r.stderr)).toEqual([
          `govtrail: GOVTRAIL_DATA_DIR: ${file} is not a directory (the embedded database needs a directory; or set DATABASE_URL)`,
        ]);
        expect(r.stderr).not.toMatch(/\n\s+at /);
      }
    },
    HANG_MS,
  );

  it.skipIf(!onServer)(
    `worker port in use (${NEEDS_SERVER})`,
    async () => {
      const testDb = await createTestDatabase();
      const sandbox = await startSandbox({ entries: 0 });
      const busy = net.createServer();
      await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve));
      const port = (busy.address() as net.AddressInfo).port;
      try {
        const r = await runGovtrail(['worker', '--no-initial-run'], {
          DATABASE_URL: testDb.url as string,
          GOVTRAIL_BASE_URL: sandbox.baseUrl,
          GOVTRAIL_CLIENT_ID: sandbox.credentials.secret.clientId,
          GOVTRAIL_CLIENT_SECRET: sandbox.credentials.secret.clientSecret,
          GOVTRAIL_HTTP_PORT: String(port),
          GOVTRAIL_SYSLOG_URL: 'tcp://127.0.0.1:9',
        });
        expect(r.code).toBe(2);
        expect(oneLine(r.stderr)).toEqual([
          `govtrail: GOVTRAIL_HTTP_PORT: port ${port} is already in use: stop the other process or choose another port`,
        ]);
        expect(r.stderr).not.toMatch(/\n\s+at /);
      } finally {
        await new Promise<void>((resolve) => busy.close(() => resolve()));
        await sandbox.close();
        await testDb.close();
      }
    },
    HANG_MS,
  );

  it.skipIf(!onServer)(
    `a bad rule file (${NEEDS_SERVER})`,
    async () => {
      const testDb = await createTestDatabase();
      const dir = mkdtempSync(path.join(tmpdir(), 'govtrail-rules-'));
      const rules = path.join(dir, 'rules.yaml');
      writeFileSync(rules, 'rules:\n  - id: X\n    nonsense: [\n');
      try {
        const r = await runGovtrail(['alerts', 'test'], {
          GOVTRAIL_ALERT_RULES: rules,
          DATABASE_URL: testDb.url as string,
        });
        expect(r.code).toBe(2);
        expect(oneLine(r.stderr)).toHaveLength(1);
        expect(oneLine(r.stderr)[0]).toMatch(/rules\.yaml.*\[RULES_INVALID\]$/);
      } finally {
        await testDb.close();
      }
    },
    HANG_MS,
  );
});

describe('bad arguments: exit 2, one line, nothing run', () => {
  let testDb: TestDatabase | undefined;
  let env: Record<string, string> = {};

  beforeAll(async () => {
    if (!onServer) return;
    testDb = await createTestDatabase();
    env = { DATABASE_URL: testDb.url as string, LOG_LEVEL: 'warn' };
  });

  afterEach(() => {
    vi.unstubAllEnvs();
    vi.restoreAllMocks();
  });

  afterAll(async () => {
    await testDb?.close();
  });

  it.each([
    [['demo', '--entries', '-5'], /--entries.*expected a whole number of at least 1, got "-5"/],
    [['alerts', 'list', '--limit', '-3'], /--limit.*expected a whole number of at least 1, got "-3"/],
    [['alerts', 'list', '--limit', 'abc'], /--limit.*expected a whole number of at least 1, got "abc"/],
    [['alerts', 'list', '--since', 'yesterday'], /--since.*not a time: "yesterday"/],
    [['report', '--out', 'r.html', '--to', 'soon'], /--to.*not a time: "soon"/],
    [['export', 'evidence', '--from', 'x', '--to', '2025-01-01', '--out', 'e.csv'], /--from.*not a time/],
  ])('govtrail %j', async (argv, message) => {
    // No database is reachable from here: a parse that let the value through would fail otherwise.
    const r = await runCliCaptured(argv, { DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none' });
    expect(r.code).toBe(2);
    expect(oneLine(r.stderr)).toHaveLength(1);
    expect(oneLine(r.stderr)[0]).toMatch(message);
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });

  it.skipIf(!onServer)(`alerts list --tenant of a tenant never stored (${NEEDS_SERVER})`, async () => {
    const r = await runCliCaptured(['alerts', 'list', '--tenant', 'nobody-here'], env);
    expect(r.code).toBe(2);
    expect(oneLine(r.stderr)).toEqual([
      expect.stringMatching(/^govtrail: --tenant: no entries stored for tenant "nobody-here"/),
    ]);
    expect(r.stdout).toBe('');
  });

  it.skipIf(!onServer)(
    `export evidence --out in a missing directory, or a directory (${NEEDS_SERVER})`,
    async () => {
      const dir = mkdtempSync(path.join(tmpdir(), 'govtrail-out-'));
      mkdirSync(path.join(dir, 'a-directory'));
      const period = ['--from', '2025-01-01', '--to', '2026-01-01'];
      const missing = await runCliCaptured(
        ['export', 'evidence', ...period, '--out', path.join(dir, 'no', 'such', 'e.csv')],
        env,
      );
      expect(missing.code).toBe(2);
      expect(oneLine(missing.stderr)).toEqual([
        expect.stringMatching(/^govtrail: --out: directory ".*" does not exist$/),
      ]);
      const isDir = await runCliCaptured(
        ['export', 'evidence', ...period, '--out', path.join(dir, 'a-directory')],
        env,
      );
      expect(isDir.code).toBe(2);
      expect(oneLine(isDir.stderr)).toEqual([
        expect.stringMatching(/^govtrail: --out: ".*a-directory" is a directory, not a file$/),
      ]);
    },
  );
});
