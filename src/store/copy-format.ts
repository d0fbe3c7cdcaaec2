/**
 * The COPY text format: values encoded into rows, rows into a `CopyPayload`, and the COPY
 * statement. Pure — no connection; copy.ts sends payloads, database.ts's connections stream them.
 *
 * How a COPY travels (copy.ts):
 *
 * Writers only hold a Kysely `Session` (or a transaction), never the raw client, so the COPY goes
 * through Kysely like any statement: a CompiledQuery whose SQL is the COPY statement and whose one
 * parameter is a `CopyPayload`. The connection layer of database.ts recognises that parameter and
 * streams the payload instead of binding it — with pg-copy-streams on a server, through PGlite's
 * `/dev/blob` on the embedded database — on the very connection, hence inside the very
 * transaction, that Kysely chose. A failed COPY rejects with the database's error and leaves the
 * transaction failed, as any failed statement does.
 *
 * Rows given as values are encoded while they are sent (on a server, the database parses one
 * chunk while the next is encoded); a payload encoded beforehand (`encodeCopyRows`) is sent as is.
 */

/** A value of one column: encoded in COPY text format by its JavaScript type. */
export type CopyValue =
  | string
  | number
  | bigint
  | boolean
  | null
  | undefined
  | Date
  | Uint8Array
  | JsonUtf8
  | readonly CopyArrayElement[];

/**
 * A text value given as the UTF-8 bytes of JSON text (as JSON.stringify writes it: control
 * characters escaped, so no raw tab, newline or carriage return), e.g. the very bytes a hash was
 * computed over: copied into the payload as they are, only backslashes doubled — the text is
 * neither encoded again nor scanned by a RegExp.
 */
export class JsonUtf8 {
  constructor(readonly bytes: Uint8Array) {}
}

/** An element of a one-dimensional array column (`text[]`, `int[]`, …): every element is quoted. */
export type CopyArrayElement = string | number | bigint | boolean | null;

/**
 * Rows encoded in COPY text format, as UTF-8 chunks: the single parameter of a COPY statement run
 * through Kysely (see `copyRows`). Only database.ts's connections know what to do with it.
 */
export class CopyPayload {
  readonly #rows: number | (() => number);

  /**
   * @param chunks the encoded rows in order; an array can be sent any number of times, a lazy
   *   iterable (rows encoded as they are sent) once
   * @param rows how many rows the chunks hold, or how many were encoded so far for a lazy iterable
   */
  constructor(
    readonly chunks: Iterable<Uint8Array>,
    rows: number | (() => number),
  ) {
    this.#rows = rows;
  }

  /** Rows in the payload (for a lazy one: rows encoded so far, all of them once sent). */
  get rows(): number {
    return typeof this.#rows === 'number' ? this.#rows : this.#rows();
  }

  /** pg calls this when a payload reaches a connection that does not stream it: refuse loudly. */
  toPostgres(): never {
    throw new Error('a CopyPayload reached a connection without COPY support (open it with openDatabase)');
  }
}

/**
 * Several `COPY … FROM STDIN` statements, each with its payload encoded beforehand, run as one: the
 * single parameter of a query whose SQL is their statements (see `copyTables`). On a server they
 * go out as one simple query followed by every payload, so the server moves from one table to the
 * next without a round trip; the embedded database runs them one by one.
 */
export class CopyScript {
  constructor(readonly statements: readonly { readonly text: string; readonly payload: CopyPayload }[]) {}

  /** The SQL of the statements, in order (one query string). */
  get text(): string {
    return this.statements.map((s) => s.text).join(';\n');
  }

  /** pg calls this when a script reaches a connection that does not run it: refuse loudly. */
  toPostgres(): never {
    throw new Error('a CopyScript reached a connection without COPY support (open it with openDatabase)');
  }
}

/** Characters that COPY text format needs escaped in a value. */
const SPECIAL = /[\\\t\n\r]/;
const SPECIAL_ALL = /[\\\t\n\r]/g;
const ESCAPES: Record<string, string> = { '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r' };
const escapeChar = (c: string): string => ESCAPES[c] as string;
/** Characters that need a backslash inside a quoted array element. */
const ARRAY_SPECIAL = /["\\]/;
const ARRAY_SPECIAL_ALL = /["\\]/g;

/** A string as a COPY text-format field: backslash, tab, newline and carriage return escaped. */
export function copyEscape(text: string): string {
  return SPECIAL.test(text) ? text.replace(SPECIAL_ALL, escapeChar) : text;
}

function arrayLiteral(values: readonly CopyArrayElement[]): string {
  let out = '{';
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    if (i > 0) out += ',';
    if (v === null || v === undefined) {
      out += 'NULL';
      continue;
    }
    const s = typeof v === 'string' ? v : typeof v === 'boolean' ? (v ? 't' : 'f') : String(v);
    out += `"${ARRAY_SPECIAL.test(s) ? s.replace(ARRAY_SPECIAL_ALL, '\\$&') : s}"`;
  }
  return `${out}}`;
}

/** One value as a COPY text-format field (`\N` for null and undefined). */
export function encodeCopyValue(value: CopyValue): string {
  switch (typeof value) {
    case 'string':
      return copyEscape(value);
    case 'number':
    case 'bigint':
      return String(value);
    case 'boolean':
      return value ? 't' : 'f';
    case 'undefined':
      return '\\N';
    default:
      if (value === null) return '\\N';
      if (value instanceof Date) return value.toISOString();
      if (value instanceof JsonUtf8) return copyEscape(Buffer.from(value.bytes).toString('utf8'));
      if (value instanceof Uint8Array) {
        // bytea hex input `\x…`, its backslash escaped for COPY.
        const bytes = Buffer.isBuffer(value)
          ? value
          : Buffer.from(value.buffer, value.byteOffset, value.byteLength);
        return `\\\\x${bytes.toString('hex')}`;
      }
      if (Array.isArray(value)) return copyEscape(arrayLiteral(value));
      throw new TypeError(`cannot encode ${Object.prototype.toString.call(value)} for COPY`);
  }
}

// Rows are written as UTF-8 into buffers, each row as soon as it is encoded: its strings die young
// instead of piling up in one huge rope, and byte fields are copied, not encoded again. A chunk always
// ends at a row's end. Chunks stay small (16 KiB growing to 64 KiB): when rows are encoded while they
// are sent, the next chunk is encoded while the socket still holds data for the server, so that
// encoding and the server's work overlap (with 1 MiB chunks they took turns).
const FIRST_CHUNK_BYTES = 1 << 14;
const MAX_CHUNK_BYTES = 1 << 16;
// A payload encoded beforehand has nothing to overlap with: its chunks grow to 1 MiB, as each chunk
// costs two socket writes (pg-copy-streams writes a CopyData header, then the chunk). Node.js CPU of
// sending 50 000 sandbox entries to a local PostgreSQL: 1.45 µs per entry with 64 KiB, 1.2 with 1 MiB.
const MAX_ENCODED_CHUNK_BYTES = 1 << 20;

/** The two ASCII hex digits of each byte value, for bytea fields. */
const HEX = Array.from({ length: 256 }, (_, b) => b.toString(16).padStart(2, '0'));
const HEX_HIGH = Uint8Array.from(HEX, (h) => h.charCodeAt(0));
const HEX_LOW = Uint8Array.from(HEX, (h) => h.charCodeAt(1));
const BACKSLASH = 0x5c;
/** Strings up to this long are copied byte by byte when they are plain ASCII. */
const SHORT_FIELD = 64;
const T = 0x74;
const F = 0x66;

/** Encodes rows into UTF-8 chunks: `row(values)` per row, then `finish()` (or `take()` as it goes). */
export class CopyBuilder {
  #chunks: Uint8Array[] = [];
  #buffer: Buffer = Buffer.alloc(0);
  #used = 0;
  /** Where the row being written starts in #buffer: a chunk always ends at a row's end. */
  #rowStart = 0;
  #rows = 0;

  /**
   * @param width the number of columns, when each row should be checked against it
   * @param maxChunkBytes the size chunks grow to (a larger row gets a chunk of its size)
   */
  constructor(
    readonly width?: number,
    readonly maxChunkBytes = MAX_CHUNK_BYTES,
  ) {}

  /** Rows encoded so far. */
  get rows(): number {
    return this.#rows;
  }

  /** Chunks completed and not yet handed over by `take`. */
  get completed(): number {
    return this.#chunks.length;
  }

  /**
   * Writes one row straight into the chunk, field by field: short ASCII strings byte by byte (the
   * usual ids, enums, times and numbers: no string is built and no call made to encode them), byte
   * fields (JsonUtf8, bytea) copied or hex-encoded in place, anything else as its encoded text.
   */
  row(values: readonly CopyValue[]): void {
    const n = values.length;
    if (n === 0) throw new Error('a COPY row needs at least one value');
    if (this.width !== undefined && n !== this.width)
      throw new Error(`COPY row ${this.#rows + 1} has ${n} values for ${this.width} columns`);
    this.#rowStart = this.#used;
    try {
      for (let i = 0; i < n; i++) {
        const value = values[i];
        if (typeof value === 'string') this.#string(value);
        else if (typeof value === 'boolean') this.#byte(value ? T : F);
        else if (value === null || value === undefined) this.#ascii('\\N');
        else if (typeof value === 'number' && Number.isSafeInteger(value)) this.#ascii(String(value));
        else if (value instanceof JsonUtf8) this.#jsonUtf8(value.bytes);
        else if (value instanceof Uint8Array) this.#bytea(value);
        else this.#text(encodeCopyValue(value));
        this.#byte(i < n - 1 ? 0x09 : 0x0a); // tab between fields, newline after the last
      }
    } catch (err) {
      this.#used = this.#rowStart; // no half row left behind
      throw err;
    }
    this.#rows++;
  }

  /** One byte. */
  #byte(b: number): void {
    const buffer = this.#reserve(1);
    buffer[this.#used++] = b;
  }

  /** Text known to be ASCII with nothing to escape, byte by byte. */
  #ascii(text: string): void {
    const buffer = this.#reserve(text.length);
    let at = this.#used;
    for (let j = 0; j < text.length; j++) buffer[at++] = text.charCodeAt(j);
    this.#used = at;
  }

  /**
   * A string field, escaped for COPY. One of up to SHORT_FIELD characters is copied byte by byte
   * while it is plain ASCII (no control character, no backslash); at the first other character
   * it is written whole as encoded text instead, as a longer one is.
   */
  #string(value: string): void {
    const length = value.length;
    if (length <= SHORT_FIELD) {
      const buffer = this.#reserve(length);
      let at = this.#used;
      let j = 0;
      for (; j < length; j++) {
        const c = value.charCodeAt(j);
        if (c < 0x20 || c > 0x7e || c === BACKSLASH) break;
        buffer[at++] = c;
      }
      if (j === length) {
        this.#used = at;
        return;
      }
    }
    this.#text(copyEscape(value));
  }

  #text(text: string): void {
    // A UTF-16 code unit takes at most 3 bytes of UTF-8.
    this.#reserve(text.length * 3);
    this.#used += this.#buffer.write(text, this.#used);
  }

  /** bytea hex input `\x…`, its backslash escaped for COPY, the digits from a table. */
  #bytea(bytes: Uint8Array): void {
    const buffer = this.#reserve(3 + bytes.length * 2);
    let at = this.#used;
    buffer[at++] = BACKSLASH;
    buffer[at++] = BACKSLASH;
    buffer[at++] = 0x78; // x
    for (let i = 0; i < bytes.length; i++) {
      const b = bytes[i] as number;
      buffer[at++] = HEX_HIGH[b] as number;
      buffer[at++] = HEX_LOW[b] as number;
    }
    this.#used = at;
  }

  /** JSON text's UTF-8 bytes, copied between its backslashes (found by indexOf), each one doubled. */
  #jsonUtf8(bytes: Uint8Array): void {
    const buffer = this.#reserve(bytes.length * 2);
    const source = Buffer.isBuffer(bytes)
      ? bytes
      : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    let at = this.#used;
    let from = 0;
    for (let b = source.indexOf(BACKSLASH); b !== -1; b = source.indexOf(BACKSLASH, b + 1)) {
      at += source.copy(buffer, at, from, b + 1);
      buffer[at++] = BACKSLASH;
      from = b + 1;
    }
    this.#used = at + source.copy(buffer, at, from);
  }

  /**
   * The chunk, with room for `bytes` more. When it has none, the row begun so far moves to a new
   * chunk (16 KiB growing to maxChunkBytes, or as large as the row needs) and the full one is closed.
   */
  #reserve(bytes: number): Buffer {
    if (this.#buffer.length - this.#used >= bytes) return this.#buffer;
    const old = this.#buffer;
    const begun = this.#used - this.#rowStart;
    if (this.#rowStart > 0) this.#chunks.push(old.subarray(0, this.#rowStart));
    const size = Math.min(this.maxChunkBytes, Math.max(FIRST_CHUNK_BYTES, old.length * 2));
    const buffer = Buffer.allocUnsafe(Math.max(size, begun + bytes));
    old.copy(buffer, 0, this.#rowStart, this.#used);
    this.#buffer = buffer;
    this.#used = begun;
    this.#rowStart = 0;
    return buffer;
  }

  /** Closes the chunk being written: the next row starts a new one. */
  #seal(): void {
    if (this.#used > 0) this.#chunks.push(this.#buffer.subarray(0, this.#used));
    this.#buffer = Buffer.alloc(0);
    this.#used = 0;
    this.#rowStart = 0;
  }

  /** Hands over the chunks completed so far (with `all`, the one being written too). */
  take(all = false): Uint8Array[] {
    if (all) this.#seal();
    const chunks = this.#chunks;
    this.#chunks = [];
    return chunks;
  }

  /** The payload of every row (none of them handed over by `take`). */
  finish(): CopyPayload {
    return new CopyPayload(this.take(true), this.#rows);
  }
}

/** Encodes rows (values in column order) into a payload, for sending later. */
export function encodeCopyRows(rows: Iterable<readonly CopyValue[]>, width?: number): CopyPayload {
  const b = new CopyBuilder(width, MAX_ENCODED_CHUNK_BYTES);
  for (const r of rows) b.row(r);
  return b.finish();
}

function quoteIdent(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

/** `COPY "schema"."table" ("a", "b") FROM STDIN`; `table` may be schema-qualified with a dot. */
export function copyStatement(table: string, columns: readonly string[]): string {
  if (columns.length === 0) throw new Error('COPY needs at least one column');
  const target = table.split('.').map(quoteIdent).join('.');
  return `copy ${target} (${columns.map(quoteIdent).join(', ')}) from stdin`;
}

/** Encodes rows one by one into `builder`, yielding chunks as they fill (copyRows streams these). */
export function* streamRows(
  builder: CopyBuilder,
  first: readonly CopyValue[],
  rest: Iterator<readonly CopyValue[]>,
): Generator<Uint8Array> {
  builder.row(first);
  for (let r = rest.next(); r.done !== true; r = rest.next()) {
    builder.row(r.value);
    // Most rows complete no chunk: hand over only when one did (no array per row).
    if (builder.completed > 0) yield* builder.take();
  }
  yield* builder.take(true);
}

/** A table as COPY loads it: its columns, and how one source value becomes one row of them. */
export interface CopyShape<S> {
  readonly columns: readonly string[];
  /** The row of one source value, its values in `columns` order. */
  row(source: S): CopyValue[];
}

/**
 * The one description of a COPY target that both its column list and its rows are built from, so
 * the two cannot drift apart: each column (a column of `Table`, the table's interface in
 * store/schema.ts, so a misspelt or removed column fails the type check) with its value.
 */
export function copyShape<Table, S>(
  described: readonly (readonly [column: keyof Table & string, value: (source: S) => CopyValue])[],
): CopyShape<S> {
  const columns = described.map(([column]) => column);
  const values = described.map(([, value]) => value);
  return {
    columns,
    row(source) {
      const row = new Array<CopyValue>(values.length);
      for (let i = 0; i < values.length; i++) row[i] = (values[i] as (s: S) => CopyValue)(source);
      return row;
    },
  };
}
