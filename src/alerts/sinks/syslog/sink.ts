/**
 * The syslog sink: one RFC 5424 message per alert carrying the alert's OCSF Detection Finding, over
 * TCP with octet counting (RFC 6587 §3.4.1), TLS (RFC 5425, the same `MSG-LEN SP SYSLOG-MSG` frame)
 * or UDP (RFC 5426, one datagram). Written on node:net / node:tls / node:dgram.
 *
 * ```
 * <130>1 2025-03-04T00:00:00.000Z govtrail-1 govtrail 4711 AIGOV-002 [govtrail@32473 alertId="7"
 *   ruleId="AIGOV-002" ruleVersion="1" severity="high" tenant="acme" dedupeKey="AIGOV-002:acme:…"]
 *   BOM{"class_uid":2004,…}
 * ```
 *
 * - PRI = facility × 8 + severity; facility `local0` (16) by default, severity critical→2 crit,
 *   high→3 err, medium→4 warning, low→5 notice.
 * - SD-ID `govtrail@32473`: 32473 is the private enterprise number RFC 5612 reserves for
 *   documentation; a site with its own PEN can filter on the name alone.
 * - Size: a whole message stays within {@link SYSLOG_MAX_BYTES}, 8192 bytes on every transport:
 *   what RFC 5425 receivers should accept and rsyslog's default `maxMessageSize` (it truncates
 *   longer ones). Long values inside the OCSF event are cut, the JSON is never cut. A typical
 *   alert's OCSF event alone is about 1.9 KB, so RFC 5426's 2048 bytes that every UDP receiver
 *   should accept would lose the change details of most alerts; over UDP an 8 KB datagram may be
 *   fragmented by IP, which is one more reason to prefer TCP or TLS.
 *
 * One connection is kept and reused across deliveries; an error or a close by the receiver drops
 * it and the next delivery reconnects. A failed connect or write is retryable, a TLS certificate
 * the sink does not trust is permanent. TCP has no application acknowledgement: a write that
 * succeeded was queued, not necessarily received; a retry can repeat a message (the alert id and
 * dedupe key in the structured data find repeats).
 */
import { createSocket, type Socket as UdpSocket } from 'node:dgram';
import net from 'node:net';
import { hostname as osHostname } from 'node:os';
import tls from 'node:tls';
import type { AlertMessage, Severity, Sink } from '../../../core/alert.js';
import { permanentFailure, retryableFailure } from '../delivery-failure.js';
import { ocsfAlertEvent } from '../ocsf-event.js';
import { DEFAULT_SINK_TIMEOUT_MS } from '../settings-reader.js';
import type { SinkFactory } from '../sink-factory.js';
import type { SyslogSettings } from './settings.js';

/** The private SD-ID of govtrail's structured data (32473: RFC 5612's documentation PEN). */
export const SYSLOG_SD_ID = 'govtrail@32473';
export const SYSLOG_APP_NAME = 'govtrail';

/** Largest message (without the octet count) per transport. */
export const SYSLOG_MAX_BYTES = { tcp: 8192, tls: 8192, udp: 8192 } as const;

/** govtrail severity → syslog severity (RFC 5424 table 2). */
export const SYSLOG_SEVERITY: Readonly<Record<Severity, number>> = {
  critical: 2,
  high: 3,
  medium: 4,
  low: 5,
};

const BOM = Buffer.from([0xef, 0xbb, 0xbf]);

/**
 * What line-based relays split a message on, or a terminal acts on: C0 controls (LF and CR among
 * them), DEL, C1 controls (NEL) and the Unicode line and paragraph separators.
 */
const SYSLOG_UNSAFE = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g;

/** The `\uXXXX` text of a character. */
function unicodeEscape(c: string): string {
  return `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;
}

/**
 * The one place syslog text is made safe. An SD-PARAM value: `"`, `\` and `]` escaped as RFC 5424
 * §6.3.3 says, then every control character and line separator written as the visible text
 * `\u000a` (a receiver reads a backslash before anything but `"`, `\`, `]` as itself), so the
 * message stays on one line whatever the source put in a tenant name or an id.
 */
export function escapeSdValue(value: string): string {
  return value.replace(/["\\\]]/g, (c) => `\\${c}`).replace(SYSLOG_UNSAFE, unicodeEscape);
}

/**
 * The MSG part: JSON text on one line. JSON.stringify escapes C0 controls already; DEL, C1 controls
 * and the line separators become their `\uXXXX` escapes, the same JSON value.
 */
export function syslogJson(value: unknown): string {
  return JSON.stringify(value).replace(SYSLOG_UNSAFE, unicodeEscape);
}

/** A header field: printable US-ASCII only (others become `?`), at most `max` characters, `-` when empty. */
export function headerField(value: string | null | undefined, max: number): string {
  const clean = (value ?? '').replace(/[^\x21-\x7e]/g, '?').slice(0, max);
  return clean === '' ? '-' : clean;
}

/** An SD-NAME: printable ASCII except `=`, SP, `]`, `"`; at most 32 characters. */
function sdName(name: string): string {
  return name.replace(/[^\x21-\x7e]|[=\]"]/g, '_').slice(0, 32);
}

/** `[SD-ID name="value" …]` of the given params. */
export function structuredData(id: string, params: Readonly<Record<string, string>>): string {
  const parts = Object.entries(params).map(([k, v]) => `${sdName(k)}="${escapeSdValue(v)}"`);
  return `[${[id, ...parts].join(' ')}]`;
}

export interface SyslogMessageOptions {
  /** Facility number 0–23. */
  readonly facility: number;
  /** HOSTNAME; the machine's host name by default. */
  readonly hostname?: string | undefined;
  /** Limit of the whole message in bytes. */
  readonly maxBytes: number;
  readonly procId?: string | undefined;
  readonly now?: Date | undefined;
  readonly productVersion?: string | undefined;
}

/** The RFC 5424 message of an alert (no framing): header, structured data, BOM and OCSF JSON. */
export function syslogMessage(alert: AlertMessage, o: SyslogMessageOptions): Buffer {
  const created = Date.parse(alert.createdAt);
  const timestamp = new Date(Number.isFinite(created) ? created : (o.now ?? new Date()).getTime());
  const pri = o.facility * 8 + SYSLOG_SEVERITY[alert.severity];
  const header = [
    `<${pri}>1`,
    timestamp.toISOString(),
    headerField(o.hostname ?? osHostname(), 255),
    SYSLOG_APP_NAME,
    headerField(o.procId ?? String(process.pid), 128),
    headerField(alert.ruleId, 32),
  ].join(' ');
  const sd = structuredData(SYSLOG_SD_ID, {
    alertId: alert.alertId,
    ruleId: alert.ruleId,
    ruleVersion: String(alert.ruleVersion),
    severity: alert.severity,
    tenant: alert.tenantId,
    dedupeKey: alert.dedupeKey,
  });
  const head = Buffer.from(`${header} ${sd} `, 'utf8');
  const room = o.maxBytes - head.length - BOM.length;
  // Escaping can make the JSON longer than the budget it was fitted to: fit it again with less.
  let budget = room;
  let json = '';
  for (let i = 0; i < 3; i++) {
    json = syslogJson(
      ocsfAlertEvent(alert, { budgetBytes: budget, now: o.now, productVersion: o.productVersion }),
    );
    const over = Buffer.byteLength(json, 'utf8') - room;
    if (over <= 0) break;
    budget -= over;
  }
  return Buffer.concat([head, BOM, Buffer.from(json, 'utf8')]);
}

/** The octet-counting frame of RFC 6587 §3.4.1 / RFC 5425: `MSG-LEN SP SYSLOG-MSG`, LEN in bytes. */
export function octetCountingFrame(message: Buffer): Buffer {
  return Buffer.concat([Buffer.from(`${message.length} `, 'ascii'), message]);
}

export interface SyslogSinkOptions {
  /** Sink name in alert_delivery and messages; `syslog` by default. */
  readonly name?: string | undefined;
  readonly protocol: 'tcp' | 'tls' | 'udp';
  readonly host: string;
  readonly port: number;
  readonly facility: number;
  readonly hostname?: string | undefined;
  /** PEM CA bundle to trust (TLS); the system's otherwise. */
  readonly ca?: string | undefined;
  /** PEM client certificate and key (TLS, mutual authentication). */
  readonly cert?: string | undefined;
  readonly key?: string | undefined;
  /** Refuse a certificate the CA does not vouch for (default true). */
  readonly rejectUnauthorized?: boolean | undefined;
  /** Time allowed to connect and to write one message. */
  readonly timeoutMs?: number | undefined;
  readonly productVersion?: string | undefined;
}

/** TLS errors that reconnecting cannot fix: the receiver's certificate is not trusted. */
const CERT_ERRORS = new Set([
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'CERT_UNTRUSTED',
  'CERT_REJECTED',
  'CERT_SIGNATURE_FAILURE',
  'ERR_TLS_CERT_ALTNAME_INVALID',
  'HOSTNAME_MISMATCH',
]);

function describe(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const code = (err as { code?: unknown }).code;
  return `${typeof code === 'string' && !err.message.includes(code) ? `${code}: ` : ''}${err.message}`;
}

/** A failed connect or write: permanent for a TLS certificate not trusted, retryable otherwise. */
function syslogFailure(name: string, where: string, what: string, err: unknown) {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && CERT_ERRORS.has(code)) {
    return permanentFailure(name, `${where}: TLS certificate not trusted: ${describe(err)}`, {
      cause: err,
    });
  }
  return retryableFailure(name, `${where}: ${what}: ${describe(err)}`, { cause: err });
}

/**
 * Opens a TCP or TLS connection within `timeoutMs`. Once open, any error or close of the socket
 * calls `onDrop` (the next delivery then opens a new one).
 */
function openStream(
  o: SyslogSinkOptions,
  timeoutMs: number,
  onDrop: (socket: net.Socket) => void,
): Promise<net.Socket> {
  return new Promise<net.Socket>((resolve, reject) => {
    const socket =
      o.protocol === 'tls'
        ? tls.connect({
            host: o.host,
            port: o.port,
            ...(net.isIP(o.host) === 0 ? { servername: o.host } : {}),
            ...(o.ca === undefined ? {} : { ca: o.ca }),
            ...(o.cert === undefined ? {} : { cert: o.cert, key: o.key }),
            rejectUnauthorized: o.rejectUnauthorized ?? true,
          })
        : net.connect({ host: o.host, port: o.port });
    const timer = setTimeout(() => {
      socket.destroy(new Error(`connect timed out after ${timeoutMs} ms`));
    }, timeoutMs);
    const onError = (err: Error) => {
      clearTimeout(timer);
      reject(err);
    };
    socket.once('error', onError);
    socket.once(o.protocol === 'tls' ? 'secureConnect' : 'connect', () => {
      clearTimeout(timer);
      socket.off('error', onError);
      socket.setKeepAlive(true);
      // Any later error or close drops the connection; the next delivery opens a new one.
      const drop = () => onDrop(socket);
      socket.on('error', drop);
      socket.on('close', drop);
      // The receiver sends nothing; reading notices its FIN (the socket then ends and closes).
      socket.on('data', () => {});
      resolve(socket);
    });
  });
}

/** Writes one frame within `timeoutMs`; on a timeout the socket is destroyed. */
function writeFrame(socket: net.Socket, frame: Buffer, timeoutMs: number): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`write timed out after ${timeoutMs} ms`));
    }, timeoutMs);
    socket.write(frame, (err) => {
      clearTimeout(timer);
      if (err) reject(err);
      else resolve();
    });
  });
}

/** Ends a TCP or TLS connection, destroying it if the receiver has not closed within a second. */
function endStream(socket: net.Socket): Promise<void> {
  return new Promise<void>((resolve) => {
    socket.once('close', () => resolve());
    socket.end();
    setTimeout(() => socket.destroy(), 1000).unref();
  });
}

/** Creates the syslog sink. */
export function createSyslogSink(o: SyslogSinkOptions): Sink {
  const name = o.name ?? 'syslog';
  const timeoutMs = o.timeoutMs ?? DEFAULT_SINK_TIMEOUT_MS;
  const where = `${o.protocol}://${o.host}:${o.port}`;
  let stream: net.Socket | undefined;
  let connecting: Promise<net.Socket> | undefined;
  let udp: UdpSocket | undefined;
  let closed = false;
  const fail = (what: string, err: unknown) => syslogFailure(name, where, what, err);

  /** The open connection, or a new one (one connect at a time). */
  const connection = async (): Promise<net.Socket> => {
    if (stream !== undefined && !stream.destroyed && stream.writable) return stream;
    if (connecting === undefined) {
      connecting = openStream(o, timeoutMs, (socket) => {
        if (stream === socket) stream = undefined;
      }).finally(() => {
        connecting = undefined;
      });
    }
    try {
      stream = await connecting;
    } catch (err) {
      throw fail('cannot connect', err);
    }
    return stream;
  };

  const sendUdp = (message: Buffer): Promise<void> =>
    new Promise<void>((resolve, reject) => {
      udp ??= createSocket(net.isIPv6(o.host) ? 'udp6' : 'udp4');
      udp.send(message, o.port, o.host, (err) => (err ? reject(err) : resolve()));
    });

  return {
    name,
    async deliver(alert) {
      if (closed) throw retryableFailure(name, 'the sink is closed');
      const message = syslogMessage(alert, {
        facility: o.facility,
        hostname: o.hostname,
        maxBytes: SYSLOG_MAX_BYTES[o.protocol],
        productVersion: o.productVersion,
      });
      if (o.protocol === 'udp') {
        try {
          await sendUdp(message);
        } catch (err) {
          udp?.close();
          udp = undefined;
          throw fail('send failed', err);
        }
        return;
      }
      const socket = await connection();
      try {
        await writeFrame(socket, octetCountingFrame(message), timeoutMs);
      } catch (err) {
        if (stream === socket) stream = undefined;
        socket.destroy();
        throw fail('write failed', err);
      }
    },
    async close() {
      closed = true;
      const socket = stream ?? (await connecting?.catch(() => undefined));
      stream = undefined;
      if (socket !== undefined && !socket.destroyed) await endStream(socket);
      if (udp !== undefined) {
        const u = udp;
        udp = undefined;
        await new Promise<void>((resolve) => u.close(() => resolve()));
      }
    },
  };
}

/** Builds the sink from its configured settings (the registry's factory of this type). */
export const fromConfig: SinkFactory<SyslogSettings> = (c) =>
  createSyslogSink({
    name: c.name,
    protocol: c.protocol,
    host: c.host,
    port: c.port,
    facility: c.facility,
    hostname: c.hostname,
    ca: c.ca,
    cert: c.cert,
    key: c.key,
    rejectUnauthorized: c.rejectUnauthorized,
    timeoutMs: c.timeoutMs,
  });
