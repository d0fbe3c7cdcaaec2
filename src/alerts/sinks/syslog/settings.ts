/**
 * Settings of the syslog sink: `url` (or `protocol`, `host`, `port`), `facility`, `hostname`, the
 * TLS material (`ca`, `cert`, `key`, `reject_unauthorized`) and `timeout`.
 */
import { nonEmpty } from '../../../core/setting-values.js';
import {
  booleanKey,
  defineSinkSettings,
  numberKey,
  rejectUnauthorizedSetting,
  type SettingReader,
  text,
  timeoutKeys,
} from '../settings-reader.js';

/** Syslog RFC 5424 carrying OCSF, over TCP (octet counting), TLS (RFC 5425) or UDP. */
export interface SyslogSettings {
  readonly protocol: 'tcp' | 'tls' | 'udp';
  readonly host: string;
  readonly port: number;
  /** Facility number (0–23); `local0` (16) by default. */
  readonly facility: number;
  /** HOSTNAME of the header; the machine's host name by default. */
  readonly hostname: string | undefined;
  /** PEM: CA bundle, client certificate and key (TLS). The key is never logged. */
  readonly ca: string | undefined;
  readonly cert: string | undefined;
  readonly key: string | undefined;
  readonly rejectUnauthorized: boolean;
  readonly timeoutMs: number | undefined;
}

/** Syslog facility names (RFC 5424 table 1, as syslog.h names them) → numbers. */
export const SYSLOG_FACILITIES: Readonly<Record<string, number>> = {
  kern: 0,
  user: 1,
  mail: 2,
  daemon: 3,
  auth: 4,
  syslog: 5,
  lpr: 6,
  news: 7,
  uucp: 8,
  cron: 9,
  authpriv: 10,
  ftp: 11,
  ntp: 12,
  security: 13,
  console: 14,
  local0: 16,
  local1: 17,
  local2: 18,
  local3: 19,
  local4: 20,
  local5: 21,
  local6: 22,
  local7: 23,
};

/** The default facility: local0, for site use, so a relay can route govtrail's messages apart. */
export const SYSLOG_DEFAULT_FACILITY = 16;

function syslogFacility(value: number | string | undefined): number | undefined {
  if (value === undefined) return SYSLOG_DEFAULT_FACILITY;
  const raw = String(value).trim().toLowerCase();
  if (/^\d+$/.test(raw)) {
    const n = Number(raw);
    return n <= 23 ? n : undefined;
  }
  return SYSLOG_FACILITIES[raw];
}

const keys = {
  url: text.optional(),
  protocol: text.optional(),
  host: text.optional(),
  port: numberKey.optional(),
  facility: numberKey.optional(),
  hostname: text.optional(),
  ca: text.optional(),
  ca_file: text.optional(),
  cert: text.optional(),
  cert_file: text.optional(),
  key: text.optional(),
  key_file: text.optional(),
  reject_unauthorized: booleanKey.optional(),
  ...timeoutKeys,
};

interface EndpointKeys {
  readonly url?: string | undefined;
  readonly protocol?: string | undefined;
  readonly host?: string | undefined;
  readonly port?: number | string | undefined;
}

/** Where to send: from `url`, or from `protocol`, `host` and `port` (not both). */
function syslogEndpoint(
  v: EndpointKeys,
  r: SettingReader,
): Pick<SyslogSettings, 'protocol' | 'host' | 'port'> {
  let protocol: string | undefined = v.protocol?.trim().toLowerCase();
  let host: string | undefined = nonEmpty(v.host)?.trim();
  let port: number | string | undefined = v.port;
  if (v.url !== undefined) {
    if (v.protocol !== undefined || v.host !== undefined || v.port !== undefined) {
      r.fail('url', `set either this or ${r.name('protocol')}/${r.name('host')}/${r.name('port')}, not both`);
    }
    let url: URL;
    try {
      url = new URL(v.url.trim());
    } catch {
      return r.fail('url', 'is not a URL (tcp://HOST:PORT, tls://HOST:PORT or udp://HOST:PORT)');
    }
    protocol = url.protocol.replace(/:$/, '');
    host = url.hostname.replace(/^\[(.*)\]$/, '$1');
    port = url.port === '' ? undefined : url.port;
  }
  protocol ??= 'tcp';
  if (protocol !== 'tcp' && protocol !== 'tls' && protocol !== 'udp') {
    r.fail(
      v.url === undefined ? 'protocol' : 'url',
      `protocol must be tcp, tls or udp, got ${JSON.stringify(protocol)}`,
    );
  }
  if (host === undefined || host === '') r.fail(v.url === undefined ? 'host' : 'url', 'needs a host');
  const portNumber = port === undefined ? (protocol === 'tls' ? 6514 : 514) : Number(port);
  if (!Number.isInteger(portNumber) || portNumber < 1 || portNumber > 65_535) {
    r.fail(v.url === undefined ? 'port' : 'url', `port must be 1–65535, got ${JSON.stringify(port)}`);
  }
  return { protocol: protocol as 'tcp' | 'tls' | 'udp', host: host as string, port: portNumber };
}

export const syslogSettings = defineSinkSettings({
  keys,
  env: {
    url: 'GOVTRAIL_SYSLOG_URL',
    facility: 'GOVTRAIL_SYSLOG_FACILITY',
    hostname: 'GOVTRAIL_SYSLOG_HOSTNAME',
    ca: 'GOVTRAIL_SYSLOG_CA',
    cert: 'GOVTRAIL_SYSLOG_CERT',
    key: 'GOVTRAIL_SYSLOG_KEY',
    reject_unauthorized: 'GOVTRAIL_SYSLOG_REJECT_UNAUTHORIZED',
    timeout: 'GOVTRAIL_SYSLOG_TIMEOUT',
    min_severity: 'GOVTRAIL_SYSLOG_MIN_SEVERITY',
  },
  build: (v, r): SyslogSettings => {
    const { protocol, host, port } = syslogEndpoint(v, r);
    const facility = syslogFacility(v.facility);
    if (facility === undefined) {
      r.fail(
        'facility',
        `must be a facility name (kern, user, …, auth, authpriv, local0–local7) or number 0–23, got ${JSON.stringify(v.facility)}`,
      );
    }
    const rejectUnauthorized = rejectUnauthorizedSetting(v.reject_unauthorized, r);
    const ca = r.secret(v, 'ca');
    const cert = r.secret(v, 'cert');
    const key = r.secret(v, 'key');
    if (protocol !== 'tls' && (ca ?? cert ?? key) !== undefined) {
      r.fail(ca !== undefined ? 'ca' : cert !== undefined ? 'cert' : 'key', 'applies to protocol tls only');
    }
    if ((cert === undefined) !== (key === undefined)) {
      r.fail(cert === undefined ? 'cert' : 'key', 'a client certificate needs both cert and key');
    }
    return {
      protocol,
      host,
      port,
      facility: facility as number,
      hostname: nonEmpty(v.hostname)?.trim(),
      ca,
      cert,
      key,
      rejectUnauthorized,
      timeoutMs: r.duration(v.timeout, 'timeout'),
    };
  },
});
