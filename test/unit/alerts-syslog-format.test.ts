/**
 * The syslog sink's RFC 5424 message, pure: header (PRI from facility and severity, TIMESTAMP,
 * HOSTNAME, APP-NAME, PROCID, MSGID), structured data under govtrail@32473 with SD-PARAM escaping,
 * the BOM before a UTF-8 MSG holding a whole OCSF event, the size budget, and RFC 6587 octet
 * counting.
 */
import { describe, expect, it } from 'vitest';
import {
  escapeSdValue,
  octetCountingFrame,
  SYSLOG_MAX_BYTES,
  structuredData,
  syslogMessage,
} from '../../src/alerts/sinks/index.js';
import { headerField } from '../../src/alerts/sinks/syslog/sink.js';
import { loadConfig } from '../../src/config/settings.js';
import type { AlertMessage, Severity } from '../../src/core/alert.js';
import { ConfigError } from '../../src/core/errors.js';
import { sampleAlert } from '../helpers/alert-message.js';
import { validateOcsfEvent } from '../helpers/ocsf.js';

const T0 = new Date('2025-03-04T00:00:00.123Z');

const ALERT = sampleAlert(T0);

const BOM = Buffer.from([0xef, 0xbb, 0xbf]);

/** RFC 5424 `HEADER SP STRUCTURED-DATA SP MSG`, read strictly (one SD element, as govtrail writes). */
const RFC5424 =
  /^<(\d{1,3})>1 (\S+) (\S{1,255}) (\S{1,48}) (\S{1,128}) (\S{1,32}) (\[[^ \]]+(?: [^=\s\]"]+="(?:[^"\\\]]|\\["\\\]])*")*\]) /;

function parse(message: Buffer) {
  const bomAt = message.indexOf(BOM);
  const head = message.subarray(0, bomAt).toString('utf8');
  const m = RFC5424.exec(head);
  if (m === null) throw new Error(`not RFC 5424: ${head}`);
  return {
    pri: Number(m[1]),
    timestamp: m[2],
    hostname: m[3],
    appName: m[4],
    procId: m[5],
    msgId: m[6],
    sd: m[7] as string,
    rest: message.subarray(bomAt + BOM.length).toString('utf8'),
    headEnd: m[0].length,
    headBytes: Buffer.byteLength(head),
  };
}

/** The SD-PARAMs of one element, unescaped. */
function sdParams(sd: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const m of sd.matchAll(/ ([^=\s\]"]+)="((?:[^"\\\]]|\\["\\\]])*)"/g)) {
    out[m[1] as string] = (m[2] as string).replace(/\\(["\\\]])/g, '$1');
  }
  return out;
}

const options = { facility: 16, hostname: 'gt-1', procId: '4711', maxBytes: 8192, productVersion: '1.2.3' };

describe('RFC 5424 message of an alert', () => {
  it('has the header, the structured data under govtrail@32473 and a BOM before a valid OCSF event', () => {
    const msg = syslogMessage(ALERT, options);
    const p = parse(msg);
    expect(p.pri).toBe(16 * 8 + 3);
    expect(p.timestamp).toBe('2025-03-04T00:00:00.123Z');
    expect(p.hostname).toBe('gt-1');
    expect(p.appName).toBe('govtrail');
    expect(p.procId).toBe('4711');
    expect(p.msgId).toBe('AIGOV-002');
    expect(p.sd.startsWith('[govtrail@32473 ')).toBe(true);
    expect(sdParams(p.sd)).toEqual({
      alertId: '7',
      ruleId: 'AIGOV-002',
      ruleVersion: '1',
      severity: 'high',
      tenant: 'acme',
      dedupeKey: ALERT.dedupeKey,
    });
    // The BOM directly follows "SD SP".
    expect(p.headEnd).toBe(p.headBytes);
    const event = JSON.parse(p.rest) as Record<string, unknown>;
    expect(validateOcsfEvent(event)).toEqual([]);
    expect(event['class_uid']).toBe(2004);
  });

  it.each<[Severity, number]>([
    ['critical', 2],
    ['high', 3],
    ['medium', 4],
    ['low', 5],
  ])('PRI = facility × 8 + severity: %s → %i', (severity, code) => {
    expect(parse(syslogMessage({ ...ALERT, severity }, options)).pri).toBe(16 * 8 + code);
    expect(parse(syslogMessage({ ...ALERT, severity }, { ...options, facility: 4 })).pri).toBe(4 * 8 + code);
  });

  it('escapes ", \\ and ] in SD values (and nothing else), and reads back the original', () => {
    expect(escapeSdValue('a"b\\c]d[e=f g')).toBe('a\\"b\\\\c\\]d[e=f g');
    const hostile = 'AIGOV-002:ac"me\\x]:[evil@1 k="v"]';
    const p = parse(syslogMessage({ ...ALERT, dedupeKey: hostile, tenantId: 'ü "t"' }, options));
    expect(sdParams(p.sd)['dedupeKey']).toBe(hostile);
    expect(sdParams(p.sd)['tenant']).toBe('ü "t"');
    expect(structuredData('x@1', { k: ']' })).toBe('[x@1 k="\\]"]');
  });

  it('keeps header fields 7-bit printable ASCII within their limits, - when empty', () => {
    expect(headerField('', 48)).toBe('-');
    expect(headerField('hôst name', 255)).toBe('h?st?name');
    expect(headerField('x'.repeat(40), 32)).toHaveLength(32);
    const p = parse(
      syslogMessage({ ...ALERT, ruleId: 'RULE WITH SPACES AND A VERY LONG NAME ÜBER' }, options),
    );
    expect(p.msgId).toMatch(/^[\x21-\x7e]{1,32}$/);
  });

  it('fits the budget by cutting values inside the OCSF event, the JSON staying whole', () => {
    const huge: AlertMessage = {
      ...ALERT,
      summary: 'ü'.repeat(20_000),
      context: { ...ALERT.context, details: { blob: 'y'.repeat(50_000) } },
    };
    for (const maxBytes of [2048, SYSLOG_MAX_BYTES.udp, SYSLOG_MAX_BYTES.tcp]) {
      const msg = syslogMessage(huge, { ...options, maxBytes });
      expect(msg.length).toBeLessThanOrEqual(maxBytes);
      const event = JSON.parse(parse(msg).rest) as Record<string, unknown>;
      expect(validateOcsfEvent(event)).toEqual([]);
      expect(JSON.stringify(event)).toContain('…');
    }
    expect(SYSLOG_MAX_BYTES).toEqual({ tcp: 8192, tls: 8192, udp: 8192 });
    // A typical alert is sent whole.
    const whole = JSON.parse(parse(syslogMessage(ALERT, options)).rest) as { evidences: unknown };
    expect(JSON.stringify(whole.evidences)).toContain('requireToolApproval');
  });

  it('frames with octet counting: the byte length, a space, the message', () => {
    const msg = Buffer.from('<1>1 - - - - - - ü', 'utf8');
    const frame = octetCountingFrame(msg);
    expect(frame.toString('utf8')).toBe(`${msg.length} <1>1 - - - - - - ü`);
    expect(msg.length).toBe(19);
  });
});

describe('syslog sink configuration', () => {
  const load = (env: Record<string, string>) => loadConfig(env, { dotenv: false });
  const syslog = (env: Record<string, string>) => load(env).sinks.find((s) => s.type === 'syslog');

  it('GOVTRAIL_SYSLOG_URL: tcp, tls and udp, default ports 514/6514, facility local0', () => {
    expect(syslog({ GOVTRAIL_SYSLOG_URL: 'tcp://siem.example.com:1514' })).toMatchObject({
      name: 'syslog',
      protocol: 'tcp',
      host: 'siem.example.com',
      port: 1514,
      facility: 16,
      rejectUnauthorized: true,
    });
    expect(syslog({ GOVTRAIL_SYSLOG_URL: 'tls://siem.example.com' })).toMatchObject({
      protocol: 'tls',
      port: 6514,
    });
    expect(syslog({ GOVTRAIL_SYSLOG_URL: 'udp://[::1]' })).toMatchObject({
      protocol: 'udp',
      host: '::1',
      port: 514,
    });
    expect(syslog({ GOVTRAIL_SYSLOG_URL: 'tcp://h:1', GOVTRAIL_SYSLOG_FACILITY: 'auth' })).toMatchObject({
      facility: 4,
    });
  });

  it.each([
    [{ GOVTRAIL_SYSLOG_URL: 'http://h:1' }, 'GOVTRAIL_SYSLOG_URL', /tcp, tls or udp/],
    [
      { GOVTRAIL_SYSLOG_URL: 'tcp://h:1', GOVTRAIL_SYSLOG_FACILITY: 'local9' },
      'GOVTRAIL_SYSLOG_FACILITY',
      /facility name/,
    ],
    [{ GOVTRAIL_SYSLOG_URL: 'tcp://h:1', GOVTRAIL_SYSLOG_CA: 'pem' }, 'GOVTRAIL_SYSLOG_CA', /tls only/],
    [
      { GOVTRAIL_SYSLOG_URL: 'tls://h:1', GOVTRAIL_SYSLOG_REJECT_UNAUTHORIZED: 'maybe' },
      'GOVTRAIL_SYSLOG_REJECT_UNAUTHORIZED',
      /true or false/,
    ],
  ])('refuses %j naming %s', (env, setting, message) => {
    let err: unknown;
    try {
      load(env);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).setting).toBe(setting);
    expect((err as Error).message).toMatch(message);
  });
});
