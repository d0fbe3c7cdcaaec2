/**
 * JSON.parse for JSON text from outside (the tenant API, jsonb read back), without V8's escaped-key
 * bug. Pure.
 *
 * V8 (Node.js 24 and 26, nodejs/node#63785, open) can decode an object key written with an escape
 * wrongly: once an object of the same shape had, at that place, a key such as `\` or `"`, a later
 * `{"h":1,"\n":2}` comes back with the key `\`. Which key a document gets then depends on what
 * the process parsed before: a history entry could be stored, hashed and compared under keys it
 * never had, and two keys could become one. Native JSON.parse is used here only on text that has
 * no escaped key; the keys of other text are swapped for plain stand-ins before parsing and
 * decoded on their own (a string value, which the bug does not touch) afterwards.
 */

/** Every string literal of JSON text, in order. */
const STRING_LITERAL = /"(?:[^"\\]|\\[\s\S])*"/g;

/** JSON.parse(text), with escaped keys decoded as JSON says; throws a SyntaxError as JSON.parse does. */
export function parseJsonText(text: string): unknown {
  // Nearly all text has no escaped key: native parsing, as fast as it is.
  return hasEscapedKey(text) ? parseWithStandIns(text) : JSON.parse(text);
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

function parseWithStandIns(text: string): unknown {
  const prefix = standInPrefix(text);
  const keys: string[] = [];
  const swapped = text.replace(STRING_LITERAL, (literal, offset: number) => {
    if (!literal.includes('\\') || !isKey(text, offset + literal.length)) return literal;
    // The literal alone, as a string value: decoded right (or a SyntaxError for a bad escape).
    keys.push(JSON.parse(literal) as string);
    return `"${prefix}${keys.length - 1}"`;
  });
  return restore(JSON.parse(swapped), prefix, keys);
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

/** A prefix for stand-in keys that occurs nowhere in the text (plain ASCII: no escape to decode). */
function standInPrefix(text: string): string {
  for (let n = 0; ; n++) {
    const prefix = `~govtrail-key-${n}~`;
    if (!text.includes(prefix)) return prefix;
  }
}

/** The parsed value with every stand-in key replaced by its key, in its place among the others. */
function restore(value: unknown, prefix: string, keys: readonly string[]): unknown {
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) value[i] = restore(value[i], prefix, keys);
    return value;
  }
  const object = value as Record<string, unknown>;
  let hasStandIn = false;
  for (const k of Object.keys(object)) {
    object[k] = restore(object[k], prefix, keys);
    if (k.startsWith(prefix)) hasStandIn = true;
  }
  if (!hasStandIn) return object;
  // Rebuilt in order with data properties, as JSON.parse makes them: `__proto__` is an own key, and
  // a key given twice keeps its first place and its last value.
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(object)) {
    const key = k.startsWith(prefix) ? (keys[Number(k.slice(prefix.length))] as string) : k;
    Object.defineProperty(out, key, {
      value: object[k],
      writable: true,
      enumerable: true,
      configurable: true,
    });
  }
  return out;
}
