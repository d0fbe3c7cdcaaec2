/**
 * JSON.parse for JSON text from outside (the tenant API, jsonb read back), without V8's escaped-key
 * bug. Pure.
 *
 * V8 (Node.js 24 and 26, nodejs/node#63785, open) can decode an object key written with an escape
 * wrongly: once an object of the same shape had, at that place, a key such as `\` or `"`, a later
 * `{"h":1,"\n":2}` comes back with the key `\`. Which key a document gets then depends on what
 * the process parsed before: a history entry could be stored, hashed and compared under keys it
 * never had, and two keys could become one. Native JSON.parse is used here only on text that has
 * no escaped key; other text is read by a parser of its own (below), which builds objects as
 * JSON.parse does: keys in source order as data properties (`__proto__` an own key), a key given
 * twice keeping its first place and its last value, and every string literal (key or value)
 * decoded by JSON.parse on its own, as a string value, which the bug does not touch. It is
 * iterative (no recursion limit) and linear, without a regular expression over string literals,
 * so a string of any length parses.
 */

/** JSON.parse(text), with escaped keys decoded as JSON says; throws a SyntaxError as JSON.parse does. */
export function parseJsonText(text: string): unknown {
  // Nearly all text has no escaped key: native parsing, as fast as it is.
  return hasEscapedKey(text) ? parseEscapedKeys(text) : JSON.parse(text);
}

/**
 * Whether a string literal with a backslash in it is followed by a colon. From each backslash
 * found (outside the literals already passed, so at an escape's start) to its literal's end, in
 * one pass: linear in the text, and nothing to do where there is no backslash.
 */
function hasEscapedKey(text: string): boolean {
  const n = text.length;
  let from = 0;
  for (;;) {
    let i = text.indexOf('\\', from);
    if (i === -1) return false;
    // Inside a literal: skip escape pairs up to its closing quote.
    while (i < n) {
      const c = text.charCodeAt(i);
      if (c === 0x5c) i += 2;
      else if (c === 0x22) break;
      else i++;
    }
    if (isKey(text, i + 1)) return true;
    from = i + 1;
  }
}

/** Whether the string literal ending at `end` is followed by a colon: a key. */
function isKey(text: string, end: number): boolean {
  for (let i = end; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x3a) return true; // :
    if (c !== 0x20 && c !== 0x09 && c !== 0x0a && c !== 0x0d) return false;
  }
  return false;
}

/** An array or object being filled, and for an object the key whose value comes next. */
interface Open {
  readonly container: unknown[] | Record<string, unknown>;
  readonly array: boolean;
  key: string;
}

const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;

/** A cursor over JSON text: reads its tokens, or throws a SyntaxError where it is not JSON. */
class Reader {
  i = 0;
  constructor(readonly text: string) {}

  fail(what: string): never {
    throw new SyntaxError(`${what} in JSON at position ${this.i}`);
  }

  /** The code unit at the cursor after whitespace (NaN at the end). */
  peek(): number {
    const { text } = this;
    while (this.i < text.length) {
      const c = text.charCodeAt(this.i);
      if (c !== 0x20 && c !== 0x09 && c !== 0x0a && c !== 0x0d) return c;
      this.i++;
    }
    return Number.NaN;
  }

  /** The string literal at the cursor (a quote), decoded; the cursor moves past it. */
  string(): string {
    const { text } = this;
    const start = this.i;
    let q = start + 1;
    for (;;) {
      q = text.indexOf('"', q);
      if (q === -1) {
        this.i = text.length;
        this.fail('Unterminated string');
      }
      // The quote ends the literal unless an odd number of backslashes stands before it.
      let b = q - 1;
      while (b > start && text.charCodeAt(b) === 0x5c) b--;
      if ((q - 1 - b) % 2 === 0) break;
      q++;
    }
    this.i = q + 1;
    // The literal alone, as a string value: decoded right (or a SyntaxError for a bad escape).
    return JSON.parse(text.slice(start, this.i)) as string;
  }

  /** An object member's key and its colon; the cursor then at the value. */
  key(): string {
    if (this.peek() !== 0x22) this.fail('Expected a string key');
    const key = this.string();
    if (this.peek() !== 0x3a) this.fail("Expected ':'");
    this.i++;
    return key;
  }

  /** A string, number, true, false or null at the cursor. */
  scalar(c: number): unknown {
    if (c === 0x22) return this.string();
    for (const [word, value] of LITERALS)
      if (this.text.startsWith(word, this.i)) {
        this.i += word.length;
        return value;
      }
    NUMBER.lastIndex = this.i;
    const m = NUMBER.exec(this.text);
    if (m === null) return this.fail(Number.isNaN(c) ? 'Unexpected end' : 'Unexpected token');
    this.i += m[0].length;
    return Number(m[0]);
  }

  /** After '{' or '[': an empty container, or undefined when a first member follows. */
  empty(array: boolean): unknown[] | Record<string, unknown> | undefined {
    this.i++;
    if (this.peek() !== (array ? 0x5d : 0x7d)) return undefined;
    this.i++;
    return array ? [] : {};
  }
}

const LITERALS: readonly (readonly [string, unknown])[] = [
  ['true', true],
  ['false', false],
  ['null', null],
];

/** JSON text read without native parsing of keys: JSON.parse's value, or its SyntaxError. */
function parseEscapedKeys(text: string): unknown {
  const r = new Reader(text);
  const stack: Open[] = [];
  for (;;) {
    // A value starts at the cursor: a scalar is read whole; an array or object is opened.
    const c = r.peek();
    let value: unknown;
    if (c === 0x7b || c === 0x5b) {
      const array = c === 0x5b;
      value = r.empty(array);
      if (value === undefined) {
        stack.push(array ? { container: [], array, key: '' } : { container: {}, array, key: r.key() });
        continue;
      }
    } else value = r.scalar(c);
    // The value is complete: put it in its container, and close the containers it completes.
    for (;;) {
      const top = stack.at(-1);
      if (top === undefined) {
        if (!Number.isNaN(r.peek())) r.fail('Unexpected non-whitespace character after JSON');
        return value;
      }
      if (top.array) (top.container as unknown[]).push(value);
      else
        Object.defineProperty(top.container, top.key, {
          value,
          writable: true,
          enumerable: true,
          configurable: true,
        });
      const d = r.peek();
      if (d === 0x2c) {
        r.i++;
        if (!top.array) top.key = r.key();
        break;
      }
      if (d !== (top.array ? 0x5d : 0x7d)) r.fail(top.array ? "Expected ',' or ']'" : "Expected ',' or '}'");
      r.i++;
      stack.pop();
      value = top.container;
    }
  }
}
