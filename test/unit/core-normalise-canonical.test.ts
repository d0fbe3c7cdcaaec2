/**
 * canonical.ts edge cases the property tests do not reach: values JSON has no text for, values
 * canonicalJson's JSON.stringify path must leave to its own writer, and row hashes of rows that miss
 * a field (only an untyped caller can build one).
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

describe('canonicalJson: what JSON.stringify of a key-sorted copy cannot write', () => {
  // Each of these leaves the copy for the piece-by-piece writer, nested under JSON data that the
  // copy would take, and must come out as canonical JSON all the same.
  const nested = (v: unknown) => ({ z: [{ b: 1, a: v }], y: 'x' });
  const canonicalNested = (text: string) => `{"y":"x","z":[{"a":${text},"b":1}]}`;

  it('orders keys that look like array indices as strings, not numbers first', () => {
    expect(canonicalJson({ b: 1, '10': 2, '9': 3, a: 4, '1x': 5 })).toBe('{"10":2,"1x":5,"9":3,"a":4,"b":1}');
    expect(canonicalJson(nested({ '2': 1, '10': 2 }))).toBe(canonicalNested('{"10":2,"2":1}'));
  });

  it('keeps an own __proto__ key, as JSON.parse makes it', () => {
    const parsed = JSON.parse('{"b":{"__proto__":{"y":1,"x":2}},"a":1}');
    expect(canonicalJson(parsed)).toBe('{"a":1,"b":{"__proto__":{"x":2,"y":1}}}');
  });

  it('writes objects of a class by their own keys, never by toJSON or their boxed value', () => {
    expect(canonicalJson(nested(new Date(0)))).toBe(canonicalNested('{}'));
    expect(canonicalJson(nested(Object(1)))).toBe(canonicalNested('{}'));
    expect(canonicalJson(nested(new Map([['k', 1]])))).toBe(canonicalNested('{}'));
    expect(canonicalJson(nested({ toJSON: 1, b: 2 }))).toBe(canonicalNested('{"b":2,"toJSON":1}'));
    const bare = Object.assign(Object.create(null) as object, { b: 1, a: 2 });
    expect(canonicalJson(nested(bare))).toBe(canonicalNested('{"a":2,"b":1}'));
  });

  it('writes undefined, functions, symbols and holes as it always did', () => {
    expect(canonicalJson(nested({ u: undefined, f: () => 1, s: Symbol('s') }))).toBe(
      canonicalNested('{"f":null,"s":null}'),
    );
    const holed: unknown[] = [1];
    holed[2] = undefined; // a hole at 1
    expect(canonicalJson(nested(holed))).toBe(canonicalNested('[1,,null]'));
    expect(canonicalJson(nested([Number.NaN, -0, 1e21]))).toBe(canonicalNested('[null,0,1e+21]'));
    expect(() => canonicalJson(nested(1n))).toThrow(TypeError);
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
