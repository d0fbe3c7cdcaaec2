/**
 * `govtrail owners delete` against the sandbox tenant: deleted, absent, dry run, awkward ids, the
 * refusal without --yes off a terminal — and an owner_removal row for every call. Most cases run
 * the CLI in-process (runCli, environment stubbed) to spare the 2-core machine; the refusal runs
 * as a real child process, whose stdin is a pipe and so certainly not a terminal.
 */
import { spawn } from 'node:child_process';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { type OwnerTuple, type Sandbox, startSandbox } from '../../src/sandbox/index.js';
import { listOwnerRemovals } from '../../src/store/read/owner-removals.js';
import { runCliCaptured } from '../helpers/cli-process.js';
import { createTestDatabase, NEEDS_SERVER, onServer, type TestDatabase } from '../helpers/database.js';

const ROOT = new URL('../../', import.meta.url).pathname;

function args(o: OwnerTuple): string[] {
  return [
    '--app',
    o.appId,
    '--resource-type',
    o.resourceTypeId,
    '--resource',
    o.resourceId,
    '--role',
    o.roleSlug,
    '--entitlement-app',
    o.entitlementAppId,
    '--entitlement',
    o.entitlementId,
  ];
}

describe('owners delete', () => {
  let testDb: TestDatabase | undefined;
  let sandbox: Sandbox;
  let env: Record<string, string> = {};

  beforeAll(async () => {
    sandbox = await startSandbox({ entries: 0 });
    if (!onServer) return;
    testDb = await createTestDatabase();
    env = {
      DATABASE_URL: testDb.url as string,
      GOVTRAIL_BASE_URL: sandbox.baseUrl,
      GOVTRAIL_CLIENT_ID: sandbox.credentials.secret.clientId,
      GOVTRAIL_CLIENT_SECRET: sandbox.credentials.secret.clientSecret,
      GOVTRAIL_TENANT: 'acme',
      GOVTRAIL_HTTP_RETRY_BASE: '1ms',
      GOVTRAIL_HTTP_RETRY_MAX_DELAY: '5ms',
      LOG_LEVEL: 'warn',
    };
  });

  afterEach(() => {
    vi.unstubAllEnvs();
    vi.restoreAllMocks();
  });

  afterAll(async () => {
    await sandbox.close();
    await testDb?.close();
  });

  /** Runs the CLI in-process with the test environment; returns its exit code and output. */
  const cli = (argv: string[]) => runCliCaptured(argv, env);

  const rows = () => listOwnerRemovals((testDb as TestDatabase).database.db);

  it.skipIf(!onServer)(
    `deletes an owner, then reports it absent on the second call (${NEEDS_SERVER})`,
    async () => {
      const owner = sandbox.owners.list()[0] as OwnerTuple;
      const before = (await rows()).length;
      const first = await cli(['owners', 'delete', ...args(owner), '--yes']);
      expect(first).toMatchObject({ code: 0, stdout: 'deleted\n' });
      expect(sandbox.owners.has(owner)).toBe(false);
      const second = await cli(['owners', 'delete', ...args(owner), '--yes']);
      expect(second.code).toBe(0);
      expect(second.stdout).toMatch(/^absent/);
      const recorded = (await rows()).slice(before);
      // Each call: its intent before the request, its outcome after (INSERT-only, two rows).
      expect(recorded.map((r) => [r.outcome, r.httpStatus, r.dryRun, r.tenantId])).toEqual([
        ['sending', null, false, 'acme'],
        ['deleted', 200, false, 'acme'],
        ['sending', null, false, 'acme'],
        ['absent', 404, false, 'acme'],
      ]);
      expect(recorded[0]).toMatchObject({ ...owner, error: null });
      expect(recorded[1]).toMatchObject({ ...owner, error: null });
    },
  );

  it.skipIf(!onServer)(
    `deletes owners whose ids hold "/", "%", "?", "#" and unicode (${NEEDS_SERVER})`,
    async () => {
      const awkward = sandbox.owners
        .list()
        .filter((o) => Object.values(o).some((v) => /[/%?#]|[^\x00-\x7f]/.test(v)));
      expect(awkward.length).toBeGreaterThanOrEqual(3);
      for (const owner of awkward) {
        const before = (await rows()).length;
        const r = await cli(['owners', 'delete', ...args(owner), '--yes']);
        expect(r, JSON.stringify(owner)).toMatchObject({ code: 0, stdout: 'deleted\n' });
        expect(sandbox.owners.has(owner)).toBe(false);
        const recorded = (await rows()).slice(before);
        // Stored as given, not encoded: the audit trail names the resource a person would recognise.
        expect(recorded).toEqual([
          expect.objectContaining({ ...owner, outcome: 'sending' }),
          expect.objectContaining({ ...owner, outcome: 'deleted' }),
        ]);
      }
    },
  );

  it.skipIf(!onServer)(
    `dry run prints the encoded URL and body, sends nothing, records dry_run (${NEEDS_SERVER})`,
    async () => {
      const owner: OwnerTuple = {
        appId: 'app 1',
        resourceTypeId: 'repo',
        resourceId: 'acme/api',
        roleSlug: 'admin',
        entitlementAppId: 'okta',
        entitlementId: 'grüppe #1',
      };
      sandbox.owners.add(owner);
      const deletes = sandbox.stats.deleteRequests;
      const tokens = sandbox.stats.tokenRequests;
      const r = await cli(['owners', 'delete', ...args(owner), '--dry-run']);
      expect(r.code).toBe(0);
      expect(r.stdout).toContain(
        `DELETE ${sandbox.baseUrl}/api/v2/apps/app%201/resource_types/repo/resources/acme%2Fapi/owners/entitlements/admin/okta/gr%C3%BCppe%20%231`,
      );
      expect(r.stdout).toContain('{"appEntitlementRef":{"appId":"okta","id":"grüppe #1"}}');
      expect(sandbox.stats.deleteRequests).toBe(deletes);
      expect(sandbox.stats.tokenRequests).toBe(tokens);
      expect(sandbox.owners.has(owner)).toBe(true);
      const last = (await rows()).at(-1);
      expect(last).toMatchObject({ ...owner, outcome: 'dry_run', dryRun: true, httpStatus: null });
    },
  );

  it.skipIf(!onServer)(`records a failed call and exits 1 (${NEEDS_SERVER})`, async () => {
    const owner = sandbox.owners.list()[0] as OwnerTuple;
    sandbox.faults.add({ route: 'delete', kind: '403', times: 1 });
    const r = await cli(['owners', 'delete', ...args(owner), '--yes']);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/owner not deleted: PERMISSION_DENIED/);
    const last = (await rows()).at(-1);
    expect(last).toMatchObject({ outcome: 'failed', httpStatus: 403, dryRun: false });
    expect(last?.error).not.toContain(sandbox.credentials.secret.clientSecret);
  });

  it.skipIf(!onServer)(
    `refuses without --yes when stdin is not a terminal, exit 2, nothing sent (${NEEDS_SERVER})`,
    async () => {
      const owner = sandbox.owners.list()[0] as OwnerTuple;
      const before = (await rows()).length;
      const deletes = sandbox.stats.deleteRequests;
      const child = spawn(
        process.execPath,
        ['--import', 'tsx', 'src/main.ts', 'owners', 'delete', ...args(owner)],
        { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['pipe', 'pipe', 'pipe'] },
      );
      let stderr = '';
      child.stderr.on('data', (d: Buffer) => {
        stderr += d.toString();
      });
      child.stdin.end('y\n'); // even a "y" on a pipe is not a confirmation
      const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
      expect(code).toBe(2);
      expect(stderr).toMatch(/refusing to delete without --yes/);
      expect(sandbox.stats.deleteRequests).toBe(deletes);
      expect((await rows()).length).toBe(before);
    },
  );

  it.skipIf(!onServer)(
    `killed while the DELETE is in flight: the intent row is already there (${NEEDS_SERVER})`,
    async () => {
      const owner = sandbox.owners.list()[0] as OwnerTuple;
      const before = (await rows()).length;
      const deletes = sandbox.stats.deleteRequests;
      // The tenant holds the DELETE: no answer until the connection closes.
      sandbox.faults.add({ route: 'delete', kind: 'hang', times: 1 });
      const child = spawn(
        process.execPath,
        ['--import', 'tsx', 'src/main.ts', 'owners', 'delete', ...args(owner), '--yes'],
        { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'ignore'] },
      );
      const closed = new Promise<void>((resolve) => child.on('close', () => resolve()));
      try {
        // Wait (without a deadline of its own: the test's timeout is the failure) until it is in flight.
        while (sandbox.stats.deleteRequests === deletes) await new Promise((r) => setTimeout(r, 50));
      } finally {
        child.kill('SIGKILL');
        await closed;
      }
      const recorded = (await rows()).slice(before);
      expect(recorded).toEqual([expect.objectContaining({ ...owner, outcome: 'sending', httpStatus: null })]);
    },
    120_000,
  );
});
