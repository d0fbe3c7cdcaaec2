/**
 * `govtrail alerts test [--sink NAME]` as an operator runs it: one test alert through each
 * configured sink (routes do not apply), one line per sink, exit 1 when any failed.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { runCli } from '../../src/cli.js';
import { type Receiver, startReceiver } from '../helpers/alerts.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';

const KEY = 'R0UT1NGKEY0123456789abcdefABCDEF';

let db: TestDatabase | undefined;
const receivers: Receiver[] = [];
afterEach(async () => {
  vi.unstubAllEnvs();
  vi.restoreAllMocks();
  await db?.close();
  db = undefined;
  for (const r of receivers.splice(0)) await r.close();
});

async function receiver(status: number): Promise<Receiver> {
  const r = await startReceiver(() => status);
  receivers.push(r);
  return r;
}

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

/** Configures the sinks through a GOVTRAIL_CONFIG file and a fresh database. */
async function configure(yaml: string): Promise<void> {
  const dir = mkdtempSync(path.join(tmpdir(), 'govtrail-alerts-test-'));
  writeFileSync(path.join(dir, 'govtrail.yaml'), yaml);
  vi.stubEnv('GOVTRAIL_CONFIG', path.join(dir, 'govtrail.yaml'));
  vi.stubEnv('LOG_LEVEL', 'silent');
  db = await createTestDatabase();
  if (db.url !== undefined) vi.stubEnv('DATABASE_URL', db.url);
  else vi.stubEnv('GOVTRAIL_DATA_DIR', path.join(dir, 'data'));
}

describe('govtrail alerts test', () => {
  it('prints delivered or the reason for each sink, whatever its route, and exits 1 when one failed', async () => {
    const pd = await receiver(202);
    const teams = await receiver(400);
    const hook = await receiver(503);
    await configure(`sinks:
  - {type: pagerduty, routing_key: ${KEY}, url: "${pd.url}", min_severity: critical}
  - {type: teams, url: "${teams.url}"}
  - {type: webhook, name: siem, url: "${hook.url}"}
`);
    const { code, out } = await cli('alerts', 'test');
    expect(out.split('\n').filter((l) => l !== '')).toEqual([
      'log        delivered',
      'pagerduty  delivered',
      'teams      failed (permanent): HTTP 400',
      'siem       failed (retryable): HTTP 503',
      'notify     delivered',
    ]);
    expect(code).toBe(1);
    // A low test alert: PagerDuty gets it as info, so no one is paged at night by a test.
    const event = JSON.parse(pd.received[0]?.body ?? '{}') as {
      event_action: string;
      payload: { severity: string; summary: string };
    };
    expect(event.event_action).toBe('trigger');
    expect(event.payload).toMatchObject({ severity: 'info', summary: expect.stringContaining('test alert') });
    expect(teams.received).toHaveLength(1);
  });

  it('--sink sends through that sink only, and exits 0 when it delivered', async () => {
    const pd = await receiver(202);
    const teams = await receiver(400);
    await configure(`sinks:
  - {type: pagerduty, name: pd-oncall, routing_key: ${KEY}, url: "${pd.url}"}
  - {type: teams, url: "${teams.url}"}
`);
    const { code, out } = await cli('alerts', 'test', '--sink', 'pd-oncall');
    expect(out).toBe('pd-oncall  delivered\n');
    expect(code).toBe(0);
    expect(pd.received).toHaveLength(1);
    expect(teams.received).toHaveLength(0);
  });

  it('--sink with a name that is not configured is a usage error naming the configured ones', async () => {
    await configure('sinks:\n  - {type: log, name: audit-log}\n');
    const err: string[] = [];
    vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
      err.push(String(chunk));
      return true;
    });
    const { code } = await cli('alerts', 'test', '--sink', 'pagerduty');
    expect(code).toBe(2);
    expect(err.join('')).toMatch(/--sink: no sink named "pagerduty" \(configured: audit-log, notify\)/);
  });
});
