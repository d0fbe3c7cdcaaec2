/**
 * The conformance step of a run (docs/design/conformance.md): judges what the run stored against
 * the tenant's baseline and keeps control_period in step, in the run's transaction. A run that
 * stored entries re-judges from the earliest of them on (a late arrival re-judges everything after
 * it: C4); a tenant never judged, or judged by another baseline, is judged over its whole history.
 */
import { conformanceAlerts } from '../core/conformance/alerts.js';
import type { Baseline } from '../core/conformance/baseline.js';
import { type ControlPeriod, HistoryJudge, splicePeriods } from '../core/conformance/judge.js';
import { EXPIRING_WITHIN_MS } from '../core/conformance/report.js';
import { dateKey } from '../core/normalise/time.js';
import type { RoutedSink } from '../core/routing.js';
import type { Session } from '../store/database.js';
import {
  earliestSettingEntryKey,
  lastJudgedKey,
  readSettingEntries,
  runEntryFacts,
  ticketsOf,
} from '../store/read/conformance-history.js';
import {
  judgedBaselineOf,
  periodsBefore,
  periodsInForce,
  periodsOpenedWithoutEntry,
} from '../store/read/control-periods.js';
import { recordBaselineText, replaceControlPeriods, setTenantBaseline } from '../store/write/conformance.js';
import { insertAlerts } from '../store/write/outbox.js';
import type { JudgedState } from '../store/write/run-frame.js';
import type { ChangeStep } from './run-types.js';

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
  /** When a run last judged the tenant before this one (registry); undefined when never. */
  readonly previousJudgedKey: string | undefined;
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
  const previousJudgedKey = await lastJudgedKey(db, tenantId);
  const judged = await judgedBaselineOf(db, tenantId);
  const same = judged !== undefined && judged.id === baseline.id && judged.sha256 === baseline.sha256;
  let fromKey: string | null = null;
  if (same && runId !== null) {
    const earliest = await earliestSettingEntryKey(db, tenantId, runId);
    if (earliest === undefined) {
      await setTenantBaseline(db, tenantId, baseline);
      return {
        scope: 'none',
        entriesJudged: 0,
        written: [],
        before: new Map(),
        loadedAtKey: firstLoadedKey,
        previousJudgedKey,
      };
    }
    fromKey = earliest;
  }
  const judge = new HistoryJudge(baseline, { tenant: tenantId, loadedAtKey: firstLoadedKey });
  const entriesJudged = await readSettingEntries(
    db,
    tenantId,
    fromKey,
    (page) => {
      for (const e of page) judge.push(e);
    },
    { fields: baseline.controls.map((c) => c.field.name) },
  );
  const judgedPeriods = judge.finish();
  const tickets = await ticketsOf(db, tenantId, [
    ...new Set(judgedPeriods.flatMap((p) => (p.entryId === null ? [] : [p.entryId]))),
  ]);
  const fresh = judgedPeriods.map((p) =>
    p.entryId !== null && tickets.has(p.entryId) ? { ...p, ticket: tickets.get(p.entryId) as string } : p,
  );
  const before =
    fromKey === null
      ? new Map<string, ControlPeriod>()
      : await periodsBefore(
          db,
          tenantId,
          baseline.controls.map((c) => c.id),
          fromKey,
        );
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
    previousJudgedKey,
  };
}

/** What the conformance step of a run needs. */
export interface ConformanceStepOptions {
  readonly baseline: Baseline;
  /** The sinks with their routes (alerts are stored for them); none when alerting is off. */
  readonly sinks: readonly RoutedSink[];
  /** Whether to raise alerts at all. */
  readonly alerts: boolean;
  /** The clock (a test seam). */
  readonly now?: () => Date;
}

const RUNBOOK =
  'Run `govtrail baseline check --tenant <tenant>` and `govtrail baseline report` to see the control, its value and who changed it; restore the value, or record an exception in the baseline file.';

/** How far back an expiry is alerted when the tenant's last judgement is not known. */
const EXPIRY_LOOKBACK_MS = 7 * 86_400_000;

/**
 * The conformance step: judges the run's entries in the run's transaction and stores its alerts.
 * A change step of its own, so that a run composes it after the field changes and rule alerts.
 */
export function conformanceStep(options: ConformanceStepOptions): ChangeStep {
  return {
    // Every judgement is recorded, and expiries are alerted on runs that store nothing too.
    everyRun: true,
    quietClose: (tenantId, judged, nowMs) => quietJudgement(options.baseline, tenantId, judged, nowMs),
    async after(trx, context) {
      const started = performance.now();
      const outcome = await judgeTenant(trx, context.tenantId, options.baseline, context.runId);
      context.logger.info(
        {
          baseline: options.baseline.id,
          scope: outcome.scope,
          entriesJudged: outcome.entriesJudged,
          periodsWritten: outcome.written.length,
          ms: Math.round(performance.now() - started),
        },
        'conformance judged',
      );
      if (!options.alerts) return { alerts: 0, fieldChanges: 0 };
      const now = (options.now ?? (() => new Date()))();
      const nowKey = dateKey(now);
      const controlIds = options.baseline.controls.map((c) => c.id);
      const inForce = await periodsInForce(trx, context.tenantId, controlIds, nowKey);
      const since = outcome.previousJudgedKey ?? dateKey(new Date(now.getTime() - EXPIRY_LOOKBACK_MS));
      const expired =
        outcome.scope === 'full' ? [] : await periodsOpenedWithoutEntry(trx, context.tenantId, since, nowKey);
      const ids = [...new Set(outcome.written.flatMap((p) => (p.entryId === null ? [] : [p.entryId])))];
      const drafts = conformanceAlerts({
        tenant: context.tenantId,
        baseline: options.baseline,
        scope: outcome.scope,
        written: outcome.written,
        before: outcome.before,
        runEntries: await runEntryFacts(trx, context.tenantId, context.runId, ids),
        inForce,
        expired,
        nowKey,
        nowMs: now.getTime(),
        runbook: RUNBOOK,
      });
      const alerts = await insertAlerts(trx, context.tenantId, context.runId, drafts, options.sinks);
      return { alerts, fieldChanges: 0 };
    },
  };
}

/**
 * A run that stores nothing, of a tenant judged before by `baseline` itself: the judgement has
 * nothing to re-judge (scope `none`), and it raises nothing when no exception of the tenant was
 * approved or expired since the last judgement (those instants open periods without an entry) and
 * none expires within 14 days (CONF-003). Then the close records the judgement; otherwise undefined
 * and the run judges in its transaction.
 */
export function quietJudgement(
  baseline: Baseline,
  tenantId: string,
  judged: JudgedState,
  nowMs: number,
): { readonly judged: { readonly id: string; readonly sha256: string } } | undefined {
  if (judged.baseline?.id !== baseline.id || judged.baseline.sha256 !== baseline.sha256) return undefined;
  const since = judged.atKey ?? dateKey(new Date(nowMs - EXPIRY_LOOKBACK_MS));
  const horizon = dateKey(new Date(nowMs + EXPIRING_WITHIN_MS));
  for (const x of baseline.exceptions) {
    if (!x.tenants.includes(tenantId)) continue;
    for (const at of [x.approvedAt, x.expires])
      if (at !== null && at > since && at <= horizon) return undefined;
  }
  return { judged: { id: baseline.id, sha256: baseline.sha256 } };
}

/**
 * Two change steps as one: both trackers are fed, `first` runs before `second`, and their counts
 * add up. Findings go to `first` (the rule pack's step).
 */
export function combineSteps(first: ChangeStep | undefined, second: ChangeStep): ChangeStep {
  if (first === undefined) return second;
  return {
    ...(first.everyRun === true || second.everyRun === true ? { everyRun: true } : {}),
    quietClose(tenantId, judged, nowMs) {
      // Each step with work on every run must agree to a quiet close; the judgement is the one step's that has it.
      let out: ReturnType<NonNullable<ChangeStep['quietClose']>>;
      for (const step of [first, second]) {
        if (step.everyRun !== true) continue;
        const mark = step.quietClose?.(tenantId, judged, nowMs);
        if (mark === undefined) return undefined;
        out = mark;
      }
      return out;
    },
    ...(first.track !== undefined ? { track: first.track.bind(first) } : {}),
    ...(first.findings !== undefined ? { findings: first.findings.bind(first) } : {}),
    async after(trx, context) {
      const a = await first.after(trx, context);
      const b = await second.after(trx, { ...context, tracker: undefined });
      return { alerts: a.alerts + b.alerts, fieldChanges: a.fieldChanges + b.fieldChanges };
    },
  };
}
