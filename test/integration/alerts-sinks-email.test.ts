import { mkdtempSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { simpleParser } from 'mailparser';
import { SMTPServer, type SMTPServerSession } from 'smtp-server';
import { afterEach, describe, expect, it } from 'vitest';
import { createEmailSink, createSinks, DeliveryError } from '../../src/alerts/sinks/index.js';
import { loadConfig } from '../../src/config/settings.js';
import type { AlertMessage, Sink } from '../../src/core/alert.js';
import { silentLogger } from '../../src/runtime/logger.js';
import { sampleAlert } from '../helpers/alert-message.js';
import { hasOpenssl, makeCertificates } from '../helpers/certificates.js';

const USER = 'govtrail';
const PASSWORD = 'smtp-pa55word';
const T0 = new Date('2025-03-04T00:00:00.123Z');

const ALERT = sampleAlert(T0);

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

interface Received {
  readonly raw: Buffer;
  readonly secure: boolean;
  readonly user: string | undefined;
  readonly rcpt: string[];
}

/** An SMTP server on 127.0.0.1: STARTTLS offered, AUTH required; `answer(n)` can fail the n-th DATA. */
async function smtp(o: { answer?: (n: number) => { code: number; message: string } | undefined } = {}) {
  const certs = makeCertificates();
  const received: Received[] = [];
  let n = 0;
  const server = new SMTPServer({
    secure: false,
    key: certs.key,
    cert: certs.cert,
    authMethods: ['PLAIN', 'LOGIN'],
    logger: false,
    onAuth(auth, _session, callback) {
      if (auth.username === USER && auth.password === PASSWORD) callback(null, { user: USER });
      else callback(Object.assign(new Error('Authentication credentials invalid'), { responseCode: 535 }));
    },
    onData(stream, session: SMTPServerSession, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        n += 1;
        const trouble = o.answer?.(n);
        if (trouble !== undefined) {
          callback(Object.assign(new Error(trouble.message), { responseCode: trouble.code }));
          return;
        }
        received.push({
          raw: Buffer.concat(chunks),
          secure: session.secure,
          user: typeof session.user === 'string' ? session.user : undefined,
          rcpt: session.envelope.rcptTo.map((r) => r.address),
        });
        callback();
      });
    },
  });
  server.on('error', () => {});
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const port = (server.server.address() as AddressInfo).port;
  return { port, ca: certs.ca, received };
}

function sink(port: number, ca: string, extra: Partial<Parameters<typeof createEmailSink>[0]> = {}): Sink {
  const s = createEmailSink({
    host: 'localhost',
    port,
    security: 'starttls',
    user: USER,
    password: PASSWORD,
    from: 'govtrail <alerts@govtrail.example>',
    to: ['secops@acme.example', 'audit@acme.example'],
    ca,
    timeoutMs: 5000,
    ...extra,
  });
  cleanups.push(() => s.close?.());
  return s;
}

async function failureOf(s: Sink, alert: AlertMessage = ALERT): Promise<DeliveryError> {
  const err = await s.deliver(alert, { deliveryId: 'd'.repeat(32), attempt: 1 }).then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(err instanceof DeliveryError)) throw new Error(`expected a DeliveryError, got ${String(err)}`);
  return err;
}

const HOSTILE: AlertMessage = {
  ...ALERT,
  title: 'Tool approval <b>was</b> turned off\r\nBcc: attacker@evil.example',
  context: {
    ...ALERT.context,
    reasons: ['<script>alert(1)</script> & <img src=x onerror=alert(2)>'],
  },
};

describe.skipIf(!hasOpenssl)(
  'email sink against an SMTP server (skipped when openssl is not installed)',
  () => {
    it('STARTTLS + AUTH: one mail with subject, text and HTML parts, Message-ID and dedupe header; HTML escaped', async () => {
      const server = await smtp();
      await sink(server.port, server.ca).deliver(HOSTILE, { deliveryId: 'a1b2c3d4'.repeat(4), attempt: 1 });
      expect(server.received).toHaveLength(1);
      const r = server.received[0] as Received;
      expect(r.secure).toBe(true);
      expect(r.user).toBe(USER);
      expect(r.rcpt).toEqual(['secops@acme.example', 'audit@acme.example']);
      const mail = await simpleParser(r.raw);
      expect(mail.subject).toBe(
        '[govtrail] HIGH AIGOV-002: Tool approval <b>was</b> turned off Bcc: attacker@evil.example (tenant acme)',
      );
      expect(mail.headers.get('bcc')).toBeUndefined();
      expect(mail.messageId).toBe(`<govtrail.${'a1b2c3d4'.repeat(4)}@govtrail.example>`);
      expect(mail.headers.get('x-govtrail-dedupe-key')).toBe(ALERT.dedupeKey);
      expect(mail.text).toContain('requireToolApproval: true → false (loosened)');
      expect(mail.text).toContain('Reason: <script>alert(1)</script> & <img src=x onerror=alert(2)>');
      const html = String(mail.html);
      expect(html).toContain(
        '&#60;script&#62;alert(1)&#60;/script&#62; &#38; &#60;img src=x onerror=alert(2)&#62;',
      );
      expect(html).not.toContain('<script>');
      expect(html).not.toContain('<img');
      expect(html).toContain('Tool approval &#60;b&#62;was&#60;/b&#62; turned off');
      expect(html).toContain('<a href="https://jira.example/browse/SEC-9">Ticket SEC-9</a>');
    });

    it('digest mode: one delivery pass of three alerts is one mail listing them, most severe first', async () => {
      const server = await smtp();
      const s = sink(server.port, server.ca, { mode: 'digest' });
      const alerts = [
        {
          ...ALERT,
          alertId: '1',
          severity: 'low' as const,
          dedupeKey: 'AIGOV-010:acme:E1',
          title: 'Verbosity lowered',
        },
        { ...HOSTILE, alertId: '2', dedupeKey: 'AIGOV-002:acme:E2' },
        {
          ...ALERT,
          alertId: '3',
          severity: 'critical' as const,
          dedupeKey: 'AIGOV-001:acme:E3',
          title: 'Governance disabled',
        },
      ];
      await s.deliverBatch?.(
        alerts.map((alert, i) => ({ alert, delivery: { deliveryId: `${i}`.repeat(32), attempt: 1 } })),
      );
      expect(server.received).toHaveLength(1);
      const mail = await simpleParser((server.received[0] as Received).raw);
      expect(mail.subject).toBe('[govtrail] 3 alerts: 1 CRITICAL, 1 HIGH, 1 LOW (tenant acme)');
      expect(mail.headers.get('x-govtrail-digest-count')).toBe('3');
      expect(mail.headers.get('x-govtrail-dedupe-keys')).toBe(
        'AIGOV-001:acme:E3, AIGOV-002:acme:E2, AIGOV-010:acme:E1',
      );
      expect(mail.messageId).toMatch(/^<govtrail\.digest\.[0-9a-f]{32}@govtrail\.example>$/);
      const text = String(mail.text);
      expect(text.indexOf('Governance disabled')).toBeLessThan(text.indexOf('Tool approval <b>was</b>'));
      expect(text.indexOf('Tool approval <b>was</b>')).toBeLessThan(text.indexOf('Verbosity lowered'));
      const html = String(mail.html);
      expect(html).not.toContain('<script>');
      expect(html).toContain('&#60;script&#62;alert(1)&#60;/script&#62;');
      // A lone alert (govtrail alerts test) in digest mode is a digest of one.
      await s.deliver(ALERT, { deliveryId: 'e'.repeat(32), attempt: 1 });
      expect((await simpleParser((server.received[1] as Received).raw)).subject).toBe(
        '[govtrail] 1 alert: 1 HIGH (tenant acme)',
      );
    });

    it('the same delivery id gives the same Message-ID on a retry', async () => {
      const server = await smtp();
      const s = sink(server.port, server.ca);
      await s.deliver(ALERT, { deliveryId: 'f'.repeat(32), attempt: 1 });
      await s.deliver(ALERT, { deliveryId: 'f'.repeat(32), attempt: 2 });
      const ids = await Promise.all(server.received.map(async (r) => (await simpleParser(r.raw)).messageId));
      expect(ids).toEqual([
        `<govtrail.${'f'.repeat(32)}@govtrail.example>`,
        `<govtrail.${'f'.repeat(32)}@govtrail.example>`,
      ]);
    });

    it('a 4xx answer is retryable, and the next attempt delivers', async () => {
      const server = await smtp({
        answer: (n) => (n === 1 ? { code: 451, message: 'Try again later' } : undefined),
      });
      const s = sink(server.port, server.ca);
      const err = await failureOf(s);
      expect(err.retryable).toBe(true);
      expect(err.message).toMatch(/451/);
      await s.deliver(ALERT, { deliveryId: 'd'.repeat(32), attempt: 2 });
      expect(server.received).toHaveLength(1);
    });

    it('535 authentication failed is permanent, without the password in the message', async () => {
      const server = await smtp();
      const err = await failureOf(sink(server.port, server.ca, { password: 'wrong-password' }));
      expect(err.retryable).toBe(false);
      expect(err.message).toMatch(/535/);
      expect(err.message).not.toContain('wrong-password');
    });

    it('a 5xx answer to the message is permanent', async () => {
      const server = await smtp({ answer: () => ({ code: 554, message: 'Message rejected as spam' }) });
      const err = await failureOf(sink(server.port, server.ca));
      expect(err.retryable).toBe(false);
    });

    it('a certificate the CA did not sign is permanent; a closed port is retryable', async () => {
      const server = await smtp();
      const other = makeCertificates('another CA');
      const untrusted = await failureOf(sink(server.port, other.ca));
      expect(untrusted.retryable).toBe(false);
      const closed = await smtp();
      const port = closed.port;
      await (cleanups.pop() as () => Promise<void>)();
      expect((await failureOf(sink(port, server.ca))).retryable).toBe(true);
    });

    it('from the environment: GOVTRAIL_SMTP_HOST, GOVTRAIL_SMTP_PASSWORD_FILE, GOVTRAIL_EMAIL_TO (comma-separated)', async () => {
      const server = await smtp();
      const d = mkdtempSync(path.join(tmpdir(), 'govtrail-smtp-env-'));
      writeFileSync(path.join(d, 'pw'), `${PASSWORD}\n`);
      writeFileSync(path.join(d, 'ca.pem'), server.ca);
      const config = loadConfig(
        {
          GOVTRAIL_SMTP_HOST: 'localhost',
          GOVTRAIL_SMTP_PORT: String(server.port),
          GOVTRAIL_SMTP_USER: USER,
          GOVTRAIL_SMTP_PASSWORD_FILE: 'pw',
          GOVTRAIL_SMTP_CA_FILE: 'ca.pem',
          GOVTRAIL_EMAIL_FROM: 'alerts@govtrail.example',
          GOVTRAIL_EMAIL_TO: 'secops@acme.example, audit@acme.example',
        },
        { dotenv: false, cwd: d },
      );
      const email = config.sinks.find((s) => s.type === 'email');
      expect(email).toMatchObject({
        security: 'starttls',
        to: ['secops@acme.example', 'audit@acme.example'],
      });
      expect(email?.secrets).toContain(PASSWORD);
      const [s] = createSinks([email as NonNullable<typeof email>], { logger: silentLogger });
      cleanups.push(() => s?.close?.());
      await (s as Sink).deliver(ALERT, { deliveryId: 'e'.repeat(32), attempt: 1 });
      expect(server.received[0]?.rcpt).toEqual(['secops@acme.example', 'audit@acme.example']);
    });
  },
);
