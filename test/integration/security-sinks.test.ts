/**
 * Sink secrets in echoed answers (issue 20, items 2–3): a receiver answering `Cannot POST <path>`
 * echoes the secret-bearing parts of its URL (Slack-like path segments, a Teams-like `sig=`), and a
 * Splunk HEC 400 that echoes the request headers holds `Splunk <token>` right where the sink cuts
 * the answer. `alerts test` prints the failure of each sink, and none of those parts.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { runCli } from '../../src/cli.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';

const HEC_TOKEN = '11111111-2222-3333-4444-555555555555';
const SLACK_PATH = '/services/T0AB12CD3/B0EF45GH6/s3cr3tSlackLikeTokenXyZ';
const SIG = 'Zk9aBcDeF123gHiJkL456mNoPqR789';

/** Pieces that must never be printed: 12-character windows of each secret part. */
function pieces(): string[] {
  const out: string[] = [];
  for (const s of [HEC_TOKEN, 'T0AB12CD3', 'B0EF45GH6', 's3cr3tSlackLikeTokenXyZ', SIG]) {
    if (s.length <= 12) out.push(s);
    else for (let i = 0; i + 12 <= s.length; i++) out.push(s.slice(i, i + 12));
  }
  return out;
}

let server: Server | undefined;
let db: TestDatabase | undefined;
afterEach(async () => {
  vi.unstubAllEnvs();
  vi.restoreAllMocks();
  await db?.close();
  db = undefined;
  await new Promise<void>((resolve) => (server === undefined ? resolve() : server.close(() => resolve())));
  server = undefined;
});

/** A receiver that refuses everything, echoing what it was sent as a misconfigured proxy does. */
async function echoingReceiver(): Promise<string> {
  server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      if (req.url?.startsWith('/services/collector') === true) {
        // The headers echoed whole, then the token again across the sink's 1000-byte cut of the
        // answer: 20 of its characters before the cut (`{"text":"` opens the JSON).
        const head = `invalid data format; headers: authorization=${req.headers.authorization}; `;
        const pad = 'h'.repeat(1000 - 20 - '{"text":"'.length - head.length - 'token='.length);
        const text = `${head}${pad}token=${HEC_TOKEN}; done`;
        res.writeHead(400, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ text, code: 6 }));
        return;
      }
      res.writeHead(404, { 'content-type': 'text/plain', connection: 'close' });
      res.end(`Cannot POST ${req.url}`);
    });
  });
  await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
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

describe('sink secrets echoed by a receiver', () => {
  it('alerts test prints each failure without the URL parts or the HEC token', async () => {
    const base = await echoingReceiver();
    const dir = mkdtempSync(path.join(tmpdir(), 'govtrail-sink-secrets-'));
    writeFileSync(
      path.join(dir, 'govtrail.yaml'),
      `sinks:
  - {type: webhook, name: slackish, url: "${base}${SLACK_PATH}"}
  - {type: webhook, name: teamsish, url: "${base}/workflows/0123456789abcdef0123456789abcdef/triggers/manual/paths/invoke?api-version=2016-06-01&sig=${SIG}"}
  - {type: splunk_hec, name: hec, url: "${base}/services/collector/event", token: "${HEC_TOKEN}"}
`,
    );
    vi.stubEnv('GOVTRAIL_CONFIG', path.join(dir, 'govtrail.yaml'));
    vi.stubEnv('LOG_LEVEL', 'silent');
    db = await createTestDatabase();
    if (db.url !== undefined) vi.stubEnv('DATABASE_URL', db.url);
    else vi.stubEnv('GOVTRAIL_DATA_DIR', path.join(dir, 'data'));

    const { code, out } = await cli('alerts', 'test');
    expect(code).toBe(1);
    expect(out).toMatch(/slackish\s+failed \(permanent\): HTTP 404: Cannot POST \/services\/\[REDACTED\]/);
    expect(out).toMatch(/teamsish\s+failed \(permanent\): HTTP 404: Cannot POST .*sig=\[REDACTED\]/);
    expect(out).toMatch(/hec\s+failed \(permanent\): HTTP 400/);
    expect(pieces().filter((p) => out.includes(p))).toEqual([]);
  });
});
