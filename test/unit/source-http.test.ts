import { describe, expect, it } from 'vitest';
import { registerSecret } from '../../src/runtime/logger.js';
import { describeErrorBody, networkErrorCode, statusError } from '../../src/source/http-errors.js';

describe('describeErrorBody', () => {
  it('reads a grpc-gateway body with a numeric code', () => {
    expect(describeErrorBody('{"code":5,"message":"settings not found","details":[]}')).toEqual({
      summary: 'code 5, message "settings not found"',
      serverCode: 5,
      serverMessage: 'settings not found',
    });
  });

  it('reads a body with a string code and an OAuth error body', () => {
    expect(describeErrorBody('{"code":"invalid_argument","message":"bad page_size"}').serverCode).toBe(
      'invalid_argument',
    );
    expect(
      describeErrorBody('{"error":"invalid_client","error_description":"unknown client"}'),
    ).toMatchObject({
      serverCode: 'invalid_client',
      serverMessage: 'unknown client',
    });
  });

  it('quotes at most 200 characters of a raw body', () => {
    const d = describeErrorBody(`upstream exploded ${'!'.repeat(500)}`);
    expect(d.summary).toContain('upstream exploded');
    expect(d.summary.length).toBeLessThan(220);
    expect(describeErrorBody('').summary).toBe('empty body');
  });

  it('scrubs a registered secret that a server echoes back', () => {
    registerSecret('echoed-secret-value-123');
    expect(describeErrorBody('{"message":"bad secret echoed-secret-value-123"}').summary).not.toContain(
      'echoed-secret-value-123',
    );
    expect(describeErrorBody('raw echoed-secret-value-123').summary).not.toContain('echoed-secret-value-123');
  });
});

describe('statusError', () => {
  it('maps statuses to stable codes and retryability', () => {
    const cases: [number, string, boolean][] = [
      [400, 'HTTP_ERROR', false],
      [401, 'AUTH_REJECTED', false],
      [403, 'PERMISSION_DENIED', false],
      [404, 'HTTP_ERROR', false],
      [408, 'HTTP_ERROR', true],
      [409, 'HTTP_ERROR', false],
      [429, 'RATE_LIMITED', true],
      [500, 'HTTP_ERROR', true],
      [501, 'HTTP_ERROR', false],
      [502, 'HTTP_ERROR', true],
      [503, 'HTTP_ERROR', true],
      [504, 'HTTP_ERROR', true],
    ];
    for (const [status, code, retryable] of cases) {
      const e = statusError('history', status, '');
      expect([e.code, e.retryable, e.status], String(status)).toEqual([code, retryable, status]);
    }
  });

  it('says the history listing is admin-tier on 403', () => {
    expect(statusError('history', 403, '').message).toMatch(/admin-tier/);
  });
});

describe('networkErrorCode', () => {
  it('finds a code on the error, its cause or inside an AggregateError', () => {
    expect(networkErrorCode(Object.assign(new Error('x'), { code: 'ECONNRESET' }))).toBe('ECONNRESET');
    expect(
      networkErrorCode(new Error('x', { cause: Object.assign(new Error('y'), { code: 'EPIPE' }) })),
    ).toBe('EPIPE');
    const agg = new AggregateError([Object.assign(new Error('a'), { code: 'ECONNREFUSED' })], 'all failed');
    expect(networkErrorCode(agg)).toBe('ECONNREFUSED');
    expect(networkErrorCode(Object.assign(new Error('x'), { code: 'UND_ERR_INVALID_ARG' }))).toBe(
      'UND_ERR_INVALID_ARG',
    );
    expect(networkErrorCode(new Error('x'))).toBeUndefined();
  });
});
