import { describe, expect, it } from 'vitest';
import { contentHash } from '../../src/core/normalise/canonical.js';
import { normaliseEntry } from '../../src/core/normalise/entry.js';
import type { NormalisedEntry } from '../../src/core/normalise/types.js';
import type { CopyPayload } from '../../src/store/copy-format.js';
import { EntryEncoder, encodeEntries } from '../../src/store/write/entries.js';

function entry(i: number, extra: object = {}): NormalisedEntry {
  const n = normaliseEntry('acme', {
    metadata: {
      id: `2abc${String(i).padStart(23, '0')}`,
      createdAt: `2025-01-0${1 + (i % 9)}T00:00:00.${String(i).padStart(9, '0')}Z`,
      changeKind: 'CHANGE_KIND_PUT',
      actor: { kind: 'ACTOR_KIND_USER', userId: `u${i}` },
      annotations: i % 2 === 0 ? [{ key: 'ticket_id', kind: 'ANNOTATION_KIND_TICKET', value: `T-${i}` }] : [],
    },
    ...(i % 3 === 0 ? {} : { snapshot: { enabled: i % 2 === 0, discoveryInterval: `${i}s`, é: 'ü\t\\' } }),
    ...extra,
  });
  if (!n.ok) throw new Error(n.reason);
  return n.value;
}

const bytes = (p: CopyPayload) => Buffer.concat([...p.chunks]);

describe('EntryEncoder (a backfill encodes a batch entry by entry as its pages come)', () => {
  it('gives the bytes, row counts and hash chain encodeEntries gives for the batch at once', () => {
    const entries = Array.from({ length: 120 }, (_, i) => entry(i, i === 7 ? { odd: '\u0000' } : {}));
    const previous = Buffer.alloc(32, 7);
    const whole = encodeEntries(42, entries, previous);
    const encoder = new EntryEncoder('acme', 42, previous);
    const hashes = entries.map((e) => encoder.add(e));
    const part = encoder.finish();
    expect(part.count).toBe(120);
    expect(part.lastHash).toEqual(whole.lastHash);
    for (const k of ['entries', 'annotations', 'snapshots'] as const) {
      expect(part[k].rows).toBe(whole[k].rows);
      expect(bytes(part[k]).equals(bytes(whole[k]))).toBe(true);
    }
    // What it returns per entry is the content hash a later copy of the entry is compared with.
    expect(hashes).toEqual(entries.map((e) => contentHash(e.entry.raw)));
  });

  it('refuses an entry of another tenant', () => {
    const encoder = new EntryEncoder('other', 1, null);
    expect(() => encoder.add(entry(1))).toThrow(/tenants other and acme/);
  });
});
