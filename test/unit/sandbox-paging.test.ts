import { describe, expect, it } from 'vitest';
import { parseFaultSpec } from '../../src/sandbox/faults.js';
import { PageTokens, parseHistoryQuery } from '../../src/sandbox/paging.js';

const query = (q: string) => parseHistoryQuery(new URLSearchParams(q));

describe('sandbox paging convention', () => {
  it('clamps page_size to 10–100 with 25 by default', () => {
    expect(query('')).toEqual({ ok: true, pageSize: 25, pageToken: '' });
    expect(query('page_size=')).toMatchObject({ pageSize: 25 });
    // 0 is the proto3 default of a uint32: the same as absent.
    expect(query('page_size=0')).toMatchObject({ pageSize: 25 });
    expect(query('page_size=1')).toMatchObject({ pageSize: 10 });
    expect(query('page_size=10')).toMatchObject({ pageSize: 10 });
    expect(query('page_size=57')).toMatchObject({ pageSize: 57 });
    expect(query('page_size=101')).toMatchObject({ pageSize: 100 });
    expect(query('page_size=4294967295')).toMatchObject({ pageSize: 100 });
    expect(query('page_size=10&unknown=1&page_token=abc')).toEqual({
      ok: true,
      pageSize: 10,
      pageToken: 'abc',
    });
  });

  it('refuses page sizes a uint32 cannot hold and repeated parameters', () => {
    for (const q of [
      'page_size=abc',
      'page_size=-1',
      'page_size=1.5',
      'page_size=4294967296',
      'page_size=1e3',
    ]) {
      expect(query(q)).toMatchObject({ ok: false });
    }
    expect(query('page_size=10&page_size=20')).toMatchObject({ ok: false });
    expect(query('page_token=a&page_token=b')).toMatchObject({ ok: false });
  });

  it('mints opaque tokens that cannot be altered or forged', () => {
    const tokens = new PageTokens(Buffer.from('secret one'));
    const cursor = { mode: 'keyset', key: '2rFTosFRhljeJS2y36ChIfTTo4N', index: 42 } as const;
    const token = tokens.encode(cursor);
    expect(token).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(token).not.toContain('2rFTosFRhljeJS2y36ChIfTTo4N');
    expect(tokens.decode(token)).toEqual(cursor);
    expect(tokens.decode(tokens.encode({ mode: 'offset', offset: 300 }))).toEqual({
      mode: 'offset',
      offset: 300,
    });
    const flipped = `${token.slice(0, 5)}${token[5] === 'A' ? 'B' : 'A'}${token.slice(6)}`;
    expect(tokens.decode(flipped)).toBeUndefined();
    expect(tokens.decode(`${token}x`)).toBeUndefined();
    expect(tokens.decode('not a token')).toBeUndefined();
    expect(tokens.decode('')).toBeUndefined();
    expect(new PageTokens(Buffer.from('secret two')).decode(token)).toBeUndefined();
  });
});

describe('sandbox random fault spec', () => {
  it('reads kinds with probabilities and the Retry-After of 429s', () => {
    expect(parseFaultSpec('429:0.1,500:0.05,reset:0.02,slow:0.02')).toEqual({
      kinds: [
        ['429', 0.1],
        ['500', 0.05],
        ['reset', 0.02],
        ['slow', 0.02],
      ],
      retryAfter: 1,
    });
    expect(parseFaultSpec(' expire:1 , retry-after:7 ')).toEqual({ kinds: [['expire', 1]], retryAfter: 7 });
    expect(parseFaultSpec('')).toEqual({ kinds: [], retryAfter: 1 });
  });

  it('rejects unknown kinds, bad probabilities and totals above one', () => {
    expect(() => parseFaultSpec('418:0.1')).toThrow(/unknown kind/);
    expect(() => parseFaultSpec('hang:0.1')).toThrow(/unknown kind/);
    expect(() => parseFaultSpec('500')).toThrow(/kind:probability/);
    expect(() => parseFaultSpec('500:1.5')).toThrow(/above 1/);
    expect(() => parseFaultSpec('500:0.6,429:0.6')).toThrow(/more than 1/);
    expect(() => parseFaultSpec('retry-after:1.5')).toThrow(/whole seconds/);
  });
});
