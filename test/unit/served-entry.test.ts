/**
 * ServedEntry (src/core/served-entry.ts): the entries of a scanned page are their bytes, with the
 * sha256 of exactly those bytes, and give the same value, key, depth and metadata as the entries
 * of the page parsed whole; a page the scan does not vouch for is left to the parser.
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { parseJsonText } from '../../src/core/json-text.js';
import { MAX_ENTRY_DEPTH, nestsDeeperThan } from '../../src/core/normalise/depth.js';
import { entryKeyOf } from '../../src/core/normalise/entry.js';
import { ServedEntry, scannedHistoryPage, servedOf } from '../../src/core/served-entry.js';

const ENTRIES = [
  '{"metadata":{"id":"2wTFM2tUSPoHj6m5EXvug8bZo6J","createdAt":"2025-05-01T02:00:00.123456789+02:00","changeKind":"CHANGE_KIND_PUT"},"snapshot":{"enabled":true,"note":"日本語 ü"}}',
  '{ "snapshot" : {"x":[1,2,{"y":null}]}, "metadata" : { "createdAt" : "2025-05-01T00:00:01Z" , "id" : "plain-id" } }',
  // Escapes: the metadata is not simple, so the entry is parsed to be keyed.
  '{"metadata":{"i\\u0064":"escaped-key","createdAt":"2025-05-01T00:00:02Z"},"note\\ud800":"a\\u0000b"}',
  '{"metadata":{"id":"esc\\u0061ped-value"}}',
  '["not","an","object"]',
  'null',
  `{"metadata":{"id":"deep"},"x":${'['.repeat(300)}${']'.repeat(300)}}`,
  // Written deeper than it parses: the deeper value of a key given twice is dropped.
  `{"metadata":{"id":"twice"},"x":${'['.repeat(300)}${']'.repeat(300)},"x":1}`,
];
const BODY = Buffer.from(`{"list":[${ENTRIES.join(' ,\n ')}],"nextPageToken":"next"}`, 'utf8');

describe('a scanned history page', () => {
  const page = scannedHistoryPage(BODY, 3);
  const whole = parseJsonText(BODY.toString('utf8')) as { list: unknown[] };

  it('has the entries, token and index of the page parsed whole', () => {
    expect(page).toBeDefined();
    expect(page?.nextPageToken).toBe('next');
    expect(page?.index).toBe(3);
    expect(page?.served?.length).toBe(ENTRIES.length);
    expect(page?.entries).toEqual(whole.list);
  });

  it('gives each entry the sha256 of exactly its bytes, and its value, key, depth and metadata', () => {
    for (const [i, e] of (page?.served ?? []).entries()) {
      const raw = whole.list[i];
      expect(e.digest).toBe(
        createHash('sha256')
          .update(ENTRIES[i] as string)
          .digest('hex'),
      );
      expect(e.key).toEqual(entryKeyOf(raw));
      expect(e.raw).toEqual(raw);
      for (const limit of [1, 2, 3, MAX_ENTRY_DEPTH])
        expect(e.nestsDeeperThan(limit), `${i} at ${limit}`).toBe(nestsDeeperThan(raw, limit));
      const meta = (raw as { metadata?: { id?: unknown; createdAt?: unknown } } | null)?.metadata;
      const got = e.metadata as { id?: unknown; createdAt?: unknown } | undefined;
      expect(got?.id).toEqual(meta?.id);
      expect(got?.createdAt).toEqual(meta?.createdAt);
    }
  });

  it('parses only when a value is read, and then the whole page at once', () => {
    const fresh = scannedHistoryPage(BODY, 0)?.served?.[0] as ServedEntry;
    expect(fresh.key?.entryId).toBe('2wTFM2tUSPoHj6m5EXvug8bZo6J');
    expect(fresh.raw).toEqual(whole.list[0]);
    const again = scannedHistoryPage(BODY, 0)?.served ?? [];
    expect(again[4]?.raw).toEqual(whole.list[4]);
    expect(again.map((e) => e.raw)).toEqual(whole.list);
  });

  it('is left to the parser when the scan does not vouch for it', () => {
    expect(scannedHistoryPage(Buffer.from('{"li\\u0073t":[],"nextPageToken":""}'), 0)).toBeUndefined();
    expect(scannedHistoryPage(Buffer.from('{"list":[1,],"nextPageToken":""}'), 0)).toBeUndefined();
  });
});

describe('servedOf', () => {
  it('makes served entries without a digest from a page of parsed values', () => {
    const served = servedOf({
      entries: [{ metadata: { id: 'a', createdAt: '2025-05-01T00:00:01Z' } }, 7],
      nextPageToken: '',
      index: 0,
    });
    expect(served.map((e) => e.digest)).toEqual([undefined, undefined]);
    expect(served[0]?.key?.entryId).toBe('a');
    expect(served[1]?.key).toBeUndefined();
    expect(ServedEntry.ofValue({ metadata: { id: 'b' } }).metadata).toEqual({ id: 'b' });
  });
});
