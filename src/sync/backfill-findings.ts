/**
 * What the rules would have raised over a period for the entries a backfill stored. A tenant's
 * first run raises one digest (AIGOV-016, docs/design/sync.md S9) instead of an alert per entry, so a year of
 * history backfilled looks alert-free in alerts.csv and the report. This walk evaluates the rule
 * pack over those entries again — read-only, nothing stored or delivered — so that the evidence
 * pack and the report can list the findings, marked as found by backfill (issue 20, item 16).
 */

import type { Severity } from '../core/alert.js';
import { diffSnapshots, isDiffBase } from '../core/diff.js';
import { evaluateRules, type RulePack } from '../core/rules/rules.js';
import { storedKey } from '../core/stop-rule.js';
import type { Session } from '../store/database.js';
import { findBackfillRuns, firstEntryFrom } from '../store/read/backfill.js';
import {
  type ChronoEntry,
  findEntryBefore,
  findEntryTimesBetween,
  streamEntriesFrom,
} from '../store/read/chrono-entries.js';
import { WALK_WINDOW_MS } from './backfill-walk.js';
import { entryRow } from './change-step.js';

/** One alert the per-entry rules would have raised for a backfilled entry; never raised or delivered. */
export interface BackfillFinding {
  readonly ruleId: string;
  readonly severity: Severity;
  readonly title: string;
  readonly summary: string;
  readonly entryId: string;
  /** The entry's created_at as served (RFC 3339), or PostgreSQL's text of it. */
  readonly changedAt: string;
  /** The backfill run that stored the entry. */
  readonly runId: number;
}

export interface BackfillFindings {
  /** Backfill runs (those that raised a digest) that stored entries of the period. */
  readonly runs: readonly number[];
  /** Entries of the period those runs stored. */
  readonly entries: number;
  /** Oldest first; at most {@link MAX_BACKFILL_FINDINGS}. */
  readonly findings: readonly BackfillFinding[];
  /** Findings beyond the cap, counted but not listed. */
  readonly omitted: number;
}

/** How many findings are listed; the rest are counted. */
export const MAX_BACKFILL_FINDINGS = 5_000;

/** How far back the walk looks for a diff base past entries without a snapshot (as the sync does). */
const MAX_BASE_LOOKBACK = 100;

/**
 * Evaluates the per-entry rules over the backfilled entries created in [from, to), each diffed
 * against the stored entry before it, exactly as an incremental run would have.
 */
export async function findBackfillFindings(
  db: Session,
  pack: RulePack,
  period: { tenantId: string; from: Date; to: Date },
): Promise<BackfillFindings> {
  const { tenantId } = period;
  const backfillRuns = new Set(
    await findBackfillRuns(
      db,
      tenantId,
      pack.rules.filter((r) => r.condition.backfill_digest !== undefined).map((r) => r.id),
    ),
  );
  const none: BackfillFindings = { runs: [], entries: 0, findings: [], omitted: 0 };
  if (backfillRuns.size === 0) return none;
  const first = await firstEntryFrom(db, tenantId, period.from);
  if (first === undefined) return none;

  let base: ChronoEntry | undefined = await findEntryBefore(db, tenantId, first);
  for (let i = 0; i < MAX_BASE_LOOKBACK && base !== undefined && !isDiffBase(base.snapshot); i++) {
    base = await findEntryBefore(db, tenantId, base);
  }
  if (base !== undefined && !isDiffBase(base.snapshot)) base = undefined;
  const window: string[] = (
    await findEntryTimesBetween(db, tenantId, new Date(first.createdAt.getTime() - WALK_WINDOW_MS), first)
  ).map(storedKey);

  const runs = new Set<number>();
  const findings: BackfillFinding[] = [];
  let entries = 0;
  let omitted = 0;
  for await (const e of streamEntriesFrom(db, tenantId, first)) {
    if (e.createdAt >= period.to) break;
    const key = storedKey(e);
    const horizon = `${new Date(e.createdAt.getTime() - WALK_WINDOW_MS).toISOString().slice(0, 23)}000000Z`;
    while (window.length > 0 && (window[0] as string) < horizon) window.shift();
    window.push(key);
    if (backfillRuns.has(e.runId)) {
      entries++;
      runs.add(e.runId);
      const drafts = evaluateRules(pack, {
        tenantId,
        entry: entryRow(tenantId, e),
        annotations: e.annotations,
        snapshot: e.snapshot,
        changes: diffSnapshots(base?.snapshot ?? null, e.snapshot, pack.ranks),
        recentEntryKeys: window,
      });
      for (const d of drafts) {
        if (findings.length >= MAX_BACKFILL_FINDINGS) {
          omitted++;
          continue;
        }
        findings.push({
          ruleId: d.ruleId,
          severity: d.severity,
          title: d.title,
          summary: d.summary,
          entryId: e.entryId,
          changedAt: e.createdAtText ?? key,
          runId: e.runId,
        });
      }
    }
    if (isDiffBase(e.snapshot)) base = e;
  }
  return { runs: [...runs].sort((a, b) => a - b), entries, findings, omitted };
}
