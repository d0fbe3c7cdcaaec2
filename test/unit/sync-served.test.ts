/**
 * groupServed (src/sync/served.ts): the first copy of each id is kept in order; a further copy with
 * the same content is dropped as a harmless duplicate, whatever its key order or whitespace; every
 * further distinct content of an id is kept, once, with its hash.
 */
import { describe, expect, it } from 'vitest';
import { contentHash } from '../../src/core/normalise/canonical.js';
import { groupServed, type KeyedServed } from '../../src/sync/served.js';

function served(id: string, raw: Record<string, unknown>): KeyedServed {
  return { raw, key: { entryId: id, createdAtKey: '2026-01-01T00:00:00.000000000Z', createdAtText: null } };
}

describe('groupServed', () => {
  it('keeps first copies in order and hashes nothing when every id is served once', () => {
    const g = groupServed([served('b', { n: 1 }), served('a', { n: 2 })]);
    expect([...g.first.keys()]).toEqual(['b', 'a']);
    expect(g.firstHashes.size).toBe(0);
    expect(g.others.size).toBe(0);
  });

  it('drops a same-content copy, key order notwithstanding, and keeps each other content once', () => {
    const a1 = served('a', { x: 1, y: 2 });
    const a2 = served('a', { y: 2, x: 1 });
    const a3 = served('a', { x: 3 });
    const a4 = served('a', { x: 3 });
    const a5 = served('a', { x: 4 });
    const g = groupServed([a1, served('b', {}), a2, a3, a4, a5]);
    expect([...g.first.keys()]).toEqual(['a', 'b']);
    expect(g.first.get('a')).toBe(a1);
    expect(g.firstHashes.get('a')).toEqual(contentHash(a1.raw));
    expect(g.others.get('a')?.map((o) => o.served)).toEqual([a3, a5]);
    expect(g.others.get('a')?.map((o) => o.hash)).toEqual([contentHash(a3.raw), contentHash(a5.raw)]);
    expect(g.others.has('b')).toBe(false);
  });
});
