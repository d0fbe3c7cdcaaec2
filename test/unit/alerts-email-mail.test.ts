/** The email sink's mail, pure: one-line subject and headers, deterministic Message-ID, escaped HTML. */
import { describe, expect, it } from 'vitest';
import { alertMail, escapeHtml, isPermanentSmtpError } from '../../src/alerts/sinks/index.js';
import type { AlertMessage } from '../../src/alerts/types.js';
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
