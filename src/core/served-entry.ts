/**
 * One entry of a history page as served (docs/design/integrity.md, "The served digest"): its bytes,
 * their sha256 — the served digest — and its parsed value, made only when something asks for it.
 * Pure (hashing is computation).
 *
 * A page the scan vouches for (page-scan.ts) yields entries that are slices of its body: their
 * key, depth and digest come from the scan, and an entry whose digest is the one stored with its
 * id is known unchanged without being parsed, copied canonically or hashed again. Any other page
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

export class ServedEntry {
  #raw: unknown;
  #key: EntryKey | undefined | typeof NOT_YET = NOT_YET;
  /** The page body it is a slice of, until it is parsed. */
  #body: Buffer | undefined;

  private constructor(
    raw: unknown,
    /** sha256 of the entry's bytes as served, in hex; undefined when it was not served as bytes. */
    readonly digest: string | undefined,
    body: Buffer | undefined,
    private readonly element: ScannedElement | undefined,
  ) {
    this.#raw = raw;
    this.#body = body;
  }

  /** An entry known only as a parsed value. */
  static ofValue(raw: unknown): ServedEntry {
    return new ServedEntry(raw, undefined, undefined, undefined);
  }

  /** The entry `element` of a scanned page `body`. */
  static ofBytes(body: Buffer, element: ScannedElement): ServedEntry {
    // One call, its result a string: a Hash object and a Buffer per entry cost three times as much.
    const digest = hash('sha256', body.subarray(element.start, element.end), 'hex');
    return new ServedEntry(NOT_YET, digest, body, element);
  }

  /** The entry as parsed (from its own bytes the first time it is asked for). */
  get raw(): unknown {
    if (this.#raw === NOT_YET) {
      const { start, end } = this.element as ScannedElement;
      this.#raw = parseJsonText((this.#body as Buffer).toString('utf8', start, end));
      this.#body = undefined;
    }
    return this.#raw;
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
  const served = scanned.elements.map((element) => ServedEntry.ofBytes(body, element));
  return new ScannedPage(served, scanned.nextPageToken, index);
}
