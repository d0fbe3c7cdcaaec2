/**
 * Control characters from the source (issue 20, item 8): ESC sequences, CR, C1 controls and bidi
 * overrides in entry values, actor ids and ids never reach the analyst's terminal raw through
 * `changes`, `settings` or `alerts list` (table or JSON); line feeds never reach a syslog message
 * raw, in its structured data or its JSON.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { syslogMessage } from '../../src/alerts/sinks/syslog/sink.js';
import { runCli } from '../../src/cli.js';
import { terminalJson, terminalLine } from '../../src/runtime/terminal.js';
import { sampleAlert } from '../helpers/alert-message.js';
import { createHarness, type Harness } from '../helpers/harness.js';

/** Raw characters a terminal acts on: ESC, CR, CSI as a C1 control, NEL, RLO, LRI. */
const RAW = /[\u001b\r\u009b\u0085\u202e\u2066]/;
/** A title-setting, screen-clearing, line-rewriting, right-to-left value. */
const HOSTILE = 'ok\u001b]0;pwned\u0007\u001b[2J\rfake\u009b31m\u0085\u202eexe.txt\u2066';

let h: Harness | undefined;
afterEach(async () => {
  vi.unstubAllEnvs();
  vi.restoreAllMocks();
  await h?.close();
  h = undefined;
});

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

describe('text for terminals', () => {
  it('escapes every control character visibly; JSON stays the same value', () => {
    expect(terminalLine(HOSTILE)).toBe(
      'ok\\x1b]0;pwned\\x07\\x1b[2J\\x0dfake\\x9b31m\\x85\\u202eexe.txt\\u2066',
    );
    const json = JSON.stringify({ v: HOSTILE });
    expect(terminalJson(json)).not.toMatch(RAW);
    expect(JSON.parse(terminalJson(json))).toEqual({ v: HOSTILE });
  });

  it('changes, settings and alerts list print no raw control character from the source', async () => {
    h = await createHarness({ entries: 3, seed: 61 });
    h.sandbox.history.appendEntry({
      actor: { kind: 'ACTOR_KIND_API', userId: HOSTILE },
      set: { auditVerbosity: HOSTILE, allowedClientTypes: [HOSTILE] },
      annotations: [
        {
          key: 'ticket',
          kind: 'ANNOTATION_KIND_TICKET',
          rawValue: HOSTILE,
          displayValue: HOSTILE,
          displayLabel: 'x',
        },
      ],
    });
    vi.stubEnv('GOVTRAIL_BASE_URL', h.sandbox.baseUrl);
    vi.stubEnv('GOVTRAIL_CLIENT_ID', h.sandbox.credentials.secret.clientId);
    vi.stubEnv('GOVTRAIL_CLIENT_SECRET', h.sandbox.credentials.secret.clientSecret);
    vi.stubEnv('GOVTRAIL_TENANT', 'acme');
    vi.stubEnv('LOG_LEVEL', 'silent');
    if (h.testDb.url !== undefined) vi.stubEnv('DATABASE_URL', h.testDb.url);
    else vi.stubEnv('GOVTRAIL_DATA_DIR', mkdtempSync(path.join(tmpdir(), 'govtrail-data-')));
    const sync = await cli('sync');
    expect(sync.code).toBe(0);
    expect(sync.out).not.toMatch(RAW);

    for (const args of [
      ['changes'],
      ['changes', '--format', 'json'],
      ['settings'],
      ['settings', '--format', 'json'],
      ['alerts', 'list'],
      ['alerts', 'list', '--format', 'json'],
    ]) {
      const r = await cli(...args);
      expect(r.code, args.join(' ')).toBe(0);
      expect(r.out, args.join(' ')).not.toMatch(RAW);
    }
    // The value is shown, escaped, not dropped.
    expect((await cli('changes')).out).toContain('\\x1b[2J');
    expect((await cli('settings')).out).toContain('\\u202eexe.txt');
  });
});

describe('text for syslog', () => {
  it('no raw line feed, carriage return, NEL or line separator in the structured data or the message', () => {
    const alert = {
      ...sampleAlert(new Date('2026-01-01T00:00:00Z')),
      tenantId: 'acme\nNov 25 host sshd[1]: Accepted password for root',
      dedupeKey: 'AIGOV-001:acme\r\n:x',
      title: `changed\u2028to\u2029${HOSTILE}\u0085`,
    };
    const msg = syslogMessage(alert, { facility: 16, hostname: 'h', maxBytes: 8192, procId: '1' }).toString(
      'utf8',
    );
    expect(msg).not.toMatch(/[\n\r\u0085\u2028\u2029\u001b\u009b]/);
    expect(msg).toContain('tenant="acme\\u000aNov 25 host sshd[1\\]: Accepted password for root"');
    const json = JSON.parse(msg.slice(msg.indexOf('\ufeff') + 1)) as { finding_info?: { title?: string } };
    expect(JSON.stringify(json)).toContain('\u2028');
  });
});
