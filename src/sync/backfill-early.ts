/**
 * The early part of a backfill's batch (docs/design/sync.md, step 5.2): entries encoded as their
 * pages come, of which the batch keeps only the encoded rows, each entry's content hash and what
 * the write reports. Used by the EntryWriter (entry-writer.ts).
 */
import { contentHash } from '../core/normalise/canonical.js';
import { normaliseEntry } from '../core/normalise/entry.js';
import type { NormalisedEntry } from '../core/normalise/types.js';
import { EntryEncoder } from '../store/write/entries.js';
import type { ClassifiedBatch, Served } from './classify-served.js';

/** A batch's entries encoded early: only their bytes, content hashes and warnings are kept. */
export interface EarlyPart {
  readonly encoder: EntryEncoder;
  /** Content hash of each entry encoded, by id, in the order encoded. */
  readonly hashes: Map<string, Buffer>;
  /** The entries encoded that carry warnings (logged and counted once written). */
  readonly warned: { readonly entryId: string; readonly warnings: readonly string[] }[];
  /** Oldest (created_at key, entry_id) among them. */
  oldest: { key: string; entryId: string } | undefined;
}

/** An empty early part whose rows chain on `previousHash`. */
export function startEarlyPart(tenantId: string, runId: number, previousHash: Buffer | null): EarlyPart {
  return {
    encoder: new EntryEncoder(tenantId, runId, previousHash),
    hashes: new Map(),
    warned: [],
    oldest: undefined,
  };
}

/** Encodes a new entry into the early part; returns the row hash to chain the next one on. */
export function encodeEarly(early: EarlyPart, e: NormalisedEntry): Buffer | null {
  const id = e.entry.entryId;
  early.hashes.set(id, early.encoder.add(e));
  if (e.warnings.length > 0) early.warned.push({ entryId: id, warnings: e.warnings });
  const k = { key: e.entry.createdAtKey, entryId: id };
  const o = early.oldest;
  if (o === undefined || k.key < o.key || (k.key === o.key && k.entryId < o.entryId)) early.oldest = k;
  return early.encoder.lastHash;
}

/**
 * Further copies of ids encoded early, as classifyServed sorts those of a new entry: a copy with
 * the content of one seen before is dropped, another content is a conflicting version (or a
 * reject when it does not normalise). In the order of the early entries, then of the copies.
 */
export function conflictsOfEarly(
  tenantId: string,
  early: EarlyPart,
  copies: ReadonlyMap<string, readonly Served[]>,
  out: ClassifiedBatch,
): void {
  if (copies.size === 0) return;
  for (const [id, storedHash] of early.hashes) {
    const served = copies.get(id);
    if (served === undefined) continue;
    const seen = new Set([storedHash.toString('hex')]);
    for (const copy of served) {
      const servedHash = contentHash(copy.raw);
      const hex = servedHash.toString('hex');
      if (seen.has(hex)) continue;
      seen.add(hex);
      const n = normaliseEntry(tenantId, copy.raw);
      if (n.ok) out.conflicting.push({ served: n.value, storedHash, servedHash });
      else out.rejected.push(copy.raw);
    }
  }
}
