/**
 * parseJsonText (src/core/json-text.ts): JSON.parse without V8's escaped-key bug
 * (nodejs/node#63785): after an object with a key such as `\`, an escaped key of the same place in
 * the same shape came back as `\`.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseJsonText } from '../../src/core/json-text.js';

if (process.env['CI']) fc.configureGlobal({ seed: 20_261_127 });

const keysOf = (v: unknown) => Object.keys(v as object);

describe('parseJsonText', () => {
  it('decodes escaped keys right after an object of the same shape had a key V8 then reads them as', () => {
    // What poisons V8's parser: a key `\` (and, as seen, `"`) at the place of the later escaped key.
    JSON.parse('{"h":[],"\\\\":0}');
    JSON.parse('{"g":[],"\\"":0}');
    expect(keysOf(parseJsonText('{"h":1,"\\n":2}'))).toEqual(['h', '\n']);
    expect(keysOf(parseJsonText('{"h":1,"\\"":2}'))).toEqual(['h', '"']);
    expect(keysOf(parseJsonText('{"h":1,"\\u0041":2}'))).toEqual(['h', 'A']);
    expect(keysOf(parseJsonText('{"g":1,"\\t":2}'))).toEqual(['g', '\t']);
    expect(parseJsonText('[{"h":{"h":1,"\\ufffd":[{"h":2,"\\r" : 3}]}}]')).toEqual([
      { h: { h: 1, '\ufffd': [{ h: 2, '\r': 3 }] } },
    ]);
  });

  it('gives what JSON.parse gives: key order, a key given twice, __proto__, index keys, values with escapes', () => {
    const twice = parseJsonText('{"a":1,"b":2,"\\u0061":3}');
    expect(keysOf(twice)).toEqual(['a', 'b']);
    expect(twice).toEqual({ a: 3, b: 2 });
    expect(keysOf(parseJsonText('{"b":1,"\\u0031":2,"0":3}'))).toEqual(['0', '1', 'b']);
    const proto = parseJsonText('{"\\u005f_proto__":{"x":1},"y":2}') as Record<string, unknown>;
    expect(Object.hasOwn(proto, '__proto__')).toBe(true);
    expect(Object.getPrototypeOf(proto)).toBe(Object.prototype);
    expect(Object.getOwnPropertyDescriptor(proto, '__proto__')?.value).toEqual({ x: 1 });
    // A value that looks like a key inside its string is a value.
    expect(parseJsonText('{"v":"a\\":b","w":"\\\\","\\\\":":"}')).toEqual({ v: 'a":b', w: '\\', '\\': ':' });
    // Text that happens to hold the stand-in prefix still parses.
    expect(parseJsonText('{"~govtrail-key-0~0":1,"\\n":2}')).toEqual({ '~govtrail-key-0~0': 1, '\n': 2 });
  });

  it('refuses what JSON.parse refuses, with a SyntaxError', () => {
    for (const text of ['{"\\x":1}', '{"\\n":}', '{"\\n" 1}', '{"a\\":1}', ''])
      expect(() => parseJsonText(text)).toThrow(SyntaxError);
  });

  it('reads back any JSON text as it was written, keys with escapes of every kind included', () => {
    const key = fc.oneof(
      fc.string(),
      fc.string({ unit: fc.constantFrom('\\', '"', '\n', '\u0000', '\ud800', 'é', 'a', '1', ':', ' ') }),
      fc.constantFrom('__proto__', '0', '\\', '"'),
    );
    const json = fc.letrec((tie) => ({
      value: fc.oneof(
        { depthSize: 'small' },
        fc.string(),
        fc.double({ noNaN: true, noDefaultInfinity: true }),
        fc.boolean(),
        fc.constant(null),
        fc.array(tie('value'), { maxLength: 4 }),
        fc.dictionary(key, tie('value'), { maxKeys: 8 }),
      ),
    })).value;
    fc.assert(
      fc.property(json, fc.boolean(), (v, pretty) => {
        const text = pretty ? JSON.stringify(v, null, 2) : JSON.stringify(v);
        expect(JSON.stringify(parseJsonText(text))).toBe(JSON.stringify(v));
      }),
      { numRuns: 2000 },
    );
  });
});
