/**
 * The COPY text-format encoder (src/store/copy.ts): each value type, escaping, row and chunk
 * framing; and, as a property, that a reference decoder of the format reads back what was encoded.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  type CopyArrayElement,
  CopyBuilder,
  CopyPayload,
  type CopyValue,
  copyEscape,
  copyStatement,
  encodeCopyRows,
  encodeCopyValue,
  JsonUtf8,
} from '../../src/store/copy-format.js';

const text = (p: CopyPayload) => Buffer.concat(p.chunks as Uint8Array[]).toString('utf8');

/** Reads COPY text format as PostgreSQL does for the escapes the encoder emits: rows of fields. */
function decodeCopy(data: string): (string | null)[][] {
  const rows = data.split('\n');
  expect(rows.pop()).toBe(''); // every row ends with a newline
  return rows.map((line) =>
    line.split('\t').map((field) => {
      if (field === '\\N') return null;
      return field.replace(/\\(.)/g, (_, c: string) => {
        const unescaped = { n: '\n', t: '\t', r: '\r', '\\': '\\' }[c];
        if (unescaped === undefined) throw new Error(`unexpected escape \\${c}`);
        return unescaped;
      });
    }),
  );
}

/** Reads a one-dimensional array literal whose elements are all quoted or NULL. */
function decodeArray(literal: string): (string | null)[] {
  expect(literal.startsWith('{') && literal.endsWith('}')).toBe(true);
  const out: (string | null)[] = [];
  let i = 1;
  while (i < literal.length - 1) {
    if (literal.startsWith('NULL', i)) {
      out.push(null);
      i += 4;
    } else {
      expect(literal[i]).toBe('"');
      let s = '';
      i++;
      while (literal[i] !== '"') {
        if (literal[i] === '\\') i++;
        s += literal[i];
        i++;
      }
      out.push(s);
      i++;
    }
    if (literal[i] === ',') i++;
  }
  return out;
}

describe('encodeCopyValue', () => {
  it('writes null and undefined as \\N, and escapes a literal \\N', () => {
    expect(encodeCopyValue(null)).toBe('\\N');
    expect(encodeCopyValue(undefined)).toBe('\\N');
    expect(encodeCopyValue('\\N')).toBe('\\\\N');
  });

  it('keeps the empty string empty (not null)', () => {
    expect(encodeCopyValue('')).toBe('');
  });

  it('escapes backslash, tab, newline and carriage return, and nothing else', () => {
    expect(encodeCopyValue('a\\b\tc\nd\re')).toBe('a\\\\b\\tc\\nd\\re');
    expect(encodeCopyValue('\\.')).toBe('\\\\.');
    expect(encodeCopyValue(`quote " ' and \u0001 \u007f ünï 🚨`)).toBe(`quote " ' and \u0001 \u007f ünï 🚨`);
    expect(copyEscape('plain')).toBe('plain');
  });

  it('writes booleans as t/f, numbers and bigints as String does, dates as ISO text', () => {
    expect(encodeCopyValue(true)).toBe('t');
    expect(encodeCopyValue(false)).toBe('f');
    expect(encodeCopyValue(-1.5e-7)).toBe('-1.5e-7');
    expect(encodeCopyValue(0)).toBe('0');
    expect(encodeCopyValue(2n ** 63n - 1n)).toBe('9223372036854775807');
    expect(encodeCopyValue(new Date('2025-01-02T03:04:05.678Z'))).toBe('2025-01-02T03:04:05.678Z');
  });

  it('writes bytea as \\x hex with the backslash escaped, from any view of a buffer', () => {
    expect(encodeCopyValue(new Uint8Array([0, 1, 0xab, 0xff]))).toBe('\\\\x0001abff');
    expect(encodeCopyValue(new Uint8Array())).toBe('\\\\x');
    const whole = Buffer.from([9, 8, 7, 6, 5]);
    expect(encodeCopyValue(whole.subarray(1, 3))).toBe('\\\\x0807');
  });

  it('writes arrays as literals with every element quoted, then escapes them for COPY', () => {
    expect(encodeCopyValue([])).toBe('{}');
    expect(encodeCopyValue(['a', null, 'NULL', ''])).toBe('{"a",NULL,"NULL",""}');
    // " and \ get a backslash inside the literal; COPY then doubles every backslash.
    expect(encodeCopyValue(['say "hi"'])).toBe('{"say \\\\"hi\\\\""}');
    expect(encodeCopyValue(['back\\slash'])).toBe('{"back\\\\\\\\slash"}');
    expect(encodeCopyValue(['tab\there', '{,}'])).toBe('{"tab\\there","{,}"}');
    expect(encodeCopyValue([1, true, 2n])).toBe('{"1","t","2"}');
  });

  it('refuses what it cannot encode', () => {
    expect(() => encodeCopyValue({} as unknown as CopyValue)).toThrow(/cannot encode/);
  });
});

describe('CopyBuilder and encodeCopyRows', () => {
  it('separates fields with tabs and ends every row with a newline', () => {
    const p = encodeCopyRows([
      ['a', 1, null],
      ['', true, ['x']],
    ]);
    expect(p.rows).toBe(2);
    expect(text(p)).toBe('a\t1\t\\N\n\tt\t{"x"}\n');
  });

  it('writes each field as encodeCopyValue encodes it, short ASCII strings copied byte by byte included', () => {
    const short = 'x'.repeat(64);
    const values: CopyValue[] = [
      '',
      'plain-ascii_0123456789~ !"#$%&()*+,-./:;<=>?@[]^`{|}',
      short, // the longest copied byte by byte
      `${short}y`, // one longer: written as text
      `${short.slice(1)}\\`, // a backslash in the last place
      'tab\there',
      'nl\nhere',
      '\u001f', // a control character COPY leaves alone
      '\u007f', // DEL
      'caf\u00e9', // Latin-1, two bytes of UTF-8
      '\u{1f600}', // outside the BMP
      '\\N', // the text of NULL
      0,
      -0,
      -42,
      Number.MAX_SAFE_INTEGER,
      2 ** 53,
      1.5,
      Number.NaN,
      12n,
      true,
      false,
      null,
      undefined,
    ];
    const expected = `${values.map(encodeCopyValue).join('\t')}\n`;
    expect(text(encodeCopyRows([values]))).toBe(expected);
    expect(decodeCopy(expected)[0]?.[3]).toBe(`${short}y`);
  });

  it('checks the number of values against the width', () => {
    const b = new CopyBuilder(2);
    b.row(['a', 'b']);
    expect(() => b.row(['a'])).toThrow(/row 2 has 1 values for 2 columns/);
    expect(() => b.row([])).toThrow(/at least one value/);
  });

  it('an empty payload has no chunks', () => {
    const p = encodeCopyRows([]);
    expect(p.rows).toBe(0);
    expect([...p.chunks]).toEqual([]);
  });

  it('splits large payloads into chunks at row boundaries, multi-byte text intact', () => {
    const value = 'ü日🚨\t'.repeat(1000);
    const rows = Array.from({ length: 100 }, (_, i) => [i, value]);
    const p = encodeCopyRows(rows);
    const chunks = [...p.chunks];
    expect(chunks.length).toBeGreaterThan(2);
    for (const c of chunks) expect(Buffer.from(c).toString('utf8').endsWith('\n')).toBe(true);
    expect(decodeCopy(text(p))).toEqual(rows.map(([i, v]) => [String(i), v]));
  });

  it('take() hands over completed chunks as it goes; finish() the rest', () => {
    const b = new CopyBuilder();
    const taken: Uint8Array[] = [];
    for (let i = 0; i < 2000; i++) {
      b.row([i, 'x'.repeat(1000)]);
      taken.push(...b.take());
    }
    const rest = b.finish();
    expect(b.rows).toBe(2000);
    expect(taken.length).toBeGreaterThan(0);
    const all = Buffer.concat([...taken, ...rest.chunks]).toString('utf8');
    expect(decodeCopy(all)).toHaveLength(2000);
  });

  it('writes JSON text given as UTF-8 bytes with its backslashes doubled, as the same text would be', () => {
    const json = JSON.stringify({ a: 'tab\there "q" \\ ü🚨', b: ['\u0000\n'] });
    const bytes = Buffer.from(`xx${json}yy`).subarray(2, -2);
    const asBytes = text(encodeCopyRows([['k', new JsonUtf8(bytes), new JsonUtf8(new Uint8Array(bytes))]]));
    expect(asBytes).toBe(text(encodeCopyRows([['k', json, json]])));
    expect(decodeCopy(asBytes)).toEqual([['k', json, json]]);
    expect(text(encodeCopyRows([[new JsonUtf8(Buffer.from('{}'))]]))).toBe('{}\n');
    expect(encodeCopyValue(new JsonUtf8(Buffer.from('"\\"')))).toBe('"\\\\"');
  });

  it('writes bytea fields between text fields as the text form would', () => {
    const bytes = Uint8Array.from({ length: 256 }, (_, i) => i);
    expect(text(encodeCopyRows([['a', bytes, 1, bytes.subarray(250)]]))).toBe(
      `a\t${encodeCopyValue(bytes)}\t1\t${encodeCopyValue(bytes.subarray(250))}\n`,
    );
  });

  it('moves a row begun at the end of a chunk whole into the next, however large its fields', () => {
    const big = new JsonUtf8(Buffer.from(`"${'\\'.repeat(40_000)}"`));
    const rows: CopyValue[][] = [];
    for (let i = 0; i < 50; i++)
      rows.push([`row ${i}`, i % 7 === 0 ? big : new JsonUtf8(Buffer.from('[1]'))]);
    const p = encodeCopyRows(rows);
    const chunks = [...p.chunks];
    expect(chunks.length).toBeGreaterThan(2);
    for (const c of chunks) expect(Buffer.from(c).toString('utf8').endsWith('\n')).toBe(true);
    const decoded = decodeCopy(text(p));
    expect(decoded).toHaveLength(50);
    expect(decoded[49]).toEqual(['row 49', `"${'\\'.repeat(40_000)}"`]);
    expect(decoded[48]).toEqual(['row 48', '[1]']);
  });

  it('grows chunks to 64 KiB when rows are sent as encoded, to 1 MiB for a payload encoded beforehand', () => {
    const rows = Array.from({ length: 3000 }, (_, i) => [i, 'x'.repeat(1000)]);
    const streamed = new CopyBuilder();
    for (const r of rows) streamed.row(r);
    const sizes = (chunks: Iterable<Uint8Array>) => [...chunks].map((c) => c.length);
    expect(Math.max(...sizes(streamed.finish().chunks))).toBeLessThanOrEqual(1 << 16);
    const encoded = sizes(encodeCopyRows(rows).chunks);
    expect(Math.max(...encoded)).toBeGreaterThan(1 << 19);
    expect(Math.max(...encoded)).toBeLessThanOrEqual(1 << 20);
  });

  it('leaves no half row behind when a value cannot be encoded', () => {
    const b = new CopyBuilder();
    b.row(['a', new Uint8Array([1])]);
    expect(() => b.row(['b', new Uint8Array([2]), {} as unknown as CopyValue])).toThrow(/cannot encode/);
    b.row(['c', null]);
    expect(text(b.finish())).toBe('a\t\\\\x01\nc\t\\N\n');
  });

  it('a payload refuses to be bound as an ordinary parameter', () => {
    expect(() => new CopyPayload([], 0).toPostgres()).toThrow(/without COPY support/);
  });
});

describe('copyStatement', () => {
  it('quotes the table, its schema and the columns', () => {
    expect(copyStatement('govtrail.history_entry', ['entry_id', 'raw'])).toBe(
      'copy "govtrail"."history_entry" ("entry_id", "raw") from stdin',
    );
    expect(copyStatement('t', ['we"ird'])).toBe('copy "t" ("we""ird") from stdin');
    expect(() => copyStatement('t', [])).toThrow();
  });
});

// Any UTF-16 code unit except lone surrogates (the wire is UTF-8) and NUL (text refuses it).
const unit = fc
  .integer({ min: 1, max: 0xffff })
  .filter((c) => c < 0xd800 || c > 0xdfff)
  .map((c) => String.fromCharCode(c));
const hostile = fc.oneof(
  fc.string({ unit }),
  fc.string({ unit: fc.constantFrom('\\', '\t', '\n', '\r', 'N', '.', '"', ',', '{', '}', ' ', 'x', '🚨') }),
);

describe('COPY text format: properties', () => {
  it('a reference decoder reads back every string and null, row for row', () => {
    fc.assert(
      fc.property(
        fc.array(fc.array(fc.option(hostile, { nil: null }), { minLength: 1, maxLength: 5 })),
        (rows) => {
          expect(decodeCopy(text(encodeCopyRows(rows)))).toEqual(rows);
        },
      ),
      { numRuns: 1000 },
    );
  });

  it('JSON text as UTF-8 bytes encodes to the bytes of the same text as a string', () => {
    fc.assert(
      fc.property(fc.array(hostile), (values) => {
        const json = JSON.stringify(values);
        const asBytes = encodeCopyRows([[new JsonUtf8(Buffer.from(json)), 1]]);
        expect(text(asBytes)).toBe(text(encodeCopyRows([[json, 1]])));
      }),
      { numRuns: 1000 },
    );
  });

  it('array literals read back element for element, null elements apart from "NULL"', () => {
    fc.assert(
      fc.property(fc.array(fc.option(hostile, { nil: null })), (arr: CopyArrayElement[]) => {
        const [field] = decodeCopy(`${encodeCopyValue(arr)}\n`)[0] as [string];
        expect(decodeArray(field)).toEqual(arr);
      }),
      { numRuns: 1000 },
    );
  });
});
