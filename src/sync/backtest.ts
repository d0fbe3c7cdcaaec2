/**
 * `govtrail rules backtest`: the stored history of a period replayed through a candidate rule
 * pack, in one read-only transaction — nothing is written, nothing delivered — and compared, rule
 * by rule, with what was raised (docs/design/alerts.md, "Rules as code"). Each entry is diffed
 * against the stored entry before it and evaluated exactly as the sync's change step does
 * (change-step.ts), so a pack's "would raise" equals what a real run with that pack raises on the
 * same history, entries of a first run (which raise one digest instead) aside: those are counted
 * apart as `backfilled`. Run-level and discrepancy rules are not replayed; suppression is not
 * either (a folded repeat counts as raised).
 */
import { diffSnapshots, isDiffBase } from '../core/diff.js';
import { evaluateRules, type RulePack } from '../core/rules/rules.js';
import { storedKey } from '../core/stop-rule.js';
import type { Session } from '../store/database.js';
import { findBackfillRuns, firstEntryFrom } from '../store/read/backfill.js';
import { inReadOnlyTransaction, raisedForEntries } from '../store/read/backtest.js';
import {
  type ChronoEntry,
  findEntryBefore,
  findEntryTimesBetween,
  streamEntriesFrom,
} from '../store/read/chrono-entries.js';
import { WALK_WINDOW_MS } from './backfill-walk.js';
import { entryRow } from './change-step.js';

/** One rule's line of the backtest. */
export interface BacktestRow {
  readonly ruleId: string;
  /** What the candidate pack would raise for the period's entries (first runs' entries aside). */
  readonly wouldRaise: number;
  /** What was raised (stored alerts and folded repeats). */
  readonly raised: number;
  /** Would raise, was not raised. */
  readonly added: number;
  /** Was raised, would not be. */
  readonly gone: number;
  /** Both. */
  readonly unchanged: number;
  /** Would raise on entries a first run stored (which raised a digest, not per-entry alerts). */
  readonly backfilled: number;
}

export interface BacktestResult {
  readonly tenants: readonly string[];
  readonly entries: number;
  readonly rows: readonly BacktestRow[];
}

/** How far back the walk looks for a diff base past entries without a snapshot (as the sync does). */
const MAX_BASE_LOOKBACK = 100;

/** Replays [from, to) of each tenant through `pack` in a read-only transaction. */
export async function backtest(
  db: Session,
  pack: RulePack,
  o: { readonly tenants: readonly string[]; readonly from: Date; readonly to: Date },
): Promise<BacktestResult> {
  // The database itself refuses any write in this transaction.
  return inReadOnlyTransaction(db, async (tx) => {
    const would = new Map<string, Set<string>>();
    const backfilled = new Map<string, number>();
    const raised = new Map<string, Set<string>>();
    let entries = 0;
    for (const tenantId of o.tenants) {
      entries += await replayTenant(tx, pack, tenantId, o, would, backfilled);
      for (const [rule, keys] of await raisedForEntries(tx, tenantId, o.from, o.to)) {
        const set = raised.get(rule) ?? new Set<string>();
        for (const k of keys) set.add(k);
        raised.set(rule, set);
      }
    }
    const ruleIds = [...new Set([...pack.rules.map((r) => r.id), ...raised.keys()])].filter(
      (id) => would.has(id) || raised.has(id) || pack.rules.some((r) => r.id === id && perEntry(r)),
    );
    const rows = ruleIds.map((ruleId): BacktestRow => {
      const w = would.get(ruleId) ?? new Set<string>();
      const r = raised.get(ruleId) ?? new Set<string>();
      const unchanged = [...w].filter((k) => r.has(k)).length;
      return {
        ruleId,
        wouldRaise: w.size,
        raised: r.size,
        added: w.size - unchanged,
        gone: r.size - unchanged,
        unchanged,
        backfilled: backfilled.get(ruleId) ?? 0,
      };
    });
    return { tenants: o.tenants, entries, rows };
  });
}

function perEntry(r: RulePack['rules'][number]): boolean {
  return (
    r.condition.backfill_digest === undefined &&
    r.condition.consecutive_failed_runs === undefined &&
    r.condition.source_discrepancy === undefined
  );
}

/** Walks one tenant's entries of the period; returns how many. */
async function replayTenant(
  tx: Session,
  pack: RulePack,
  tenantId: string,
  o: { readonly from: Date; readonly to: Date },
  would: Map<string, Set<string>>,
  backfilled: Map<string, number>,
): Promise<number> {
  const first = await firstEntryFrom(tx, tenantId, o.from);
  if (first === undefined) return 0;
  // Runs that raised a digest: their entries had no per-entry alerts.
  const digestRuns = new Set(
    await findBackfillRuns(
      tx,
      tenantId,
      pack.rules.filter((r) => r.condition.backfill_digest !== undefined).map((r) => r.id),
    ),
  );
  let base: ChronoEntry | undefined = await findEntryBefore(tx, tenantId, first);
  for (let i = 0; i < MAX_BASE_LOOKBACK && base !== undefined && !isDiffBase(base.snapshot); i++) {
    base = await findEntryBefore(tx, tenantId, base);
  }
  if (base !== undefined && !isDiffBase(base.snapshot)) base = undefined;
  const window: string[] = (
    await findEntryTimesBetween(tx, tenantId, new Date(first.createdAt.getTime() - WALK_WINDOW_MS), first)
  ).map(storedKey);
  let entries = 0;
  for await (const e of streamEntriesFrom(tx, tenantId, first)) {
    if (e.createdAt >= o.to) break;
    entries++;
    const key = storedKey(e);
    const horizon = `${new Date(e.createdAt.getTime() - WALK_WINDOW_MS).toISOString().slice(0, 23)}000000Z`;
    while (window.length > 0 && (window[0] as string) < horizon) window.shift();
    window.push(key);
    const drafts = evaluateRules(pack, {
      tenantId,
      entry: entryRow(tenantId, e),
      annotations: e.annotations,
      snapshot: e.snapshot,
      changes: diffSnapshots(base?.snapshot ?? null, e.snapshot, pack.ranks),
      recentEntryKeys: window,
    });
    for (const d of drafts) {
      if (digestRuns.has(e.runId)) backfilled.set(d.ruleId, (backfilled.get(d.ruleId) ?? 0) + 1);
      else {
        const set = would.get(d.ruleId) ?? new Set<string>();
        set.add(d.dedupeKey);
        would.set(d.ruleId, set);
      }
    }
    if (isDiffBase(e.snapshot)) base = e;
  }
  return entries;
}
