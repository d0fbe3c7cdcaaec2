/**
 * The webhook sink's Standard Webhooks signature, checked with the scheme's reference library as a
 * receiver would: both secret forms, a tampered body, a replayed (old) message, and the deprecated
 * X-Govtrail-Signature still sent beside it.
 */
import { createHmac, randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { signBody, standardWebhookHeaders, standardWebhookKey } from '../../src/alerts/sinks/webhook/sink.js';

const BODY = Buffer.from('{"type":"govtrail.alert","alert":{"id":"42","title":"ä ✓"}}', 'utf8');
const ID = '3f1c0a9d7b3e4f21aa5500c0ffee0001';

describe('Standard Webhooks signature', () => {
  it('a whsec_ secret is keyed by its base64-decoded bytes and verifies with the reference library', () => {
    const secret = `whsec_${randomBytes(24).toString('base64')}`;
    const headers = standardWebhookHeaders(secret, ID, new Date(), BODY);
    expect(headers['webhook-id']).toBe(ID);
    expect(headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
    expect(new Webhook(secret).verify(BODY.toString('utf8'), headers)).toEqual(JSON.parse(BODY.toString()));
    expect(standardWebhookKey(secret)).toEqual(Buffer.from(secret.slice(6), 'base64'));
  });

  it('any other secret is keyed by its UTF-8 bytes (the library’s raw format)', () => {
    const secret = 'plain-shared-secret';
    const headers = standardWebhookHeaders(secret, ID, new Date(), BODY);
    expect(() => new Webhook(secret, { format: 'raw' }).verify(BODY.toString('utf8'), headers)).not.toThrow();
    // The signed content is "<id>.<timestamp>.<body>", nothing else.
    const expected = createHmac('sha256', secret)
      .update(`${ID}.${headers['webhook-timestamp']}.${BODY.toString('utf8')}`)
      .digest('base64');
    expect(headers['webhook-signature']).toBe(`v1,${expected}`);
  });

  it('the timestamp is whole Unix seconds of the attempt', () => {
    const headers = standardWebhookHeaders('s', ID, new Date('2026-11-24T05:00:01.999Z'), BODY);
    expect(headers['webhook-timestamp']).toBe(String(Date.parse('2026-11-24T05:00:01Z') / 1000));
  });

  it('a tampered body, another id or a replay outside the tolerance does not verify', () => {
    const secret = `whsec_${randomBytes(24).toString('base64')}`;
    const hook = new Webhook(secret);
    const headers = standardWebhookHeaders(secret, ID, new Date(), BODY);
    expect(() => hook.verify(`${BODY.toString('utf8')} `, headers)).toThrow(/signature/i);
    expect(() => hook.verify(BODY.toString('utf8'), { ...headers, 'webhook-id': `${ID}x` })).toThrow(
      /signature/i,
    );
    const old = standardWebhookHeaders(secret, ID, new Date(Date.now() - 10 * 60_000), BODY);
    expect(() => hook.verify(BODY.toString('utf8'), old)).toThrow(/too old/i);
  });

  it('the deprecated X-Govtrail-Signature is the hex HMAC of the body alone', () => {
    expect(signBody('k', BODY)).toBe(`sha256=${createHmac('sha256', 'k').update(BODY).digest('hex')}`);
  });
});
