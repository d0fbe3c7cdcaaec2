/**
 * One page of the history listing read from its bytes, without parsing it: where each element of
 * the top-level "list" lies in the body, how deep it nests, and its `metadata.id` and
 * `metadata.createdAt` when they are written simply. Pure.
 *
 * A sync hashes each entry's bytes as served and skips the entries it already holds; those never
 * need parsing, and most of a page is such entries. The scan vouches for the whole body being JSON
 * that JSON.parse would accept (on the text Buffer#toString('utf8') makes of it), so skipping the
 * parse hides no error; a body it does not vouch for is parsed whole as before, which reports what
 * is wrong. It reads every byte once, in a loop over the bytes with lookup tables, and keeps the
 * open arrays and objects on a stack of its own: linear, allocation-free but for what it returns,
 * and any depth of nesting.
 *
 * UTF-8 needs no decoding to be checked: the decoder turns any invalid sequence into U+FFFD and
 * never makes an ASCII character out of non-ASCII bytes, nor swallows one. So every byte of 0x80
 * and above is a character JSON.parse accepts inside a string and refuses outside one, whatever
 * follows it, and the quotes, backslashes and brackets the scan sees are the ones JSON.parse sees.
 */

/** One element of the page's top-level "list". */
export interface ScannedElement {
  /** body.subarray(start, end) is exactly the element's JSON text (no surrounding whitespace or comma). */
  readonly start: number;
  readonly end: number;
  /**
   * Nesting depth of arrays and objects as written: 0 for a scalar, 1 for {} or [] with no nested
   * object or array, and so on. The parsed element nests as deep (`nestsDeeperThan(parsed, limit)`
   * of src/core/normalise/depth.ts is `depth > limit`) except when an object in it gives a key twice
   * and the value JSON.parse drops nested deeper than the rest: then it is less deep. So
   * `depth <= limit` proves the parsed element within the limit; past it, parse and check.
   */
  readonly depth: number;
  /**
   * Defined only when ALL hold: the element is an object; among its own keys, none is written with a
   * backslash and "metadata" appears exactly once; that value is an object; among ITS keys none is
   * written with a backslash, "id" appears at most once and "createdAt" at most once; and each of those
   * present has a string value written without any backslash escape. Then `id`/`createdAt` are those
   * strings (decoded as UTF-8 exactly as Buffer#toString('utf8') decodes that byte range), or undefined
   * when absent. In every other case `meta` is undefined (the caller will parse the element instead).
   */
  readonly meta: { readonly id: string | undefined; readonly createdAt: string | undefined } | undefined;
}

export interface ScannedPage {
  /** The elements of the top-level "list", in order; [] when "list" is absent or null. */
  readonly elements: readonly ScannedElement[];
  /** The top-level "nextPageToken" value decoded (escapes included); '' when absent or null. */
  readonly nextPageToken: string;
}

/**
 * The page in `body`, or undefined when the scan does not vouch for it, and the caller then parses
 * the whole body as before (which reports what is wrong): not valid JSON; top level not an object;
 * a top-level key written with a backslash; "list" or "nextPageToken" given more than once; "list"
 * neither an array nor null; "nextPageToken" neither a string nor null.
 */
export function scanHistoryPage(body: Uint8Array): ScannedPage | undefined {
  const scan = new Scan(body);
  if (!scan.run()) return undefined;
  // The token alone is decoded by JSON.parse: its escapes, if any, are JSON's to read.
  const token = scan.tokenStart < 0 ? '' : (JSON.parse(scan.text(scan.tokenStart, scan.tokenEnd)) as string);
  return { elements: scan.elements, nextPageToken: token };
}

// What a byte is inside a string literal: most are PLAIN, and the loop over a string stops at the others.
const PLAIN = 0;
const QUOTE = 1;
const BACKSLASH = 2;
const CONTROL = 3;
const STRING_BYTE = new Uint8Array(256).fill(PLAIN).fill(CONTROL, 0, 0x20);
STRING_BYTE[0x22] = QUOTE;
STRING_BYTE[0x5c] = BACKSLASH;

// What may follow a backslash: one of " \ / b f n r t, or u and four hex digits.
const SIMPLE_ESCAPE = 1;
const UNICODE_ESCAPE = 2;
const ESCAPE = new Uint8Array(256);
for (const c of '"\\/bfnrt') ESCAPE[c.charCodeAt(0)] = SIMPLE_ESCAPE;
ESCAPE[0x75] = UNICODE_ESCAPE;
const HEX = new Uint8Array(256);
for (const c of '0123456789abcdefABCDEF') HEX[c.charCodeAt(0)] = 1;

// Containers on the stack.
const ARRAY = 1;
const OBJECT = 2;

// What a key names, at the levels the scan watches (the page, an element, its metadata).
const OTHER = 0;
const LIST = 1;
const TOKEN = 2;
const METADATA = 3;
const ID = 4;
const CREATED_AT = 5;

const bytes = (word: string): Uint8Array => Uint8Array.from(word, (c) => c.charCodeAt(0));
const WORD_LIST = bytes('list');
const WORD_TOKEN = bytes('nextPageToken');
const WORD_METADATA = bytes('metadata');
const WORD_ID = bytes('id');
const WORD_CREATED_AT = bytes('createdAt');
const WORD_TRUE = bytes('true');
const WORD_FALSE = bytes('false');
const WORD_NULL = bytes('null');

// What the steps of the scan tell its loop.
const ERROR = 0;
const DONE = 1; // a whole value was read
const OPENED = 2; // an array or object was opened: its first value comes next
const END = 3; // the top value was closed, and only whitespace follows

/** Whether `b` holds `word` from `i`. */
function holds(b: Uint8Array, i: number, word: Uint8Array): boolean {
  if (i + word.length > b.length) return false;
  for (let k = 0; k < word.length; k++) if (b[i + k] !== word[k]) return false;
  return true;
}

/** Whether the string literal from `start` (its quote) to `end` (past its quote) is `word`. */
function literalIs(b: Uint8Array, start: number, end: number, word: Uint8Array): boolean {
  return end - start - 2 === word.length && holds(b, start + 1, word);
}

/** The index of the first byte from `i` that is not JSON whitespace. */
function skipSpace(b: Uint8Array, i: number): number {
  const n = b.length;
  while (i < n) {
    const c = b[i];
    if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) break;
    i++;
  }
  return i;
}

/** The index past the digits from `i` (`i` itself when there are none). */
function skipDigits(b: Uint8Array, i: number): number {
  const n = b.length;
  while (i < n) {
    const c = b[i] as number;
    if (c < 0x30 || c > 0x39) break;
    i++;
  }
  return i;
}

/** The index past the number at `i`, or -1 when none is written there as JSON writes one. */
function skipNumber(b: Uint8Array, i: number): number {
  if (b[i] === 0x2d) i++;
  if (b[i] === 0x30) i++;
  else {
    const j = skipDigits(b, i);
    if (j === i) return -1;
    i = j;
  }
  if (b[i] === 0x2e) {
    const j = skipDigits(b, i + 1);
    if (j === i + 1) return -1;
    i = j;
  }
  if (b[i] === 0x65 || b[i] === 0x45) {
    i++;
    if (b[i] === 0x2b || b[i] === 0x2d) i++;
    const j = skipDigits(b, i);
    if (j === i) return -1;
    i = j;
  }
  // What follows (a leading zero's digit, a letter) is the caller's to refuse: only , ] } or space may.
  return i;
}

/** The scan of one body: a cursor, the open containers, and what has been found of the page. */
class Scan {
  /** The next byte to read. */
  i = 0;
  /** Whether the string literal last read holds a backslash. */
  escaped = false;
  /** The open arrays and objects (ARRAY or OBJECT), outermost first, and how many there are. */
  private stack = new Uint8Array(64);
  private depth = 0;
  /** The deepest `depth` reached since the current element began. */
  private deepest = 0;

  // The page: the top-level member being read, the two that matter, and whether the list is open.
  private member = OTHER;
  private sawList = false;
  private sawToken = false;
  private listOpen = false;
  tokenStart = -1;
  tokenEnd = -1;
  readonly elements: ScannedElement[] = [];

  // The element being read: where it began, its member being read, and what its metadata holds.
  private elementStart = 0;
  private elementKey = OTHER;
  private metadataCount = 0;
  private metaOpen = false;
  private metaKey = OTHER;
  /** Set once `meta` cannot be defined for the element. */
  private metaBad = false;
  private idStart = -1;
  private idEnd = -1;
  private createdStart = -1;
  private createdEnd = -1;
  private view: Buffer | undefined;

  constructor(private readonly b: Uint8Array) {}

  /** Reads the whole body: whether it is JSON and a page the scan vouches for. */
  run(): boolean {
    this.i = skipSpace(this.b, 0);
    if (this.b[this.i] !== 0x7b) return false;
    for (;;) {
      const r = this.value();
      if (r === OPENED) continue;
      if (r === ERROR) return false;
      const s = this.next();
      if (s !== OPENED) return s === END;
    }
  }

  /** The text of body[start, end), decoded as Buffer#toString('utf8') decodes it. */
  text(start: number, end: number): string {
    const b = this.b;
    this.view ??= Buffer.from(b.buffer, b.byteOffset, b.byteLength);
    return this.view.toString('utf8', start, end);
  }

  /**
   * Reads the value at the cursor: a scalar whole (DONE), or the opening of an array or object,
   * DONE when it is empty, else OPENED with the cursor at its first value (past the key in an object).
   */
  private value(): number {
    const b = this.b;
    const at = this.i;
    const c = b[at];
    if (this.depth <= 4 && !this.valueBegins(c)) return ERROR;
    if (c === 0x22) {
      const end = this.string(at);
      if (end < 0) return ERROR;
      this.i = end;
      if (this.depth <= 4) this.stringRead(at, end);
      return DONE;
    }
    if (c === 0x7b || c === 0x5b) {
      this.open(c === 0x7b ? OBJECT : ARRAY);
      const i = skipSpace(b, at + 1);
      this.i = i;
      if (b[i] === c + 2) {
        // } is { + 2, as ] is [ + 2.
        this.i = i + 1;
        this.close();
        return DONE;
      }
      return c === 0x5b || this.key() ? OPENED : ERROR;
    }
    let end = -1;
    if (c === 0x74) end = holds(b, at, WORD_TRUE) ? at + 4 : -1;
    else if (c === 0x66) end = holds(b, at, WORD_FALSE) ? at + 5 : -1;
    else if (c === 0x6e) end = holds(b, at, WORD_NULL) ? at + 4 : -1;
    else if (c === 0x2d || (c !== undefined && c >= 0x30 && c <= 0x39)) end = skipNumber(b, at);
    if (end < 0) return ERROR;
    this.i = end;
    return DONE;
  }

  /**
   * After a whole value: closes the containers it completes, then OPENED with the cursor at the
   * next value (past its key in an object), END when the top value is done, or ERROR.
   */
  private next(): number {
    const b = this.b;
    for (;;) {
      if (this.depth === 2 && this.listOpen) this.elementEnded();
      if (this.depth === 0) return skipSpace(b, this.i) === b.length ? END : ERROR;
      const i = skipSpace(b, this.i);
      const inObject = this.stack[this.depth - 1] === OBJECT;
      const c = b[i];
      if (c === 0x2c) {
        this.i = skipSpace(b, i + 1);
        return !inObject || this.key() ? OPENED : ERROR;
      }
      if (c !== (inObject ? 0x7d : 0x5d)) return ERROR;
      this.i = i + 1;
      this.close();
    }
  }

  /** Reads a key and its colon at the cursor; the cursor then at the value. */
  private key(): boolean {
    const b = this.b;
    const start = this.i;
    if (b[start] !== 0x22) return false;
    const end = this.string(start);
    if (end < 0 || (this.depth <= 4 && !this.keyRead(start, end))) return false;
    const i = skipSpace(b, end);
    if (b[i] !== 0x3a) return false;
    this.i = skipSpace(b, i + 1);
    return true;
  }

  /**
   * The index past the string literal at `start` (its quote), or -1 when it is not one JSON
   * accepts; `escaped` then tells whether it holds a backslash.
   */
  private string(start: number): number {
    const b = this.b;
    const n = b.length;
    let i = start + 1;
    let escaped = false;
    for (;;) {
      while (i < n && STRING_BYTE[b[i] as number] === PLAIN) i++;
      if (i >= n) return -1;
      const kind = STRING_BYTE[b[i] as number];
      if (kind === QUOTE) break;
      if (kind === CONTROL) return -1;
      escaped = true;
      const e = i + 1 < n ? ESCAPE[b[i + 1] as number] : 0;
      if (e === SIMPLE_ESCAPE) i += 2;
      else if (
        e === UNICODE_ESCAPE &&
        i + 5 < n &&
        HEX[b[i + 2] as number] === 1 &&
        HEX[b[i + 3] as number] === 1 &&
        HEX[b[i + 4] as number] === 1 &&
        HEX[b[i + 5] as number] === 1
      )
        i += 6;
      else return -1;
    }
    this.escaped = escaped;
    return i + 1;
  }

  private open(kind: number): void {
    if (this.depth === this.stack.length) {
      const bigger = new Uint8Array(this.stack.length * 2);
      bigger.set(this.stack);
      this.stack = bigger;
    }
    this.stack[this.depth++] = kind;
    if (this.depth > this.deepest) this.deepest = this.depth;
  }

  private close(): void {
    // The list is the array at depth 2 while it is open, the metadata the object at depth 4.
    if (this.depth === 2) this.listOpen = false;
    else if (this.depth === 4) this.metaOpen = false;
    this.depth--;
  }

  /** A value begins with byte `c` at the cursor, `depth` containers deep: false when the page is refused. */
  private valueBegins(c: number | undefined): boolean {
    const depth = this.depth;
    if (depth === 1) {
      // A page member: the list must be an array or null, the token a string or null.
      if (this.member === LIST) {
        if (c === 0x5b) this.listOpen = true;
        else if (c !== 0x6e) return false;
      } else if (this.member === TOKEN && c !== 0x22 && c !== 0x6e) return false;
    } else if (depth === 2) {
      if (this.listOpen) this.elementBegins();
    } else if (depth === 3) {
      if (this.listOpen && this.elementKey === METADATA) {
        if (c === 0x7b) this.metaOpen = true;
        else this.metaBad = true;
      }
    } else if (depth === 4 && this.metaOpen && this.metaKey !== OTHER && c !== 0x22) this.metaBad = true;
    return true;
  }

  /** The string literal from `start` to `end` was read as a value. */
  private stringRead(start: number, end: number): void {
    if (this.depth === 1 && this.member === TOKEN) {
      this.tokenStart = start;
      this.tokenEnd = end;
    } else if (this.depth === 4 && this.metaOpen && this.metaKey !== OTHER && !this.metaBad) {
      if (this.escaped) this.metaBad = true;
      else if (this.metaKey === ID) {
        this.idStart = start + 1;
        this.idEnd = end - 1;
      } else {
        this.createdStart = start + 1;
        this.createdEnd = end - 1;
      }
    }
  }

  /** The key literal from `start` to `end` was read: false when the page is refused. */
  private keyRead(start: number, end: number): boolean {
    const b = this.b;
    const depth = this.depth;
    if (depth === 1) {
      // A top-level key with a backslash could name "list" or "nextPageToken" unseen.
      if (this.escaped) return false;
      this.member = OTHER;
      if (literalIs(b, start, end, WORD_LIST)) {
        if (this.sawList) return false;
        this.sawList = true;
        this.member = LIST;
      } else if (literalIs(b, start, end, WORD_TOKEN)) {
        if (this.sawToken) return false;
        this.sawToken = true;
        this.member = TOKEN;
      }
    } else if (depth === 3 && this.listOpen && !this.metaBad) {
      this.elementKey = OTHER;
      if (this.escaped) this.metaBad = true;
      else if (literalIs(b, start, end, WORD_METADATA)) {
        this.elementKey = METADATA;
        if (++this.metadataCount > 1) this.metaBad = true;
      }
    } else if (depth === 4 && this.metaOpen && !this.metaBad) {
      this.metaKey = OTHER;
      if (this.escaped) this.metaBad = true;
      else if (literalIs(b, start, end, WORD_ID)) {
        this.metaKey = ID;
        if (this.idStart >= 0) this.metaBad = true;
      } else if (literalIs(b, start, end, WORD_CREATED_AT)) {
        this.metaKey = CREATED_AT;
        if (this.createdStart >= 0) this.metaBad = true;
      }
    }
    return true;
  }

  private elementBegins(): void {
    this.elementStart = this.i;
    this.deepest = this.depth;
    this.elementKey = OTHER;
    this.metadataCount = 0;
    this.metaOpen = false;
    this.metaKey = OTHER;
    this.metaBad = false;
    this.idStart = -1;
    this.idEnd = -1;
    this.createdStart = -1;
    this.createdEnd = -1;
  }

  /** The element that began at `elementStart` ends at the cursor. */
  private elementEnded(): void {
    const meta =
      this.metadataCount === 1 && !this.metaBad
        ? {
            id: this.idStart < 0 ? undefined : this.text(this.idStart, this.idEnd),
            createdAt: this.createdStart < 0 ? undefined : this.text(this.createdStart, this.createdEnd),
          }
        : undefined;
    this.elements.push({ start: this.elementStart, end: this.i, depth: this.deepest - 2, meta });
  }
}
