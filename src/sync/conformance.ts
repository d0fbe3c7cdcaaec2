/**
 * The conformance step of a run (docs/design/conformance.md): judges what the run stored against
 * the tenant's baseline and keeps control_period in step, in the run's transaction. A run that
 * stored entries re-judges from the earliest of them on (a late arrival re-judges everything after
 * it: C4); a tenant never judged, or judged by another baseline, is judged over its whole history.
 */
import type { Baseline } from '../core/conformance/baseline.js';
import { type ControlPeriod, HistoryJudge, splicePeriods } from '../core/conformance/judge.js';
import type { Session } from '../store/database.js';
import {
  earliestSettingEntryKey,
  judgedBaselineOf,
  periodsBefore,
  readSettingEntries,
  recordBaselineText,
  replaceControlPeriods,
  setTenantBaseline,
} from '../store/write/conformance.js';

/** What one judgement did. */
export interface ConformanceOutcome {
  /** `full`: the whole history (first judgement, or a new baseline); `from`: from an instant on; `none`: nothing new. */
  readonly scope: 'full' | 'from' | 'none';
  /** Why a full judgement: the tenant had no periods, or they were judged by another baseline. */
  readonly reason?: 'first' | 'baseline_changed';
  /** The instant judged from (`from` only). */
  readonly fromKey?: string;
  /** Entries read and judged. */
  readonly entriesJudged: number;
  /** The periods written (rewritten stored rows, then new rows), for alerts. */
  readonly written: readonly ControlPeriod[];
  /** The stored periods the judgement continued, by control (empty for a full judgement). */
  readonly before: ReadonlyMap<string, ControlPeriod>;
  /** When the baseline text was first loaded (nanosecond key). */
  readonly loadedAtKey: string;
}

/**
 * Judges a tenant in the caller's transaction. `runId`: the run whose stored entries are judged
 * from; null judges the whole history.
 */
export async function judgeTenant(
  db: Session,
  tenantId: string,
  baseline: Baseline,
  runId: number | null,
): Promise<ConformanceOutcome> {
  const { firstLoadedKey } = await recordBaselineText(db, baseline);
  const judged = await judgedBaselineOf(db, tenantId);
  const same = judged !== undefined && judged.id === baseline.id && judged.sha256 === baseline.sha256;
  let fromKey: string | null = null;
  if (same && runId !== null) {
    const earliest = await earliestSettingEntryKey(db, tenantId, runId);
    if (earliest === undefined) {
      return { scope: 'none', entriesJudged: 0, written: [], before: new Map(), loadedAtKey: firstLoadedKey };
    }
    fromKey = earliest;
  }
  const judge = new HistoryJudge(baseline, { tenant: tenantId, loadedAtKey: firstLoadedKey });
  const entriesJudged = await readSettingEntries(db, tenantId, fromKey, (page) => {
    for (const e of page) judge.push(e);
  });
  const fresh = judge.finish();
  const before =
    fromKey === null ? new Map<string, ControlPeriod>() : await periodsBefore(db, tenantId, fromKey);
  const { rewrite, insert } =
    fromKey === null ? { rewrite: [], insert: fresh } : splicePeriods(before, fresh, fromKey);
  await replaceControlPeriods(db, tenantId, baseline, fromKey, rewrite, insert);
  await setTenantBaseline(db, tenantId, baseline);
  return {
    scope: fromKey === null ? 'full' : 'from',
    ...(fromKey === null
      ? { reason: judged === undefined ? ('first' as const) : ('baseline_changed' as const) }
      : { fromKey }),
    entriesJudged,
    written: [...rewrite, ...insert],
    before,
    loadedAtKey: firstLoadedKey,
  };
}
