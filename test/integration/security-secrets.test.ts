/**
 * No secret leaks (issue 20, acceptance 2): with LOG_LEVEL=trace and a token endpoint that echoes
 * the form body it received — at 400 and at 500, as JSON and as plain text, with the secret placed
 * across the cut of a quoted message — no 12-character piece of a 60-character client secret that
 * holds `+ / =` appears, in any of its forms, in the command's output, a pg_dump of the database,
 * the HTML report or an evidence pack.
 */
import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/settings.js';
import { parseRulePack } from '../../src/core/rules/pack-schema.js';
import { NEEDS_SERVER, onServer } from '../helpers/database.js';
import { createHarness, type Harness } from '../helpers/harness.js';

const ROOT = new URL('../../', import.meta.url).pathname;

/** 60 characters with `+`, `/` and `=`: form-encoding turns each into a `%XX` escape. */
const SECRET = 'Zk9+Q2xpZW50/U2VjcmV0=Wm9vK3Rlc3Q/aGFyZGVu+MDEyMzQ1Njc4OQ==a';

/** The forms a 12-character piece of the secret can take in an artefact. */
function pieceForms(piece: string): string[] {
  const uri = encodeURIComponent(piece);
  const form = new URLSearchParams([['k', piece]]).toString().slice(2);
  return [...new Set([piece, uri, form, uri.toLowerCase(), form.toLowerCase()])];
}

/** Every 12-character window of the secret, in each form, that occurs in `text`. */
function leakedPieces(text: string, secret: string = SECRET): string[] {
  const found: string[] = [];
  const lower = text.toLowerCase();
  for (let i = 0; i + 12 <= secret.length; i++) {
    for (const f of pieceForms(secret.slice(i, i + 12))) {
      if (f === f.toLowerCase() ? lower.includes(f) : text.includes(f)) found.push(f);
    }
  }
  return found;
}

/** How the echoing token endpoint answers. */
const MODES = ['400-json', '400-text', '500-text', '500-json'] as const;
type Mode = (typeof MODES)[number];

/** Puts the echoed secret 170 characters in, so that a 200-character quote cuts through it. */
const PAD = 'x'.repeat(170);

function echo(mode: Mode, received: string): { status: number; type: string; text: string } {
  // The form body from its client_secret on, then the rest, as a proxy that reorders would.
  const at = received.indexOf('client_secret=');
  const body = at < 0 ? received : `${received.slice(at)}&${received.slice(0, at)}`;
  switch (mode) {
    case '400-json':
      return {
        status: 400,
        type: 'application/json',
        text: JSON.stringify({ error: 'invalid_client', error_description: `${PAD} received ${body}` }),
      };
    case '400-text':
      return { status: 400, type: 'text/plain', text: `bad request: ${body}` };
    case '500-text':
      return { status: 500, type: 'text/plain', text: `upstream got ${body}` };
    case '500-json':
      return {
        status: 500,
        type: 'application/json',
        text: JSON.stringify({ code: 13, message: `${PAD} ${body}` }),
      };
  }
}

interface Run {
  code: number | null;
  output: string;
}

function govtrail(args: string[], env: Record<string, string>): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', ...args], {
      cwd: ROOT,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (d: Buffer) => {
      output += d.toString();
    });
    child.stderr.on('data', (d: Buffer) => {
      output += d.toString();
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, output }));
  });
}

/** Every file under `dir`, as text. */
function readTree(dir: string): string {
  let all = '';
  for (const name of readdirSync(dir)) {
    const p = path.join(dir, name);
    all += statSync(p).isDirectory() ? readTree(p) : readFileSync(p, 'utf8');
  }
  return all;
}

let h: Harness | undefined;
let echoServer: Server | undefined;
let echoUrl = '';
let mode: Mode = '400-json';
const received: string[] = [];

beforeAll(async () => {
  if (!onServer) return;
  h = await createHarness({ entries: 30, seed: 20, clientSecret: SECRET });
  echoServer = createServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => {
      body += d.toString();
    });
    req.on('end', () => {
      received.push(body);
      const a = echo(mode, body);
      res.writeHead(a.status, { 'content-type': a.type });
      res.end(a.text);
    });
  });
  await new Promise<void>((resolve) => echoServer?.listen(0, '127.0.0.1', resolve));
  echoUrl = `http://127.0.0.1:${(echoServer.address() as AddressInfo).port}`;
}, 60_000);

afterAll(async () => {
  await new Promise<void>((resolve) =>
    echoServer === undefined ? resolve() : echoServer.close(() => resolve()),
  );
  await h?.close();
});

describe.skipIf(!onServer)(`a secret echoed by the token endpoint leaks nowhere (${NEEDS_SERVER})`, () => {
  it('is absent, in every 12-character piece and form, from the output, pg_dump, the report and a pack', async () => {
    const harness = h as Harness;
    const url = harness.testDb.url as string;
    const env = {
      DATABASE_URL: url,
      GOVTRAIL_TENANT: 'acme',
      GOVTRAIL_CLIENT_ID: harness.sandbox.credentials.secret.clientId,
      GOVTRAIL_CLIENT_SECRET: SECRET,
      GOVTRAIL_HTTP_MAX_ATTEMPTS: '1',
      LOG_LEVEL: 'trace',
    };
    const outputs: string[] = [];
    const ok = await govtrail(['sync'], { ...env, GOVTRAIL_BASE_URL: harness.sandbox.baseUrl });
    outputs.push(ok.output);
    expect(ok.code, ok.output).toBe(0);

    for (const m of MODES) {
      mode = m;
      const run = await govtrail(['sync'], { ...env, GOVTRAIL_BASE_URL: echoUrl });
      outputs.push(run.output);
      expect(run.code, `${m}: ${run.output}`).not.toBe(0);
      expect(run.output, m).toMatch(m.startsWith('400') ? /AUTH_REJECTED/ : /HTTP_ERROR/);
    }
    // The endpoint did receive the secret form-encoded, and echoed it back into the messages.
    expect(received.at(-1)).toContain(encodeURIComponent(SECRET).replaceAll('%20', '+'));
    expect(outputs.join('\n')).toContain('[REDACTED]');

    const dir = mkdtempSync(path.join(tmpdir(), 'govtrail-secrets-'));
    const report = await govtrail(['report', '--out', path.join(dir, 'report.html')], env);
    expect(report.code, report.output).toBe(0);
    const pack = await govtrail(
      [
        'export',
        'evidence-pack',
        '--from',
        '2000-01-01',
        '--to',
        '2100-01-01',
        '--out',
        path.join(dir, 'pack'),
      ],
      env,
    );
    expect(pack.code, pack.output).toBe(0);
    outputs.push(report.output, pack.output);
    const { stdout: dump } = await promisify(execFile)('pg_dump', ['--dbname', url], {
      maxBuffer: 256 * 1024 * 1024,
    });
    // The dump holds the failed runs' messages: what was echoed is there, redacted.
    expect(dump).toContain('[REDACTED]');

    expect(leakedPieces(outputs.join('\n')), 'command output').toEqual([]);
    expect(leakedPieces(dump), 'pg_dump').toEqual([]);
    expect(leakedPieces(readFileSync(path.join(dir, 'report.html'), 'utf8')), 'report').toEqual([]);
    expect(leakedPieces(readTree(path.join(dir, 'pack'))), 'evidence pack').toEqual([]);
  }, 180_000);
});

describe('a YAML parse error quotes no line of the file (issue 20, item 4)', () => {
  const PASSWORD = 'hunter2-Sink-Passw0rd';
  const BROKEN = `sinks:\n  - type: email\n    password: ${PASSWORD}\n   bad: : x\n  oops\n`;

  it('GOVTRAIL_CONFIG: position and reason only', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'govtrail-yaml-'));
    const file = path.join(dir, 'govtrail.yaml');
    writeFileSync(file, BROKEN);
    let message = '';
    try {
      loadConfig({ GOVTRAIL_CONFIG: file }, { dotenv: false });
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toMatch(/is not valid YAML: .+ at line 4, column 1$/);
    expect(message).not.toContain(PASSWORD);
    expect(message).not.toContain('\n');
  });

  it('a rule file: position and reason only', () => {
    let message = '';
    try {
      parseRulePack(
        readFileSync(path.join(ROOT, 'rules/default-rules.yaml'), 'utf8'),
        BROKEN,
        'my-rules.yaml',
      );
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toMatch(/not valid YAML: .+ at line 4, column 1/);
    expect(message).not.toContain(PASSWORD);
  });
});
