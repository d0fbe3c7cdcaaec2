/**
 * The batched write of what the source serves (sync.md S2, S12; integrity.md): the EntryWriter
 * pipeline, which overlaps fetching, classifying and encoding with the database's writes.
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import { IdFilter } from '../core/id-filter.js';
import { contentHash } from '../core/normalise/canonical.js';
import { MAX_ENTRY_DEPTH, pruneDeeperThan, tooDeepReason } from '../core/normalise/depth.js';
import { normaliseEntry } from '../core/normalise/entry.js';
import type { NormalisedEntry } from '../core/normalise/types.js';
import type { ServedEntry } from '../core/served-entry.js';
import type { Logger } from '../runtime/logger.js';
import type { Session } from '../store/database.js';
import { findHeldVersions, type HeldVersion } from '../store/read/stored-entries.js';
import {
  type EncodedEntries,
  encodeEntries,
  insertRejected,
  joinEncodedEntries,
  type RejectedInput,
  writeEncodedEntries,
} from '../store/write/entries.js';
import type { RunCounters } from '../store/write/runs.js';
import { conflictsOfEarly, type EarlyPart, encodeEarly, startEarlyPart } from './backfill-early.js';
import { type ClassifiedBatch, classifyServed, KeyedEntry, type Served } from './classify-served.js';
import type { FindingRecorder } from './finding-recorder.js';
import type { InsertTracker, ServedVersion, TrackedWrite, WrittenBatch } from './run-types.js';
import { digestsOf, groupServed, type ServedGroups } from './served.js';

/** A batch taken from the pager: its served entries grouped by id, its rejects, its lookup queued. */
interface SealedBatch {
  /** The entries encoded early (all of a clean backfill's batch); the rest follow them. */
  readonly early: EarlyPart | undefined;
  /** Further copies of ids encoded early, by id, in the order served. */
  readonly copiesOfEarly: Map<string, Served[]>;
  readonly groups: ServedGroups<Served>;
  readonly rejects: RejectedInput[];
  /** What the database holds of the batch's ids, as of every batch but the previous one written. */
  readonly stored: Promise<Map<string, HeldVersion>>;
  /** Whether entries are left to classify and encode (else the tracker's write was taken at sealing). */
  readonly late: boolean;
  /** The tracker's write, when taken as the batch was sealed. */
  readonly tracked: TrackedWrite | undefined;
}

/** A batch classified and encoded, ready to be written. */
interface PreparedBatch {
  readonly sealed: SealedBatch;
  /** The entries to insert that were encoded late (after the batch was sealed), by id. */
  readonly fresh: Map<string, NormalisedEntry>;
  readonly encoded: EncodedEntries;
  readonly rewritten: ServedVersion[];
  readonly conflicting: ServedVersion[];
  /** What the tracker writes with the batch's entries. */
  readonly tracked: TrackedWrite | undefined;
}

/**
 * Writes what the source serves, in batches: normalises each entry (keeping rejects), drops an id
 * served twice with the same content, inserts what is not stored (one COPY per table, the hash
 * chain continued), and compares each re-served stored entry with the store by content hash — a
 * difference is recorded as `changed_at_source` (sync.md S12), the stored original untouched. What
 * any run finds besides (integrity.md): a stored entry dated behind `checkpoint − lookback` is
 * recorded as `backdated`, and an id served with another content in the same listing as
 * `conflicting_ids` (the first copy stored, the other in the discrepancy row).
 *
 * A pipeline, so that govtrail and the database work at the same time instead of taking turns:
 * while batch N is written (the database's work), batch N+1 is classified, hashed and encoded
 * (govtrail's) and batch N+2 is fetched. The connection does one thing at a time, in the order of
 * the `lane`: lookup(N+1) goes before write(N), so batch N+1's stored versions are known before
 * write(N) starts; what that lookup cannot see yet — batch N's own entries — comes from batch N
 * in memory. At most three batches are held: one filling, one prepared, one being written. A run
 * on a tenant with no entries yet (a backfill) keeps the ids it stores in a fixed-size filter and
 * asks the database only about those the filter cannot rule out: usually none, so no lookup.
 *
 * On such a tenant a sync also encodes each batch early, a page at a time as the pager hands it
 * over, for as long as every entry of the batch is one the filter rules out and that normalises
 * (usually all): each entry's objects then die within the page, and the batch holds only bytes
 * (docs/design/sync.md S10: with Node's small young generation, objects kept across pages are what
 * the collector copies). The first entry that is not so, and every later one of its batch, waits
 * raw and is classified after the batch is sealed, as above; the rows come out the same, in the
 * same order.
 */
export class EntryWriter {
  /** Oldest (created_at key, entry_id) among the inserted entries. */
  oldestNew: { key: string; entryId: string } | undefined;
  /** Ids found served with more than one content (once per batch they appear in). */
  conflicting = 0;
  private batch: Served[] = [];
  private rejected: RejectedInput[] = [];
  /** The filling batch's entries encoded early; undefined while it has none. */
  private early: EarlyPart | undefined;
  /** Sealed batches whose late entries are not encoded yet: the hash chain is not at its end. */
  private lateBatches = 0;
  /** Batches sealed so far. */
  private sealedBatches = 0;
  /** The connection's work in order, chained: a failure ends it (every later step rejects). */
  private lane: Promise<void> = Promise.resolve();
  /** The batch sealed last, being prepared: its write is queued once the next batch's lookup is. */
  private pending: Promise<PreparedBatch> | undefined;
  private lastWrite: Promise<void> | undefined; // the write queued last
  private lastHash: Buffer | null; // row_hash the next prepared batch chains from
  /**
   * For a tenant that had no entries when the run began: the ids this run prepared for storing, so
   * that a batch asks the database only about those it might hold. Undefined: every id is asked.
   */
  private readonly storedByRun: IdFilter | undefined;

  constructor(
    private readonly o: {
      readonly tenantId: string;
      readonly runId: number;
      readonly counters: RunCounters;
      readonly logger: Logger;
      readonly findings: FindingRecorder;
      readonly lastHash: Buffer | null;
      /** createdAt key behind which a newly stored entry is `backdated`; undefined: none is. */
      readonly backdatedBefore: string | undefined;
      readonly batchSize: number;
      /** Compare a re-served entry's served digest first (RunOptions.deep: false). Default true. */
      readonly useDigest?: boolean;
      readonly tracker?: InsertTracker;
    },
  ) {
    this.lastHash = o.lastHash;
    // No row hash: the tenant has no rows, so what is stored is what this run stores.
    this.storedByRun = o.lastHash === null ? new IdFilter() : undefined;
  }

  /**
   * Called with each written batch, inside the transaction, before the next is written: what a
   * kind of run adds to the write (reconcile classifies new entries and records the served ids).
   */
  onBatch: ((trx: Session, batch: WrittenBatch) => Promise<void>) | undefined;

  /** Takes one page's served entries; seals a batch once enough are waiting. */
  async add(trx: Session, served: readonly ServedEntry[]): Promise<void> {
    const early: NormalisedEntry[] = [];
    for (const e of served) {
      // Hashing and storing recurse: an entry nested too deep for them is rejected, not a failed run.
      if (e.nestsDeeperThan(MAX_ENTRY_DEPTH)) {
        this.rejectTooDeep(e.raw);
        continue;
      }
      // Only the key now (from the scan, unparsed, when the page was scanned): most served entries
      // of a reconcile (and of a sync's lookback window) are stored already, and need no more than
      // their served digest or content hash.
      const key = e.key;
      if (key === undefined) this.reject(e.raw);
      else if (!this.addEarly(e, key.entryId, early)) this.batch.push(new KeyedEntry(e, key));
    }
    // The walk takes the page's entries at once (it sorts what it holds on each call).
    if (early.length > 0) this.o.tracker?.inserted(early);
    const waiting = this.batch.length + this.rejected.length + (this.early?.encoder.count ?? 0);
    if (waiting >= this.nextBatchSize()) await this.seal(trx);
  }

  /**
   * Encodes `e` now, into the filling batch's early part, when it is certain to be inserted as it
   * is: a sync (no onBatch) of a tenant that had no entries and no checkpoint, nothing of the batch
   * waiting raw nor a sealed batch still encoding, an id the run's filter rules out (so neither
   * stored nor served before in the run), and an entry that normalises. Returns whether it did.
   */
  private addEarly(e: ServedEntry, id: string, page: NormalisedEntry[]): boolean {
    const filter = this.storedByRun;
    if (filter === undefined || this.onBatch !== undefined || this.o.backdatedBefore !== undefined)
      return false;
    if (this.batch.length > 0 || this.lateBatches > 0 || filter.mightHold(id)) return false;
    const n = normaliseEntry(this.o.tenantId, e.raw, e.digest);
    if (!n.ok || n.value.entry.entryId !== id) return false;
    this.early ??= startEarlyPart(this.o.tenantId, this.o.runId, this.lastHash);
    this.lastHash = encodeEarly(this.early, n.value);
    filter.add(id);
    page.push(n.value);
    return true;
  }

  /**
   * The size of the batch filling now: the first batches are smaller (FIRST_BATCH, then doubling up
   * to batchSize), so that the database gets its first rows to write while the listing has barely
   * begun instead of a full batch later (a batch is written once the next one is sealed).
   */
  private nextBatchSize(): number {
    return Math.min(this.o.batchSize, FIRST_BATCH * 2 ** Math.min(this.sealedBatches, 16));
  }

  /** Writes what is left; call once the source is exhausted (or the stop rule ended paging). */
  async finish(trx: Session): Promise<void> {
    if (this.batch.length > 0 || this.rejected.length > 0 || this.early !== undefined) await this.seal(trx);
    if (this.pending !== undefined) this.queueWrite(trx, this.pending);
    this.pending = undefined;
    await this.lane;
  }

  /** After a paging failure: let the connection's work in flight end before the transaction rolls back. */
  async settle(): Promise<void> {
    await this.pending?.catch(() => {});
    await this.lane.catch(() => {});
  }

  private reject(raw: unknown): void {
    this.rejected.push(this.rejection(raw));
  }

  /** A raw entry that cannot be stored as rows, logged, with the reason it is kept aside. */
  private rejection(raw: unknown): RejectedInput {
    const n = normaliseEntry(this.o.tenantId, raw);
    const reason = n.ok ? 'entry could not be keyed' : n.reason;
    this.o.logger.warn({ reason }, 'entry rejected: kept in govtrail.rejected_entry');
    return { reason, raw };
  }

  private rejectTooDeep(raw: unknown): void {
    const reason = tooDeepReason();
    this.rejected.push({ reason, raw: pruneDeeperThan(raw) });
    this.o.logger.warn({ reason }, 'entry rejected: kept in govtrail.rejected_entry');
  }

  /** Runs `step` on the connection after everything queued before it; a failure ends the lane. */
  private queue<T>(step: () => Promise<T>): Promise<T> {
    const done = this.lane.then(step);
    this.lane = done.then(() => {});
    // Awaited later (by the step's consumer, by finish or settle): not unhandled meanwhile.
    done.catch(() => {});
    this.lane.catch(() => {});
    return done;
  }

  /**
   * Takes the waiting batch: queues its lookup, then the write of the batch before it, and starts
   * preparing it. Waits first for the write before that one, so that memory stays bounded.
   */
  private async seal(trx: Session): Promise<void> {
    this.sealedBatches++;
    if (this.lastWrite !== undefined) await this.lastWrite;
    const rejects = this.rejected;
    const early = this.early;
    this.rejected = [];
    this.early = undefined;
    // Copies of an id encoded early are that entry's further versions (as groupServed sorts them).
    const copiesOfEarly = new Map<string, Served[]>();
    const entries: Served[] = [];
    for (const e of this.batch) {
      const id = e.key.entryId;
      if (early?.hashes.has(id) !== true) entries.push(e);
      else {
        const copies = copiesOfEarly.get(id);
        if (copies === undefined) copiesOfEarly.set(id, [e]);
        else copies.push(e);
      }
    }
    this.batch = [];
    // The same entry may be served twice (on two pages, or twice in one page): the first copy is
    // stored or compared; another copy with other content is a conflicting version, kept.
    const groups = groupServed(entries);
    const ids = this.idsToLookUp(groups);
    const stored =
      ids.length === 0
        ? Promise.resolve(new Map())
        : this.queue(() =>
            findHeldVersions(trx, this.o.tenantId, ids, digestsOf(groups, ids, this.o.useDigest)),
          );
    // Nothing left to encode: the tracker's rows so far are this batch's (the next page's entries
    // may be encoded before it is prepared). Otherwise the late part is encoded first.
    const late = entries.length > 0 || copiesOfEarly.size > 0;
    const tracked = late ? undefined : this.o.tracker?.takeWrite();
    if (late) this.lateBatches++;
    const previous = this.pending;
    if (previous !== undefined) this.queueWrite(trx, previous);
    const prepared = this.prepare({ early, copiesOfEarly, groups, rejects, stored, late, tracked }, previous);
    prepared.catch(() => {});
    this.pending = prepared;
  }

  /**
   * The batch's ids the database may hold: all of them, or, for a tenant that began the run empty,
   * those the run's filter cannot rule out. The filter holds every batch prepared before the
   * previous one (sealing waited for that one's write, hence for its preparation); the previous
   * batch is looked up in memory.
   */
  private idsToLookUp(groups: ServedGroups<Served>): string[] {
    const filter = this.storedByRun;
    const ids = [...groups.first.keys()];
    return filter === undefined ? ids : ids.filter((id) => filter.mightHold(id));
  }

  private queueWrite(trx: Session, prepared: Promise<PreparedBatch>): void {
    this.lastWrite = this.queue(async () => this.write(trx, await prepared));
  }

  /**
   * Classifies a sealed batch against what is stored (the database's answer, and the previous
   * batch, which that answer cannot hold yet), normalises and encodes what is new, chained on the
   * previous batch's last row hash.
   */
  private async prepare(
    sealed: SealedBatch,
    previous: Promise<PreparedBatch> | undefined,
  ): Promise<PreparedBatch> {
    try {
      return await this.prepareLate(sealed, previous);
    } finally {
      if (sealed.late) this.lateBatches--;
    }
  }

  /** `prepare`: classifies and encodes what waited raw, after what was encoded early. */
  private async prepareLate(
    sealed: SealedBatch,
    previous: Promise<PreparedBatch> | undefined,
  ): Promise<PreparedBatch> {
    const before = previous === undefined ? undefined : await previous;
    const inDatabase = await sealed.stored;
    const { tenantId, runId } = this.o;
    const heldVersion = (id: string): HeldVersion | undefined => {
      const held = inDatabase.get(id);
      if (held !== undefined) return held;
      const early = before?.sealed.early?.hashes.get(id);
      if (early !== undefined) return { contentHash: early, runId };
      const written = before?.fresh.get(id);
      return written === undefined ? undefined : { contentHash: contentHash(written.entry.raw), runId };
    };
    const classified: ClassifiedBatch = { fresh: [], rewritten: [], conflicting: [], rejected: [] };
    if (sealed.early !== undefined)
      conflictsOfEarly(tenantId, sealed.early, sealed.copiesOfEarly, classified);
    if (!sealed.late)
      return this.prepared(sealed, new Map(), sealed.early?.encoder.finish(), sealed.tracked, classified);
    // In slices, as encoding is: the write in flight must not wait for a whole batch's classifying
    // (normalising each new entry, hashing each held one) to read the database's replies.
    await inSlices([...sealed.groups.first.values()], (slice) =>
      classifyServed(
        tenantId,
        runId,
        slice,
        sealed.groups,
        heldVersion,
        this.o.counters,
        classified,
        this.o.useDigest ?? true,
      ),
    );
    // Kept with this batch: the batch filling now may already be the last one sealed.
    for (const raw of classified.rejected) sealed.rejects.push(this.rejection(raw));
    const fresh = new Map<string, NormalisedEntry>();
    for (const e of classified.fresh) {
      fresh.set(e.entry.entryId, e);
      this.storedByRun?.add(e.entry.entryId);
    }
    const { encoded, tracked } = await this.encodeInSlices(classified.fresh);
    const early = sealed.early?.encoder.finish();
    return this.prepared(
      sealed,
      fresh,
      early === undefined ? encoded : joinEncodedEntries([early, encoded]),
      tracked,
      classified,
    );
  }

  private prepared(
    sealed: SealedBatch,
    fresh: Map<string, NormalisedEntry>,
    encoded: EncodedEntries | undefined,
    tracked: TrackedWrite | undefined,
    classified: ClassifiedBatch,
  ): PreparedBatch {
    return {
      sealed,
      fresh,
      encoded: encoded ?? encodeEntries(this.o.runId, [], this.lastHash),
      rewritten: classified.rewritten,
      conflicting: classified.conflicting,
      tracked,
    };
  }

  /**
   * Encodes new entries (hash chain continued) and hands them to the tracker, a slice at a time
   * with a turn of the event loop between slices: a whole batch at once would hold the loop for
   * tens of milliseconds, during which the write in flight sends nothing more (the database idles
   * once it has read what the socket holds) and the pager's next request waits.
   */
  private async encodeInSlices(
    entries: readonly NormalisedEntry[],
  ): Promise<{ encoded: EncodedEntries; tracked: PreparedBatch['tracked'] }> {
    const parts: EncodedEntries[] = [];
    const tracker = this.o.tracker;
    await inSlices(entries, (slice) => {
      const part = encodeEntries(this.o.runId, slice, this.lastHash);
      this.lastHash = part.lastHash;
      parts.push(part);
      if (slice.length > 0) tracker?.inserted(slice);
    });
    return { encoded: joinEncodedEntries(parts), tracked: tracker?.takeWrite() };
  }

  /** Stores a prepared batch and what it found, on the connection, in the lane's turn. */
  private async write(trx: Session, batch: PreparedBatch): Promise<void> {
    const { tenantId, runId, counters } = this.o;
    const fresh = [...batch.fresh.values()];
    counters.entriesInserted += await writeEncodedEntries(trx, batch.encoded, batch.tracked?.copies);
    batch.tracked?.written();
    this.noteEarly(batch.sealed.early);
    this.noteFresh(fresh);
    counters.entriesRejected += await insertRejected(trx, tenantId, runId, batch.sealed.rejects);
    const backdated = await this.recordFindings(trx, batch, fresh);
    await this.onBatch?.(trx, {
      served: [...batch.sealed.groups.first.values()].map((e) => e.key),
      fresh,
      backdated,
    });
  }

  /** noteFresh for the entries of a batch encoded early. */
  private noteEarly(early: EarlyPart | undefined): void {
    if (early === undefined) return;
    const { counters, logger } = this.o;
    for (const { entryId, warnings } of early.warned) {
      counters.warnings += warnings.length;
      logger.warn({ entryId, warnings }, 'entry stored with warnings');
    }
    if (early.oldest !== undefined) this.keepOldest(early.oldest);
  }

  /** Keeps `k` as oldestNew when it is older. */
  private keepOldest(k: { key: string; entryId: string }): void {
    const o = this.oldestNew;
    if (o === undefined || k.key < o.key || (k.key === o.key && k.entryId < o.entryId)) this.oldestNew = k;
  }

  /** Counts and logs the warnings of entries just stored, and keeps the oldest of them. */
  private noteFresh(fresh: readonly NormalisedEntry[]): void {
    const { counters, logger } = this.o;
    for (const e of fresh) {
      counters.warnings += e.warnings.length;
      if (e.warnings.length > 0)
        logger.warn({ entryId: e.entry.entryId, warnings: e.warnings }, 'entry stored with warnings');
      this.keepOldest({ key: e.entry.createdAtKey, entryId: e.entry.entryId });
    }
  }

  /** Records a written batch's rewritten, backdated and conflicting entries; returns how many were backdated. */
  private async recordFindings(
    trx: Session,
    batch: PreparedBatch,
    fresh: readonly NormalisedEntry[],
  ): Promise<number> {
    const { counters, logger } = this.o;
    const { rewritten, conflicting } = batch;
    if (rewritten.length > 0) {
      counters.entriesChanged += rewritten.length;
      logger.warn(
        { entries: rewritten.map((r) => r.served.entry.entryId).slice(0, 20), count: rewritten.length },
        'the source serves stored entries with different content: recorded as changed_at_source',
      );
      await this.o.findings.rewritten(trx, rewritten);
    }
    const backdated = this.findBackdated(fresh);
    if (backdated.length > 0) {
      logger.warn(
        { entries: backdated.map((e) => e.entry.entryId).slice(0, 20), count: backdated.length },
        'the source serves entries dated behind checkpoint - lookback: stored, and recorded as backdated',
      );
      await this.o.findings.backdated(trx, backdated);
    }
    if (conflicting.length > 0) {
      const ids = new Set(conflicting.map((c) => c.served.entry.entryId));
      this.conflicting += ids.size;
      logger.warn(
        { entries: [...ids].slice(0, 20), count: ids.size },
        'the source serves one id with different contents: both kept, recorded as conflicting_ids',
      );
      await this.o.findings.conflicting(trx, conflicting);
    }
    return backdated.length;
  }

  /** The entries just stored that are dated behind `checkpoint − lookback`. */
  private findBackdated(fresh: readonly NormalisedEntry[]): NormalisedEntry[] {
    const before = this.o.backdatedBefore;
    return before === undefined ? [] : fresh.filter((e) => e.entry.createdAtKey < before);
  }
}

/** Entries of a run's first batch; each next one is twice as large, up to the batch size. */
const FIRST_BATCH = 250;

/** Entries classified or encoded between two turns of the event loop (about 10 ms of work). */
const PREPARE_SLICE = 250;

/**
 * `each` over `items` a slice of PREPARE_SLICE at a time (once with none when there are none), a
 * turn of the event loop before each: pending I/O callbacks (the write's replies) run between them.
 */
async function inSlices<T>(items: readonly T[], each: (slice: readonly T[]) => void): Promise<void> {
  for (let i = 0; i === 0 || i < items.length; i += PREPARE_SLICE) {
    await nextTurn();
    each(items.slice(i, i + PREPARE_SLICE));
  }
}
