/**
 * Findings against the source (integrity.md): recorded as source_discrepancy rows and handed to the
 * change step for alerts, inside the run's transaction.
 */
import { diffSnapshots } from '../core/diff.js';
import { contentHash } from '../core/normalise/canonical.js';
import type { EntryRow, NormalisedEntry } from '../core/normalise/types.js';
import type { Session } from '../store/database.js';
import { type ChronoEntry, findChronoEntries } from '../store/read/chrono-entries.js';
import {
  type Discrepancy,
  type RecordedDiscrepancy,
  recordDiscrepancies,
} from '../store/write/discrepancies.js';
import type { ChangeStep, Finding, ServedVersion } from './run-types.js';

/**
 * Records findings against the source (source_discrepancy) and, for the new ones, hands them to
 * the change step for alerts — in the run's transaction.
 */
export class FindingRecorder {
  /** New findings recorded so far. */
  recorded = 0;
  /** Alerts written for them. */
  alerts = 0;

  constructor(
    private readonly tenantId: string,
    private readonly runId: number,
    private readonly changes: ChangeStep | undefined,
  ) {}

  /** Re-served entries whose content differs from the stored one. */
  async rewritten(trx: Session, items: readonly ServedVersion[]): Promise<void> {
    await this.versions(trx, 'changed_at_source', items);
  }

  /** Other contents served under an id the same listing serves (and govtrail holds) otherwise. */
  async conflicting(trx: Session, items: readonly ServedVersion[]): Promise<void> {
    await this.versions(trx, 'conflicting_ids', items);
  }

  /** Served versions that differ from the one held, recorded under `kind` and alerted with the diff. */
  private async versions(
    trx: Session,
    kind: 'changed_at_source' | 'conflicting_ids',
    items: readonly ServedVersion[],
  ): Promise<void> {
    const found = items.map(({ served, storedHash, servedHash }) => ({
      served,
      discrepancy: {
        entryId: served.entry.entryId,
        kind,
        entryCreatedAt: served.entry.createdAtKey,
        storedSha256: storedHash.toString('hex'),
        sourceSha256: servedHash.toString('hex'),
        sourceRaw: served.entry.raw,
      },
    }));
    const recorded = await this.record(
      trx,
      found.map((f) => f.discrepancy),
    );
    if (recorded.length === 0 || this.changes?.findings === undefined) return;
    const storedEntries = await findChronoEntries(
      trx,
      this.tenantId,
      recorded.map((r) => r.entryId),
    );
    const servedByVersion = new Map(
      found.map((f) => [`${f.discrepancy.entryId}:${f.discrepancy.sourceSha256}`, f.served]),
    );
    await this.alert(
      trx,
      recorded.map((r) => {
        const served = servedByVersion.get(`${r.entryId}:${r.sourceSha256}`) as NormalisedEntry;
        return {
          recorded: r,
          entry: served.entry,
          annotations: served.annotations,
          snapshot: served.snapshotWire,
          changes: diffSnapshots(storedEntries.get(r.entryId)?.snapshot ?? null, served.snapshotWire),
        };
      }),
    );
  }

  /** Entries served now and stored by this run, dated behind what incremental runs look at. */
  async backdated(trx: Session, entries: readonly NormalisedEntry[]): Promise<void> {
    const recorded = await this.record(
      trx,
      entries.map((e) => ({
        entryId: e.entry.entryId,
        kind: 'backdated',
        entryCreatedAt: e.entry.createdAtKey,
        storedSha256: null,
        sourceSha256: contentHash(e.entry.raw).toString('hex'),
        sourceRaw: e.entry.raw,
      })),
    );
    const byId = new Map(entries.map((e) => [e.entry.entryId, e]));
    await this.alert(
      trx,
      recorded.map((r) => {
        const e = byId.get(r.entryId) as NormalisedEntry;
        return {
          recorded: r,
          entry: e.entry,
          annotations: e.annotations,
          snapshot: e.snapshotWire,
          changes: [],
        };
      }),
    );
  }

  /** Stored entries the source no longer serves (missing_at_source or expired_at_source). */
  async gone(
    trx: Session,
    items: ReadonlyArray<{
      stored: ChronoEntry;
      storedHash: Buffer;
      kind: 'missing_at_source' | 'expired_at_source';
    }>,
    toEntryRow: (e: ChronoEntry) => EntryRow,
  ): Promise<void> {
    const recorded = await this.record(
      trx,
      items.map(({ stored, storedHash, kind }) => ({
        entryId: stored.entryId,
        kind,
        entryCreatedAt: stored.posAt,
        storedSha256: storedHash.toString('hex'),
        sourceSha256: null,
        sourceRaw: null,
      })),
    );
    const byId = new Map(items.map((i) => [i.stored.entryId, i.stored]));
    await this.alert(
      trx,
      recorded.map((r) => {
        const e = byId.get(r.entryId) as ChronoEntry;
        return {
          recorded: r,
          entry: toEntryRow(e),
          annotations: e.annotations,
          snapshot: e.snapshot,
          changes: [],
        };
      }),
    );
  }

  private async record(trx: Session, found: readonly Discrepancy[]): Promise<RecordedDiscrepancy[]> {
    const recorded = await recordDiscrepancies(trx, this.tenantId, this.runId, found);
    this.recorded += recorded.length;
    return recorded;
  }

  private async alert(trx: Session, found: readonly Finding[]): Promise<void> {
    if (found.length === 0 || this.changes?.findings === undefined) return;
    this.alerts += await this.changes.findings(trx, { tenantId: this.tenantId, runId: this.runId }, found);
  }
}
