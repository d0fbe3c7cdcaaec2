/**
 * `govtrail reconcile` and `govtrail demo` as a user runs them: exit 0 when the source and the
 * store agree, 1 while they differ (again on a second run, with nothing new recorded), 2 on a usage
 * error; --help explains each kind; the demo shows a reconcile finding a rewritten and a missing
 * entry, with AIGOV-018 alerts.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { runCli } from '../../src/cli.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { createHarness, type Harness } from '../helpers/harness.js';

let h: Harness | undefined;
let db: TestDatabase | undefined;
afterEach(async () => {
  vi.unstubAllEnvs();
  vi.restoreAllMocks();
  await h?.close();
  await db?.close();
  h = undefined;
  db = undefined;
});

function useDatabase(url: string | undefined): void {
  if (url !== undefined) vi.stubEnv('DATABASE_URL', url);
  else vi.stubEnv('GOVTRAIL_DATA_DIR', mkdtempSync(path.join(tmpdir(), 'govtrail-data-')));
}

/** Runs the CLI, capturing stdout. */
async function cli(...args: string[]): Promise<{ code: number; out: string }> {
  const out: string[] = [];
  const spy = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    out.push(String(chunk));
    return true;
  });
  try {
    const code = await runCli(['node', 'govtrail', ...args]);
    return { code, out: out.join('') };
  } finally {
    spy.mockRestore();
  }
}

describe('govtrail reconcile', () => {
  it('exits 0 when the source and the store agree, 1 while they differ, with the per-tenant table', async () => {
    h = await createHarness({ entries: 150, seed: 41 });
    vi.stubEnv('GOVTRAIL_BASE_URL', h.sandbox.baseUrl);
    vi.stubEnv('GOVTRAIL_CLIENT_ID', h.sandbox.credentials.secret.clientId);
    vi.stubEnv('GOVTRAIL_CLIENT_SECRET', h.sandbox.credentials.secret.clientSecret);
    vi.stubEnv('GOVTRAIL_PAGE_SIZE', '20');
    vi.stubEnv('GOVTRAIL_TENANT', 'acme');
    vi.stubEnv('LOG_LEVEL', 'silent');
    useDatabase(h.testDb.url);
    expect((await cli('sync')).code).toBe(0);

    const clean = await cli('reconcile');
    expect(clean.code).toBe(0);
    expect(clean.out).toMatch(/served\s+matched\s+new\s+changed\s+missing\s+expired\s+backdated/);
    expect(clean.out).toMatch(/agrees\s+150\s+150\s+0\s+0\s+0\s+0\s+0/);

    const entries = h.sandbox.history.entries() as Array<{ metadata: { id: string } }>;
    h.sandbox.history.rewrite(entries[70]?.metadata.id as string);
    h.sandbox.history.remove(entries[90]?.metadata.id as string);
    const dirty = await cli('reconcile');
    expect(dirty.code).toBe(1);
    expect(dirty.out).toMatch(/differs\s+149\s+148\s+0\s+1\s+1\s+0\s+0/);
    expect(dirty.out).toContain('changed_at_source');
    expect(dirty.out).toContain('missing_at_source');

    const again = await cli('reconcile', '--tenant', 'acme');
    expect(again.code).toBe(1);
    expect(again.out).toMatch(/differs\s+149\s+148\s+0\s+1\s+1\s+0\s+0/);
    expect(again.out).not.toContain('recorded by this run');
  });

  it('exits 2 for an unknown tenant, and --help explains every kind and the exit codes', async () => {
    vi.stubEnv('GOVTRAIL_BASE_URL', 'http://127.0.0.1:9');
    vi.stubEnv('GOVTRAIL_CLIENT_ID', 'x');
    vi.stubEnv('GOVTRAIL_CLIENT_SECRET', 'y');
    vi.stubEnv('LOG_LEVEL', 'silent');
    vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    expect((await cli('reconcile', '--tenant', 'nope')).code).toBe(2);
    const help = await cli('reconcile', '--help');
    expect(help.code).toBe(0);
    for (const kind of ['changed_at_source', 'missing_at_source', 'expired_at_source', 'backdated'])
      expect(help.out).toContain(kind);
    expect(help.out).toMatch(/Exit codes: 0 .* 1 .* 2/s);
  });
});

describe('govtrail demo', () => {
  it('shows a reconcile finding a rewritten and a missing entry, with AIGOV-018 alerts', async () => {
    db = await createTestDatabase();
    useDatabase(db.url);
    // A data directory that does not exist yet: with DATABASE_URL set nothing else creates it.
    vi.stubEnv('GOVTRAIL_DATA_DIR', path.join(mkdtempSync(path.join(tmpdir(), 'govtrail-demo-')), 'fresh'));
    vi.stubEnv('LOG_LEVEL', 'silent');
    const { code, out } = await cli('demo', '--entries', '120');
    expect(code).toBe(0);
    expect(out).toMatch(/differs\s+133\s+132\s+0\s+1\s+1\s+0\s+0/);
    expect(out).toMatch(/changed_at_source\s+\S+\s+\(stored original kept/);
    expect(out).toMatch(/missing_at_source\s+\S+/);
    expect(out.match(/\[HIGH\] AIGOV-018/g)).toHaveLength(2);
    if (db.url !== undefined) {
      const { rows } = await sql<{ kind: string }>`
        select kind from govtrail.source_discrepancy order by kind`.execute(db.database.db);
      expect(rows.map((r) => r.kind)).toEqual(['changed_at_source', 'missing_at_source']);
    }
  });
});
