import { writeFileSync } from 'node:fs';
import { createServer as createHttpServer, type IncomingMessage } from 'node:http';
import { type AddressInfo, createServer as createTcpServer } from 'node:net';
import path from 'node:path';
import { simpleParser } from 'mailparser';
import { SMTPServer } from 'smtp-server';
import { stringify } from 'yaml';
import { makeCertificates } from '../test/helpers/certificates.js';
import { validateOcsfEvent } from '../test/helpers/ocsf.js';

const ROUTING_KEY = 'R0UT1NGKEY0F32CHARACTERSxxxxxxxx';
const HEC_TOKEN = '6f1c1f0e-5b7a-4a39-9d51-2f3c7f6d1e11';
const SMTP_USER = 'govtrail';
const SMTP_PASSWORD = 'receivers-only-password';

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i === -1 ? undefined : process.argv[i + 1];
}

const counts: Record<string, number> = { pagerduty: 0, teams: 0, splunk_hec: 0, syslog: 0, email: 0 };
const problems: string[] = [];

function report(dest: string, line: string, issues: readonly string[] = []): void {
  counts[dest] = (counts[dest] ?? 0) + 1;
  const mark = issues.length === 0 ? 'ok' : `PROBLEM: ${issues.join('; ')}`;
  if (issues.length > 0) problems.push(`${dest}: ${issues.join('; ')}`);
  process.stdout.write(`[${dest.padEnd(10)}] ${line}  (${mark})\n`);
}

async function body(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

type Json = Record<string, unknown>;
const obj = (v: unknown): Json => (typeof v === 'object' && v !== null ? (v as Json) : {});

function ocsfIssues(event: unknown): string[] {
  return validateOcsfEvent(event).slice(0, 3);
}

/** The text of the first TextBlock of an Adaptive Card body, searched depth first. */
function firstText(node: unknown): string | undefined {
  if (Array.isArray(node)) {
    for (const n of node) {
      const t = firstText(n);
      if (t !== undefined) return t;
    }
    return undefined;
  }
  const o = obj(node);
  if (o['type'] === 'TextBlock' && typeof o['text'] === 'string') return o['text'];
  return firstText(o['items']) ?? firstText(o['columns']);
}

/** PagerDuty, Teams and HEC on one HTTP server, told apart by path. */
async function httpReceivers(): Promise<number> {
  const server = createHttpServer(async (req, res) => {
    const text = await body(req);
    let json: Json;
    try {
      json = obj(JSON.parse(text));
    } catch {
      res.writeHead(400).end('{"message":"invalid JSON"}');
      return;
    }
    if (req.url === '/v2/enqueue') {
      const p = obj(json['payload']);
      const action = String(json['event_action']);
      // acknowledge and resolve carry the trigger's dedup_key and no payload (Events API v2).
      const followUp = action === 'acknowledge' || action === 'resolve';
      const issues = [
        ...(json['routing_key'] === ROUTING_KEY ? [] : ['wrong routing_key']),
        ...(action === 'trigger' || followUp
          ? []
          : [`event_action ${action} is not trigger, acknowledge or resolve`]),
        ...(followUp || ['critical', 'error', 'warning', 'info'].includes(String(p['severity']))
          ? []
          : ['bad severity']),
        ...(typeof json['dedup_key'] === 'string' ? [] : ['no dedup_key']),
      ];
      report(
        'pagerduty',
        followUp
          ? `${action.padEnd(11)} ${json['dedup_key']}`
          : `${action.padEnd(11)} ${json['dedup_key']} ${p['severity']} "${p['summary']}"`,
        issues,
      );
      res
        .writeHead(202, { 'content-type': 'application/json' })
        .end(JSON.stringify({ status: 'success', message: 'Event processed', dedup_key: json['dedup_key'] }));
    } else if (req.url === '/teams') {
      const attachment = obj((json['attachments'] as unknown[] | undefined)?.[0]);
      const card = obj(attachment['content']);
      const issues = [
        ...(attachment['contentType'] === 'application/vnd.microsoft.card.adaptive'
          ? []
          : ['bad contentType']),
        ...(card['version'] === '1.4' ? [] : [`card version ${String(card['version'])}`]),
      ];
      const title = firstText(card['body']);
      report('teams', `card "${String(title)}"`, issues);
      res.writeHead(202).end();
    } else if (req.url === '/services/collector/event') {
      const issues = [
        ...(req.headers.authorization === `Splunk ${HEC_TOKEN}` ? [] : ['wrong Authorization']),
        ...(typeof json['time'] === 'number' && (json['time'] as number) < 1e11
          ? []
          : ['time not in seconds']),
        ...ocsfIssues(json['event']),
      ];
      const event = obj(json['event']);
      report(
        'splunk_hec',
        `${json['sourcetype']} class ${event['class_uid']} "${obj(event['finding_info'])['title']}"`,
        issues,
      );
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"text":"Success","code":0}');
    } else {
      res.writeHead(404).end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return (server.address() as AddressInfo).port;
}

/** RFC 5424 over TCP with octet counting: `<len> <message>`. */
async function syslogReceiver(): Promise<number> {
  const header = /^<(\d{1,3})>1 (\S+) (\S+) (\S+) (\S+) (\S+) (\[.*?\](?:\[.*?\])*|-) ?(.*)$/s;
  const server = createTcpServer((socket) => {
    let buffer = Buffer.alloc(0);
    socket.on('data', (chunk: Buffer) => {
      buffer = Buffer.concat([buffer, chunk]);
      for (;;) {
        const space = buffer.indexOf(0x20);
        if (space === -1) return;
        const length = Number(buffer.subarray(0, space).toString('ascii'));
        if (buffer.length < space + 1 + length) return;
        const message = buffer.subarray(space + 1, space + 1 + length).toString('utf8');
        buffer = buffer.subarray(space + 1 + length);
        const m = header.exec(message);
        if (m === null) {
          report('syslog', message.slice(0, 80), ['not RFC 5424']);
          continue;
        }
        const msg = (m[8] ?? '').replace(/^\uFEFF/, '');
        let issues: string[];
        try {
          issues = ocsfIssues(JSON.parse(msg));
        } catch {
          issues = ['MSG is not JSON'];
        }
        const sd = /ruleId="([^"]*)".*?severity="([^"]*)"/.exec(m[7] ?? '');
        report('syslog', `<${m[1]}> ${m[6]} ${sd?.[1]} ${sd?.[2]} app=${m[4]}`, issues);
      }
    });
    socket.on('error', () => {});
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return (server.address() as AddressInfo).port;
}

async function smtpReceiver(certs: { key: string; cert: string }): Promise<number> {
  const server = new SMTPServer({
    secure: false,
    key: certs.key,
    cert: certs.cert,
    authMethods: ['PLAIN', 'LOGIN'],
    logger: false,
    onAuth(auth, _session, callback) {
      if (auth.username === SMTP_USER && auth.password === SMTP_PASSWORD) callback(null, { user: SMTP_USER });
      else callback(Object.assign(new Error('Authentication credentials invalid'), { responseCode: 535 }));
    },
    onData(stream, session, callback) {
      simpleParser(stream)
        .then((mail) => {
          const issues = [
            ...(session.secure ? [] : ['not over TLS']),
            ...(typeof mail.html === 'string' && mail.text !== undefined ? [] : ['missing a part']),
          ];
          const keys =
            mail.headers.get('x-govtrail-dedupe-keys') ?? mail.headers.get('x-govtrail-dedupe-key');
          report('email', `"${mail.subject}" ${String(keys).slice(0, 120)}`, issues);
          callback();
        })
        .catch((err: Error) => callback(err));
    },
  });
  server.on('error', () => {});
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return (server.server.address() as AddressInfo).port;
}

async function main(): Promise<void> {
  const configFile = path.resolve(arg('--config') ?? 'govtrail.receivers.yaml');
  const seconds = arg('--seconds') === undefined ? undefined : Number(arg('--seconds'));
  const certs = makeCertificates('govtrail receivers CA');
  const caFile = certs.caFile;
  const [http, syslog, smtp] = await Promise.all([httpReceivers(), syslogReceiver(), smtpReceiver(certs)]);
  const base = `http://127.0.0.1:${http}`;
  const config = {
    sinks: [
      { type: 'log' },
      { type: 'pagerduty', url: `${base}/v2/enqueue`, routing_key: ROUTING_KEY, min_severity: 'high' },
      { type: 'teams', url: `${base}/teams`, min_severity: 'medium', rules: { exclude: ['AIGOV-016'] } },
      { type: 'splunk_hec', url: `${base}/services/collector/event`, token: HEC_TOKEN, index: 'security' },
      { type: 'syslog', url: `tcp://127.0.0.1:${syslog}`, facility: 'local0' },
      {
        type: 'email',
        host: 'localhost',
        port: smtp,
        security: 'starttls',
        user: SMTP_USER,
        password: SMTP_PASSWORD,
        ca_file: caFile,
        from: 'govtrail <alerts@govtrail.example>',
        to: ['compliance@acme.example'],
        mode: 'digest',
        rules: { include: ['AIGOV-001', 'AIGOV-002', 'AIGOV-003', 'AIGOV-018'] },
      },
    ],
  };
  writeFileSync(
    configFile,
    `# Written by scripts/receivers.ts: sinks pointing at its local receivers (they end with it).\n${stringify(config)}`,
  );
  process.stdout.write(
    `receivers up: HTTP ${base} (PagerDuty /v2/enqueue, Teams /teams, HEC /services/collector/event), ` +
      `syslog tcp://127.0.0.1:${syslog}, SMTP localhost:${smtp} (STARTTLS)\n` +
      `config written: ${configFile}\n  GOVTRAIL_CONFIG=${path.relative(process.cwd(), configFile)} ./govtrail demo\n`,
  );
  const stop = () => {
    process.stdout.write(
      `\nreceived: ${Object.entries(counts)
        .map(([k, v]) => `${k} ${v}`)
        .join(', ')}; ${problems.length === 0 ? 'no problems' : `${problems.length} problems`}\n`,
    );
    process.exit(problems.length === 0 ? 0 : 1);
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  if (seconds !== undefined) setTimeout(stop, seconds * 1000);
}

await main();
