/**
 * parseJsonText (src/core/json-text.ts) against a reference parser written in JavaScript (json5,
 * a dev dependency; JSON is a subset of JSON5 and it builds objects as JSON.parse does), over
 * generated JSON text whose objects repeat keys and write them plain, escaped in part or escaped in
 * full: the same value, the same key order, the same own `__proto__`. Native JSON.parse is no
 * reference here, being what V8's escaped-key bug (nodejs/node#63785) lives in; it still decides
 * which mangled texts are JSON at all (the bug does not change that).
 *
 * 20 000 cases per run; GOVTRAIL_JSON_DIFFERENTIAL_RUNS=200000 runs more (docs/testing.md).
 */
import fc from 'fast-check';
import JSON5 from 'json5';
import { describe, expect, it } from 'vitest';
import { parseJsonText } from '../../src/core/json-text.js';

if (process.env['CI']) fc.configureGlobal({ seed: 20_261_127 });

const RUNS = Number(process.env['GOVTRAIL_JSON_DIFFERENTIAL_RUNS'] ?? 20_000);
/** About 0.6 ms a case on a loaded 2-core machine, with room. */
const TIMEOUT_MS = 30_000 + RUNS * 2;

/** A JSON value as written: an object is a list of members, so a key may come twice. */
type Written =
  | { readonly kind: 'scalar'; readonly value: string | number | boolean | null }
  | { readonly kind: 'array'; readonly items: readonly Written[] }
  | { readonly kind: 'object'; readonly members: readonly (readonly [Key, Written])[] };

/** A key and how each of its characters is written: as it is, or as a \u escape. */
interface Key {
  readonly text: string;
  readonly escape: readonly boolean[];
}

// Few distinct keys, so that objects repeat them; the ones the bug and JSON.parse's rules touch.
const KEY_TEXTS = [
  'a',
  'b',
  '1',
  '0',
  '10',
  '01',
  'requireToolApproval',
  '__proto__',
  '\\',
  '"',
  '\n',
  'é',
  '\u2028',
  '\ud83d\ude00',
  '',
  'h',
];

const key: fc.Arbitrary<Key> = fc
  .constantFrom(...KEY_TEXTS)
  .chain((text) =>
    fc
      .array(fc.boolean(), { minLength: text.length, maxLength: text.length })
      .map((escaped) => ({ text, escape: escaped })),
  );

const scalar = fc.oneof(
  fc.string({ unit: fc.constantFrom('a', '"', '\\', '\n', '\u0000', 'é', ':', '\ud800', ' ') }),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.integer(),
  fc.boolean(),
  fc.constant(null),
);

const written: fc.Arbitrary<Written> = fc.letrec<{ value: Written }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    scalar.map((value) => ({ kind: 'scalar' as const, value })),
    fc.array(tie('value'), { maxLength: 4 }).map((items) => ({ kind: 'array' as const, items })),
    fc
      .array(fc.tuple(key, tie('value')), { maxLength: 6 })
      .map((members) => ({ kind: 'object' as const, members })),
  ),
})).value;

const SPACE = ['', ' ', '\n', '\t ', '\r\n'];

/** The text of a key: each character JSON-encoded as it is, or as \uXXXX. */
function keyText(k: Key): string {
  let out = '"';
  for (let i = 0; i < k.text.length; i++) {
    const c = k.text[i] as string;
    out += k.escape[i]
      ? `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`
      : JSON.stringify(c).slice(1, -1);
  }
  return `${out}"`;
}

function textOf(w: Written, space: number): string {
  const s = SPACE[space % SPACE.length] as string;
  if (w.kind === 'scalar') return JSON.stringify(w.value);
  if (w.kind === 'array') return `[${s}${w.items.map((v, i) => textOf(v, space + i)).join(`,${s}`)}${s}]`;
  return `{${s}${w.members.map(([k, v], i) => `${keyText(k)}${s}:${s}${textOf(v, space + i + 1)}`).join(`,${s}`)}${s}}`;
}

/**
 * A value as a string that tells apart all that matters: own keys in order (Object.keys), each
 * value, -0 from 0, arrays from objects, and the prototype (a `__proto__` key must be an own key).
 */
function shape(v: unknown): string {
  if (v === null || typeof v !== 'object') {
    if (Object.is(v, -0)) return '-0';
    return JSON.stringify(v) ?? String(v);
  }
  if (Array.isArray(v)) return `[${v.map(shape).join(',')}]`;
  if (Object.getPrototypeOf(v) !== Object.prototype) return 'object with another prototype';
  const o = v as Record<string, unknown>;
  return `{${Object.keys(o)
    .map((k) => `${JSON.stringify(k)}:${shape(Object.getOwnPropertyDescriptor(o, k)?.value)}`)
    .join(',')}}`;
}

/** The outcome of a parser: its value's shape, or that it refused the text. */
function outcome(parse: (text: string) => unknown, text: string): string {
  try {
    return shape(parse(text));
  } catch (err) {
    return err instanceof SyntaxError ? 'SyntaxError' : `${(err as Error).name}: ${(err as Error).message}`;
  }
}

describe('parseJsonText against a reference parser', () => {
  it(
    `agrees on ${RUNS} generated texts with repeated, escaped and partly escaped keys`,
    () => {
      let escapedKeys = 0;
      let repeated = 0;
      fc.assert(
        fc.property(written, fc.nat(4), (w, space) => {
          const text = textOf(w, space);
          if (/"(?:[^"\\]|\\.)*\\u[0-9a-f]{4}(?:[^"\\]|\\.)*"\s*:/.test(text)) escapedKeys++;
          if (hasRepeatedKey(w)) repeated++;
          expect(outcome(parseJsonText, text)).toBe(outcome(JSON5.parse, text));
        }),
        { numRuns: RUNS },
      );
      // The generator does reach the cases this is about.
      expect(escapedKeys).toBeGreaterThan(RUNS / 10);
      expect(repeated).toBeGreaterThan(RUNS / 20);
    },
    TIMEOUT_MS,
  );

  it(
    'refuses what JSON.parse refuses, on texts cut or with a character changed',
    () => {
      fc.assert(
        fc.property(
          written,
          fc.nat(),
          fc.constantFrom('', ',', ':', '"', '\\', '}', ']', 'x', '\u0001'),
          (w, at, ch) => {
            const full = textOf({ kind: 'object', members: [[{ text: 'k', escape: [true] }, w]] }, 0);
            const p = at % (full.length + 1);
            const text = full.slice(0, p) + ch + full.slice(p + 1);
            const native = (() => {
              try {
                JSON.parse(text);
                return 'ok';
              } catch {
                return 'SyntaxError';
              }
            })();
            const ours = outcome(parseJsonText, text);
            expect(ours === 'SyntaxError' ? 'SyntaxError' : 'ok').toBe(native);
          },
        ),
        { numRuns: Math.min(RUNS, 20_000) },
      );
    },
    TIMEOUT_MS,
  );

  it('reads an escaped key beside a string of 8 MiB', () => {
    const big = 'x'.repeat(8 * 1024 * 1024);
    const text = `{"\\u0072equireToolApproval":false,"v":"${big}","requireToolApproval":true}`;
    const v = parseJsonText(text) as Record<string, unknown>;
    expect(Object.keys(v)).toEqual(['requireToolApproval', 'v']);
    expect(v['requireToolApproval']).toBe(true);
    expect((v['v'] as string).length).toBe(big.length);
  });

  it('keeps the last value of a key given twice, however it is written (JSON.parse semantics)', () => {
    expect(parseJsonText('{"\\u0031":1,"1":2}')).toEqual({ 1: 2 });
    const served = parseJsonText(
      '{"requireToolApproval":false,"\\u0072equireToolApproval":true,"requireToolApproval":false}',
    ) as Record<string, unknown>;
    expect(served['requireToolApproval']).toBe(false);
  });
});

function hasRepeatedKey(w: Written): boolean {
  if (w.kind === 'scalar') return false;
  if (w.kind === 'array') return w.items.some(hasRepeatedKey);
  const keys = w.members.map(([k]) => k.text);
  return new Set(keys).size < keys.length || w.members.some(([, v]) => hasRepeatedKey(v));
}
