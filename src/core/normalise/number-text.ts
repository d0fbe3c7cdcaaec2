/**
 * The one text of each number govtrail stores, so that verify sees a number whose stored text was
 * edited into another spelling of the same double (`4` into `4.0000000000000001`), which the hash
 * chain cannot: it hashes the entry as JavaScript parses it. Pure.
 *
 * govtrail writes raw from canonical JSON (canonicalJsonbText), where a number is JSON.stringify's
 * text: the shortest text that reads back as the same double, `-0` written `0`, and exponent forms
 * below 1e-6 and from 1e21 (`1e-7`, `1.5e+21`). jsonb keeps a number's text as given except that
 * it writes an exponent form as a plain decimal (`0.0000001`, `1500000000000000000000`). So every
 * number of a raw entry, as PostgreSQL renders it (`raw::text`), is exactly
 * `canonicalNumberText(Number(token))`; any other text was not written by govtrail.
 */

/**
 * The text of `x` in raw as stored: JSON.stringify's, with an exponent form written out as jsonb
 * writes it. undefined for a non-finite number (govtrail writes null).
 */
export function canonicalNumberText(x: number): string | undefined {
  if (!Number.isFinite(x)) return undefined;
  const s = JSON.stringify(x);
  const e = s.indexOf('e');
  return e === -1 ? s : plainDecimal(s.slice(0, e), Number(s.slice(e + 1)));
}

/** `mantissa` × 10^`exponent` without an exponent: JavaScript's `d[.ddd]` mantissa written out. */
function plainDecimal(mantissa: string, exponent: number): string {
  const negative = mantissa.startsWith('-');
  const m = negative ? mantissa.slice(1) : mantissa;
  const dot = m.indexOf('.');
  const digits = dot === -1 ? m : m.slice(0, dot) + m.slice(dot + 1);
  // Where the decimal point falls in `digits`.
  const point = (dot === -1 ? m.length : dot) + exponent;
  const text =
    point <= 0
      ? `0.${'0'.repeat(-point)}${digits}`
      : point >= digits.length
        ? digits + '0'.repeat(point - digits.length)
        : `${digits.slice(0, point)}.${digits.slice(point)}`;
  return negative ? `-${text}` : text;
}

/** A number of JSON text whose text is not the one govtrail writes for its value. */
export interface NumberTextMismatch {
  /** Where the number starts in the text (UTF-16 code units). */
  readonly offset: number;
  /** The text found. */
  readonly found: string;
  /** The text govtrail writes for its value; undefined when it writes none (not finite: null). */
  readonly expected: string | undefined;
}

/** 0-9 . e E + - : the characters a JSON number token is made of. */
function isNumberChar(c: number): boolean {
  return (c >= 0x30 && c <= 0x39) || c === 0x2e || c === 0x65 || c === 0x45 || c === 0x2b || c === 0x2d;
}

/**
 * Whether a token is an integer that is its own canonical text without computing it: no leading
 * zero, not `-0`, at most 15 digits (every such integer is a double JSON.stringify writes digit
 * for digit). Nearly every number of an entry.
 */
function isPlainInteger(token: string): boolean {
  const start = token.charCodeAt(0) === 0x2d ? 1 : 0;
  const digits = token.length - start;
  if (digits === 0 || digits > 15) return false;
  const first = token.charCodeAt(start);
  if (first === 0x30) return digits === 1 && start === 0; // "0", never "-0" nor "01"
  for (let i = start; i < token.length; i++) {
    const c = token.charCodeAt(i);
    if (c < 0x30 || c > 0x39) return false;
  }
  return true;
}

/**
 * The first number of JSON text (as PostgreSQL renders jsonb) whose text is not
 * canonicalNumberText of its value; undefined when every number is. One pass: string literals
 * (keys and values, escapes respected) are skipped, every other run of number characters is a
 * number token.
 */
export function firstNonCanonicalNumber(text: string): NumberTextMismatch | undefined {
  const n = text.length;
  let i = 0;
  while (i < n) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      i = stringEnd(text, i);
      continue;
    }
    if (c === 0x2d || (c >= 0x30 && c <= 0x39)) {
      let j = i + 1;
      while (j < n && isNumberChar(text.charCodeAt(j))) j++;
      const found = text.slice(i, j);
      if (!isPlainInteger(found)) {
        const expected = canonicalNumberText(Number(found));
        if (expected !== found) return { offset: i, found, expected };
      }
      i = j;
      continue;
    }
    i++;
  }
  return undefined;
}

/** The index after the string literal opening at `open` (the text's end if it is not closed). */
function stringEnd(text: string, open: number): number {
  let from = open + 1;
  for (;;) {
    const q = text.indexOf('"', from);
    if (q === -1) return text.length;
    // Escaped when an odd number of backslashes precedes it.
    let b = q - 1;
    while (text.charCodeAt(b) === 0x5c) b--;
    if ((q - 1 - b) % 2 === 0) return q + 1;
    from = q + 1;
  }
}

/**
 * The path (`$.a.b[2]`) of the value starting at `offset` of JSON text, for a finding. Keys are
 * decoded; one that is not a plain name is written `["…"]`.
 */
export function jsonPathAt(text: string, offset: number): string {
  const frames: { array: boolean; index: number; key: string }[] = [];
  let i = 0;
  while (i < offset && i < text.length) {
    const c = text.charCodeAt(i);
    const top = frames[frames.length - 1];
    if (c === 0x22) {
      const end = stringEnd(text, i);
      if (top !== undefined && !top.array && isKeyAt(text, end)) top.key = JSON.parse(text.slice(i, end));
      i = end;
      continue;
    }
    if (c === 0x7b || c === 0x5b) frames.push({ array: c === 0x5b, index: 0, key: '' });
    else if (c === 0x7d || c === 0x5d) frames.pop();
    else if (c === 0x2c && top?.array) top.index++;
    i++;
  }
  let path = '$';
  for (const f of frames)
    path += f.array
      ? `[${f.index}]`
      : /^[A-Za-z_$][\w$]*$/.test(f.key)
        ? `.${f.key}`
        : `[${JSON.stringify(f.key)}]`;
  return path;
}

/** Whether whitespace then a colon follows `end`. */
function isKeyAt(text: string, end: number): boolean {
  let i = end;
  while (i < text.length && /\s/.test(text[i] as string)) i++;
  return text.charCodeAt(i) === 0x3a;
}
