/**
 * Step 5 of a run, inside its transaction: walk the tenant's entries chronologically from the
 * oldest one this run inserted, diff each new snapshot against the one before it, recompute the
 * diff of a stored entry whose predecessor just arrived late, evaluate the alert rules on the new
 * entries, and write field changes and alerts (the outbox) with the data.
 */
import { backfillDigest, evaluateRules, type RulePack } from '../alerts/rules.js';
import type { AlertDraft } from '../alerts/types.js';
import { diffSnapshots } from '../changes/diff.js';
import { parseTimestamp } from '../normalise/time.js';
import type { EntryRow } from '../normalise/types.js';
import { insertAlerts } from '../store/alerts.js';
import {
  type ChronoEntry,
  type FieldChangeRow,
  findEntryBefore,
  findEntryTimesBetween,
  findOldestOfRun,
  replaceFieldChanges,
  streamEntriesFrom,
} from '../store/changes.js';
import type { AfterInsertStep } from './run.js';

/** The burst window kept while walking: long enough for any sensible `entries_in_window` rule. */
const WINDOW_MS = 24 * 3_600_000;
/** Field-change rows and alerts are written in batches of this many. */
const FLUSH_EVERY = 2000;

export interface ChangesStepOptions {
  readonly pack: RulePack;
  /** Sink names: one pending delivery per alert and sink. */
  readonly sinks: readonly string[];
  /** S9: on a tenant's first run, one digest instead of per-entry alerts unless this is true. */
  readonly backfillPerEntryAlerts: boolean;
}

/** How far back the walk looks for a diff base past entries served without a snapshot. */
const MAX_BASE_LOOKBACK = 100;

/** Whether an entry tells what the settings were after it: it has a snapshot, or it deleted them. */
function isDiffBase(e: ChronoEntry): boolean {
  return (
    (typeof e.snapshot === 'object' && e.snapshot !== null) || e.changeKind === 'CHANGE_KIND_HARD_DELETE'
  );
}

function keyOf(e: { createdAt: Date; createdAtText: string | null }): string {
  return parseTimestamp(e.createdAtText)?.key ?? `${e.createdAt.toISOString().slice(0, 23)}000000Z`;
}

function entryRow(tenantId: string, e: ChronoEntry): EntryRow {
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

export function changesStep(options: ChangesStepOptions): AfterInsertStep {
  return async (trx, ctx) => {
    if (ctx.inserted === 0) return { alerts: 0, fieldChanges: 0 };
    const { tenantId, runId } = ctx;
    const oldest = await findOldestOfRun(trx, tenantId, runId);
    if (oldest === undefined) return { alerts: 0, fieldChanges: 0 };

    // The diff base is the latest entry that says what the settings were: one with a snapshot, or
    // a hard delete (settings gone). A PUT served without a snapshot says nothing, so it is skipped
    // rather than read as "no settings" (which would hide the next entry's old values).
    let base: ChronoEntry | undefined = await findEntryBefore(trx, tenantId, oldest);
    for (let i = 0; i < MAX_BASE_LOOKBACK && base !== undefined && !isDiffBase(base); i++) {
      base = await findEntryBefore(trx, tenantId, base);
    }
    if (base !== undefined && !isDiffBase(base)) base = undefined;
    let baseIsNew = false;
    let prevIsNew = false;
    const window: string[] = (
      await findEntryTimesBetween(trx, tenantId, new Date(oldest.createdAt.getTime() - WINDOW_MS), oldest)
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
      alerts += await insertAlerts(trx, tenantId, runId, pendingAlerts, options.sinks);
      pendingChanges = [];
      pendingIds = [];
      pendingAlerts = [];
    };

    for await (const e of streamEntriesFrom(trx, tenantId, oldest)) {
      const isNew = e.runId === runId;
      const key = keyOf(e);
      // Keep the window to WINDOW_MS behind this entry (keys are in time order).
      const horizon = `${new Date(e.createdAt.getTime() - WINDOW_MS).toISOString().slice(0, 23)}000000Z`;
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
          if (digestMode)
            for (const d of drafts) perRuleCounts[d.ruleId] = (perRuleCounts[d.ruleId] ?? 0) + 1;
          else pendingAlerts.push(...drafts);
        }
      }
      if (isDiffBase(e)) {
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
    ctx.logger.debug({ fieldChanges, alerts }, 'field changes and alerts written');
    return { alerts, fieldChanges };
  };
}
