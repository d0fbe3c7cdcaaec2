import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig, parseDurationSetting } from '../../src/config/settings.js';
import { ConfigError } from '../../src/core/errors.js';

const load = (env: Record<string, string>, cwd?: string) =>
  loadConfig(env, { dotenv: false, ...(cwd ? { cwd } : {}) });

function settingOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (err) {
    if (err instanceof ConfigError) return err.setting;
    throw err;
  }
  return undefined;
}

describe('config', () => {
  it('configures no tenant when nothing is set, with the documented defaults', () => {
    const c = load({});
    expect(c.tenants).toEqual([]);
    expect(c.databaseUrl).toBeUndefined();
    expect(c.schedule).toBe('*/15 * * * *');
    expect(c.reconcileSchedule).toBe('41 3 * * *');
    expect(c.pageSize).toBe(100);
    expect(c.lookbackMs).toBe(15 * 60_000);
    expect(c.httpPort).toBe(9464);
    expect(c.http).toMatchObject({
      connectTimeoutMs: 10_000,
      headersTimeoutMs: 30_000,
      bodyTimeoutMs: 60_000,
      maxAttempts: 6,
    });
    expect(Object.isFrozen(c) && Object.isFrozen(c.http)).toBe(true);
  });

  it('reads the reconcile schedule, turns it off with "off", and names the variable when it is bad', () => {
    expect(load({ GOVTRAIL_RECONCILE_SCHEDULE: '0 */6 * * *' }).reconcileSchedule).toBe('0 */6 * * *');
    expect(load({ GOVTRAIL_RECONCILE_SCHEDULE: 'off' }).reconcileSchedule).toBeUndefined();
    expect(load({ GOVTRAIL_RECONCILE_SCHEDULE: 'OFF' }).reconcileSchedule).toBeUndefined();
    expect(settingOf(() => load({ GOVTRAIL_RECONCILE_SCHEDULE: 'daily' }))).toBe(
      'GOVTRAIL_RECONCILE_SCHEDULE',
    );
  });

  it('takes the tenant host from the client id and names the tenant after it', () => {
    const c = load({
      GOVTRAIL_CLIENT_ID: 'calm-otter-1@acme.conductor.one/pcc',
      GOVTRAIL_CLIENT_SECRET: 's3cr3t-value',
    });
    expect(c.tenants[0]).toMatchObject({ name: 'acme.conductor.one', baseUrl: 'https://acme.conductor.one' });
  });

  it('names the variable to fix', () => {
    expect(settingOf(() => load({ GOVTRAIL_CLIENT_ID: 'x@h.example/pcc' }))).toBe('GOVTRAIL_CLIENT_SECRET');
    expect(settingOf(() => load({ GOVTRAIL_CLIENT_ID: 'no-host', GOVTRAIL_CLIENT_SECRET: 'x' }))).toBe(
      'GOVTRAIL_TENANT_DOMAIN',
    );
    expect(
      settingOf(() =>
        load({
          GOVTRAIL_CLIENT_ID: 'a',
          GOVTRAIL_CLIENT_SECRET: 'b',
          GOVTRAIL_BASE_URL: 'http://acme.example',
        }),
      ),
    ).toBe('GOVTRAIL_BASE_URL');
    expect(settingOf(() => load({ GOVTRAIL_LOOKBACK: 'a while' }))).toBe('GOVTRAIL_LOOKBACK');
    expect(settingOf(() => load({ GOVTRAIL_HTTP_PORT: '99999' }))).toBe('GOVTRAIL_HTTP_PORT');
    expect(settingOf(() => load({ DATABASE_URL: 'mysql://x' }))).toBe('DATABASE_URL');
    expect(settingOf(() => load({ LOG_LEVEL: 'loud' }))).toBe('LOG_LEVEL');
    expect(settingOf(() => load({ GOVTRAIL_WEBHOOK_URL: 'not a url' }))).toBe('GOVTRAIL_WEBHOOK_URL');
  });

  it('allows plain http only to loopback hosts', () => {
    const c = load({
      GOVTRAIL_CLIENT_ID: 'a',
      GOVTRAIL_CLIENT_SECRET: 'b',
      GOVTRAIL_BASE_URL: 'http://127.0.0.1:8080/',
    });
    expect(c.tenants[0]?.baseUrl).toBe('http://127.0.0.1:8080');
  });

  it('clamps the page size to 10–100', () => {
    const base = { GOVTRAIL_CLIENT_ID: 'a@h.example/x', GOVTRAIL_CLIENT_SECRET: 'b' };
    expect(load({ ...base, GOVTRAIL_PAGE_SIZE: '5' }).tenants[0]?.pageSize).toBe(10);
    expect(load({ ...base, GOVTRAIL_PAGE_SIZE: '500' }).tenants[0]?.pageSize).toBe(100);
  });

  it('reads secrets from NAME_FILE', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'govtrail-config-'));
    writeFileSync(path.join(dir, 'secret'), 'from-a-file\n');
    const c = load({ GOVTRAIL_CLIENT_ID: 'a@h.example/x', GOVTRAIL_CLIENT_SECRET_FILE: 'secret' }, dir);
    expect(c.tenants[0]?.clientSecret).toBe('from-a-file');
  });

  it('reads several tenants from a YAML file and validates them', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'govtrail-config-'));
    writeFileSync(path.join(dir, 's'), 'secret-two');
    writeFileSync(
      path.join(dir, 'tenants.yaml'),
      `schedule: "*/5 * * * *"\ntenants:\n  - name: one\n    domain: one.example\n    client_id: c1\n    client_secret: s1\n  - name: two\n    base_url: http://localhost:9000\n    client_id: c2\n    client_secret_file: s\n    page_size: 5\n    lookback: 30m\n`,
    );
    const c = load({ GOVTRAIL_CONFIG: 'tenants.yaml' }, dir);
    expect(c.schedule).toBe('*/5 * * * *');
    expect(c.tenants.map((t) => [t.name, t.baseUrl, t.clientSecret, t.pageSize, t.lookbackMs])).toEqual([
      ['one', 'https://one.example', 's1', 100, 900_000],
      ['two', 'http://localhost:9000', 'secret-two', 10, 1_800_000],
    ]);

    writeFileSync(
      path.join(dir, 'dup.yaml'),
      'tenants:\n  - {name: a, domain: a.example, client_id: x, client_secret: y}\n  - {name: a, domain: b.example, client_id: x, client_secret: y}\n',
    );
    expect(() => load({ GOVTRAIL_CONFIG: 'dup.yaml' }, dir)).toThrow(/duplicate tenant name a/);
    writeFileSync(
      path.join(dir, 'typo.yaml'),
      'tenants:\n  - {name: a, domian: a.example, client_id: x, client_secret: y}\n',
    );
    expect(() => load({ GOVTRAIL_CONFIG: 'typo.yaml' }, dir)).toThrow(/domian/);
  });

  it('parses durations', () => {
    expect(parseDurationSetting('15m')).toBe(900_000);
    expect(parseDurationSetting('1h30m')).toBe(5_400_000);
    expect(parseDurationSetting('0')).toBe(0);
    expect(parseDurationSetting('250ms')).toBe(250);
    expect(parseDurationSetting('15 minutes')).toBeUndefined();
  });
});
