/** The email sink's mail, pure: one-line subject and headers, deterministic Message-ID, escaped HTML. */
import { describe, expect, it } from 'vitest';
import {
  alertMail,
  DIGEST_FULL_ALERTS,
  digestMail,
  escapeHtml,
  isPermanentSmtpError,
} from '../../src/alerts/sinks/index.js';
import type { AlertMessage } from '../../src/core/alert.js';
import { sampleAlert } from '../helpers/alert-message.js';

const T0 = new Date('2025-03-04T00:00:00.123Z');

const ALERT = sampleAlert(T0);

describe('alertMail', () => {
  const hostile: AlertMessage = {
    ...ALERT,
    title: 'Turned off\r\nBcc: attacker@evil.example',
    dedupeKey: 'AIGOV-002:acme\r\nX-Injected: 1',
    context: { ...ALERT.context, reasons: ['<a href="javascript:alert(1)">click</a>'] },
  };

  it('keeps the subject and the headers on one line', () => {
    const mail = alertMail(hostile, { deliveryId: 'abc', from: 'alerts@govtrail.example' });
    expect(mail.subject).toBe(
      '[govtrail] HIGH AIGOV-002: Turned off Bcc: attacker@evil.example (tenant acme)',
    );
    for (const v of [mail.subject, ...Object.values(mail.headers)]) expect(v).not.toMatch(/[\r\n]/);
    expect(mail.headers['X-Govtrail-Dedupe-Key']).toBe('AIGOV-002:acme X-Injected: 1');
  });

  it('derives the Message-ID from the delivery id and the sender domain', () => {
    const a = alertMail(ALERT, { deliveryId: 'f00d', from: 'govtrail <alerts@govtrail.example>' });
    const b = alertMail(ALERT, { deliveryId: 'f00d', from: 'govtrail <alerts@govtrail.example>' });
    expect(a.messageId).toBe('<govtrail.f00d@govtrail.example>');
    expect(b.messageId).toBe(a.messageId);
  });

  it('escapes tenant text in the HTML part, keeps it verbatim in the text part', () => {
    const mail = alertMail(hostile, { deliveryId: 'abc', from: 'alerts@govtrail.example' });
    expect(mail.html).not.toContain('<a href="javascript');
    expect(mail.html).toContain(escapeHtml('<a href="javascript:alert(1)">click</a>'));
    expect(mail.text).toContain('Reason: <a href="javascript:alert(1)">click</a>');
    expect(escapeHtml(`<>&"'`)).toBe('&#60;&#62;&#38;&#34;&#39;');
  });
});

describe('digestMail', () => {
  const item = (id: string, severity: AlertMessage['severity'], extra: Partial<AlertMessage> = {}) => ({
    alert: { ...ALERT, alertId: id, severity, dedupeKey: `K${id}`, title: `title ${id}`, ...extra },
    delivery: { deliveryId: `d${id}`, attempt: 1 },
  });
  const FROM = 'alerts@govtrail.example';

  it('lists the alerts most severe first, counts them in the subject and names every dedupe key', () => {
    const mail = digestMail([item('1', 'low'), item('2', 'critical'), item('3', 'high'), item('4', 'high')], {
      from: FROM,
    });
    expect(mail.subject).toBe('[govtrail] 4 alerts: 1 CRITICAL, 2 HIGH, 1 LOW (tenant acme)');
    expect(mail.headers['X-Govtrail-Digest-Count']).toBe('4');
    expect(mail.headers['X-Govtrail-Dedupe-Keys']).toBe('K2, K3, K4, K1');
    const order = ['title 2', 'title 3', 'title 4', 'title 1'].map((t) => mail.text.indexOf(t));
    expect(order.every((p, i) => p > 0 && (i === 0 || p > (order[i - 1] as number)))).toBe(true);
    expect(mail.html.match(/<section>/g)).toHaveLength(4);
  });

  it('has a Message-ID that depends on the set of deliveries only', () => {
    const a = digestMail([item('1', 'low'), item('2', 'high')], { from: FROM });
    const b = digestMail([item('2', 'high'), item('1', 'low')], { from: FROM });
    const c = digestMail([item('1', 'low')], { from: FROM });
    expect(a.messageId).toMatch(/^<govtrail\.digest\.[0-9a-f]{32}@govtrail\.example>$/);
    expect(b.messageId).toBe(a.messageId);
    expect(c.messageId).not.toBe(a.messageId);
  });

  it('escapes tenant text in the HTML part and keeps the header on one line', () => {
    const mail = digestMail(
      [item('1', 'high', { title: '<img src=x onerror=alert(1)>', dedupeKey: 'K\r\nBcc: x@evil.example' })],
      { from: FROM },
    );
    expect(mail.html).not.toContain('<img');
    expect(mail.html).toContain(escapeHtml('<img src=x onerror=alert(1)>'));
    for (const v of [mail.subject, ...Object.values(mail.headers)]) expect(v).not.toMatch(/[\r\n]/);
  });

  it('lists alerts beyond the first fifty by one line each, and caps the header', () => {
    const items = Array.from({ length: DIGEST_FULL_ALERTS + 7 }, (_, i) => item(String(i + 1), 'medium'));
    const mail = digestMail(items, { from: FROM });
    expect(mail.html.match(/<section>/g)).toHaveLength(DIGEST_FULL_ALERTS);
    expect(mail.text).toContain('======== 7 more');
    expect(mail.text).toContain(`- MEDIUM AIGOV-002: title ${DIGEST_FULL_ALERTS + 7} (tenant acme`);
    expect(mail.headers['X-Govtrail-Dedupe-Keys']).toMatch(/, … \(37 more in the body\)$/);
  });
});

describe('isPermanentSmtpError', () => {
  it.each([
    [{ responseCode: 421 }, false],
    [{ responseCode: 451 }, false],
    [{ code: 'EAUTH', responseCode: 454 }, false],
    [{ code: 'EAUTH', responseCode: 535 }, true],
    [{ responseCode: 550 }, true],
    [{ code: 'ECONNECTION' }, false],
    [{ code: 'ETIMEDOUT' }, false],
    [{ code: 'EENVELOPE' }, true],
    [{ code: 'ESOCKET', originalCode: 'UNABLE_TO_VERIFY_LEAF_SIGNATURE' }, true],
    [{ code: 'ESOCKET', originalCode: 'ECONNRESET' }, false],
  ])('%j → permanent %s', (err, permanent) => {
    expect(isPermanentSmtpError(err)).toBe(permanent);
  });
});
