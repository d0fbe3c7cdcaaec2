/**
 * Tenant groups and labels (sql/0030, src/store/write/tenant-groups.ts, `govtrail tenants group |
 * label | list --group`, `--group` of sync, report and export ocsf, `govtrail readers`): the
 * configuration's groups and labels reach the registry; an operator's change wins over later loads
 * and every change is recorded with who made it; a group selects exactly its members in a run and
 * in the outputs; bad input exits 2 with one line. The `groups:` map's baseline is resolved against
 * the configuration file.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import pg from 'pg';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { stringify as toYaml } from 'yaml';
import { loadConfig } from '../../src/config/settings.js';
import { runCliCaptured } from '../helpers/cli-process.js';
import { NEEDS_SERVER, onServer } from '../helpers/database.js';
import { createHarness, type Harness } from '../helpers/harness.js';

let h: Harness | undefined;
afterEach(async () => {
  vi.unstubAllEnvs();
  vi.restoreAllMocks();
  await h?.close();
  h = undefined;
});

/** The CLI in-process (the helper the other CLI tests use), with its output as out/err. */
async function cli(...args: string[]): Promise<{ code: number; out: string; err: string }> {
  const r = await runCliCaptured(args, {});
  return { code: r.code, out: r.stdout, err: r.stderr };
}

/** Writes GOVTRAIL_CONFIG: tenants on the harness's sandbox with the given groups and labels. */
function configure(
  harness: Harness,
  tenants: Record<string, { groups?: string[]; labels?: Record<string, string> }>,
  groups: Record<string, unknown> = {},
): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'govtrail-groups-'));
  const file = path.join(dir, 'govtrail.yaml');
  writeFileSync(
    file,
    toYaml({
      groups,
      tenants: Object.entries(tenants).map(([name, m]) => ({
        name,
        base_url: harness.sandbox.baseUrl,
        client_id: harness.sandbox.credentials.secret.clientId,
        client_secret: harness.sandbox.credentials.secret.clientSecret,
        page_size: 50,
        ...m,
      })),
    }),
  );
  vi.stubEnv('GOVTRAIL_CONFIG', file);
  vi.stubEnv('DATABASE_URL', harness.testDb.url as string);
  vi.stubEnv('LOG_LEVEL', 'silent');
  return file;
}

function listed(out: string): string[] {
  return out
    .split('\n')
    .slice(1)
    .map((l) => l.split(/\s+/)[0] as string)
    .filter((t) => t !== '');
}

describe.skipIf(!onServer)(`tenant groups and labels${onServer ? '' : ` (${NEEDS_SERVER})`}`, () => {
  it('the configuration’s groups reach the registry; an operator’s change wins over reloads and is recorded', async () => {
    h = await createHarness({ entries: 20 });
    const file = configure(
      h,
      {
        x1: { groups: ['cust-x'], labels: { tier: 'gold' } },
        x2: { groups: ['cust-x'] },
        y1: { groups: ['cust-y'] },
      },
      { 'cust-x': { baseline: 'baselines/x.yaml' }, 'cust-y': {} },
    );
    const config = loadConfig(process.env);
    expect(config.groups.get('cust-x')?.baseline).toBe(path.join(path.dirname(file), 'baselines/x.yaml'));
    expect(config.groups.get('cust-y')).toEqual({ name: 'cust-y' });
    expect((await cli('tenants', 'sync')).code).toBe(0);
    const list = await cli('tenants', 'list', '--group', 'cust-x');
    expect(list.code).toBe(0);
    expect(listed(list.out)).toEqual(['x1', 'x2']);
    expect(list.out).toContain('tier=gold');

    const moved = await cli('tenants', 'group', 'y1', '+cust-x', '-cust-y');
    expect(moved).toMatchObject({ code: 0, out: 'y1: +cust-x, -cust-y\n' });
    expect((await cli('tenants', 'label', 'x1', 'tier=silver', 'region=eu')).out).toBe(
      'x1: tier=silver, region=eu\n',
    );
    // A reload keeps the operator's changes; a group the configuration no longer declares goes.
    configure(h, {
      x1: { groups: ['cust-x'], labels: { tier: 'gold' } },
      x2: {},
      y1: { groups: ['cust-y'] },
    });
    expect((await cli('tenants', 'sync')).code).toBe(0);
    expect(listed((await cli('tenants', 'list', '--group', 'cust-x')).out)).toEqual(['x1', 'y1']);
    expect(listed((await cli('tenants', 'list', '--group', 'cust-y')).out)).toEqual([]);
    expect((await cli('tenants', 'list', '--group', 'cust-y')).out).toBe('no tenant is in group cust-y\n');
    expect((await cli('tenants', 'list')).out).toMatch(/x1 .*tier=silver/);

    const { rows } = await sql<{
      tenant_id: string;
      kind: string;
      name: string;
      new_value: string | null;
      by: string;
    }>`
      select tenant_id, kind, name, new_value, changed_by as by from govtrail.tenant_change
      order by change_id`.execute(h.database.db);
    expect(rows.filter((r) => r.by === 'configuration').length).toBeGreaterThan(0);
    expect(rows).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ tenant_id: 'y1', kind: 'group', name: 'cust-x', new_value: 'member' }),
        expect.objectContaining({ tenant_id: 'y1', kind: 'group', name: 'cust-y', new_value: null }),
        expect.objectContaining({
          tenant_id: 'x2',
          kind: 'group',
          name: 'cust-x',
          new_value: null,
          by: 'configuration',
        }),
        expect.objectContaining({ tenant_id: 'x1', kind: 'label', name: 'tier', new_value: 'silver' }),
      ]),
    );
    expect(rows.find((r) => r.tenant_id === 'y1' && r.name === 'cust-x')?.by).toMatch(/@/);
    // The history is append-only.
    await expect(sql`delete from govtrail.tenant_change`.execute(h.database.db)).rejects.toThrow(
      /append-only/,
    );
    await expect(sql`delete from govtrail.tenant_group`.execute(h.database.db)).rejects.toThrow(
      /append-only/,
    );
  }, 60_000);

  it('--group selects exactly the group’s tenants in sync, report and export ocsf', async () => {
    h = await createHarness({ entries: 30 });
    configure(h, { a1: { groups: ['g'] }, a2: { groups: ['g'] }, b1: { groups: ['h'] } });
    const sync = await cli('sync', '--group', 'g');
    expect(sync.code).toBe(0);
    const { rows } = await sql<{ tenant_id: string }>`
      select distinct tenant_id from govtrail.sync_run order by 1`.execute(h.database.db);
    expect(rows.map((r) => r.tenant_id)).toEqual(['a1', 'a2']);
    expect((await cli('sync', '--group', 'h')).code).toBe(0);

    const dir = mkdtempSync(path.join(tmpdir(), 'govtrail-group-out-'));
    const report = await cli(
      'report',
      '--group',
      'g',
      '--out',
      path.join(dir, 'report'),
      '--from',
      '2000-01-01',
    );
    expect(report.code).toBe(0);
    expect(readdirSync(path.join(dir, 'report')).sort()).toEqual(['a1.html', 'a2.html', 'index.html']);
    const index = readFileSync(path.join(dir, 'report', 'index.html'), 'utf8');
    expect(index).toContain('Group g');
    expect(index).toContain('a1.html');
    expect(index).not.toContain('b1');
    const ocsf = await cli(
      'export',
      'ocsf',
      '--group',
      'g',
      '--from',
      '2000-01-01',
      '--to',
      '2100-01-01',
      '--out',
      path.join(dir, 'ocsf'),
    );
    expect(ocsf.code).toBe(0);
    expect(readdirSync(path.join(dir, 'ocsf')).sort()).toEqual(['a1.jsonl', 'a2.jsonl']);
    for (const t of ['a1', 'a2']) {
      const lines = readFileSync(path.join(dir, 'ocsf', `${t}.jsonl`), 'utf8')
        .trim()
        .split('\n');
      expect(lines.length).toBeGreaterThan(0);
      expect(lines.every((l) => l.includes(`"${t}"`))).toBe(true);
    }
    expect(existsSync(path.join(dir, 'ocsf', 'b1.jsonl'))).toBe(false);

    // The evidence pack of the group: one pack per member, a README naming the group and its
    // members, group.json binding them; verify-pack checks the whole and refuses a change.
    const packDir = path.join(dir, 'pack');
    const pack = await cli(
      'export',
      'evidence-pack',
      '--group',
      'g',
      '--from',
      '2000-01-01',
      '--to',
      '2100-01-01',
      '--interval',
      '15m',
      '--out',
      packDir,
    );
    expect(pack.err).toBe('');
    expect(pack.code).toBe(0);
    expect(readdirSync(packDir).sort()).toEqual([
      'README.txt',
      'a1',
      'a1.tar.gz',
      'a2',
      'a2.tar.gz',
      'group.json',
    ]);
    const readme = readFileSync(path.join(packDir, 'README.txt'), 'utf8');
    expect(readme).toMatch(/^Group: +g$/m);
    expect(readme).toMatch(/^Members: +a1, a2$/m);
    expect(readFileSync(path.join(packDir, 'a2', 'README.txt'), 'utf8')).toMatch(/^Members: +a1, a2$/m);
    const verified = await cli('verify-pack', packDir);
    expect(verified.code, verified.out).toBe(0);
    expect(verified.out).toMatch(/group pack verified$/m);
    writeFileSync(path.join(packDir, 'README.txt'), readme.replace('a1, a2', 'a1, a2, b1'));
    const edited = await cli('verify-pack', packDir);
    expect(edited.code).toBe(1);
    expect(edited.out).toMatch(/README.txt: modified/);
    writeFileSync(path.join(packDir, 'README.txt'), readme);
    writeFileSync(path.join(packDir, 'b1'), 'not a member');
    expect((await cli('verify-pack', packDir)).out).toMatch(/b1: not part of the group pack/);
  }, 60_000);

  it('bad input exits 2 with one line', async () => {
    h = await createHarness({ entries: 5 });
    configure(h, { a1: { groups: ['g'] } });
    expect((await cli('tenants', 'sync')).code).toBe(0);
    const cases: [string[], RegExp][] = [
      [['sync', '--tenant', 'a1', '--group', 'g'], /--tenant and --group exclude each other/],
      [['sync', '--group', 'nobody'], /--group: no configured tenant is in group "nobody"/],
      [['report', '--group', 'nobody', '--out', '/tmp/x'], /group "nobody" has no member tenants/],
      [['sync', '--group', 'bad name'], /--group: a group name is/],
      [['tenants', 'group', 'a1', 'g2'], /expected \+GROUP or -GROUP/],
      [['tenants', 'group', 'a1', '+g2', '-g2'], /both added and removed: g2/],
      [['tenants', 'group', 'nobody', '+g2'], /no tenant named "nobody" is registered/],
      [['tenants', 'label', 'a1', 'novalue'], /expected KEY=VALUE/],
      [['tenants', 'label', 'a1', 'bad key=1'], /a label key is/],
      [['readers', 'grant', 'someone'], /name at least one --tenant or --group/],
      [['readers', 'grant', `gt_nobody_${randomBytes(4).toString('hex')}`, '--group', 'g'], /no role named/],
      [['readers', 'grant', 'govtrail_writer', '--group', 'g'], /govtrail_writer/],
    ];
    for (const [args, message] of cases) {
      const r = await cli(...args);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.err, args.join(' ')).toMatch(message);
      expect(r.err.trim().split('\n'), args.join(' ')).toHaveLength(1);
    }
    configure(h, { a1: { groups: ['no spaces'] } });
    expect(() => loadConfig(process.env)).toThrow(/tenants\[0\]\.groups: a group name is/);
    configure(h, { a1: {} }, { g: { baseline: 'x', colour: 'red' } });
    expect(() => loadConfig(process.env)).toThrow(/groups\.g: colour/);
  }, 60_000);

  it('readers grant, list and revoke a login by group', async () => {
    h = await createHarness({ entries: 5 });
    configure(h, { a1: { groups: ['g'] }, b1: {} });
    expect((await cli('tenants', 'sync')).code).toBe(0);
    const login = `gt_readers_cli_${process.pid}_${randomBytes(3).toString('hex')}`;
    const admin = new pg.Client({ connectionString: h.testDb.url as string });
    await admin.connect();
    try {
      await admin.query(`create role ${login} login`);
      expect((await cli('readers', 'grant', login, '--group', 'g', '--tenant', 'b1')).out).toBe(
        `${login}: added tenant b1, group g\n`,
      );
      const list = await cli('readers', 'list');
      expect(list.out).toMatch(new RegExp(`${login}\\s+b1\\s+g\\s+a1,b1\\s+govtrail_scoped_reader`));
      expect((await cli('readers', 'revoke', login, '--tenant', 'b1')).out).toBe(
        `${login}: removed tenant b1\n`,
      );
      expect((await cli('readers', 'revoke', login)).out).toBe(
        `${login}: removed group g; govtrail_scoped_reader revoked\n`,
      );
      expect((await cli('readers', 'list')).out).toBe('no scoped readers\n');
      // As the writer: refused with one line naming the role to use.
      const writer = `gt_readers_writer_${process.pid}_${randomBytes(3).toString('hex')}`;
      await admin.query(`create role ${writer} login in role govtrail_writer`);
      try {
        const u = new URL(h?.testDb.url as string);
        u.username = writer;
        vi.stubEnv('DATABASE_URL', u.toString());
        const refused = await cli('readers', 'grant', login, '--group', 'g');
        expect(refused.code).toBe(2);
        expect(refused.err).toMatch(/run govtrail readers as the owner of schema govtrail/);
        expect(refused.err.trim().split('\n')).toHaveLength(1);
      } finally {
        await admin.query(`drop role if exists ${writer}`).catch(() => {});
      }
    } finally {
      await admin.query(`drop role if exists ${login}`).catch(() => {});
      await admin.end();
    }
  }, 60_000);
});
