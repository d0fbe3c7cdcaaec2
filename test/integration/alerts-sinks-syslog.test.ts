/**
 * The syslog sink over real sockets. Against Debian's rsyslog, run unprivileged in the foreground
 * with a config made here: imtcp on a port the OS picks (plain, and TLS with the gtls driver and a
 * certificate made with the `openssl` CLI), omfile writing `%rawmsg%` and rsyslog's own RFC 5424
 * properties, so the test sees both the bytes received and how rsyslog parsed them. Against node
 * receivers: the connection reused, reconnecting after the receiver drops it, a refused connection
 * retryable, an untrusted certificate permanent, UDP one datagram, close() ending the connection.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { createSocket } from 'node:dgram';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import net, { type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import tls from 'node:tls';
import { afterEach, describe, expect, it } from 'vitest';
import { createSinks, createSyslogSink, DeliveryError } from '../../src/alerts/sinks/index.js';
import { loadConfig } from '../../src/config/settings.js';
import type { AlertMessage, Sink } from '../../src/core/alert.js';
import { silentLogger } from '../../src/runtime/logger.js';
import { sampleAlert } from '../helpers/alert-message.js';
import { hasOpenssl, makeCertificates } from '../helpers/certificates.js';
import { validateOcsfEvent } from '../helpers/ocsf.js';

const T0 = new Date('2025-03-04T00:00:00.123Z');

const ALERT = sampleAlert(T0);

const BOM = Buffer.from([0xef, 0xbb, 0xbf]);

const commandWorks = (cmd: string, args: readonly string[]) => {
  try {
    return spawnSync(cmd, args, { stdio: 'ignore' }).status === 0;
  } catch {
    return false;
  }
};
const hasRsyslog = commandWorks('rsyslogd', ['-v']);
/** rsyslog-gnutls: the gtls network stream driver module. */
const hasGtls = ['/usr/lib/x86_64-linux-gnu', '/usr/lib/aarch64-linux-gnu', '/usr/lib', '/usr/lib64'].some(
  (d) => existsSync(path.join(d, 'rsyslog', 'lmnsd_gtls.so')),
);

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** Polls `check` until it returns a value (no fixed sleeps), failing after `ms`. */
async function until<T>(what: string, check: () => T | undefined, ms = 10_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

interface Rsyslog {
  readonly tcpPort: number;
  readonly tlsPort: number | undefined;
  readonly ca: string | undefined;
  /** Lines received so far: the raw message, and rsyslog's parse of it. */
  lines(): { raw: string[]; parsed: string[] };
  stop(): Promise<void>;
}

/** rsyslogd in the foreground on OS-chosen ports, writing what it receives to files in `dir`. */
async function startRsyslog(withTls: boolean): Promise<Rsyslog> {
  const dir = mkdtempSync(path.join(tmpdir(), 'govtrail-rsyslog-'));
  const certs = withTls ? makeCertificates() : undefined;
  const conf = [
    `global(workDirectory="${dir}" maxMessageSize="8k"${
      certs === undefined
        ? ''
        : ` DefaultNetstreamDriverCAFile="${certs.caFile}" DefaultNetstreamDriverCertFile="${certs.certFile}" DefaultNetstreamDriverKeyFile="${certs.keyFile}"`
    })`,
    'module(load="imtcp")',
    'template(name="raw" type="string" string="%rawmsg%\\n")',
    'template(name="parsed" type="string" string="%pri%|%timereported:::date-rfc3339%|%hostname%|%app-name%|%procid%|%msgid%|%structured-data%\\n")',
    `input(type="imtcp" port="0" listenPortFileName="${dir}/tcp.port" ruleset="out")`,
    ...(certs === undefined
      ? []
      : [
          `input(type="imtcp" port="0" listenPortFileName="${dir}/tls.port" ruleset="out" streamDriver.name="gtls" streamDriver.mode="1" streamDriver.authMode="anon")`,
        ]),
    'ruleset(name="out") {',
    `  action(type="omfile" file="${dir}/raw.log" template="raw")`,
    `  action(type="omfile" file="${dir}/parsed.log" template="parsed")`,
    '}',
  ].join('\n');
  const confFile = path.join(dir, 'rsyslog.conf');
  writeFileSync(confFile, conf);
  const child: ChildProcess = spawn('rsyslogd', ['-n', '-f', confFile, '-i', path.join(dir, 'rsyslog.pid')], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', (c: Buffer) => {
    stderr += c.toString('utf8');
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async () => {
    if (child.exitCode === null) child.kill('SIGTERM');
    await exited;
  };
  cleanups.push(stop);
  const portOf = (file: string) => () => {
    if (child.exitCode !== null) throw new Error(`rsyslogd exited: ${stderr}`);
    const text = existsSync(file) ? readFileSync(file, 'utf8').trim() : '';
    return /^\d+$/.test(text) ? Number(text) : undefined;
  };
  const tcpPort = await until('the rsyslog TCP port', portOf(path.join(dir, 'tcp.port')));
  const tlsPort =
    certs === undefined ? undefined : await until('the rsyslog TLS port', portOf(path.join(dir, 'tls.port')));
  const read = (f: string) =>
    existsSync(path.join(dir, f))
      ? readFileSync(path.join(dir, f), 'utf8')
          .split('\n')
          .filter((l) => l !== '')
      : [];
  return {
    tcpPort,
    tlsPort,
    ca: certs?.caFile,
    lines: () => ({ raw: read('raw.log'), parsed: read('parsed.log') }),
    stop,
  };
}

/** RFC 5424 as govtrail writes it: header, one SD element, BOM, MSG. */
const RFC5424 =
  /^<(\d{1,3})>1 (\S+) (\S{1,255}) (govtrail) (\S{1,128}) (\S{1,32}) (\[govtrail@32473(?: [^=\s\]"]+="(?:[^"\\\]]|\\["\\\]])*")*\]) \ufeff(.*)$/su;

function parseLine(line: string) {
  const m = RFC5424.exec(line);
  if (m === null) throw new Error(`not RFC 5424 with govtrail's structured data: ${line.slice(0, 300)}`);
  const params: Record<string, string> = {};
  for (const p of (m[7] as string).matchAll(/ ([^=\s\]"]+)="((?:[^"\\\]]|\\["\\\]])*)"/g)) {
    params[p[1] as string] = (p[2] as string).replace(/\\(["\\\]])/g, '$1');
  }
  return { pri: Number(m[1]), msgId: m[6], sd: m[7] as string, params, event: JSON.parse(m[8] as string) };
}

const deliver = (sink: Sink, alert: AlertMessage = ALERT) =>
  sink.deliver(alert, { deliveryId: 'x', attempt: 1 });

function track(sink: Sink): Sink {
  cleanups.push(() => sink.close?.());
  return sink;
}

async function failureOf(sink: Sink): Promise<DeliveryError> {
  const err = await deliver(sink).then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(err instanceof DeliveryError)) throw new Error(`expected a DeliveryError, got ${String(err)}`);
  return err;
}

describe('syslog sink against rsyslog', () => {
  it.skipIf(!hasRsyslog)(
    'TCP, octet counting: rsyslog parses RFC 5424 with the structured data intact and the OCSF body valid (skipped when rsyslogd is not installed)',
    async () => {
      const rs = await startRsyslog(false);
      const hostile: AlertMessage = { ...ALERT, dedupeKey: 'AIGOV-002:ac"me]\\x:2vYJ', tenantId: 'acme' };
      const sink = track(
        createSyslogSink({
          protocol: 'tcp',
          host: '127.0.0.1',
          port: rs.tcpPort,
          facility: 16,
          hostname: 'gt-1',
        }),
      );
      await deliver(sink, hostile);
      await deliver(sink, { ...ALERT, alertId: '8', severity: 'critical' });
      const { raw, parsed } = await until('two messages in rsyslog', () => {
        const l = rs.lines();
        return l.raw.length >= 2 && l.parsed.length >= 2 ? l : undefined;
      });
      const first = parseLine(raw[0] as string);
      expect(first.pri).toBe(16 * 8 + 3);
      expect(first.msgId).toBe('AIGOV-002');
      expect(first.params).toMatchObject({ alertId: '7', ruleId: 'AIGOV-002', dedupeKey: hostile.dedupeKey });
      expect(validateOcsfEvent(first.event)).toEqual([]);
      expect(first.event.class_uid).toBe(2004);
      expect(parseLine(raw[1] as string)).toMatchObject({ pri: 16 * 8 + 2, params: { alertId: '8' } });
      // rsyslog's own RFC 5424 parse: the same fields, the SD element verbatim.
      expect((parsed[0] as string).split('|').slice(0, 6)).toEqual([
        '131',
        '2025-03-04T00:00:00.123Z',
        'gt-1',
        'govtrail',
        String(process.pid),
        'AIGOV-002',
      ]);
      expect((parsed[0] as string).split('|').slice(6).join('|')).toBe(first.sd);
    },
  );

  it.skipIf(!hasRsyslog)(
    'TCP: a message at the 8 KB budget arrives whole (skipped when rsyslogd is not installed)',
    async () => {
      const rs = await startRsyslog(false);
      const huge: AlertMessage = {
        ...ALERT,
        summary: 'ü'.repeat(20_000),
        context: { ...ALERT.context, details: { blob: 'y'.repeat(50_000) } },
      };
      const sink = track(
        createSyslogSink({ protocol: 'tcp', host: '127.0.0.1', port: rs.tcpPort, facility: 16 }),
      );
      await deliver(sink, huge);
      const [line] = await until('the message', () => {
        const l = rs.lines().raw;
        return l.length >= 1 ? l : undefined;
      });
      expect(Buffer.byteLength(line as string)).toBeGreaterThan(7000);
      expect(Buffer.byteLength(line as string)).toBeLessThanOrEqual(8192);
      expect(validateOcsfEvent(parseLine(line as string).event)).toEqual([]);
    },
  );

  it.skipIf(!(hasRsyslog && hasGtls && hasOpenssl))(
    'TLS (RFC 5425) with the test CA; a CA that did not sign the certificate is permanent (skipped when rsyslogd, rsyslog-gnutls or openssl is not installed)',
    async () => {
      const rs = await startRsyslog(true);
      const ca = readFileSync(rs.ca as string, 'utf8');
      const sink = track(
        createSyslogSink({
          protocol: 'tls',
          host: 'localhost',
          port: rs.tlsPort as number,
          facility: 16,
          ca,
        }),
      );
      await deliver(sink);
      await deliver(sink, { ...ALERT, alertId: '8' });
      const { raw } = await until('two messages over TLS', () => {
        const l = rs.lines();
        return l.raw.length >= 2 ? l : undefined;
      });
      expect(parseLine(raw[0] as string).params['alertId']).toBe('7');
      expect(validateOcsfEvent(parseLine(raw[1] as string).event)).toEqual([]);

      const other = makeCertificates('another CA');
      const untrusted = track(
        createSyslogSink({
          protocol: 'tls',
          host: 'localhost',
          port: rs.tlsPort as number,
          facility: 16,
          ca: other.ca,
        }),
      );
      const err = await failureOf(untrusted);
      expect(err.retryable).toBe(false);
      expect(err.message).toMatch(/certificate not trusted/);
    },
  );
});

/** A TCP receiver that keeps each connection's bytes; `dropAfterFirst` closes a connection after its first bytes. */
async function tcpReceiver(o: { dropAfterFirst?: boolean } = {}) {
  const connections: Array<{ data: Buffer; ended: boolean; closed: boolean }> = [];
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    const c = { data: Buffer.alloc(0), ended: false, closed: false };
    connections.push(c);
    socket.on('data', (d: Buffer) => {
      c.data = Buffer.concat([c.data, d]);
      if (o.dropAfterFirst === true) socket.destroy();
    });
    socket.on('close', () => {
      c.closed = true;
    });
    socket.on('end', () => {
      c.ended = true;
    });
    socket.on('error', () => {});
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(async () => {
    for (const s of sockets) s.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return { port: (server.address() as AddressInfo).port, connections };
}

/** Splits octet-counted frames. */
function frames(data: Buffer): Buffer[] {
  const out: Buffer[] = [];
  let at = 0;
  while (at < data.length) {
    const space = data.indexOf(0x20, at);
    const len = Number(data.subarray(at, space).toString('ascii'));
    out.push(data.subarray(space + 1, space + 1 + len));
    at = space + 1 + len;
  }
  return out;
}

describe('syslog sink connections', () => {
  it('reuses one connection for several alerts, and close() ends it', async () => {
    const r = await tcpReceiver();
    const sink = createSyslogSink({ protocol: 'tcp', host: '127.0.0.1', port: r.port, facility: 16 });
    await deliver(sink);
    await deliver(sink, { ...ALERT, alertId: '8' });
    await deliver(sink, { ...ALERT, alertId: '9' });
    await until('three frames', () =>
      frames(r.connections[0]?.data ?? Buffer.alloc(0)).length === 3 ? true : undefined,
    );
    expect(r.connections).toHaveLength(1);
    const messages = frames((r.connections[0] as { data: Buffer }).data);
    expect(
      messages
        .map((m) => m.subarray(m.indexOf(BOM) + 3).toString('utf8'))
        .map((t) => JSON.parse(t).unmapped.alert_id),
    ).toEqual(['7', '8', '9']);
    await sink.close?.();
    await until('the connection to end', () => (r.connections[0]?.ended === true ? true : undefined));
  });

  it('reconnects after the receiver closes the connection', async () => {
    const r = await tcpReceiver({ dropAfterFirst: true });
    const sink = track(createSyslogSink({ protocol: 'tcp', host: '127.0.0.1', port: r.port, facility: 16 }));
    await deliver(sink);
    await until('the receiver to close the connection', () =>
      r.connections[0]?.closed === true ? true : undefined,
    );
    // TCP cannot tell a write into a connection the peer just closed from a good one: poll with
    // further alerts until the sink has noticed the close and opened a new connection.
    const seen = await until('a second connection', () => {
      if (r.connections.length >= 2 && (r.connections[1]?.data.length ?? 0) > 0) return true;
      void deliver(sink, { ...ALERT, alertId: '8' }).catch(() => undefined);
      return undefined;
    });
    expect(seen).toBe(true);
    expect(frames((r.connections[1] as { data: Buffer }).data)[0]?.toString('utf8')).toContain('alertId="8"');
  });

  it('a refused connection is retryable', async () => {
    const port = await new Promise<number>((resolve) => {
      const s = net.createServer().listen(0, '127.0.0.1', () => {
        const p = (s.address() as AddressInfo).port;
        s.close(() => resolve(p));
      });
    });
    const err = await failureOf(
      track(createSyslogSink({ protocol: 'tcp', host: '127.0.0.1', port, facility: 16 })),
    );
    expect(err.retryable).toBe(true);
    expect(err.message).toMatch(/^syslog: tcp:\/\/127\.0\.0\.1:\d+: cannot connect: .*ECONNREFUSED/);
  });

  it('a self-signed certificate is refused by default (permanent); reject_unauthorized false accepts it', async () => {
    const certs = makeCertificates();
    const received: Buffer[] = [];
    const server = tls.createServer({ cert: certs.cert, key: certs.key }, (socket) => {
      socket.on('data', (d: Buffer) => received.push(d));
      socket.on('error', () => {});
    });
    server.on('tlsClientError', () => {});
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
    const port = (server.address() as AddressInfo).port;
    const strict = track(createSyslogSink({ protocol: 'tls', host: 'localhost', port, facility: 16 }));
    expect((await failureOf(strict)).retryable).toBe(false);
    const lax = track(
      createSyslogSink({ protocol: 'tls', host: 'localhost', port, facility: 16, rejectUnauthorized: false }),
    );
    await deliver(lax);
    await until('the message', () => (received.length > 0 ? true : undefined));
    await lax.close?.();
  }, 20_000);

  it('UDP: one datagram holding one whole message (no octet count), from GOVTRAIL_SYSLOG_URL', async () => {
    const datagrams: Buffer[] = [];
    const server = createSocket('udp4');
    server.on('message', (m) => datagrams.push(m));
    await new Promise<void>((resolve) => server.bind(0, '127.0.0.1', resolve));
    cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
    const config = loadConfig(
      { GOVTRAIL_SYSLOG_URL: `udp://127.0.0.1:${server.address().port}`, GOVTRAIL_SYSLOG_FACILITY: 'auth' },
      { dotenv: false },
    );
    const [sink] = createSinks(
      config.sinks.filter((s) => s.type === 'syslog'),
      { logger: silentLogger },
    );
    track(sink as Sink);
    await deliver(sink as Sink);
    await until('a datagram', () => (datagrams.length > 0 ? true : undefined));
    const text = (datagrams[0] as Buffer).toString('utf8');
    expect(text.startsWith(`<${4 * 8 + 3}>1 `)).toBe(true);
    const parsed = parseLine(text);
    expect(parsed.params['dedupeKey']).toBe(ALERT.dedupeKey);
    expect(validateOcsfEvent(parsed.event)).toEqual([]);
  });
});
