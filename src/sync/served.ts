/**
 * What one batch of a listing serves, sorted by id (docs/design/integrity.md, `conflicting_ids`;
 * docs/design/sync.md S12). The first copy of each id is the one a run stores or compares with the store. A
 * further copy with the same content is a harmless duplicate (paging overlap) and is dropped; a further copy
 * with other content is the source serving one id twice, kept apart so that it is recorded, never dropped.
 * Pure: content hashes are computed only for ids served more than once.
 */
import { contentHash } from '../core/normalise/canonical.js';
import type { EntryKey } from '../core/normalise/entry.js';
import type { StoredVersion } from '../store/read/stored-entries.js';

/** A served entry that could be keyed. */
export interface KeyedServed {
  readonly raw: unknown;
  readonly key: EntryKey;
  /** sha256 of its bytes as served, in hex, when it was served as bytes (served-entry.ts). */
  readonly digest?: string | undefined;
}

/**
 * Whether a served entry has the content of a stored version (docs/design/integrity.md, "The served
 * digest"): the same served digest — the same bytes, so the same content, and nothing is parsed —
 * or else the same content hash. With `useDigest` false (`reconcile --deep`), by content hash only.
 */
export function sameAsStored(
  e: Pick<KeyedServed, 'raw' | 'digest'>,
  stored: StoredVersion,
  useDigest = true,
): boolean {
  if (useDigest && e.digest !== undefined && stored.servedDigest === e.digest) return true;
  return contentHash(e.raw).equals(stored.contentHash);
}

/**
 * The served digest of the first copy of each of `ids`, for the lookup to compare in the database
 * (findHeldVersions); none for an id served more than once in the batch (its stored content hash is
 * needed to sort its copies) nor when digests are not to be used (`reconcile --deep`).
 */
export function digestsOf<T extends KeyedServed>(
  groups: Pick<ServedGroups<T>, 'first' | 'firstHashes'>,
  ids: readonly string[],
  useDigest = true,
): (string | undefined)[] {
  return ids.map((id) =>
    !useDigest || groups.firstHashes.has(id) ? undefined : groups.first.get(id)?.digest,
  );
}

/** Another content served under an id already served in the batch. */
export interface OtherVersion<T extends KeyedServed> {
  readonly served: T;
  /** Its content hash (differs from the first copy's and from every other version's). */
  readonly hash: Buffer;
}

export interface ServedGroups<T extends KeyedServed> {
  /** The first copy of each id, in the order served. */
  readonly first: Map<string, T>;
  /** Content hash of the first copy, for the ids served more than once. */
  readonly firstHashes: Map<string, Buffer>;
  /** Every further distinct content of an id, in the order served. */
  readonly others: Map<string, OtherVersion<T>[]>;
}

/** Sorts one batch into first copies, harmless duplicates (dropped) and other versions (kept). */
export function groupServed<T extends KeyedServed>(entries: readonly T[]): ServedGroups<T> {
  const first = new Map<string, T>();
  const firstHashes = new Map<string, Buffer>();
  const seenHashes = new Map<string, Set<string>>();
  const others = new Map<string, OtherVersion<T>[]>();
  for (const e of entries) {
    const id = e.key.entryId;
    const original = first.get(id);
    if (original === undefined) {
      first.set(id, e);
      continue;
    }
    let seen = seenHashes.get(id);
    if (seen === undefined) {
      const hash = contentHash(original.raw);
      firstHashes.set(id, hash);
      seen = new Set([hash.toString('hex')]);
      seenHashes.set(id, seen);
    }
    const hash = contentHash(e.raw);
    const hex = hash.toString('hex');
    if (seen.has(hex)) continue;
    seen.add(hex);
    const versions = others.get(id);
    if (versions === undefined) others.set(id, [{ served: e, hash }]);
    else versions.push({ served: e, hash });
  }
  return { first, firstHashes, others };
}
