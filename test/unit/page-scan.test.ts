/**
 * scanHistoryPage (src/core/page-scan.ts) against a correct parser (parseJsonText) of the same
 * bytes: what it returns must be what parsing gives (the elements, their texts, depths, keys and the
 * token), it must refuse every body JSON.parse refuses, and it may refuse a valid one only in the
 * shapes it names. Pages are written here token by token, so that they hold what JSON.stringify never
 * writes: whitespace anywhere, escapes where none are needed, a key given twice, invalid UTF-8 inside
 * strings.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseJsonText } from '../../src/core/json-text.js';
import { nestsDeeperThan } from '../../src/core/normalise/depth.js';
import { entryKeyOf } from '../../src/core/normalise/entry.js';
import { type ScannedElement, type ScannedPage, scanHistoryPage } from '../../src/core/page-scan.js';

if (process.env['CI']) fc.configureGlobal({ seed: 20_261_127 });

/** A JSON value as written: scalars and keys as their text, so that a key may come twice. */
type Written =
  | { readonly kind: 'scalar'; readonly text: string }
  | { readonly kind: 'array'; readonly items: readonly Written[] }
  | { readonly kind: 'object'; readonly members: readonly Member[] };
type Member = readonly [key: string, value: Written];

/** Stands in the text for a byte 0xff (invalid UTF-8), which `encode` writes in its place. */
const BAD_BYTE = '\ue000';

/** The bytes of written text, each BAD_BYTE a byte 0xff. */
function encode(text: string): Buffer {
  const parts = text.split(BAD_BYTE).map((p) => Buffer.from(p));
  return Buffer.concat(parts.flatMap((p, k) => (k === 0 ? [p] : [Buffer.from([0xff]), p])));
}

/** Escapes JSON allows for a character, beside \uXXXX. */
const SHORT: Readonly<Record<string, string>> = {
  '"': '\\"',
  '\\': '\\\\',
  '/': '\\/',
  '\b': '\\b',
  '\f': '\\f',
  '\n': '\\n',
  '\r': '\\r',
  '\t': '\\t',
};

/** A string literal for `value`, each character written plain or escaped as `how` picks (cycled). */
function literal(value: string, how: readonly number[]): string {
  let out = '"';
  [...value].forEach((ch, k) => {
    const pick = how.length === 0 ? 0 : (how[k % how.length] as number);
    const must = ch === '"' || ch === '\\' || ch < ' ';
    const short = SHORT[ch];
    const unicode = [...Array(ch.length).keys()]
      .map((j) => `\\u${ch.charCodeAt(j).toString(16).padStart(4, '0')}`)
      .join('');
    if (ch === BAD_BYTE) out += ch;
    else if (pick === 2 && short !== undefined) out += short;
    else if (pick === 1 || (must && short === undefined)) out += unicode;
    else out += must ? short : ch;
  });
  return `${out}"`;
}

const unit = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom('a', 'i', 'd', 'Z', '0', ' ', '/', ':', ',', '{', ']') },
  { weight: 2, arbitrary: fc.constantFrom('"', '\\', '\n', '\u0000', '\u001f', '\u007f') },
  { weight: 2, arbitrary: fc.constantFrom('é', '日', '本', '\u2028', '😀', '\ud800', BAD_BYTE) },
  { weight: 1, arbitrary: fc.string({ minLength: 1, maxLength: 1, unit: 'grapheme' }) },
);
const text = fc.string({ unit, maxLength: 12 });
const how = fc.array(fc.constantFrom(0, 0, 0, 1, 2), { maxLength: 4 });
/** A string literal, written in one of the ways JSON allows. */
const stringOf = (value: fc.Arbitrary<string>) => fc.tuple(value, how).map(([v, h]) => literal(v, h));
const anyString = stringOf(text);

const digits = (min: number) =>
  fc.string({ unit: fc.constantFrom(...'0123456789'), minLength: min, maxLength: 4 });
const numberText = fc
  .tuple(
    fc.constantFrom('', '-'),
    fc.oneof(
      fc.constant('0'),
      fc.tuple(fc.constantFrom(...'123456789'), digits(0)).map(([a, b]) => a + b),
    ),
    fc.option(
      digits(1).map((d) => `.${d}`),
      { nil: '' },
    ),
    fc.option(
      fc.tuple(fc.constantFrom('e', 'E'), fc.constantFrom('', '+', '-'), digits(1)).map((p) => p.join('')),
      { nil: '' },
    ),
  )
  .map((p) => p.join(''));

const scalar: fc.Arbitrary<Written> = fc
  .oneof(anyString, numberText, fc.constantFrom('true', 'false', 'null'))
  .map((t): Written => ({ kind: 'scalar', text: t }));

// Few key names, so that objects repeat them; those the scan looks for among them.
const keyName = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.constantFrom('a', 'b', 'id', 'createdAt', 'metadata', 'list', '__proto__', '日本'),
  },
  { weight: 1, arbitrary: text },
);
const key = stringOf(keyName);

const value: fc.Arbitrary<Written> = fc.letrec<{ value: Written }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    scalar,
    fc.array(tie('value'), { maxLength: 4 }).map((items): Written => ({ kind: 'array', items })),
    fc
      .array(fc.tuple(key, tie('value')), { maxLength: 5 })
      .map((members): Written => ({ kind: 'object', members })),
  ),
})).value;

const written = (t: string): Written => ({ kind: 'scalar', text: t });
/** A string value written as JSON.stringify writes it: no escape but those it needs. */
const plainString = (v: string): Written => written(JSON.stringify(v));
const arrayOf = (items: readonly Written[]): Written => ({ kind: 'array', items });
/** An object of the members of each run, in turn. */
const object = (...runs: fc.Arbitrary<readonly Member[]>[]) =>
  fc.tuple(...runs).map((parts): Written => ({ kind: 'object', members: parts.flat() }));
const members = (k: fc.Arbitrary<string>, v: fc.Arbitrary<Written>, maxLength: number) =>
  fc.array(fc.tuple(k, v), { maxLength });
/** A run of one member, or none. */
const maybe = (m: fc.Arbitrary<Member>) =>
  fc.option(
    m.map((x) => [x]),
    { nil: [] as Member[], freq: 4 },
  );
const others = members(key, value, 2);
/** Members whose keys are written plain, as entries mostly write them. */
const plainOthers = members(fc.constantFrom('"a"', '"snapshot"', '"é"', '"changeKind"'), value, 3);

const ksuid = fc.string({ unit: fc.constantFrom(...'0123456789ABCXYZabcxyz'), minLength: 27, maxLength: 27 });
const time = fc
  .date({ min: new Date('2001-01-01T00:00:00Z'), max: new Date('2099-01-01T00:00:00Z'), noInvalidDate: true })
  .map((d) => d.toISOString());
/** A metadata member as entries write it, or written some other way the scan must notice. */
const metaMember = (name: string, good: fc.Arbitrary<string>): fc.Arbitrary<Member> =>
  fc.oneof(
    { weight: 10, arbitrary: fc.tuple(fc.constant(`"${name}"`), good.map(plainString)) },
    { weight: 1, arbitrary: fc.tuple(stringOf(fc.constant(name)), stringOf(good).map(written)) },
    { weight: 1, arbitrary: fc.tuple(fc.constant(`"${name}"`), value) },
  );
const ids = fc.oneof({ weight: 4, arbitrary: ksuid }, { weight: 1, arbitrary: text });
const times = fc.oneof({ weight: 4, arbitrary: time }, { weight: 1, arbitrary: text });
const metadata = object(
  plainOthers,
  fc.oneof(
    { weight: 4, arbitrary: maybe(metaMember('id', ids)) },
    { weight: 1, arbitrary: fc.array(metaMember('id', ids), { maxLength: 2 }) },
  ),
  fc.oneof(
    { weight: 4, arbitrary: maybe(metaMember('createdAt', times)) },
    { weight: 1, arbitrary: fc.array(metaMember('createdAt', times), { maxLength: 2 }) },
  ),
  fc.oneof({ weight: 4, arbitrary: plainOthers }, { weight: 1, arbitrary: others }),
);
/** An entry: mostly a metadata object among other members, sometimes any value. */
const entry: fc.Arbitrary<Written> = fc.oneof(
  {
    weight: 8,
    arbitrary: object(
      plainOthers,
      fc.oneof(
        { weight: 10, arbitrary: fc.tuple(fc.constant('"metadata"'), metadata).map((m): Member[] => [m]) },
        { weight: 1, arbitrary: members(stringOf(fc.constant('metadata')), metadata, 2) },
        { weight: 1, arbitrary: members(fc.constant('"metadata"'), value, 1) },
      ),
      fc.oneof({ weight: 4, arbitrary: plainOthers }, { weight: 1, arbitrary: others }),
    ),
  },
  { weight: 2, arbitrary: value },
);

/** A page: its list and token mostly as served, sometimes absent, doubled, escaped or of another type. */
const page: fc.Arbitrary<Written> = object(
  fc.oneof({ weight: 4, arbitrary: plainOthers }, { weight: 1, arbitrary: others }),
  fc.oneof(
    {
      weight: 8,
      arbitrary: fc.array(entry, { maxLength: 5 }).map((items): Member[] => [['"list"', arrayOf(items)]]),
    },
    { weight: 1, arbitrary: fc.constant<Member[]>([['"list"', written('null')]]) },
    { weight: 1, arbitrary: members(stringOf(fc.constant('list')), value, 2) },
  ),
  fc.oneof(
    { weight: 6, arbitrary: maybe(fc.tuple(fc.constant('"nextPageToken"'), anyString.map(written))) },
    { weight: 1, arbitrary: members(stringOf(fc.constant('nextPageToken')), value, 2) },
  ),
  fc.oneof({ weight: 4, arbitrary: plainOthers }, { weight: 1, arbitrary: others }),
);

/** Whitespace to put between tokens, taken in turn. */
const spacing = fc.array(fc.stringMatching(/^[ \t\n\r]{0,3}$/), { maxLength: 8 });

/** The JSON text of `w`, with `spaces` (cycled) between its tokens. */
function render(w: Written, spaces: readonly string[]): string {
  let k = 0;
  const sp = () => (spaces.length === 0 ? '' : (spaces[k++ % spaces.length] as string));
  const go = (v: Written): string => {
    if (v.kind === 'scalar') return v.text;
    if (v.kind === 'array') return `[${sp()}${v.items.map((x) => go(x) + sp()).join(`,${sp()}`)}]`;
    return `{${sp()}${v.members.map(([key, x]) => `${key}${sp()}:${sp()}${go(x)}${sp()}`).join(`,${sp()}`)}}`;
  };
  return `${sp()}${go(w)}${sp()}`;
}

/** Nesting of arrays and objects as written, values a later key replaces included. */
function writtenDepth(w: Written): number {
  if (w.kind === 'scalar') return 0;
  const inner = w.kind === 'array' ? w.items : w.members.map(([, v]) => v);
  return 1 + Math.max(0, ...inner.map(writtenDepth));
}

/** A key as JSON.parse reads it from the body's bytes. */
const keyValue = (key: string) => JSON.parse(key.replaceAll(BAD_BYTE, '\ufffd')) as string;

/** Whether an object in `w` gives a key twice (its first value then is not in the parse). */
function repeatsKey(w: Written): boolean {
  if (w.kind === 'scalar') return false;
  if (w.kind === 'array') return w.items.some(repeatsKey);
  const keys = w.members.map(([k]) => keyValue(k));
  return new Set(keys).size < keys.length || w.members.some(([, v]) => repeatsKey(v));
}

const named = (members: readonly Member[], name: string) => members.filter(([k]) => k === `"${name}"`);
const escapedKey = (members: readonly Member[]) => members.some(([k]) => k.includes('\\'));
const isString = (w: Written) => w.kind === 'scalar' && w.text.startsWith('"');
const isNull = (w: Written) => w.kind === 'scalar' && w.text === 'null';

/** Whether the page is one the scan refuses though it is JSON (the shapes scanHistoryPage names). */
function refusedShape(w: Written): boolean {
  if (w.kind !== 'object' || escapedKey(w.members)) return true;
  const list = named(w.members, 'list');
  const token = named(w.members, 'nextPageToken');
  if (list.length > 1 || token.length > 1) return true;
  const l = list[0]?.[1];
  const t = token[0]?.[1];
  return (
    (l !== undefined && l.kind !== 'array' && !isNull(l)) || (t !== undefined && !isString(t) && !isNull(t))
  );
}

/** Whether the scan must give the element's metadata (the conditions of ScannedElement.meta). */
function metaExpected(w: Written): boolean {
  if (w.kind !== 'object' || escapedKey(w.members)) return false;
  const meta = named(w.members, 'metadata');
  const m = meta[0]?.[1];
  if (meta.length !== 1 || m === undefined || m.kind !== 'object' || escapedKey(m.members)) return false;
  return ['id', 'createdAt'].every((name) => {
    const v = named(m.members, name);
    return (
      v.length === 0 ||
      (v.length === 1 && isString(v[0]![1]) && !(v[0]![1] as { text: string }).text.includes('\\'))
    );
  });
}

/** The elements of a page's list as written ([] when it has none). */
function listItems(w: Written): readonly Written[] {
  const list = w.kind === 'object' ? named(w.members, 'list')[0]?.[1] : undefined;
  return list?.kind === 'array' ? list.items : [];
}

const JSON_SPACE = new Set([0x20, 0x09, 0x0a, 0x0d]);

/** What the scan returned is what parsing the whole body gives. */
function agreesWithParse(body: Buffer, scanned: ScannedPage): void {
  const whole = parseJsonText(body.toString('utf8')) as Record<string, unknown>;
  const list = (whole['list'] ?? []) as unknown[];
  expect(scanned.elements.length).toBe(list.length);
  scanned.elements.forEach((el, k) => {
    for (const edge of [body[el.start], body[el.end - 1]]) {
      expect(JSON_SPACE.has(edge as number) || edge === 0x2c).toBe(false);
    }
    const parsed = parseJsonText(body.toString('utf8', el.start, el.end));
    expect(parsed).toEqual(list[k]);
    // The depth as written bounds the parsed one (equal unless a key given twice dropped a deeper value).
    expect(nestsDeeperThan(parsed, el.depth)).toBe(false);
    expect(nestsDeeperThan(parsed, el.depth + 1)).toBe(false);
    if (el.meta !== undefined) {
      const m = (parsed as { metadata: Record<string, unknown> }).metadata;
      expect(el.meta.id).toBe(m['id']);
      expect(el.meta.createdAt).toBe(m['createdAt']);
      const own = Object.fromEntries(Object.entries(el.meta).filter(([, v]) => v !== undefined));
      expect(entryKeyOf({ metadata: own })).toEqual(entryKeyOf(parsed));
    }
  });
  const token = whole['nextPageToken'];
  expect(scanned.nextPageToken).toBe(token === undefined || token === null ? '' : token);
}

describe('scanHistoryPage on pages written every way JSON allows', () => {
  it('gives what parsing gives, and refuses only the shapes it names', () => {
    fc.assert(
      fc.property(page, spacing, (w, spaces) => {
        const body = encode(render(w, spaces));
        expect(() => JSON.parse(body.toString('utf8'))).not.toThrow();
        const scanned = scanHistoryPage(body);
        expect(scanned === undefined).toBe(refusedShape(w));
        if (scanned === undefined) return;
        agreesWithParse(body, scanned);
        const items = listItems(w);
        scanned.elements.forEach((el, k) => {
          const item = items[k] as Written;
          expect(el.depth).toBe(writtenDepth(item));
          expect(el.meta !== undefined).toBe(metaExpected(item));
          // Without a key given twice, the parsed element nests exactly as deep.
          if (!repeatsKey(item) && el.depth > 0) {
            const parsed = parseJsonText(body.toString('utf8', el.start, el.end));
            expect(nestsDeeperThan(parsed, el.depth - 1)).toBe(true);
            expect(nestsDeeperThan(parsed, el.depth + 1)).toBe(false);
          }
        });
      }),
      { numRuns: 1500 },
    );
  });

  it('reads every page JSON.stringify writes from any values, the metadata of each entry as JSON.stringify shows it', () => {
    const element = fc.oneof(
      fc.jsonValue({ maxDepth: 4 }),
      fc.record({
        metadata: fc.record(
          { id: fc.string(), createdAt: fc.oneof(time, fc.string()) },
          { requiredKeys: ['id'] },
        ),
      }),
      fc.record({ metadata: fc.jsonValue({ maxDepth: 2 }), snapshot: fc.jsonValue({ maxDepth: 3 }) }),
    );
    const plain = (k: string) => !JSON.stringify(k).includes('\\');
    const metaDefined = (e: unknown): boolean => {
      if (e === null || typeof e !== 'object' || Array.isArray(e) || !Object.keys(e).every(plain))
        return false;
      const m = (e as Record<string, unknown>)['metadata'];
      if (m === null || typeof m !== 'object' || Array.isArray(m) || !Object.keys(m).every(plain))
        return false;
      return ['id', 'createdAt'].every((k) => {
        const v = (m as Record<string, unknown>)[k];
        return v === undefined || (typeof v === 'string' && plain(v));
      });
    };
    fc.assert(
      fc.property(
        fc.array(element, { maxLength: 6 }),
        fc.string(),
        fc.constantFrom(undefined, 1, '\t'),
        (list, token, indent) => {
          const body = Buffer.from(JSON.stringify({ list, nextPageToken: token }, null, indent));
          const scanned = scanHistoryPage(body);
          expect(scanned).toBeDefined();
          agreesWithParse(body, scanned as ScannedPage);
          scanned?.elements.forEach((el, k) => {
            expect(el.meta !== undefined).toBe(metaDefined(list[k]));
            // No key comes twice in what JSON.stringify writes: the depth is the parsed one.
            if (el.depth > 0) expect(nestsDeeperThan(list[k], el.depth - 1)).toBe(true);
          });
        },
      ),
      { numRuns: 1000 },
    );
  });
});

/** The top-level keys of valid JSON text, as written (their literals). */
function topLevelKeys(text: string): string[] {
  const keys: string[] = [];
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '"') {
      let j = i + 1;
      while (text[j] !== '"') j += text[j] === '\\' ? 2 : 1;
      if (
        depth === 1 &&
        text
          .slice(j + 1)
          .trimStart()
          .startsWith(':')
      )
        keys.push(text.slice(i, j + 1));
      i = j;
    } else if (c === '{' || c === '[') depth++;
    else if (c === '}' || c === ']') depth--;
  }
  return keys;
}

/** Whether valid JSON text is in one of the shapes scanHistoryPage names as refused. */
function refusedText(text: string): boolean {
  const v = JSON.parse(text) as unknown;
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return true;
  const keys = topLevelKeys(text);
  const count = (k: string) => keys.filter((x) => x === k).length;
  if (keys.some((k) => k.includes('\\')) || count('"list"') > 1 || count('"nextPageToken"') > 1) return true;
  const { list, nextPageToken: token } = v as Record<string, unknown>;
  return (
    (list !== undefined && list !== null && !Array.isArray(list)) ||
    (token !== undefined && token !== null && typeof token !== 'string')
  );
}

const acceptedByJsonParse = (body: Uint8Array) => {
  try {
    JSON.parse(Buffer.from(body).toString('utf8'));
    return true;
  } catch {
    return false;
  }
};

/** Bytes a mutation writes: the ones JSON gives a meaning, and any other. */
const mutationByte = fc.oneof(
  fc.constantFrom(...Buffer.from('{}[],:"\\ \t\n0129-+.eEtfnu/x')),
  fc.constantFrom(0x00, 0x1f, 0x7f, 0x80, 0xbf, 0xef, 0xff),
  fc.integer({ min: 0, max: 255 }),
);
const mutation = fc.tuple(fc.constantFrom('flip', 'insert', 'delete', 'truncate'), fc.nat(), mutationByte);

function mutate(body: Buffer, [kind, at, byte]: readonly [string, number, number]): Buffer {
  const p = at % (body.length + 1);
  const b = Buffer.from([byte]);
  if (kind === 'flip' && p < body.length)
    return Buffer.concat([body.subarray(0, p), b, body.subarray(p + 1)]);
  if (kind === 'insert') return Buffer.concat([body.subarray(0, p), b, body.subarray(p)]);
  if (kind === 'delete') return Buffer.concat([body.subarray(0, p), body.subarray(p + 1)]);
  return body.subarray(0, p);
}

describe('scanHistoryPage on bodies that may not be JSON', () => {
  it('refuses every mutated page JSON.parse refuses, and reads the others as parsing does', () => {
    fc.assert(
      fc.property(
        page,
        spacing,
        fc.array(mutation, { minLength: 1, maxLength: 3 }),
        (w, spaces, mutations) => {
          const body = mutations.reduce(mutate, encode(render(w, spaces)));
          const scanned = scanHistoryPage(body);
          if (!acceptedByJsonParse(body)) expect(scanned).toBeUndefined();
          else if (scanned === undefined) expect(refusedText(body.toString('utf8'))).toBe(true);
          else agreesWithParse(body, scanned);
        },
      ),
      { numRuns: 3000 },
    );
  });

  const deep = (n: number) => `${'['.repeat(n)}${']'.repeat(n)}`;
  const bytes = (...parts: (string | number[])[]) =>
    Buffer.concat(parts.map((p) => (typeof p === 'string' ? Buffer.from(p) : Buffer.from(p))));
  it.each<[string, string | Buffer]>([
    ['a trailing comma in the list', '{"list":[1,]}'],
    ['a trailing comma in an object', '{"list":[{"a":1,}]}'],
    ['a trailing comma at the top', '{"list":[],}'],
    ['a comma alone', '{"list":[,]}'],
    ['a missing comma between elements', '{"list":[1 2]}'],
    ['a missing comma between members', '{"list":[] "nextPageToken":"x"}'],
    ['a leading byte order mark', bytes([0xef, 0xbb, 0xbf], '{"list":[]}')],
    ['a control character in a string', '{"list":["a\u0001b"]}'],
    ['a raw tab in a string', '{"list":["a\tb"]}'],
    ['a raw line feed in a key', '{"list":[{"a\nb":1}]}'],
    ['the escape \\x', '{"list":["\\x41"]}'],
    ['a short \\u escape', '{"list":["\\u12"]}'],
    ['a \\u escape with a non-hex digit', '{"list":["\\u12g4"]}'],
    ['a \\U escape', '{"list":["\\U0041"]}'],
    ['an escape cut by the end', '{"list":["\\'],
    ['a leading zero', '{"list":[01]}'],
    ['a negative leading zero', '{"list":[-01]}'],
    ['1.', '{"list":[1.]}'],
    ['.5', '{"list":[.5]}'],
    ['a lone minus', '{"list":[-]}'],
    ['a plus sign', '{"list":[+1]}'],
    ['an exponent without digits', '{"list":[1e]}'],
    ['an exponent sign without digits', '{"list":[1e+]}'],
    ['a hexadecimal number', '{"list":[0x1]}'],
    ['tru', '{"list":[tru]}'],
    ['truex', '{"list":[truex]}'],
    ['True', '{"list":[True]}'],
    ['nul at the end', '{"list":nul'],
    ['NaN', '{"list":[NaN]}'],
    ['Infinity', '{"list":[-Infinity]}'],
    ['an unclosed string', '{"list":["abc]}'],
    ['an unclosed array', '{"list":[1'],
    ['an unclosed object', '{"list":[{"a":1]}'],
    ['an unclosed page', '{"list":[]'],
    ['a mismatched bracket', '{"list":[1}}'],
    ['extra data after the object', '{"list":[]}x'],
    ['a second object after the first', '{"list":[]} {}'],
    ['a NUL byte after the object', '{"list":[]}\u0000'],
    ['a byte 0xff outside a string', bytes('{"list":[1,', [0xff], ']}')],
    ['a byte 0xff between tokens', bytes('{"list":[1', [0xff], ']}')],
    ['a non-breaking space as whitespace', '{\u00a0"list":[]}'],
    ['a form feed as whitespace', '{\f"list":[]}'],
    ['a comment', '{"list":[]/**/}'],
    ['single quotes', "{'list':[]}"],
    ['an unquoted key', '{"list":[{a:1}]}'],
    ['a key without a value', '{"list":[{"a"}]}'],
    ['a key without a colon', '{"list":[{"a" 1}]}'],
    ['an empty body', ''],
    ['whitespace alone', ' \n\t\r'],
    ['an element nested 100 000 deep, left open', `{"list":[${'['.repeat(100_000)}]}`],
    ['an element nested 100 000 deep, closed too often', `{"list":[${deep(100_000)}]]}`],
  ])('refuses %s, as JSON.parse does', (_, text) => {
    const body = typeof text === 'string' ? Buffer.from(text) : text;
    expect(acceptedByJsonParse(body)).toBe(false);
    expect(scanHistoryPage(body)).toBeUndefined();
  });

  it.each<[string, string | Buffer]>([
    [
      'whitespace of all four kinds around every token',
      ' \t\n\r{ \t"list" \n:\r[ 1 ,\t{ "a" : [ ] } ] ,"nextPageToken"\n:\t"x" }\r\n',
    ],
    [
      'a byte 0xff inside a string',
      bytes('{"list":["a', [0xff], 'b",{"metadata":{"id":"', [0xff, 0xfe], '"}}]}'),
    ],
    [
      'a truncated UTF-8 sequence before a quote',
      bytes('{"list":["', [0xe6, 0x97], '"],"nextPageToken":"', [0xf0, 0x9f], '"}'),
    ],
    ['DEL and U+2028 unescaped in a string', '{"list":["\u007f\u2028\u2029"]}'],
    ['every escape', '{"list":["\\"\\\\\\/\\b\\f\\n\\r\\t\\u0000\\uD800\\udc00\\uFFFF"]}'],
    [
      'numbers of every form',
      '{"list":[0,-0,12,-12,0.5,-0.0,1e5,1E+5,1e-05,2.50E-3,123456789012345678901234567890]}',
    ],
    ['true, false and null', '{"list":[true,false,null,[true],{"a":null}]}'],
    ['a list of empty containers', '{"list":[{},[],[[]],{"a":{}}]}'],
    ['a null list and token', '{"list":null,"nextPageToken":null}'],
    ['no list nor token', '{"other":[1,2]}'],
    ['an empty object', '{}'],
    ['a token with escapes', '{"nextPageToken":"a\\u0062\\n\\"","list":[]}'],
    [
      'other members around, escaped keys below the top',
      '{"x":{"\\u006c":1},"list":[{"\\u0061":[1]}],"y":[null]}',
    ],
    [
      '"list" and "nextPageToken" inside other values',
      '{"a":{"list":1,"nextPageToken":2},"list":[],"b":[{"list":"x"}]}',
    ],
  ])('reads %s as parsing does', (_, text) => {
    const body = typeof text === 'string' ? Buffer.from(text) : text;
    expect(acceptedByJsonParse(body)).toBe(true);
    const scanned = scanHistoryPage(body);
    expect(scanned).toBeDefined();
    agreesWithParse(body, scanned as ScannedPage);
  });

  it.each<[string, string]>([
    ['a top level array', '[{"list":[]}]'],
    ['a top level string', '"list"'],
    ['a top level null', ' null '],
    ['a top level number', '1'],
    ['an escaped "list" key', '{"li\\u0073t":[]}'],
    ['any escaped top level key', '{"\\u0061":1,"list":[]}'],
    ['an escape in a top level key that names nothing', '{"x\\n":1}'],
    ['"list" twice', '{"list":[],"list":[]}'],
    ['"list" twice, both null', '{"list":null,"list":null}'],
    ['"nextPageToken" twice', '{"nextPageToken":"a","nextPageToken":"a"}'],
    ['a list that is an object', '{"list":{"0":{}}}'],
    ['a list that is a string', '{"list":"[]"}'],
    ['a list that is false', '{"list":false}'],
    ['a token that is a number', '{"list":[],"nextPageToken":1}'],
    ['a token that is an array', '{"list":[],"nextPageToken":["a"]}'],
    ['a token that is an object', '{"list":[],"nextPageToken":{}}'],
  ])('refuses %s, which JSON.parse accepts but the scan does not vouch for', (_, text) => {
    const body = Buffer.from(text);
    expect(acceptedByJsonParse(body)).toBe(true);
    expect(refusedText(text)).toBe(true);
    expect(scanHistoryPage(body)).toBeUndefined();
  });

  it('reads an element nested 100 000 levels deep without recursion, its depth exact', () => {
    const body = Buffer.from(
      `{"list":[${deep(100_000)},{"metadata":{"id":"x"},"deep":${deep(100_000)}},{"a":${deep(3)}}]}`,
    );
    const scanned = scanHistoryPage(body) as ScannedPage;
    expect(scanned.elements.map((e) => [e.depth, e.meta])).toEqual([
      [100_000, undefined],
      [100_001, { id: 'x', createdAt: undefined }],
      [4, undefined],
    ]);
    const list = JSON.parse(body.toString('utf8')).list as unknown[];
    for (const [k, el] of scanned.elements.entries()) {
      expect(nestsDeeperThan(list[k], el.depth - 1)).toBe(true);
      expect(nestsDeeperThan(list[k], el.depth)).toBe(false);
    }
    const last = scanned.elements[2] as ScannedElement;
    expect(body.subarray(last.start, last.end).toString()).toBe('{"a":[[[]]]}');
  });

  it('reads a body that is a view into a larger buffer, offsets and texts its own', () => {
    const text = Buffer.from('{"list":[{"metadata":{"id":"日本","createdAt":"2025-01-06T09:00:00Z"}}]}');
    const store = new Uint8Array(text.length + 20).fill(0x5b);
    store.set(text, 7);
    const scanned = scanHistoryPage(store.subarray(7, 7 + text.length)) as ScannedPage;
    expect(scanned.elements).toEqual([
      { start: 9, end: text.length - 2, depth: 2, meta: { id: '日本', createdAt: '2025-01-06T09:00:00Z' } },
    ]);
  });
});

describe('the metadata of an element', () => {
  const metaOf = (element: string | Buffer) => {
    const body = Buffer.concat([Buffer.from('{"list":['), Buffer.from(element), Buffer.from(']}')]);
    const scanned = scanHistoryPage(body) as ScannedPage;
    agreesWithParse(body, scanned);
    return scanned.elements[0]?.meta;
  };
  const T = '2025-01-06T09:00:00Z';

  it.each<[string, string | Buffer, { id?: string; createdAt?: string } | undefined]>([
    ['both written plain', `{"metadata":{"id":"a","createdAt":"${T}"}}`, { id: 'a', createdAt: T }],
    [
      'with whitespace around',
      ` { "snapshot" : {} , "metadata" : { "createdAt" : "${T}" ,"id" : "a" } } `,
      { id: 'a', createdAt: T },
    ],
    ['createdAt absent', '{"metadata":{"id":"a","changeKind":"PUT"}}', { id: 'a' }],
    ['id absent', `{"metadata":{"createdAt":"${T}"}}`, { createdAt: T }],
    ['an empty metadata object', '{"metadata":{}}', {}],
    ['a non-ASCII id', '{"metadata":{"id":"日本語 é 😀"}}', { id: '日本語 é 😀' }],
    [
      'an id with invalid UTF-8',
      Buffer.from([...Buffer.from('{"metadata":{"id":"a'), 0xff, ...Buffer.from('"}}')]),
      { id: 'a\ufffd' },
    ],
    [
      'escapes elsewhere in the entry',
      '{"x":"\\n","metadata":{"note":"\\t","y":{"\\u0061":1},"id":"a"}}',
      { id: 'a' },
    ],
    ['an id only deeper inside the metadata', '{"metadata":{"x":{"id":"a"}}}', {}],
    [
      'keys that only begin like metadata and id',
      '{"metadataX":1,"metadata":{"ids":"a","idx":1,"createdAtX":2}}',
      {},
    ],
    ['metadata given twice', '{"metadata":{"id":"a"},"metadata":{"id":"b"}}', undefined],
    ['metadata given twice, the second null', '{"metadata":{"id":"a"},"metadata":null}', undefined],
    ['an escaped "metadata" key', '{"metad\\u0061ta":{"id":"a"}}', undefined],
    ['another escaped key beside metadata', '{"metadata":{"id":"a"},"x\\u0041":1}', undefined],
    ['an escaped "id" key', '{"metadata":{"i\\u0064":"a"}}', undefined],
    ['another escaped key in the metadata', '{"metadata":{"id":"a","n\\u0041me":1}}', undefined],
    ['an id with a \\u escape', '{"metadata":{"id":"a\\u0062"}}', undefined],
    ['an id with \\/', '{"metadata":{"id":"a\\/b"}}', undefined],
    ['a createdAt with an escape', `{"metadata":{"id":"a","createdAt":"${T}\\n"}}`, undefined],
    ['an id that is a number', '{"metadata":{"id":1}}', undefined],
    ['an id that is null', '{"metadata":{"id":null}}', undefined],
    ['an id that is an object', '{"metadata":{"id":{"id":"a"}}}', undefined],
    ['a createdAt that is a number', '{"metadata":{"id":"a","createdAt":1736154000}}', undefined],
    ['id given twice', '{"metadata":{"id":"a","id":"b"}}', undefined],
    ['createdAt given twice', `{"metadata":{"createdAt":"${T}","id":"a","createdAt":"${T}"}}`, undefined],
    ['metadata null', '{"metadata":null}', undefined],
    ['metadata an array', '{"metadata":[{"id":"a"}]}', undefined],
    ['metadata a string', '{"metadata":"a"}', undefined],
    ['no metadata', '{"snapshot":{"metadata":{"id":"a"}}}', undefined],
    ['an element that is an array', '[{"metadata":{"id":"a"}}]', undefined],
    ['an element that is a string', '"metadata"', undefined],
  ])('%s', (_, element, expected) => {
    const meta = metaOf(element);
    if (expected === undefined) expect(meta).toBeUndefined();
    else expect(meta).toStrictEqual({ id: expected.id, createdAt: expected.createdAt });
  });
});
