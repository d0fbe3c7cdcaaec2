/**
 * Step 5 of a run, inside its transaction: walk the tenant's entries chronologically from the
 * oldest one this run inserted, diff each new snapshot against the one before it, recompute the
 * diff of a stored entry whose predecessor just arrived late, evaluate the alert rules on the new
 * entries, and write field changes and alerts (the outbox) with the data.
 */

import type { AlertDraft } from '../core/alert.js';
import { diffSnapshots, isDiffBase } from '../core/diff.js';
import type { EntryRow, NormalisedEntry } from '../core/normalise/types.js';
import type { RoutedSink } from '../core/routing.js';
import { backfillDigest, discrepancyAlerts, evaluateRules, type RulePack } from '../core/rules/rules.js';
import { alertPolicy } from '../core/rules/suppression.js';
import { storedKey } from '../core/stop-rule.js';
import type { Logger } from '../runtime/logger.js';
import type { Session } from '../store/database.js';
import {
  type ChronoEntry,
  findEntryBefore,
  findEntryTimesBetween,
  findOldestOfRun,
  streamEntriesFrom,
} from '../store/read/chrono-entries.js';
import {
  type FieldChangeRow,
  fieldChangeCopy,
  insertFieldChanges,
  replaceFieldChanges,
} from '../store/write/field-changes.js';
import { insertAlerts } from '../store/write/outbox.js';
import { BackfillWalk, canWalkInMemory, WALK_WINDOW_MS } from './backfill-walk.js';
import type { ChangeStep, InsertTracker, TrackedWrite } from './run-types.js';

/** Field-change rows and alerts are written in batches of this many. */
const FLUSH_EVERY = 2000;

export interface ChangesStepOptions {
  readonly pack: RulePack;
  /** The sinks with their routes: one pending delivery per alert and sink whose route allows it. */
  readonly sinks: readonly RoutedSink[];
  /** S9: on a tenant's first run, one digest instead of per-entry alerts unless this is true. */
  readonly backfillPerEntryAlerts: boolean;
  /**
   * On a first run, compute field changes from the entries as they are inserted (default) rather
   * than reading them back; false forces the stored walk (tests compare the two).
   */
  readonly walkInMemory?: boolean;
}

/** How far back the walk looks for a diff base past entries served without a snapshot. */
const MAX_BASE_LOOKBACK = 100;

const keyOf = storedKey;

/** A stored entry as the rules see it (raw cut down to its snapshot, what the rules read). */
export function entryRow(tenantId: string, e: ChronoEntry): EntryRow {
  return {
    tenantId,
    entryId: e.entryId,
    createdAtText: e.createdAtText,
    createdAtKey: keyOf(e),
    createdAt: e.createdAt,
    changeKind: e.changeKind,
    actorKind: e.actorKind,
    actorUserId: e.actorUserId,
    syslogEventId: e.syslogEventId,
    traceId: e.traceId,
    raw: { snapshot: e.snapshot },
  };
}

/** Entries the in-memory walk may hold back before it gives up for the stored walk (memory bound). */
const MAX_HELD = 20_000;

/** Feeds a backfill's inserted batches to the in-memory walk and writes their field changes. */
class BackfillTracker implements InsertTracker {
  readonly walk: BackfillWalk;
  fieldChanges = 0;
  /** Field changes of the batch being prepared, written with it. */
  private pending: FieldChangeRow[] = [];

  constructor(
    pack: RulePack,
    readonly tenantId: string,
    private readonly logger: Logger,
  ) {
    this.walk = new BackfillWalk(pack, tenantId, MAX_HELD);
  }

  inserted(entries: readonly NormalisedEntry[]): void {
    const wasOnTrack = this.walk.gaveUp === undefined;
    const rows = this.walk.add(entries);
    if (wasOnTrack && this.walk.gaveUp !== undefined)
      this.logger.info(
        { reason: this.walk.gaveUp },
        'field changes will be computed from the stored entries',
      );
    for (const row of rows) this.pending.push(row);
  }

  takeWrite(): TrackedWrite | undefined {
    const rows = this.pending;
    if (rows.length === 0) return undefined;
    this.pending = [];
    // Entries of this run, each finished once: plain inserts, nothing to replace.
    return {
      copies: [fieldChangeCopy(this.tenantId, rows)],
      written: () => {
        this.fieldChanges += rows.length;
      },
    };
  }

  async write(trx: Session, rows: readonly FieldChangeRow[]): Promise<void> {
    if (rows.length === 0) return;
    // Entries of this run, each finished once: plain inserts (COPY), nothing to replace.
    this.fieldChanges += await insertFieldChanges(trx, this.tenantId, rows);
  }
}

export function changesStep(options: ChangesStepOptions): ChangeStep {
  return {
    track(ctx) {
      // The in-memory walk stands in for the stored one only where both see the same entries:
      // a first run (the tenant has no rows) that raises a digest rather than per-entry alerts.
      const digestMode = ctx.isBackfill && !options.backfillPerEntryAlerts;
      if (options.walkInMemory === false) return undefined;
      if (!ctx.tenantWasEmpty || !digestMode || !canWalkInMemory(options.pack)) return undefined;
      return new BackfillTracker(options.pack, ctx.tenantId, ctx.logger);
    },
    async after(trx, ctx) {
      const tracker = ctx.tracker instanceof BackfillTracker ? ctx.tracker : undefined;
      if (tracker !== undefined && tracker.walk.gaveUp === undefined) {
        const { changes, result } = tracker.walk.finish();
        await tracker.write(trx, changes);
        if (result !== undefined) {
          const { first, last } = result;
          const at = (e: EntryRow) => ({
            entryId: e.entryId,
            createdAtText: e.createdAtText ?? e.createdAtKey,
          });
          const digest = backfillDigest(options.pack, {
            tenantId: ctx.tenantId,
            runId: ctx.runId,
            entriesStored: ctx.inserted,
            firstEntry: first && at(first),
            lastEntry: last && at(last),
            perRuleCounts: result.perRuleCounts,
          });
          const alerts =
            digest === null
              ? 0
              : await insertAlerts(
                  trx,
                  ctx.tenantId,
                  ctx.runId,
                  [digest],
                  options.sinks,
                  alertPolicy(options.pack),
                );
          ctx.logger.debug(
            { fieldChanges: tracker.fieldChanges, alerts, walk: 'in memory' },
            'field changes and alerts written',
          );
          return { alerts, fieldChanges: tracker.fieldChanges };
        }
      }
      return walkStored(options, trx, ctx);
    },
    async findings(trx, ctx, found) {
      const drafts = found.flatMap((f) =>
        discrepancyAlerts(options.pack, {
          tenantId: ctx.tenantId,
          entry: f.entry,
          annotations: f.annotations,
          snapshot: f.snapshot,
          changes: f.changes,
          recentEntryKeys: [],
          discrepancy: {
            kind: f.recorded.kind,
            discrepancyId: f.recorded.discrepancyId,
            runId: ctx.runId,
            storedSha256: f.recorded.storedSha256,
            sourceSha256: f.recorded.sourceSha256,
          },
        }),
      );
      return insertAlerts(trx, ctx.tenantId, ctx.runId, drafts, options.sinks, alertPolicy(options.pack));
    },
  };
}

/** Stores a run's alerts with the pack's suppression policy (docs/design/alerts.md, "Suppression"). */
function storeAlerts(
  trx: Session,
  tenantId: string,
  runId: number,
  drafts: readonly AlertDraft[],
  options: ChangesStepOptions,
): Promise<number> {
  return insertAlerts(trx, tenantId, runId, drafts, options.sinks, alertPolicy(options.pack));
}

/** The walk over stored entries: the general case (incremental runs, late arrivals). */
async function walkStored(
  options: ChangesStepOptions,
  trx: Session,
  ctx: Parameters<ChangeStep['after']>[1],
): Promise<{ alerts: number; fieldChanges: number }> {
  if (ctx.inserted === 0) return { alerts: 0, fieldChanges: 0 };
  const { tenantId, runId } = ctx;
  const oldest = await findOldestOfRun(trx, tenantId, runId);
  if (oldest === undefined) return { alerts: 0, fieldChanges: 0 };

  // The diff base is the latest entry with a snapshot (isDiffBase): a PUT served without one and a
  // hard delete are skipped, so the CREATE after a delete is diffed against the settings before it.
  let base: ChronoEntry | undefined = await findEntryBefore(trx, tenantId, oldest);
  for (let i = 0; i < MAX_BASE_LOOKBACK && base !== undefined && !isDiffBase(base.snapshot); i++) {
    base = await findEntryBefore(trx, tenantId, base);
  }
  if (base !== undefined && !isDiffBase(base.snapshot)) base = undefined;
  let baseIsNew = false;
  let prevIsNew = false;
  const window: string[] = (
    await findEntryTimesBetween(trx, tenantId, new Date(oldest.createdAt.getTime() - WALK_WINDOW_MS), oldest)
  ).map(keyOf);

  const digestMode = ctx.isBackfill && !options.backfillPerEntryAlerts;
  const perRuleCounts: Record<string, number> = {};
  let first: ChronoEntry | undefined;
  let last: ChronoEntry | undefined;
  let pendingChanges: FieldChangeRow[] = [];
  let pendingIds: string[] = [];
  let pendingAlerts: AlertDraft[] = [];
  let fieldChanges = 0;
  let alerts = 0;

  const flush = async () => {
    await replaceFieldChanges(trx, tenantId, pendingIds, pendingChanges);
    fieldChanges += pendingChanges.length;
    alerts += await storeAlerts(trx, tenantId, runId, pendingAlerts, options);
    pendingChanges = [];
    pendingIds = [];
    pendingAlerts = [];
  };

  for await (const e of streamEntriesFrom(trx, tenantId, oldest)) {
    const isNew = e.runId === runId;
    const key = keyOf(e);
    // Keep the window to WALK_WINDOW_MS behind this entry (keys are in time order).
    const horizon = `${new Date(e.createdAt.getTime() - WALK_WINDOW_MS).toISOString().slice(0, 23)}000000Z`;
    while (window.length > 0 && (window[0] as string) < horizon) window.shift();
    window.push(key);

    if (isNew || prevIsNew || baseIsNew) {
      // A new entry, or a stored one whose predecessor (or diff base) arrived late: (re)compute its diff.
      const changes = diffSnapshots(base?.snapshot ?? null, e.snapshot, options.pack.ranks);
      pendingIds.push(e.entryId);
      for (const change of changes) pendingChanges.push({ entryId: e.entryId, change });
      if (isNew) {
        first ??= e;
        last = e;
        const drafts = evaluateRules(options.pack, {
          tenantId,
          entry: entryRow(tenantId, e),
          annotations: e.annotations,
          snapshot: e.snapshot,
          changes,
          recentEntryKeys: window,
        });
        if (digestMode) for (const d of drafts) perRuleCounts[d.ruleId] = (perRuleCounts[d.ruleId] ?? 0) + 1;
        else pendingAlerts.push(...drafts);
      }
    }
    if (isDiffBase(e.snapshot)) {
      base = e;
      baseIsNew = isNew;
    }
    prevIsNew = isNew;
    if (pendingChanges.length >= FLUSH_EVERY || pendingAlerts.length >= FLUSH_EVERY) await flush();
  }

  if (digestMode) {
    const digest = backfillDigest(options.pack, {
      tenantId,
      runId,
      entriesStored: ctx.inserted,
      firstEntry: first && { entryId: first.entryId, createdAtText: first.createdAtText ?? keyOf(first) },
      lastEntry: last && { entryId: last.entryId, createdAtText: last.createdAtText ?? keyOf(last) },
      perRuleCounts,
    });
    if (digest !== null) pendingAlerts.push(digest);
  }
  await flush();
  ctx.logger.debug({ fieldChanges, alerts, walk: 'stored' }, 'field changes and alerts written');
  return { alerts, fieldChanges };
}
