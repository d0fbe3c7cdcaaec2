/**
 * The sink configuration: the YAML `sinks:` list of GOVTRAIL_CONFIG and the environment short
 * forms, parsed once into Config.sinks; every bad setting fails with a one-line ConfigError naming
 * it, and never echoing a secret.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createAlerting } from '../../src/app/alerting.js';
import { loadConfig, type SinkConfig, sinkSecrets } from '../../src/config/settings.js';
import { ConfigError } from '../../src/core/errors.js';
import { scrubSecrets, silentLogger } from '../../src/runtime/logger.js';
import type { Database } from '../../src/store/database.js';

const KEY = 'R0UT1NGKEY0123456789abcdefABCDEF';
const KEY_2 = 'eu000000000000000000000000000002';
const TEAMS_URL =
  'https://prod-12.westeurope.logic.azure.com:443/workflows/0a1b/triggers/manual/paths/invoke?api-version=2016-06-01&sig=S1gn4tur3-s3cr3t';

function dir(files: Record<string, string>): string {
  const d = mkdtempSync(path.join(tmpdir(), 'govtrail-sinks-'));
  for (const [name, text] of Object.entries(files)) writeFileSync(path.join(d, name), text);
  return d;
}

const load = (env: Record<string, string>, cwd?: string) =>
  loadConfig(env, { dotenv: false, ...(cwd === undefined ? {} : { cwd }) });

/** Loads a config whose GOVTRAIL_CONFIG file is `yaml`. */
function loadYaml(yaml: string, env: Record<string, string> = {}, files: Record<string, string> = {}) {
  const d = dir({ 'govtrail.yaml': yaml, ...files });
  return {
    config: load({ GOVTRAIL_CONFIG: 'govtrail.yaml', ...env }, d),
    file: path.join(d, 'govtrail.yaml'),
  };
}

/** The ConfigError `fn` throws. */
function configError(fn: () => unknown): ConfigError {
  try {
    fn();
  } catch (err) {
    if (err instanceof ConfigError) return err;
    throw err;
  }
  throw new Error('no ConfigError was thrown');
}

function yamlError(yaml: string, env: Record<string, string> = {}, files: Record<string, string> = {}) {
  const d = dir({ 'govtrail.yaml': yaml, ...files });
  const err = configError(() => load({ GOVTRAIL_CONFIG: 'govtrail.yaml', ...env }, d));
  return { err, file: path.join(d, 'govtrail.yaml') };
}

const brief = (s: SinkConfig) => ({ type: s.type, name: s.name, route: s.route });

describe('the sinks: list of GOVTRAIL_CONFIG', () => {
  it('configures several sinks, two of one type, with filters and *_file secrets, between log and NOTIFY', () => {
    const { config } = loadYaml(
      `sinks:
  - type: pagerduty
    name: pd-oncall
    routing_key_file: pd.key
    min_severity: high
  - type: pagerduty
    name: pd-eu
    routing_key: ${KEY_2}
    host: events.eu.pagerduty.com
    rules: {include: [AIGOV-001, AIGOV-018]}
    tenants: [acme]
  - type: teams
    url_file: teams.url
    min_severity: Medium
    rules:
      exclude: [AIGOV-013]
  - type: webhook
    url: https://siem.example.com/govtrail
    secret_file: hook.secret
    timeout: 5s
`,
      {},
      { 'pd.key': `${KEY}\n`, 'teams.url': `${TEAMS_URL}\n`, 'hook.secret': 'whsec-from-a-file-0001' },
    );
    expect(config.sinks.map(brief)).toEqual([
      { type: 'log', name: 'log', route: {} },
      { type: 'pagerduty', name: 'pd-oncall', route: { minSeverity: 'high' } },
      {
        type: 'pagerduty',
        name: 'pd-eu',
        route: { includeRules: ['AIGOV-001', 'AIGOV-018'], tenants: ['acme'] },
      },
      { type: 'teams', name: 'teams', route: { minSeverity: 'medium', excludeRules: ['AIGOV-013'] } },
      { type: 'webhook', name: 'webhook', route: {} },
      { type: 'notify', name: 'notify', route: {} },
    ]);
    expect(config.sinks[1]).toMatchObject({
      routingKey: KEY,
      url: 'https://events.pagerduty.com/v2/enqueue',
      timeoutMs: undefined,
    });
    expect(config.sinks[2]).toMatchObject({
      routingKey: KEY_2,
      url: 'https://events.eu.pagerduty.com/v2/enqueue',
    });
    expect(config.sinks[3]).toMatchObject({ url: new URL(TEAMS_URL).href });
    expect(config.sinks[4]).toMatchObject({ secret: 'whsec-from-a-file-0001', timeoutMs: 5000 });
    expect(Object.isFrozen(config.sinks) && Object.isFrozen(config.sinks[2]?.route.tenants)).toBe(true);
    // Every credential is there to be registered for redaction.
    const secrets = sinkSecrets(config);
    for (const s of [KEY, KEY_2, TEAMS_URL, 'whsec-from-a-file-0001']) expect(secrets).toContain(s);
  });

  it('puts a configured log or NOTIFY sink where it is listed, with its route, instead of the built-in one', () => {
    const { config } = loadYaml(
      'sinks:\n  - {type: notify, min_severity: medium}\n  - {type: log, rules: {exclude: [AIGOV-015]}}\n',
    );
    expect(config.sinks.map(brief)).toEqual([
      { type: 'notify', name: 'notify', route: { minSeverity: 'medium' } },
      { type: 'log', name: 'log', route: { excludeRules: ['AIGOV-015'] } },
    ]);
  });

  it('takes a file with only sinks, the tenant then coming from the environment', () => {
    const { config } = loadYaml(
      `schedule: "*/5 * * * *"\nsinks:\n  - {type: pagerduty, routing_key: ${KEY}}\n`,
      {
        GOVTRAIL_CLIENT_ID: 'calm-otter-1@acme.conductor.one/pcc',
        GOVTRAIL_CLIENT_SECRET: 's3cr3t-value',
      },
    );
    expect(config.tenants.map((t) => t.name)).toEqual(['acme.conductor.one']);
    expect(config.schedule).toBe('*/5 * * * *');
    expect(config.sinks.map((s) => s.name)).toEqual(['log', 'pagerduty', 'notify']);
  });

  it('adds the environment short forms after the list', () => {
    const { config } = loadYaml(`sinks:\n  - {type: pagerduty, name: pd-eu, routing_key: ${KEY_2}}\n`, {
      GOVTRAIL_PAGERDUTY_ROUTING_KEY: KEY,
    });
    expect(config.sinks.map((s) => s.name)).toEqual(['log', 'pd-eu', 'pagerduty', 'notify']);
  });
});

describe('the environment short forms', () => {
  it('keeps GOVTRAIL_WEBHOOK_URL and GOVTRAIL_SLACK_WEBHOOK_URL working', () => {
    const c = load({
      GOVTRAIL_WEBHOOK_URL: 'https://hooks.example/x',
      GOVTRAIL_WEBHOOK_SECRET: 'whsec-0123456789',
      GOVTRAIL_SLACK_WEBHOOK_URL: 'https://hooks.slack.com/services/T/B/X',
    });
    expect(c.sinks.map((s) => s.name)).toEqual(['log', 'webhook', 'slack', 'notify']);
    expect(c.sinks[1]).toMatchObject({
      url: 'https://hooks.example/x',
      secret: 'whsec-0123456789',
      route: {},
    });
    expect(c.webhookSecret).toBe('whsec-0123456789');
  });

  it('configures PagerDuty from a key file, an EU host and a minimum severity', () => {
    const d = dir({ 'pd.key': `${KEY}\n` });
    const c = load(
      {
        GOVTRAIL_PAGERDUTY_ROUTING_KEY_FILE: 'pd.key',
        GOVTRAIL_PAGERDUTY_HOST: 'events.eu.pagerduty.com',
        GOVTRAIL_PAGERDUTY_MIN_SEVERITY: 'high',
      },
      d,
    );
    expect(c.sinks[1]).toMatchObject({
      type: 'pagerduty',
      name: 'pagerduty',
      routingKey: KEY,
      url: 'https://events.eu.pagerduty.com/v2/enqueue',
      route: { minSeverity: 'high' },
      origin: 'GOVTRAIL_PAGERDUTY_ROUTING_KEY',
    });
  });

  it('configures Teams from GOVTRAIL_TEAMS_WEBHOOK_URL', () => {
    const c = load({ GOVTRAIL_TEAMS_WEBHOOK_URL: TEAMS_URL, GOVTRAIL_TEAMS_MIN_SEVERITY: 'medium' });
    expect(c.sinks[1]).toMatchObject({ type: 'teams', name: 'teams', route: { minSeverity: 'medium' } });
    expect(sinkSecrets(c)).toContain(TEAMS_URL);
  });

  it('reads GOVTRAIL_RUNBOOK_URL as a template with {rule_id}', () => {
    expect(load({ GOVTRAIL_RUNBOOK_URL: 'https://wiki.example/govtrail#{rule_id}' }).runbookUrl).toBe(
      'https://wiki.example/govtrail#{rule_id}',
    );
    expect(configError(() => load({ GOVTRAIL_RUNBOOK_URL: 'wiki/{rule_id}' })).setting).toBe(
      'GOVTRAIL_RUNBOOK_URL',
    );
  });
});

describe('a bad sink stops start-up with one line naming the setting', () => {
  it.each([
    [
      'an unknown type',
      '  - {type: carrier_pigeon}\n',
      'type',
      /must be one of log, webhook, slack, pagerduty, teams, splunk_hec, syslog, email, jira, notify/,
    ],
    [
      'a missing routing key',
      '  - {type: pagerduty}\n',
      'routing_key',
      /is required \(or .*routing_key_file\)/,
    ],
    [
      'a routing key of the wrong length',
      '  - {type: pagerduty, routing_key: abc}\n',
      'routing_key',
      /32-character/,
    ],
    [
      'a key and a key file',
      `  - {type: pagerduty, routing_key: ${KEY}, routing_key_file: pd.key}\n`,
      'routing_key',
      /not both/,
    ],
    [
      'a key file that is not there',
      '  - {type: pagerduty, routing_key_file: nope.key}\n',
      'routing_key_file',
      /cannot read/,
    ],
    ['a misspelt key', `  - {type: pagerduty, routing_kye: ${KEY}}\n`, 'routing_kye', /is not a setting/],
    ['a misspelt filter', '  - {type: log, rule: {include: [AIGOV-001]}}\n', 'rule', /is not a setting/],
    [
      'an unknown severity',
      '  - {type: log, min_severity: urgent}\n',
      'min_severity',
      /low, medium, high, critical/,
    ],
    ['an empty include list', '  - {type: log, rules: {include: []}}\n', 'rules.include', /at least one/],
    [
      'rules that are not a list',
      '  - {type: log, rules: {exclude: AIGOV-013}}\n',
      'rules.exclude',
      /expected array/,
    ],
    ['a bad name', '  - {type: log, name: "my sink"}\n', 'name', /letters, digits/],
    [
      'a plain-http webhook to another host',
      '  - {type: webhook, url: "http://siem.example/x"}\n',
      'url',
      /https/,
    ],
    ['a webhook without a URL', '  - {type: webhook}\n', 'url', /is required/],
    [
      'a bad timeout',
      '  - {type: slack, url: "https://hooks.slack.com/x", timeout: forever}\n',
      'timeout',
      /duration/,
    ],
    [
      'a PagerDuty host and URL',
      `  - {type: pagerduty, routing_key: ${KEY}, host: a.example, url: "https://b.example/"}\n`,
      'host',
      /not both/,
    ],
    ['a sink that is not a map', '  - pagerduty\n', '', /must be a map/],
  ])('%s', (_what, item, key, message) => {
    const { err, file } = yamlError(`sinks:\n${item}`, {}, { 'pd.key': KEY });
    expect(err.setting).toBe(key === '' ? `${file}: sinks[0]` : `${file}: sinks[0].${key}`);
    expect(err.message).toMatch(message);
    expect(err.message).not.toContain('\n');
  });

  it('names the second of two sinks with one name', () => {
    const { err, file } = yamlError(
      `sinks:\n  - {type: pagerduty, routing_key: ${KEY}}\n  - {type: pagerduty, routing_key: ${KEY_2}}\n`,
    );
    expect(err.setting).toBe(`${file}: sinks[1]`);
    expect(err.message).toMatch(/sink name "pagerduty" is used twice .*give each sink its own "name"/);
  });

  it('refuses a name the built-in NOTIFY sink has', () => {
    const { err, file } = yamlError('sinks:\n  - {type: webhook, name: notify, url: "https://h.example/"}\n');
    expect(err.setting).toBe(`${file}: sinks[0]`);
    expect(err.message).toMatch(/also by the built-in notify sink/);
  });

  it('refuses a short form that takes a name the list already uses', () => {
    const { err } = yamlError('sinks:\n  - {type: webhook, url: "https://h.example/"}\n', {
      GOVTRAIL_WEBHOOK_URL: 'https://other.example/',
    });
    expect(err.setting).toBe('GOVTRAIL_WEBHOOK_URL');
  });

  it('refuses a tenant filter naming no configured tenant', () => {
    const { err, file } = yamlError(
      'tenants:\n  - {name: acme, domain: acme.example, client_id: c, client_secret: s}\nsinks:\n  - {type: log, tenants: [acme, acne]}\n',
    );
    expect(err.setting).toBe(`${file}: sinks[0].tenants`);
    expect(err.message).toMatch(/"acne"/);
  });

  it.each([
    [{ GOVTRAIL_PAGERDUTY_MIN_SEVERITY: 'high' }, 'GOVTRAIL_PAGERDUTY_ROUTING_KEY'],
    [{ GOVTRAIL_PAGERDUTY_ROUTING_KEY: 'short' }, 'GOVTRAIL_PAGERDUTY_ROUTING_KEY'],
    [
      { GOVTRAIL_PAGERDUTY_ROUTING_KEY: KEY, GOVTRAIL_PAGERDUTY_HOST: 'https://x/' },
      'GOVTRAIL_PAGERDUTY_HOST',
    ],
    [{ GOVTRAIL_PAGERDUTY_ROUTING_KEY_FILE: '/nonexistent/pd.key' }, 'GOVTRAIL_PAGERDUTY_ROUTING_KEY_FILE'],
    [
      { GOVTRAIL_TEAMS_WEBHOOK_URL: TEAMS_URL, GOVTRAIL_TEAMS_MIN_SEVERITY: 'loud' },
      'GOVTRAIL_TEAMS_MIN_SEVERITY',
    ],
    [{ GOVTRAIL_WEBHOOK_URL: 'not a url' }, 'GOVTRAIL_WEBHOOK_URL'],
    [{ GOVTRAIL_WEBHOOK_SECRET: 'whsec-0123456789' }, 'GOVTRAIL_WEBHOOK_URL'],
    [{ GOVTRAIL_SLACK_WEBHOOK_URL: 'http://hooks.slack.com/x' }, 'GOVTRAIL_SLACK_WEBHOOK_URL'],
  ])('environment %j names %s', (env, setting) => {
    expect(configError(() => load(env)).setting).toBe(setting);
  });

  it('never echoes a secret it refuses', () => {
    const bad = 'R0UT1NGKEY0123456789abcdefABCDEF-too-long';
    const err = configError(() => load({ GOVTRAIL_PAGERDUTY_ROUTING_KEY: bad }));
    expect(err.message).not.toContain(bad);
    const url = 'http://hooks.example.com/services/T0/B0/s3cr3t-t0k3n';
    expect(configError(() => load({ GOVTRAIL_SLACK_WEBHOOK_URL: url })).message).not.toContain('s3cr3t');
  });
});

describe('a retired Office 365 connector URL for Teams', () => {
  const connector = 'https://acme.webhook.office.com/webhookb2/1234@5678/IncomingWebhook/abcd/efgh';

  it('is refused at start, saying to use a Workflows webhook instead', () => {
    const err = configError(() => load({ GOVTRAIL_TEAMS_WEBHOOK_URL: connector }));
    expect(err.setting).toBe('GOVTRAIL_TEAMS_WEBHOOK_URL');
    expect(err.message).toMatch(/Office 365 connector.*retired.*Workflows webhook/);
    expect(err.message).not.toContain('\n');
    expect(err.message).not.toContain('abcd');
  });

  it('is refused in the YAML list too, also through url_file, and on outlook.office.com', () => {
    const { err, file } = yamlError(
      'sinks:\n  - {type: teams, url_file: teams.url}\n',
      {},
      { 'teams.url': connector },
    );
    expect(err.setting).toBe(`${file}: sinks[0].url_file`);
    expect(err.message).toMatch(/Workflows webhook/);
    const old = 'https://outlook.office.com/webhook/1234@5678/IncomingWebhook/abcd/efgh';
    expect(yamlError(`sinks:\n  - {type: teams, url: "${old}"}\n`).err.message).toMatch(/retired/);
  });

  it('lets a Workflows URL through', () => {
    expect(load({ GOVTRAIL_TEAMS_WEBHOOK_URL: TEAMS_URL }).sinks.map((s) => s.type)).toContain('teams');
  });
});

describe('createAlerting', () => {
  it('refuses a route naming a rule the pack does not have', () => {
    const { config, file } = loadYaml('sinks:\n  - {type: log, rules: {exclude: [AIGOV-013, AIGOV-99]}}\n');
    const err = configError(() => createAlerting(config, silentLogger, {} as Database));
    expect(err.setting).toBe(`${file}: sinks[0].rules.exclude`);
    expect(err.message).toMatch(/names no rule of the pack: "AIGOV-99"/);
  });

  it('registers every sink secret for redaction', () => {
    const secret = 'whsec-registered-by-createAlerting-7f3a';
    const config = load({ GOVTRAIL_WEBHOOK_URL: 'https://hooks.example/x', GOVTRAIL_WEBHOOK_SECRET: secret });
    createAlerting(config, silentLogger, {} as Database);
    expect(scrubSecrets(`sent ${secret} and ${TEAMS_URL}`)).toBe(`sent [REDACTED] and ${TEAMS_URL}`);
  });
});
