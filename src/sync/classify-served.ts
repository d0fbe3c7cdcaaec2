/**
 * A batch's served entries sorted out against what govtrail holds (sync.md S12, integrity.md):
 * new, rewritten at the source, or another version of an id served twice. The entry writer calls
 * it a slice at a time.
 */
import { contentHash } from '../core/normalise/canonical.js';
import { type EntryKey, normaliseEntry } from '../core/normalise/entry.js';
import type { NormalisedEntry } from '../core/normalise/types.js';
import type { ServedEntry } from '../core/served-entry.js';
import { type HeldVersion, isSameBytes } from '../store/read/stored-entries.js';
import type { RunCounters } from '../store/write/runs.js';
import type { ServedVersion } from './run-types.js';
import { type KeyedServed, type ServedGroups, sameAsStored } from './served.js';

/** A served entry that can be keyed, waiting in a batch. */
export type Served = KeyedServed;

/** A served entry with its key, as a batch holds it: parsed only when `raw` is read. */
export class KeyedEntry implements Served {
  constructor(
    private readonly served: ServedEntry,
    readonly key: EntryKey,
  ) {}
  get raw(): unknown {
    return this.served.raw;
  }
  get digest(): string | undefined {
    return this.served.digest;
  }
}

/** A batch's served entries sorted out against what govtrail holds. */
export interface ClassifiedBatch {
  /** Not held: to insert, normalised. */
  readonly fresh: NormalisedEntry[];
  /** Held with another content, stored by an earlier run and not served beside it: the source rewrote them. */
  readonly rewritten: ServedVersion[];
  /** Another version of an id held or stored now: served twice with different contents. */
  readonly conflicting: ServedVersion[];
  /** Raw entries that do not normalise. */
  readonly rejected: unknown[];
}

/**
 * Sorts served entries (first copies of their ids, from `groups`) by what is held of each id (see
 * EntryWriter) into `out`; counts the matched ones.
 */
export function classifyServed(
  tenantId: string,
  runId: number,
  unique: readonly Served[],
  { firstHashes, others }: ServedGroups<Served>,
  heldVersion: (id: string) => HeldVersion | undefined,
  counters: RunCounters,
  out: ClassifiedBatch,
  useDigest = true,
): void {
  /** Another version of an id govtrail holds (or stores now) with `storedHash`. */
  const conflict = (raw: unknown, storedHash: Buffer, servedHash: Buffer): void => {
    const n = normaliseEntry(tenantId, raw);
    if (n.ok) out.conflicting.push({ served: n.value, storedHash, servedHash });
    else out.rejected.push(raw);
  };
  for (const e of unique) {
    const id = e.key.entryId;
    const held = heldVersion(id);
    const more = others.get(id) ?? [];
    if (held === undefined) {
      const n = normaliseEntry(tenantId, e.raw, e.digest);
      if (n.ok) out.fresh.push(n.value);
      else out.rejected.push(e.raw);
      for (const o of more) conflict(o.served.raw, firstHashes.get(id) as Buffer, o.hash);
      continue;
    }
    // Served with the bytes stored (the lookup compared the digests; never for an id served twice
    // in the batch): unchanged, and nothing more to sort.
    if (isSameBytes(held)) {
      counters.entriesMatched++;
      continue;
    }
    // The same bytes as stored (its served digest) or the same content hash: unchanged, and the
    // served hash is computed only when it is not.
    const first = firstHashes.get(id);
    const same = first !== undefined ? first.equals(held.contentHash) : sameAsStored(e, held, useDigest);
    const heldServed = same || more.some((o) => o.hash.equals(held.contentHash));
    if (heldServed) counters.entriesMatched++;
    if (!same) {
      const servedHash = first ?? contentHash(e.raw);
      // Stored by this very run from an earlier batch, or served beside the held version: the
      // listing serves the id twice. Otherwise the source rewrote it.
      if (held.runId === runId || heldServed) conflict(e.raw, held.contentHash, servedHash);
      else {
        const n = normaliseEntry(tenantId, e.raw);
        if (n.ok) out.rewritten.push({ served: n.value, storedHash: held.contentHash, servedHash });
      }
    }
    for (const o of more)
      if (!o.hash.equals(held.contentHash)) conflict(o.served.raw, held.contentHash, o.hash);
  }
}
