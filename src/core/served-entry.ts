/**
 * One entry of a history page as served (docs/design/integrity.md, "The served digest"): its bytes,
 * their sha256 — the served digest — and its parsed value, made only when something asks for it.
 * Pure (hashing is computation).
 *
 * A page the scan vouches for (page-scan.ts) yields entries that are slices of its body: their
 * key, depth and digest come from the scan, and an entry whose digest is the one stored with its
 * id is known unchanged without being parsed, copied canonically or hashed again. The page is
 * parsed when the first of its entries is asked for its value. Any other page
 * (one the scan leaves to the parser, or a test's fake source) yields entries made from parsed
 * values, which have no digest and are compared by content hash, as before.
 */
import { hash } from 'node:crypto';
import { parseJsonText } from './json-text.js';
import { nestsDeeperThan } from './normalise/depth.js';
import { type EntryKey, entryKeyOf } from './normalise/entry.js';
import { type ScannedElement, scanHistoryPage } from './page-scan.js';
import type { HistoryPage } from './wire.js';

/** Marks a value not computed yet (undefined is a value: an entry without a key). */
const NOT_YET: unique symbol = Symbol('not yet');

/** A scanned page's body, shared by its entries until one of them needs its value. */
interface PageBody {
  body: Buffer | undefined;
  readonly entries: ServedEntry[];
}

export class ServedEntry {
  #raw: unknown;
  #key: EntryKey | undefined | typeof NOT_YET = NOT_YET;
  /** The page it was served on, until its value is parsed. */
  #page: PageBody | undefined;

  private constructor(
    raw: unknown,
    /** sha256 of the entry's bytes as served, in hex; undefined when it was not served as bytes. */
    readonly digest: string | undefined,
    page: PageBody | undefined,
    private readonly element: ScannedElement | undefined,
  ) {
    this.#raw = raw;
    this.#page = page;
  }

  /** An entry known only as a parsed value. */
  static ofValue(raw: unknown): ServedEntry {
    return new ServedEntry(raw, undefined, undefined, undefined);
  }

  /** The entries of a scanned page `body`, its `elements`. */
  static ofPage(body: Buffer, elements: readonly ScannedElement[]): ServedEntry[] {
    const page: PageBody = { body, entries: [] };
    for (const element of elements) {
      // One call, its result a string: a Hash object and a Buffer per entry cost three times as much.
      const digest = hash('sha256', body.subarray(element.start, element.end), 'hex');
      page.entries.push(new ServedEntry(NOT_YET, digest, page, element));
    }
    return page.entries;
  }

  /**
   * The entry as parsed. The first entry of a page asked for its value has every entry of the page
   * parsed (parsePage): what asks for one value (a new entry to store) usually asks for its
   * neighbours' too. An entry nobody asks (one stored already, served with the same bytes) is
   * never parsed.
   */
  get raw(): unknown {
    if (this.#raw === NOT_YET) ServedEntry.parsePage(this.#page as PageBody);
    return this.#raw;
  }

  /**
   * Gives every entry of `page` its value, each parsed from its own bytes. Not the page's body in
   * one piece: nearly every page holds some non-ASCII text, which makes the whole body a two-byte
   * string, decoded at about 150 MB/s and parsed slower; most entries alone are ASCII, one-byte
   * strings decoded at memory speed (bench/RESULTS.md (q): 0.95 -> 0.28 ms a page).
   */
  private static parsePage(page: PageBody): void {
    const body = page.body as Buffer;
    for (const e of page.entries) {
      const { start, end } = e.element as ScannedElement;
      e.#raw = parseJsonText(body.toString('utf8', start, end));
      e.#page = undefined;
    }
    page.body = undefined;
  }

  /**
   * Whether it nests arrays and objects more than `limit` levels deep (depth.ts). The depth written
   * bounds the parsed one (a key given twice can drop a deeper value), so only an entry written
   * deeper than the limit is parsed to be sure.
   */
  nestsDeeperThan(limit: number): boolean {
    if (this.element !== undefined && this.element.depth <= limit) return false;
    return nestsDeeperThan(this.raw, limit);
  }

  /** Its key (entryKeyOf): from the scanned metadata when the scan found it simple, else parsed. */
  get key(): EntryKey | undefined {
    if (this.#key === NOT_YET) {
      const meta = this.element?.meta;
      this.#key = entryKeyOf(meta !== undefined ? { metadata: meta } : this.raw);
    }
    return this.#key;
  }

  /** Its `metadata` as the stop rule reads it (id and createdAt): scanned when simple, else parsed. */
  get metadata(): unknown {
    const meta = this.element?.meta;
    if (meta !== undefined) return meta;
    const raw = this.raw;
    return raw !== null && typeof raw === 'object' ? (raw as { metadata?: unknown }).metadata : undefined;
  }
}

/** The entries of `page`, as served when it was scanned, else made from its parsed values. */
export function servedOf(page: HistoryPage): readonly ServedEntry[] {
  return page.served ?? page.entries.map((raw) => ServedEntry.ofValue(raw));
}

/** A scanned page: its entries parse only when `entries` is read. */
class ScannedPage implements HistoryPage {
  #entries: readonly unknown[] | undefined;

  constructor(
    readonly served: readonly ServedEntry[],
    readonly nextPageToken: string,
    readonly index: number,
  ) {}

  get entries(): readonly unknown[] {
    this.#entries ??= this.served.map((e) => e.raw);
    return this.#entries;
  }
}

/**
 * The page `body` as served entries, when the scan vouches for it (valid JSON of the usual shape);
 * undefined otherwise, and the caller parses the body as before, which reports what is wrong.
 */
export function scannedHistoryPage(body: Buffer, index: number): HistoryPage | undefined {
  const scanned = scanHistoryPage(body);
  if (scanned === undefined) return undefined;
  return new ScannedPage(ServedEntry.ofPage(body, scanned.elements), scanned.nextPageToken, index);
}
