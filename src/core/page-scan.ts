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
 * open arrays and objects on a stack of its own (their opening bytes): linear, any depth of
 * nesting, and nothing allocated in the loop but the records it returns (and a larger stack past 64
 * levels).
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
  const page = new Page(body);
  if (!scan(body, page)) return undefined;
  // The token alone is decoded by JSON.parse: its escapes, if any, are JSON's to read.
  const token = page.tokenStart < 0 ? '' : (JSON.parse(page.text(page.tokenStart, page.tokenEnd)) as string);
  return { elements: page.elements, nextPageToken: token };
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

const OPEN_OBJECT = 0x7b;
const OPEN_ARRAY = 0x5b;
const QUOTE_BYTE = 0x22;

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

/**
 * The index past the string literal at `start` (its quote): negated when the literal holds a
 * backslash (an index past a literal is at least 2), 0 when it is not one JSON accepts. One number,
 * not an object, for the loop over every string of the body.
 */
function skipString(b: Uint8Array, start: number): number {
  const n = b.length;
  let i = start + 1;
  let escaped = false;
  for (;;) {
    // The loop most of the body's bytes go through: one table lookup a byte (testing the bound and
    // the table in the loop's condition instead, looking the stopping byte up again, was a fifth slower).
    let kind = PLAIN;
    while (i < n) {
      kind = STRING_BYTE[b[i] as number] as number;
      if (kind !== PLAIN) break;
      i++;
    }
    if (kind === QUOTE) return escaped ? -(i + 1) : i + 1;
    // A control character, or the end of the body.
    if (kind !== BACKSLASH) return 0;
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
    else return 0;
  }
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

/** The index past the true, false, null or number at `i`, or -1 when there is none. */
function skipScalar(b: Uint8Array, i: number, c: number | undefined): number {
  if (c === 0x74) return holds(b, i, WORD_TRUE) ? i + 4 : -1;
  if (c === 0x66) return holds(b, i, WORD_FALSE) ? i + 5 : -1;
  if (c === 0x6e) return holds(b, i, WORD_NULL) ? i + 4 : -1;
  if (c === 0x2d || (c !== undefined && c >= 0x30 && c <= 0x39)) return skipNumber(b, i);
  return -1;
}

/**
 * Reads the key of an object `depth` containers deep at `i`, and its colon: the index of its value,
 * or -1 when there is none or the page is refused.
 */
function skipKey(b: Uint8Array, i: number, depth: number, page: Page): number {
  if (b[i] !== QUOTE_BYTE) return -1;
  let end = skipString(b, i);
  if (end === 0 || (depth <= 4 && !page.keyRead(i, end, depth))) return -1;
  if (end < 0) end = -end;
  end = skipSpace(b, end);
  return b[end] === 0x3a ? skipSpace(b, end + 1) : -1;
}

/**
 * Whether `b` is JSON whose top value is an object, told to `page` as it goes; false as soon as it
 * is not, or `page` refuses it. A loop over the values, with the open containers on a stack of
 * their own (their opening bytes) and everything in local variables: calls only to the small
 * functions above, and to `page` at the four outer levels, where its members lie.
 */
function scan(b: Uint8Array, page: Page): boolean {
  let stack = new Uint8Array(64);
  let depth = 0;
  /** The deepest `depth` reached since the current element of the list began. */
  let deepest = 0;
  let i = skipSpace(b, 0);
  if (b[i] !== OPEN_OBJECT) return false;
  for (;;) {
    // A value begins at i, inside `depth` containers.
    const c = b[i];
    if (depth <= 4) {
      if (depth === 2 && page.listOpen) deepest = 2;
      if (!page.valueBegins(c, depth, i)) return false;
    }
    if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
      if (depth === stack.length) stack = grown(stack);
      stack[depth++] = c;
      if (depth > deepest) deepest = depth;
      i = skipSpace(b, i + 1);
      // } is { + 2, as ] is [ + 2.
      if (b[i] !== c + 2) {
        if (c === OPEN_OBJECT) i = skipKey(b, i, depth, page);
        if (i < 0) return false;
        continue;
      }
      page.closes(depth--);
      i++;
    } else if (c === QUOTE_BYTE) {
      const end = skipString(b, i);
      if (end === 0) return false;
      if (depth <= 4) page.stringRead(i, end, depth);
      i = end < 0 ? -end : end;
    } else {
      i = skipScalar(b, i, c);
      if (i < 0) return false;
    }
    // A whole value ends at i: close the containers it completes, up to a comma.
    for (;;) {
      if (depth === 2 && page.listOpen) page.elementEnds(i, deepest - 2);
      i = skipSpace(b, i);
      if (depth === 0) return i === b.length;
      const open = stack[depth - 1] as number;
      const d = b[i];
      if (d === 0x2c) {
        i = skipSpace(b, i + 1);
        if (open === OPEN_OBJECT) i = skipKey(b, i, depth, page);
        if (i < 0) return false;
        break;
      }
      if (d !== open + 2) return false;
      page.closes(depth--);
      i++;
    }
  }
}

/** `stack` twice as long, with its contents: nesting has no limit. */
function grown(stack: Uint8Array): Uint8Array<ArrayBuffer> {
  const bigger = new Uint8Array(stack.length * 2);
  bigger.set(stack);
  return bigger;
}

/**
 * What the scan finds of the page: its members, its elements, and the metadata of the element
 * being read. Told of the values and keys of the four outer levels: the page (1), the list (2), an
 * element (3) and its metadata (4); `listOpen` and `metaOpen` say whether the container at level 2
 * and 4 is the list and the metadata.
 */
class Page {
  // The page: the top-level member being read, and the two that matter.
  private member = OTHER;
  private sawList = false;
  private sawToken = false;
  listOpen = false;
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

  /** The text of body[start, end), decoded as Buffer#toString('utf8') decodes it. */
  text(start: number, end: number): string {
    const b = this.b;
    this.view ??= Buffer.from(b.buffer, b.byteOffset, b.byteLength);
    return this.view.toString('utf8', start, end);
  }

  /** The container that was `depth` levels deep closes. */
  closes(depth: number): void {
    if (depth === 2) this.listOpen = false;
    else if (depth === 4) this.metaOpen = false;
  }

  /** A value begins with byte `c` at `at`, `depth` containers deep: false when the page is refused. */
  valueBegins(c: number | undefined, depth: number, at: number): boolean {
    if (depth === 1) {
      // A page member: the list must be an array or null, the token a string or null.
      if (this.member === LIST) {
        if (c === OPEN_ARRAY) this.listOpen = true;
        else if (c !== 0x6e) return false;
      } else if (this.member === TOKEN && c !== QUOTE_BYTE && c !== 0x6e) return false;
    } else if (depth === 2) {
      if (this.listOpen) this.elementBegins(at);
    } else if (depth === 3) {
      if (this.listOpen && this.elementKey === METADATA) {
        if (c === OPEN_OBJECT) this.metaOpen = true;
        else this.metaBad = true;
      }
    } else if (depth === 4 && this.metaOpen && this.metaKey !== OTHER && c !== QUOTE_BYTE)
      this.metaBad = true;
    return true;
  }

  /** The string literal at `start` was read as a value; `end` as skipString gives it. */
  stringRead(start: number, end: number, depth: number): void {
    if (depth === 1 && this.member === TOKEN) {
      this.tokenStart = start;
      this.tokenEnd = end < 0 ? -end : end;
    } else if (depth === 4 && this.metaOpen && this.metaKey !== OTHER && !this.metaBad) {
      if (end < 0) this.metaBad = true;
      else if (this.metaKey === ID) {
        this.idStart = start + 1;
        this.idEnd = end - 1;
      } else {
        this.createdStart = start + 1;
        this.createdEnd = end - 1;
      }
    }
  }

  /** The key literal at `start` was read; `end` as skipString gives it. False when the page is refused. */
  keyRead(start: number, end: number, depth: number): boolean {
    if (depth === 1) return this.pageKey(start, end);
    if (depth === 3 && this.listOpen && !this.metaBad) {
      this.elementKey = OTHER;
      if (end < 0) this.metaBad = true;
      else if (literalIs(this.b, start, end, WORD_METADATA)) {
        this.elementKey = METADATA;
        if (++this.metadataCount > 1) this.metaBad = true;
      }
    } else if (depth === 4 && this.metaOpen && !this.metaBad) {
      this.metaKey = OTHER;
      if (end < 0) this.metaBad = true;
      else if (literalIs(this.b, start, end, WORD_ID)) {
        this.metaKey = ID;
        if (this.idStart >= 0) this.metaBad = true;
      } else if (literalIs(this.b, start, end, WORD_CREATED_AT)) {
        this.metaKey = CREATED_AT;
        if (this.createdStart >= 0) this.metaBad = true;
      }
    }
    return true;
  }

  /** A top-level key: false when it is written with a backslash (it could name "list" unseen) or repeats one. */
  private pageKey(start: number, end: number): boolean {
    if (end < 0) return false;
    this.member = OTHER;
    if (literalIs(this.b, start, end, WORD_LIST)) {
      if (this.sawList) return false;
      this.sawList = true;
      this.member = LIST;
    } else if (literalIs(this.b, start, end, WORD_TOKEN)) {
      if (this.sawToken) return false;
      this.sawToken = true;
      this.member = TOKEN;
    }
    return true;
  }

  private elementBegins(at: number): void {
    this.elementStart = at;
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

  /** The element that began at `elementStart` ends at `end`, `depth` deep. */
  elementEnds(end: number, depth: number): void {
    const meta =
      this.metadataCount === 1 && !this.metaBad
        ? {
            id: this.idStart < 0 ? undefined : this.text(this.idStart, this.idEnd),
            createdAt: this.createdStart < 0 ? undefined : this.text(this.createdStart, this.createdEnd),
          }
        : undefined;
    this.elements.push({ start: this.elementStart, end, depth, meta });
  }
}
