/**
 * canonical.ts edge cases the property tests do not reach: values JSON has no text for, and row
 * hashes of rows that miss a field (only an untyped caller can build one).
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  canonicalJson,
  contentHash,
  contentHashOfText,
  rowHash,
  toJsonbText,
} from '../../src/core/normalise/canonical.js';

function sha256(previous: Uint8Array, text: string): string {
  return createHash('sha256').update(previous).update(text).digest('hex');
}

describe('toJsonbText', () => {
  it('gives the JSON null for a value JSON has no text for', () => {
    expect(toJsonbText(undefined)).toBe('null');
    expect(toJsonbText(() => 1)).toBe('null');
    expect(toJsonbText(Symbol('s'))).toBe('null');
  });
});

describe('rowHash', () => {
  const full = { tenantId: 't', entryId: 'e', createdAtText: '2025-01-01T00:00:00Z', raw: { a: 1 } };
  const ZERO = new Uint8Array(32);

  it('hashes the previous hash (32 zero bytes for the first row) and the row as canonical JSON', () => {
    const text = '{"created_at_text":"2025-01-01T00:00:00Z","entry_id":"e","raw":{"a":1},"tenant_id":"t"}';
    expect(rowHash(null, full).toString('hex')).toBe(sha256(ZERO, text));
    const previous = new Uint8Array(32).fill(7);
    expect(rowHash(previous, full).toString('hex')).toBe(sha256(previous, text));
  });

  it.each(['tenantId', 'entryId', 'createdAtText', 'raw'] as const)(
    'drops the key of a missing %s, as canonical JSON of the row does',
    (missing) => {
      const row = { ...full, [missing]: undefined } as unknown as typeof full;
      const expected = canonicalJson({
        tenant_id: row.tenantId,
        entry_id: row.entryId,
        created_at_text: row.createdAtText,
        raw: row.raw,
      });
      expect(expected).not.toContain('null');
      expect(rowHash(null, row).toString('hex')).toBe(sha256(ZERO, expected));
      const previous = new Uint8Array(32).fill(1);
      expect(rowHash(previous, row).toString('hex')).toBe(sha256(previous, expected));
    },
  );

  it('keeps a null createdAt text as null, which is not the same row as one without the field', () => {
    const withNull = { ...full, createdAtText: null };
    expect(rowHash(null, withNull).toString('hex')).toBe(
      sha256(ZERO, '{"created_at_text":null,"entry_id":"e","raw":{"a":1},"tenant_id":"t"}'),
    );
  });
});

describe('contentHash (docs/design/integrity.md)', () => {
  it('is sha256 of the canonical JSON: key order and whitespace never count as a change', () => {
    const expected = createHash('sha256').update('{"a":1,"b":[2,{"c":3,"d":4}]}').digest('hex');
    expect(contentHash({ b: [2, { d: 4, c: 3 }], a: 1 }).toString('hex')).toBe(expected);
    expect(contentHash(JSON.parse('{ "a" : 1 , "b" : [ 2 , { "c" : 3 , "d" : 4 } ] }')).toString('hex')).toBe(
      expected,
    );
    expect(contentHashOfText('{"a":1,"b":[2,{"c":3,"d":4}]}').toString('hex')).toBe(expected);
  });

  it('hashes what jsonb reads back: a NUL jsonb cannot keep hashes as the U+FFFD stored in its place', () => {
    expect(contentHash({ a: 'x\u0000' }).equals(contentHash({ a: 'x\uFFFD' }))).toBe(true);
    expect(contentHash({ a: 'x' }).equals(contentHash({ a: 'y' }))).toBe(false);
  });
});
