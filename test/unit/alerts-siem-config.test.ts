/**
 * Configuration of the SIEM sinks: splunk_hec (YAML and GOVTRAIL_SPLUNK_HEC_*), its token kept as a
 * secret and never echoed, and the errors that name the setting.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig, sinkSecrets } from '../../src/config/settings.js';
import { ConfigError } from '../../src/core/errors.js';

const TOKEN = '0c1f5a2e-6b7d-4e8f-9a0b-1c2d3e4f5a6b';

function configError(fn: () => unknown): ConfigError {
  try {
    fn();
  } catch (err) {
    if (err instanceof ConfigError) return err;
    throw err;
  }
  throw new Error('no ConfigError was thrown');
}

const load = (env: Record<string, string>, cwd?: string) =>
  loadConfig(env, { dotenv: false, ...(cwd === undefined ? {} : { cwd }) });

describe('splunk_hec sink configuration', () => {
  it('from YAML: token_file, index, sourcetype, host; the token is a secret', () => {
    const d = mkdtempSync(path.join(tmpdir(), 'govtrail-hec-conf-'));
    writeFileSync(path.join(d, 'hec.token'), `${TOKEN}\n`);
    writeFileSync(
      path.join(d, 'g.yaml'),
      [
        'sinks:',
        '  - type: splunk_hec',
        '    name: splunk-sec',
        '    url: https://splunk.example.com:8088/services/collector/event',
        '    token_file: hec.token',
        '    index: security',
        '    sourcetype: ocsf:detection_finding',
        '    host: govtrail-prod',
        '    min_severity: high',
        '',
      ].join('\n'),
    );
    const config = load({ GOVTRAIL_CONFIG: 'g.yaml' }, d);
    const sink = config.sinks.find((s) => s.type === 'splunk_hec');
    expect(sink).toMatchObject({
      name: 'splunk-sec',
      url: 'https://splunk.example.com:8088/services/collector/event',
      token: TOKEN,
      index: 'security',
      sourcetype: 'ocsf:detection_finding',
      host: 'govtrail-prod',
      source: undefined,
      route: { minSeverity: 'high' },
    });
    expect(sinkSecrets(config)).toContain(TOKEN);
  });

  it('GOVTRAIL_SPLUNK_HEC_URL alone is refused naming the token variable', () => {
    const err = configError(() => load({ GOVTRAIL_SPLUNK_HEC_URL: 'https://splunk.example.com:8088' }));
    expect(err.setting).toBe('GOVTRAIL_SPLUNK_HEC_TOKEN');
    expect(err.message).toMatch(/is required \(or GOVTRAIL_SPLUNK_HEC_TOKEN_FILE\)/);
  });

  it('plain http to a remote host is refused, without echoing the token', () => {
    const err = configError(() =>
      load({ GOVTRAIL_SPLUNK_HEC_URL: 'http://splunk.example.com:8088', GOVTRAIL_SPLUNK_HEC_TOKEN: TOKEN }),
    );
    expect(err.setting).toBe('GOVTRAIL_SPLUNK_HEC_URL');
    expect(err.message).toMatch(/https/);
    expect(err.message).not.toContain(TOKEN);
  });

  it('an unknown key is refused', () => {
    const d = mkdtempSync(path.join(tmpdir(), 'govtrail-hec-conf-'));
    writeFileSync(
      path.join(d, 'g.yaml'),
      `sinks:\n  - {type: splunk_hec, url: 'https://s:8088', token: t, channel: x}\n`,
    );
    const err = configError(() => load({ GOVTRAIL_CONFIG: 'g.yaml' }, d));
    expect(err.setting).toMatch(/sinks\[0\]\.channel$/);
  });
});

describe('email sink configuration', () => {
  const base = { GOVTRAIL_SMTP_HOST: 'smtp.example.com', GOVTRAIL_EMAIL_FROM: 'alerts@example.com' };

  it('defaults to STARTTLS on 587; tls means 465; recipients comma-separated', () => {
    const email = (env: Record<string, string>) => load(env).sinks.find((s) => s.type === 'email');
    expect(email({ ...base, GOVTRAIL_EMAIL_TO: 'a@example.com, b@example.com' })).toMatchObject({
      security: 'starttls',
      port: 587,
      to: ['a@example.com', 'b@example.com'],
      rejectUnauthorized: true,
      mode: 'alert',
    });
    expect(
      email({ ...base, GOVTRAIL_EMAIL_TO: 'a@example.com', GOVTRAIL_EMAIL_MODE: 'Digest' }),
    ).toMatchObject({
      mode: 'digest',
    });
    expect(
      email({ ...base, GOVTRAIL_EMAIL_TO: 'a@example.com', GOVTRAIL_SMTP_SECURITY: 'tls' }),
    ).toMatchObject({
      security: 'tls',
      port: 465,
    });
  });

  it.each([
    [{ ...base }, 'GOVTRAIL_EMAIL_TO', /at least one recipient/],
    [{ ...base, GOVTRAIL_EMAIL_TO: 'not-an-address' }, 'GOVTRAIL_EMAIL_TO', /is not an address/],
    [
      { ...base, GOVTRAIL_EMAIL_TO: 'a@example.com', GOVTRAIL_SMTP_SECURITY: 'none' },
      'GOVTRAIL_SMTP_SECURITY',
      /starttls/,
    ],
    [
      { ...base, GOVTRAIL_EMAIL_TO: 'a@example.com', GOVTRAIL_SMTP_USER: 'u' },
      'GOVTRAIL_SMTP_PASSWORD',
      /both user and password/,
    ],
    [
      { ...base, GOVTRAIL_EMAIL_TO: 'a@example.com', GOVTRAIL_EMAIL_MODE: 'hourly' },
      'GOVTRAIL_EMAIL_MODE',
      /alert .* or digest/,
    ],
    [
      { GOVTRAIL_SMTP_HOST: 'smtp.example.com', GOVTRAIL_EMAIL_TO: 'a@example.com' },
      'GOVTRAIL_EMAIL_FROM',
      /is required/,
    ],
  ])('refuses %j naming %s', (env, setting, message) => {
    const err = configError(() => load(env));
    expect(err.setting).toBe(setting);
    expect(err.message).toMatch(message);
  });
});
