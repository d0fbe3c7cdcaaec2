/**
 * `govtrail export ocsf` as a user runs it: one JSON object a line, one Entity Management event per
 * stored entry and one Detection Finding per alert of the period, each valid against the 1.8.0
 * export; --kind selects the class; the summary counts what was written; bad input exits 2 with a
 * one-line reason naming the option; --help explains.
 */
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { runCli } from '../../src/cli.js';
import { NEEDS_SERVER, onServer } from '../helpers/database.js';
import { createHarness, type Harness } from '../helpers/harness.js';
import { ocsfProblems } from '../helpers/ocsf.js';

let h: Harness | undefined;
let dir: string;

beforeAll(async () => {
  if (!onServer) return;
  h = await createHarness({ entries: 40, seed: 11, scenarios: true });
  expect((await h.sync()).status).toBe('succeeded');
  h.sandbox.appendScenarios();
  h.sandbox.history.appendEntry({ changeKind: 'CHANGE_KIND_NEW_ONE', set: { discoveryInterval: '7001s' } });
  expect((await h.sync()).status).toBe('succeeded');
  dir = mkdtempSync(path.join(tmpdir(), 'govtrail-ocsf-'));
}, 60_000);
afterAll(async () => {
  vi.unstubAllEnvs();
  await h?.close();
});

/** Runs the CLI against the harness database, capturing stdout and stderr. */
async function cli(...args: string[]): Promise<{ code: number; out: string; err: string }> {
  vi.stubEnv('DATABASE_URL', h?.testDb.url as string);
  vi.stubEnv('LOG_LEVEL', 'silent');
  const out: string[] = [];
  const err: string[] = [];
  const o = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    out.push(String(chunk));
    return true;
  });
  const e = vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
    err.push(String(chunk));
    return true;
  });
  try {
    const code = await runCli(['node', 'govtrail', ...args]);
    return { code, out: out.join(''), err: err.join('') };
  } finally {
    o.mockRestore();
    e.mockRestore();
  }
}

function readEvents(file: string): Record<string, unknown>[] {
  const text = readFileSync(file, 'utf8');
  expect(text.endsWith('\n')).toBe(true);
  return text
    .slice(0, -1)
    .split('\n')
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

async function count(table: 'history_entry' | 'alert'): Promise<number> {
  const { rows } = await sql<{
    n: number;
  }>`select count(*)::int as n from ${sql.table(`govtrail.${table}`)}`.execute((h as Harness).database.db);
  return rows[0]?.n ?? 0;
}

const WHOLE = ['--from', '2000-01-01', '--to', '2100-01-01T00:00:00Z'];

describe.skipIf(!onServer)(`govtrail export ocsf (${onServer ? 'server' : NEEDS_SERVER})`, () => {
  it('writes one valid event a line: an Entity Management per entry, a Detection Finding per alert', async () => {
    const out = path.join(dir, 'all.jsonl');
    const res = await cli('export', 'ocsf', ...WHOLE, '--out', out);
    expect(res.err).toBe('');
    expect(res.code).toBe(0);
    const events = readEvents(out);
    const entries = await count('history_entry');
    const alerts = await count('alert');
    expect(alerts).toBeGreaterThan(10);
    expect(events.filter((e) => e['class_uid'] === 3004)).toHaveLength(entries);
    expect(events.filter((e) => e['class_uid'] === 2004)).toHaveLength(alerts);
    expect(events).toHaveLength(entries + alerts);
    // Entries first, then alerts.
    const firstFinding = events.findIndex((e) => e['class_uid'] === 2004);
    expect(events.slice(firstFinding).every((e) => e['class_uid'] === 2004)).toBe(true);
    expect(ocsfProblems(events)).toEqual([]);
    expect(events.some((e) => e['activity_name'] === 'CHANGE_KIND_NEW_ONE')).toBe(true);
    const metadata = events[0]?.['metadata'] as { product?: { version?: string } } | undefined;
    expect(metadata?.product?.version).toBe(
      (JSON.parse(readFileSync('package.json', 'utf8')) as { version: string }).version,
    );
    expect(res.out).toMatch(new RegExp(`Entity Management \\(3004\\)\\s+${entries}\\b`));
    expect(res.out).toMatch(new RegExp(`Detection Finding \\(2004\\)\\s+${alerts}\\b`));
    expect(res.out).toContain(out);
    expect(existsSync(`${out}.partial`)).toBe(false);
  });

  it('--kind changes and --kind alerts write one class each; a period selects', async () => {
    const changes = path.join(dir, 'changes.jsonl');
    const alerts = path.join(dir, 'alerts.jsonl');
    expect(
      (await cli('export', 'ocsf', ...WHOLE, '--kind', 'changes', '--tenant', 'acme', '--out', changes)).code,
    ).toBe(0);
    expect((await cli('export', 'ocsf', ...WHOLE, '--kind', 'alerts', '--out', alerts)).code).toBe(0);
    const c = readEvents(changes);
    const a = readEvents(alerts);
    expect(c.every((e) => e['class_uid'] === 3004)).toBe(true);
    expect(c).toHaveLength(await count('history_entry'));
    expect(a.every((e) => e['class_uid'] === 2004)).toBe(true);
    expect(a).toHaveLength(await count('alert'));

    // The scenarios start a day after the seeded history: a window around the first of them.
    const times = c.map((e) => e['time'] as number);
    const from = new Date(times[10] as number);
    const to = new Date(times[20] as number);
    const some = path.join(dir, 'some.jsonl');
    const res = await cli(
      'export',
      'ocsf',
      '--from',
      from.toISOString(),
      '--to',
      to.toISOString(),
      '--out',
      some,
    );
    expect(res.code).toBe(0);
    const window = readEvents(some).filter((e) => e['class_uid'] === 3004);
    expect(window).toEqual(
      c
        .filter((e) => (e['time'] as number) >= from.getTime() && (e['time'] as number) < to.getTime())
        .map((e) => ({ ...e, metadata: expect.anything() })),
    );
    expect(window.length).toBeGreaterThanOrEqual(10);

    const none = path.join(dir, 'none.jsonl');
    const empty = await cli('export', 'ocsf', '--from', '2000-01-01', '--to', '2000-01-02', '--out', none);
    expect(empty.code).toBe(0);
    expect(readFileSync(none, 'utf8')).toBe('');
    expect(empty.out).toMatch(/Entity Management \(3004\)\s+0\b/);
  });

  it.each([
    [['--from', 'yesterday', '--to', '2100-01-01'], /^govtrail: --from: not a time: "yesterday"/],
    [['--from', '2000-01-01', '--to', '2025-02-30'], /^govtrail: --to: not a time/],
    [['--from', '2025-01-02', '--to', '2025-01-01'], /^govtrail: --to must be later than --from/],
    [
      [...WHOLE, '--kind', 'everything'],
      /^govtrail: --kind: unknown kind "everything" \(changes, alerts, compliance, all\)/,
    ],
    [
      [...WHOLE, '--kind', 'compliance'],
      /^govtrail: --kind compliance: no baseline has judged tenant acme \(set GOVTRAIL_BASELINE/,
    ],
    [[...WHOLE, '--tenant', 'nope'], /^govtrail: --tenant: no entries stored for tenant "nope"/],
  ])('exits 2 with a one-line reason for %j', async (args, reason) => {
    const res = await cli('export', 'ocsf', ...args, '--out', path.join(dir, 'bad.jsonl'));
    expect(res.code).toBe(2);
    expect(res.err).toMatch(reason);
    expect(res.err.trim().split('\n')).toHaveLength(1);
    expect(existsSync(path.join(dir, 'bad.jsonl'))).toBe(false);
  });

  it('exits 2 when the directory of --out does not exist', async () => {
    const res = await cli('export', 'ocsf', ...WHOLE, '--out', path.join(dir, 'missing', 'x.jsonl'));
    expect(res.code).toBe(2);
    expect(res.err).toMatch(/^govtrail: --out: directory ".*missing" does not exist\n$/);
  });

  it('--help explains the classes, the period, --kind and the exit codes', async () => {
    const help = await cli('export', 'ocsf', '--help');
    expect(help.code).toBe(0);
    for (const s of [
      'Entity Management',
      '3004',
      'Detection Finding',
      '2004',
      '--kind',
      'changes',
      'alerts',
      'JSON Lines',
      'docs/siem.md',
    ])
      expect(help.out).toContain(s);
    expect(help.out).toMatch(/Exit codes: 0 .* 1 .* 2/s);
    // export evidence is still there.
    const parent = await cli('export', '--help');
    expect(parent.out).toContain('evidence');
    expect(parent.out).toContain('ocsf');
  });
});
