/**
 * What the conformance outputs read of one tenant: the baseline that judged its stored periods
 * (parsed again from the exact text kept in baseline_text) and the periods themselves.
 */
import { type Baseline, parseBaseline } from '../../core/conformance/baseline.js';
import type { ControlPeriod, Status } from '../../core/conformance/judge.js';
import type { Ranks } from '../../core/diff.js';
import type { Session } from '../../store/database.js';
import { findJudgingBaseline, type JudgingBaseline } from '../../store/read/conformance-baseline.js';
import { readControlPeriods } from '../../store/read/control-periods.js';

export interface TenantConformance {
  readonly tenantId: string;
  readonly baseline: Baseline;
  readonly stored: JudgingBaseline;
  /** When the baseline text was first loaded (key): the approval of an exception that gives none. */
  readonly loadedAtKey: string;
  /** Every stored period of the tenant up to `toKey`, in control then time order. */
  readonly periods: readonly ControlPeriod[];
}

/**
 * The tenant's conformance up to `toKey` (all periods when null); undefined when no baseline has
 * judged it. `ranks` are the rule pack's, which the baseline's bounds were read with.
 */
export async function loadTenantConformance(
  db: Session,
  tenantId: string,
  ranks: Ranks,
  toKey: string | null = null,
): Promise<TenantConformance | undefined> {
  const stored = await findJudgingBaseline(db, tenantId);
  if (stored === undefined) return undefined;
  const baseline = parseBaseline(
    stored.text,
    `baseline_text ${stored.id}@${stored.sha256.slice(0, 12)}`,
    ranks,
  );
  const periods = await readControlPeriods(db, tenantId, null, toKey);
  return { tenantId, baseline, stored, loadedAtKey: stored.firstLoadedKey, periods };
}

/**
 * The status of a control just before `key` (the end of a period [from, key)): that of the last
 * stored period beginning before it; `unknown` before the control's first period.
 */
export function statusAt(periods: readonly ControlPeriod[], controlId: string, key: string): Status {
  let status: Status = 'unknown';
  for (const p of periods) {
    if (p.controlId !== controlId || p.fromKey >= key) continue;
    status = p.status;
  }
  return status;
}
