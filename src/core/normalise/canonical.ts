/**
 * Canonical JSON and the text PostgreSQL's jsonb accepts. Pure.
 */
import { createHash, hash } from 'node:crypto';
import { parseJsonText } from '../json-text.js';

/** An escaped backslash (skipped), or an escape jsonb refuses: `\u0000`, a surrogate. */
const JSONB_REFUSED = /\\\\|\\u(0000|d[89a-f][0-9a-f]{2})/gi;

/**
 * JSON text that jsonb accepts: jsonb refuses `\u0000` and unpaired surrogate escapes, which
 * JSON.stringify can emit. Those become U+FFFD; everything else is JSON.stringify's output.
 */
export function toJsonbText(value: unknown): string {
  const text = JSON.stringify(value) ?? 'null';
  if (!text.includes('\\u')) return text;
  // Skip escaped backslashes first so that a literal "\\u0000" in a string is left alone.
  return text.replace(JSONB_REFUSED, (m) => (m === '\\\\' ? m : '\\ufffd'));
}

/** JSON with object keys sorted at every depth: equal values give equal text. */
export function canonicalJson(value: unknown): string {
  if (typeof value === 'object' && value !== null) {
    // JSON data (what JSON.parse gives) is copied with its keys in canonical order and written by
    // JSON.stringify: twice as fast as writing it here, and its text comes out flat (no rope).
    const sorted = keySortedCopy(value);
    if (sorted !== UNSUPPORTED) return JSON.stringify(sorted);
  }
  return writeCanonical(value);
}

/** What keySortedCopy gives for a value JSON.stringify would not write as writeCanonical does. */
const UNSUPPORTED = Symbol('unsupported');

/**
 * A copy of JSON data whose objects hold their keys in canonical order, which JSON.stringify keeps,
 * so that it writes the bytes writeCanonical would. UNSUPPORTED for anything else: undefined,
 * functions, symbols and bigints (writeCanonical writes or throws what JSON.stringify would not),
 * holes, objects of a class (Date, Map, boxed values: writeCanonical writes their own keys, JSON.stringify
 * calls toJSON or unboxes), and keys that JavaScript orders otherwise than inserted (array indices
 * come first, in numeric order: any key starting with a digit) or cannot insert (`__proto__`).
 */
function keySortedCopy(value: unknown): unknown {
  switch (typeof value) {
    case 'string':
    case 'number': // JSON.stringify writes non-finite numbers as null, as writeCanonical does
    case 'boolean':
      return value;
    case 'object':
      if (value === null) return value;
      return Array.isArray(value) ? arrayCopy(value) : objectCopy(value as Record<string, unknown>);
    default:
      return UNSUPPORTED;
  }
}

function arrayCopy(value: readonly unknown[]): unknown {
  const n = value.length;
  const out = new Array<unknown>(n);
  for (let i = 0; i < n; i++) {
    // A hole or an undefined element reads as undefined: UNSUPPORTED.
    const v = keySortedCopy(value[i]);
    if (v === UNSUPPORTED) return v;
    out[i] = v;
  }
  return out;
}

function objectCopy(value: Record<string, unknown>): unknown {
  const proto = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return UNSUPPORTED;
  const keys = sortedKeys(value);
  const out: Record<string, unknown> = {};
  for (const k of keys) {
    const c = k.charCodeAt(0);
    if ((c >= 0x30 && c <= 0x39) || k === '__proto__') return UNSUPPORTED;
    const v = keySortedCopy(value[k]);
    if (v === UNSUPPORTED) return v;
    out[k] = v;
  }
  return out;
}

/** canonicalJson written piece by piece, for any value. */
function writeCanonical(value: unknown): string {
  switch (typeof value) {
    case 'string':
      return quote(value);
    case 'number':
      // What JSON.stringify gives: the shortest round-trip text, non-finite numbers as null.
      return Number.isFinite(value) ? String(value) : 'null';
    case 'boolean':
      return value ? 'true' : 'false';
    case 'object':
      if (value === null) return 'null';
      return Array.isArray(value) ? canonicalArray(value) : canonicalObject(value as Record<string, unknown>);
    default:
      // undefined, functions and symbols are null; a bigint throws, as in JSON.stringify.
      return JSON.stringify(value) ?? 'null';
  }
}

/** What JSON.stringify escapes in a string (any surrogate: paired ones are left to it). */
const JSON_ESCAPED = /["\\\u0000-\u001f\ud800-\udfff]/;

/** JSON.stringify of a string; a plain one is quoted without calling it. */
function quote(s: string): string {
  return JSON_ESCAPED.test(s) ? JSON.stringify(s) : `"${s}"`;
}

function canonicalArray(value: readonly unknown[]): string {
  let out = '[';
  for (let i = 0; i < value.length; i++) {
    if (i > 0) out += ',';
    const v = value[i];
    // A hole stays empty (as Array#map then join did); an undefined element is null.
    if (v !== undefined || i in value) out += writeCanonical(v);
  }
  return `${out}]`;
}

/** An object's own enumerable keys in canonical order: Array#sort's default order. */
function sortedKeys(value: object): string[] {
  const keys = Object.keys(value);
  if (keys.length > 1) {
    if (keys.length <= 16) insertionSort(keys);
    else keys.sort();
  }
  return keys;
}

function canonicalObject(value: Record<string, unknown>): string {
  const keys = sortedKeys(value);
  let out = '{';
  let first = true;
  for (const k of keys) {
    const v = value[k];
    if (v === undefined) continue;
    out += first ? `${quote(k)}:${writeCanonical(v)}` : `,${quote(k)}:${writeCanonical(v)}`;
    first = false;
  }
  return `${out}}`;
}

/** Array#sort's default order (UTF-16 code units) for a few distinct strings, without its overhead. */
function insertionSort(keys: string[]): void {
  for (let i = 1; i < keys.length; i++) {
    const k = keys[i] as string;
    let j = i - 1;
    while (j >= 0 && (keys[j] as string) > k) {
      keys[j + 1] = keys[j] as string;
      j--;
    }
    keys[j + 1] = k;
  }
}

/** What a history_entry row's hash covers, besides the previous hash. */
export interface HashedEntry {
  readonly tenantId: string;
  readonly entryId: string;
  readonly createdAtText: string | null;
  /** The entry as stored: as jsonb reads it back (see canonicalJsonbText). */
  readonly raw: unknown;
}

/** The previous hash of a tenant's first row. */
const ZERO_HASH = new Uint8Array(32);

/**
 * An entry's raw JSON as one text that serves both as the jsonb column and as the row hash's input:
 * canonical JSON (jsonb does not keep key order, so sorted keys store the same value as the wire
 * order) with the escapes jsonb refuses replaced as toJsonbText does. `hashText` is canonical JSON
 * of what jsonb reads back: `text` itself unless something was replaced. (Two keys of one object
 * that differ only in refused characters become one key; jsonb, like JSON.parse, keeps the later
 * one in key order, and the hash covers that.)
 */
export function canonicalJsonbText(value: unknown): { text: string; hashText: string } {
  const canon = canonicalJson(value);
  if (!canon.includes('\\u')) return { text: canon, hashText: canon };
  let altered = false;
  const text = canon.replace(JSONB_REFUSED, (m) => {
    if (m === '\\\\') return m;
    altered = true;
    return '\\ufffd';
  });
  return { text, hashText: altered ? canonicalJson(parseJsonText(text)) : canon };
}

/**
 * An entry's content hash (docs/design/integrity.md): sha256 of its canonical JSON as jsonb reads it back —
 * `canonicalJsonbText(raw).hashText` — so key order, whitespace and the characters jsonb cannot
 * keep never count as a change, and a stored row and a served entry compare byte for byte.
 */
export function contentHashOfText(canonicalRaw: string): Buffer {
  return sha256(canonicalRaw);
}

/**
 * sha256 in one call (no Hash object: this runs twice for every entry stored or compared). The
 * digest comes back as a 'binary' (latin1) string made a Buffer here: crypto.hash's own 'buffer' output costs
 * 0.7 µs more per call (Node.js 24).
 */
function sha256(data: string | Uint8Array): Buffer {
  return Buffer.from(hash('sha256', data, 'binary'), 'latin1');
}

/** The content hash of a raw entry (as served, or as read back from jsonb). */
export function contentHash(raw: unknown): Buffer {
  return contentHashOfText(canonicalJsonbText(raw).hashText);
}

/**
 * rowHash for a row whose raw value is given as its canonical JSON text (canonicalJsonbText's
 * `hashText`): the same bytes as rowHash, without serialising raw again.
 */
export function rowHashOfText(
  previous: Uint8Array | null,
  row: Omit<HashedEntry, 'raw'>,
  canonicalRaw: string,
): Buffer {
  const h = createHash('sha256');
  h.update(previous ?? ZERO_HASH);
  // canonicalJson of the row, in pieces (keys in sorted order) without copying raw's text.
  h.update(
    `{"created_at_text":${canonicalJson(row.createdAtText)},"entry_id":${canonicalJson(row.entryId)},"raw":`,
  );
  h.update(canonicalRaw);
  h.update(`,"tenant_id":${canonicalJson(row.tenantId)}}`);
  return h.digest();
}

/** The scratch buffer of rowAndContentHashOfText, kept between calls up to 1 MiB. */
let scratch = Buffer.allocUnsafe(1 << 14);

function hashInput(bytes: number): Buffer {
  if (scratch.length >= bytes) return scratch;
  if (bytes > 1 << 20) return Buffer.allocUnsafe(bytes);
  scratch = Buffer.allocUnsafe(Math.max(bytes, Math.min(scratch.length * 2, 1 << 20)));
  return scratch;
}

/**
 * rowHashOfText and contentHashOfText of one row together, from one UTF-8 copy of its text: the
 * content hash covers the bytes of canonicalRaw inside the row hash's input. The same bytes, hence
 * the same hashes, as the two functions give. `canonicalRawUtf8` is that UTF-8 of canonicalRaw (a
 * view of the hash input), for a writer to copy instead of encoding the text again.
 */
export function rowAndContentHashOfText(
  previous: Uint8Array | null,
  row: Omit<HashedEntry, 'raw'>,
  canonicalRaw: string,
): { rowHash: Buffer; contentHash: Buffer; canonicalRawUtf8: Buffer } {
  const head = `{"created_at_text":${canonicalJson(row.createdAtText)},"entry_id":${canonicalJson(row.entryId)},"raw":`;
  const tail = `,"tenant_id":${canonicalJson(row.tenantId)}}`;
  // Written into a scratch buffer of room enough (3 bytes of UTF-8 at most per UTF-16 code unit):
  // measuring the UTF-8 length first costs more than the writing.
  const input = hashInput(32 + 3 * (head.length + canonicalRaw.length + tail.length));
  input.set(previous ?? ZERO_HASH, 0);
  const start = 32 + input.write(head, 32);
  const end = start + input.write(canonicalRaw, start);
  const length = end + input.write(tail, end);
  const canonicalRawUtf8 = Buffer.allocUnsafe(end - start);
  input.copy(canonicalRawUtf8, 0, start, end);
  return {
    rowHash: sha256(input.subarray(0, length)),
    contentHash: sha256(canonicalRawUtf8),
    canonicalRawUtf8,
  };
}

/**
 * row_hash = sha256(previous row_hash of the tenant ‖ canonical JSON of the row). The first row of
 * a tenant chains from 32 zero bytes.
 */
export function rowHash(previous: Uint8Array | null, row: HashedEntry): Buffer {
  const { tenantId, entryId, createdAtText, raw } = row;
  if (tenantId === undefined || entryId === undefined || createdAtText === undefined || raw === undefined) {
    // Only from untyped callers: a missing field drops its key, as canonical JSON of the row does.
    const h = createHash('sha256');
    h.update(previous ?? ZERO_HASH);
    h.update(canonicalJson({ tenant_id: tenantId, entry_id: entryId, created_at_text: createdAtText, raw }));
    return h.digest();
  }
  return rowHashOfText(previous, row, canonicalJson(raw));
}
