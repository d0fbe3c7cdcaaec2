/**
 * Changes a source makes to entries it has already served, as a faulty or compliant service
 * does: rewriting an entry in place, serving a second version of it, removing it, or letting
 * retention expire the oldest. None of them changes the current settings or the newest instant.
 */
import type { HistoryStorage } from './history-storage.js';
import { isRecord } from './history-storage.js';
import { annotation } from './metadata.js';
import { mergeSettings } from './settings.js';
import { omitDefaults, type SandboxEntry } from './wire.js';

/** How an entry is rewritten or duplicated (`HistoryStore.rewrite`, `.duplicate`); with neither part, a default change. */
export interface RewriteSpec {
  /** Wire-named snapshot fields merged over the entry's snapshot, as `EntrySpec.set`. */
  set?: Record<string, unknown>;
  /** Fields merged over the entry's metadata (shallowly; `annotations` is replaced whole). */
  metadata?: Record<string, unknown>;
}

/** What {@link SourceChanges.expire} did. */
export interface ExpireResult {
  /** Entries no longer served (fewer than asked when the history had fewer). */
  readonly expired: number;
  /** Entries served now. */
  readonly size: number;
  /** createdAt of the oldest entry still served; null when none is (or it has none: a raw value). */
  readonly oldest: string | null;
}

type ChangeKind = 'rewrite' | 'duplicate';

/** The source's changes to served entries, with the counters that make each version differ. */
export class SourceChanges {
  private readonly storage: HistoryStorage;
  /** How many times each rewritten entry has been rewritten, by index. */
  private readonly rewrites = new Map<number, number>();
  /** Versions added with duplicate, per id: each serves a content different from the earlier ones. */
  private readonly duplicates = new Map<string, number>();

  constructor(storage: HistoryStorage) {
    this.storage = storage;
  }

  /** `HistoryStore.rewrite` in history.ts says what it does. */
  rewrite(id: string, change: RewriteSpec): SandboxEntry {
    const { storage } = this;
    const position = storage.requirePosition(id, 'rewrite');
    const index = storage.listing.indexAt(position)!;
    const count = (this.rewrites.get(index) ?? 0) + 1;
    storage.replace(index, this.changedJson(index, change, 'rewrite', count));
    this.rewrites.set(index, count);
    storage.changed();
    return JSON.parse(storage.jsonAt(position)) as SandboxEntry;
  }

  /** `HistoryStore.duplicate` in history.ts says what it does. */
  duplicate(id: string, change: RewriteSpec): SandboxEntry {
    const { storage } = this;
    const position = storage.requirePosition(id, 'duplicate');
    const index = storage.listing.indexAt(position)!;
    const copies = (this.duplicates.get(id) ?? 0) + 1;
    const json = this.changedJson(index, change, 'duplicate', copies);
    this.duplicates.set(id, copies);
    // The original's sort key: ties keep insertion order, so the copy sorts right after it.
    storage.add(storage.listing.keyOf(index), json, storage.isRaw(index));
    storage.changed();
    return JSON.parse(json) as SandboxEntry;
  }

  /** `HistoryStore.remove` in history.ts says what it does. */
  remove(id: string): SandboxEntry {
    const { storage } = this;
    const position = storage.requirePosition(id, 'remove');
    const entry = JSON.parse(storage.jsonAt(position)) as SandboxEntry;
    this.forget(storage.listing.removeAt(position));
    storage.changed();
    return entry;
  }

  /** `HistoryStore.expire` in history.ts says what it does. */
  expire(count: number): ExpireResult {
    const { storage } = this;
    if (!Number.isSafeInteger(count) || count < 0)
      throw new RangeError('count must be a non-negative integer');
    const n = Math.min(count, storage.listing.size);
    if (n > 0) {
      for (const index of storage.listing.removeOldest(n)) this.forget(index);
      storage.changed();
    }
    return {
      expired: n,
      size: storage.listing.size,
      oldest: storage.listing.size === 0 ? null : storage.createdAtAt(0),
    };
  }

  private forget(index: number): void {
    this.storage.forget(index);
    this.rewrites.delete(index);
  }

  /** The entry at `index` with `change` applied, as JSON text (see `HistoryStore.rewrite`). */
  private changedJson(index: number, change: RewriteSpec, what: ChangeKind, count: number): string {
    const id = this.storage.servedId(index);
    const { set, metadata: extra } = change;
    if (set !== undefined && !isRecord(set)) throw new RangeError(`${what}: set must be an object`);
    if (extra !== undefined && !isRecord(extra)) throw new RangeError(`${what}: metadata must be an object`);
    const stored: unknown = JSON.parse(this.storage.storedJson(index));
    if (!isRecord(stored) || !isRecord(stored['metadata'])) {
      throw new RangeError(`${what}: entry ${JSON.stringify(id)} has no metadata object`);
    }
    const metadata: Record<string, unknown> = { ...stored['metadata'] };
    let snapshot = stored['snapshot'];
    const raw = this.storage.isRaw(index);
    const mergeSnapshot = (fields: Record<string, unknown>): void => {
      if (!isRecord(snapshot)) {
        throw new RangeError(`${what}: entry ${JSON.stringify(id)} has no snapshot to set fields on`);
      }
      // Raw entries are served exactly as given: no defaults are dropped from them.
      const merged = mergeSettings(snapshot, fields);
      snapshot = raw ? merged : omitDefaults(merged);
    };
    if (set === undefined && extra === undefined) {
      if (isRecord(snapshot))
        mergeSnapshot({ requireToolApproval: snapshot['requireToolApproval'] !== true });
      metadata['annotations'] = withChangeNote(metadata['annotations'], what, count);
    } else {
      if (set !== undefined) mergeSnapshot(set);
      if (extra !== undefined) mergeMetadata(metadata, extra, what);
    }
    const next: Record<string, unknown> = { ...stored, metadata };
    if (Object.hasOwn(stored, 'snapshot')) next['snapshot'] = snapshot;
    return JSON.stringify(next);
  }
}

/**
 * The annotations with the note of the default change (key `sandbox_rewrite` or
 * `sandbox_duplicate`, naming the version) in place of an earlier such note, or added at the end.
 */
function withChangeNote(annotations: unknown, what: ChangeKind, count: number): unknown[] {
  const note =
    what === 'rewrite'
      ? annotation(
          'sandbox_rewrite',
          'ANNOTATION_KIND_REASON',
          `rewrite-${count}`,
          `Rewritten at the source (rewrite ${count})`,
          'Rewrite',
          '',
        )
      : annotation(
          'sandbox_duplicate',
          'ANNOTATION_KIND_REASON',
          `duplicate-${count}`,
          `Served twice by the source (version ${count + 1})`,
          'Duplicate',
          '',
        );
  const before = Array.isArray(annotations) ? (annotations as unknown[]) : [];
  const at = before.findIndex((a) => isRecord(a) && a['key'] === `sandbox_${what}`);
  return at < 0 ? [...before, note] : [...before.slice(0, at), note, ...before.slice(at + 1)];
}

/** Merges `extra` over `metadata`; an entry keeps its id and createdAt. */
function mergeMetadata(
  metadata: Record<string, unknown>,
  extra: Record<string, unknown>,
  what: ChangeKind,
): void {
  for (const field of ['id', 'createdAt']) {
    if (Object.hasOwn(extra, field) && extra[field] !== metadata[field]) {
      throw new RangeError(
        `${what}: an entry keeps its ${field}; remove it and backdate a new one to move it`,
      );
    }
  }
  Object.assign(metadata, extra);
}
