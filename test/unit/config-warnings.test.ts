/**
 * Silent typos become warnings or errors that name their real source (issue 20, item 14): an
 * unknown top-level key of the YAML file and an unknown GOVTRAIL_* variable are warned about with
 * the setting meant; a bad value from the file is reported against the file's key, not the
 * variable it stands for; a cron step beyond its field's range is refused.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/settings.js';
import { configWarnings, knownVariables } from '../../src/config/warnings.js';
import { ConfigError } from '../../src/core/errors.js';

function configFile(text: string): string {
  const file = path.join(mkdtempSync(path.join(tmpdir(), 'govtrail-cfg-')), 'govtrail.yaml');
  writeFileSync(file, text);
  return file;
}

const TENANTS = 'tenants:\n  - client_id: c\n    client_secret: s\n    base_url: http://127.0.0.1:1\n';

function thrown(fn: () => unknown): ConfigError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return err as ConfigError;
  }
  throw new Error('expected a ConfigError');
}

describe('unknown keys and variables', () => {
  it('warns about an unknown top-level key of the file, with the key meant', () => {
    const file = configFile(`shedule: "*/5 * * * *"\n${TENANTS}`);
    const env = { GOVTRAIL_CONFIG: file };
    expect(() => loadConfig(env, { dotenv: false })).not.toThrow();
    expect(configWarnings(env, { dotenv: false })).toEqual([
      `${file}: shedule: not a setting: ignored (did you mean schedule?)`,
    ]);
  });

  it('warns about an unknown GOVTRAIL_ variable, with the variable meant', () => {
    expect(configWarnings({ GOVTRAIL_SHEDULE: '*/5 * * * *', GOVTRAIL_ZZZ: '1' }, { dotenv: false })).toEqual(
      [
        'GOVTRAIL_SHEDULE is not a govtrail setting: ignored (did you mean GOVTRAIL_SCHEDULE?)',
        'GOVTRAIL_ZZZ is not a govtrail setting: ignored',
      ],
    );
  });

  it('says nothing about the settings it reads, in the environment or the file', () => {
    const file = configFile(`schedule: "*/5 * * * *"\nlog_level: debug\ngroups:\n  cust-x: {}\n${TENANTS}`);
    const env = {
      GOVTRAIL_CONFIG: file,
      GOVTRAIL_HTTP_PORT: '9000',
      GOVTRAIL_SYSLOG_URL: 'tcp://127.0.0.1:514',
      GOVTRAIL_SMTP_PASSWORD_FILE: '/dev/null',
    };
    expect(configWarnings(env, { dotenv: false })).toEqual([]);
  });

  it('knows the variables loadConfig reads, tenant keys included', () => {
    const known = knownVariables();
    for (const v of [
      'GOVTRAIL_SCHEDULE',
      'GOVTRAIL_TENANT_DOMAIN',
      'GOVTRAIL_CLIENT_SECRET_FILE',
      'DATABASE_URL',
    ]) {
      expect(known.has(v), v).toBe(true);
    }
  });
});

describe('a bad value names where it came from', () => {
  it('a bad schedule in the file is reported against the file key', () => {
    const file = configFile(`schedule: "every hour"\n${TENANTS}`);
    const err = thrown(() => loadConfig({ GOVTRAIL_CONFIG: file }, { dotenv: false }));
    expect(err.setting).toBe(`${file}: schedule`);
    expect(err.message).toBe(
      `${file}: schedule: must be a cron expression of 5 or 6 fields, got "every hour"`,
    );
  });

  it('the same value from the environment is reported against the variable', () => {
    const file = configFile(`schedule: "*/5 * * * *"\n${TENANTS}`);
    const err = thrown(() =>
      loadConfig({ GOVTRAIL_CONFIG: file, GOVTRAIL_SCHEDULE: 'every hour' }, { dotenv: false }),
    );
    expect(err.setting).toBe('GOVTRAIL_SCHEDULE');
  });
});

describe('cron steps', () => {
  it.each([
    [
      '*/70 * * * *',
      'the minute field\'s step "/70" must be a whole number from 1 to 59 (the field runs 0–59)',
    ],
    [
      '0 */25 * * *',
      'the hour field\'s step "/25" must be a whole number from 1 to 23 (the field runs 0–23)',
    ],
    [
      '*/0 * * * * *',
      'the second field\'s step "/0" must be a whole number from 1 to 59 (the field runs 0–59)',
    ],
    ['0 25 * * *', 'a field holds a value out of its range or not understood'],
  ])('refuses %s', (schedule, reason) => {
    const err = thrown(() => loadConfig({ GOVTRAIL_SCHEDULE: schedule }, { dotenv: false }));
    expect(err.message).toBe(`GOVTRAIL_SCHEDULE: ${JSON.stringify(schedule)}: ${reason}`);
  });

  it.each(['*/15 * * * *', '*/59 * * * *', '0 9-17/2 * * mon-fri', '*/1 * * * * *'])(
    'accepts %s',
    (schedule) => {
      expect(loadConfig({ GOVTRAIL_SCHEDULE: schedule }, { dotenv: false }).schedule).toBe(schedule);
    },
  );
});
