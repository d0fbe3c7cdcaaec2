/**
 * What `baseline check` and `baseline report` say, computed from stored periods (pure). The JSON
 * shapes built here are a public contract (docs/design/conformance.md): fields may be added, never
 * renamed.
 */
import type { Baseline, BaselineException, Control } from './baseline.js';
import { effectiveValue, valueKey } from './expect.js';
import {
  approvedAtKey,
  type ControlPeriod,
  type Durations,
  durationsOf,
  isRetroactive,
  type JudgedEntry,
  keyNanos,
  type Shares,
  type Status,
  sharesOf,
  statusOf,
  sumDurations,
} from './judge.js';

/** How long before its expiry an exception is reported (and alerted) as expiring. */
export const EXPIRING_WITHIN_MS = 14 * 86_400_000;

/** What changed for a control since the previous check. */
export type CheckChange =
  | 'new_fail'
  | 'fixed'
  | 'still_failing'
  | 'new_exception'
  | 'exception_expired'
  | 'exception_expiring'
  | null;

/** Who or what opened or closed a period. */
export interface PeriodCause {
  readonly entry_id: string | null;
  readonly actor_kind: string | null;
  readonly actor_user_id: string | null;
  readonly ticket: string | null;
  /** `entry`, or `exception_approved` / `exception_expired` when no entry did. */
  readonly cause: 'entry' | 'exception_approved' | 'exception_expired';
}

/** One fail (or deleted) period in a report. */
export interface FailPeriodJson {
  readonly from: string;
  readonly to: string;
  readonly status: 'fail' | 'deleted';
  readonly seconds: number;
  readonly opened_by: PeriodCause;
  readonly closed_by: PeriodCause | null;
}

export interface ControlReportJson {
  readonly id: string;
  readonly title: string;
  readonly field: string;
  readonly severity: string;
  readonly frameworks: Readonly<Record<string, readonly string[]>>;
  readonly share: Shares;
  readonly compliant: number;
  readonly fail_count: number;
  readonly longest_fail_seconds: number;
  readonly fail_periods: readonly FailPeriodJson[];
  readonly excepted_periods: readonly FailPeriodJson[];
}

export interface TenantReportJson {
  readonly tenant: string;
  readonly share: Shares;
  readonly compliant: number;
  readonly controls: readonly ControlReportJson[];
}

export interface ReportJson {
  readonly baseline: { readonly id: string; readonly sha256: string; readonly title: string };
  readonly from: string;
  readonly to: string;
  readonly tenants: readonly TenantReportJson[];
}

/** The opener of a period as a report shows it. */
function causeOf(p: ControlPeriod): PeriodCause {
  return {
    entry_id: p.entryId,
    actor_kind: p.actorKind,
    actor_user_id: p.actorUserId,
    ticket: p.ticket,
    cause:
      p.entryId !== null ? 'entry' : p.status === 'excepted' ? 'exception_approved' : 'exception_expired',
  };
}

function seconds(ns: bigint): number {
  return Number(ns / 1000n) / 1e6;
}

/** The report of one tenant over [fromKey, toKey), from the periods of its controls. */
export function tenantReport(
  tenant: string,
  baseline: Baseline,
  periods: readonly ControlPeriod[],
  fromKey: string,
  toKey: string,
): TenantReportJson {
  const durations: Durations[] = [];
  const controls = baseline.controls.map((control) => {
    const mine = periods.filter((p) => p.controlId === control.id);
    const d = durationsOf(mine, fromKey, toKey);
    durations.push(d);
    const listed = (statuses: readonly Status[]) => {
      const out: FailPeriodJson[] = [];
      for (let i = 0; i < mine.length; i++) {
        const p = mine[i] as ControlPeriod;
        if (!statuses.includes(p.status)) continue;
        if (p.fromKey >= toKey || (p.toKey !== null && p.toKey <= fromKey)) continue;
        const next = mine[i + 1];
        const endsInside = p.toKey !== null && p.toKey < toKey;
        const end = endsInside ? (p.toKey as string) : toKey;
        const start = p.fromKey > fromKey ? p.fromKey : fromKey;
        out.push({
          from: p.fromKey,
          to: end,
          status: p.status as 'fail' | 'deleted',
          seconds: seconds(keyNanos(end) - keyNanos(start)),
          opened_by: causeOf(p),
          closed_by: endsInside && next !== undefined ? causeOf(next) : null,
        });
      }
      return out;
    };
    const fails = listed(['fail', 'deleted']);
    const share = sharesOf(d);
    return {
      id: control.id,
      title: control.title,
      field: control.field.name,
      severity: control.severity,
      frameworks: control.frameworks,
      share,
      compliant: share.pass + share.excepted,
      fail_count: fails.length,
      longest_fail_seconds: fails.reduce((m, f) => Math.max(m, f.seconds), 0),
      fail_periods: fails,
      excepted_periods: listed(['excepted']),
    };
  });
  const share = sharesOf(sumDurations(durations));
  return { tenant, share, compliant: share.pass + share.excepted, controls };
}

/** `baseline report --format json`. */
export function buildReport(
  baseline: Baseline,
  fromKey: string,
  toKey: string,
  tenants: readonly { readonly tenant: string; readonly periods: readonly ControlPeriod[] }[],
): ReportJson {
  return {
    baseline: { id: baseline.id, sha256: baseline.sha256, title: baseline.title },
    from: fromKey,
    to: toKey,
    tenants: tenants.map((t) => tenantReport(t.tenant, baseline, t.periods, fromKey, toKey)),
  };
}

/** One control in `baseline check --format json`. */
export interface CheckControlJson {
  readonly id: string;
  readonly title: string;
  readonly severity: string;
  readonly frameworks: Readonly<Record<string, readonly string[]>>;
  readonly status: Status;
  readonly value: unknown;
  readonly since: string | null;
  readonly change: CheckChange;
  /** The exception in force, for an excepted control. */
  readonly exception: {
    readonly rationale: string;
    readonly approved_by: string;
    readonly approved_at: string;
    readonly retroactive: boolean;
    readonly ticket: string | null;
    readonly expires: string;
  } | null;
}

export interface CheckTenantJson {
  readonly tenant: string;
  readonly controls: readonly CheckControlJson[];
}

export interface CheckJson {
  readonly baseline: { readonly id: string; readonly sha256: string; readonly title: string };
  readonly at: string;
  readonly tenants: readonly CheckTenantJson[];
}

/** What a check needs of one tenant. */
export interface CheckInput {
  readonly tenant: string;
  /** The entry that set the settings in force at `at`; undefined before the first one. */
  readonly inForce: JudgedEntry | undefined;
  /** When the current status of each control began (from control_period); absent when unknown. */
  readonly since: ReadonlyMap<string, string>;
  /** What the previous check saw; undefined for the first. */
  readonly previous: Readonly<Record<string, Status>> | undefined;
}

/** The exception of `baseline` in force for this tenant and control at `at` that accepts `value`. */
function exceptionInForce(
  baseline: Baseline,
  control: Control,
  tenant: string,
  at: string,
  loadedAtKey: string,
  value: unknown,
): BaselineException | undefined {
  const k = valueKey(control.field, value);
  return baseline.exceptions.find((x) => {
    if (x.control !== control.id || !x.tenants.includes(tenant)) return false;
    const from = approvedAtKey(x, { loadedAtKey });
    return from <= at && at < x.expires && valueKey(control.field, x.value) === k;
  });
}

/** The change since the previous check, from the previous and current status. */
export function changeOf(
  previous: Status | undefined,
  now: Status,
  expiredException: boolean,
  expiringSoon: boolean,
): CheckChange {
  const failing = (s: Status | undefined) => s === 'fail' || s === 'deleted';
  if (failing(now)) {
    if (failing(previous)) return 'still_failing';
    if (previous === 'excepted' && expiredException) return 'exception_expired';
    return 'new_fail';
  }
  if (now === 'excepted') {
    if (expiringSoon) return 'exception_expiring';
    return previous === 'excepted' ? null : 'new_exception';
  }
  if (now === 'pass' && (failing(previous) || previous === 'excepted')) return 'fixed';
  return null;
}

/** `baseline check`: the status of every control at `at` (a nanosecond key), per tenant. */
export function buildCheck(
  baseline: Baseline,
  at: string,
  atMs: number,
  loadedAtKey: string,
  tenants: readonly CheckInput[],
): CheckJson {
  return {
    baseline: { id: baseline.id, sha256: baseline.sha256, title: baseline.title },
    at,
    tenants: tenants.map((t) => ({
      tenant: t.tenant,
      controls: baseline.controls.map((control): CheckControlJson => {
        const windows = baseline.exceptions
          .filter((x) => x.control === control.id && x.tenants.includes(t.tenant))
          .map((x) => ({
            control: control.id,
            fromKey: approvedAtKey(x, { loadedAtKey }),
            toKey: x.expires,
            valueKey: valueKey(control.field, x.value),
          }));
        const judged =
          t.inForce === undefined ? undefined : statusOf(control, t.inForce.snapshot, at, windows);
        const status: Status = judged?.status ?? 'unknown';
        const value = t.inForce?.snapshot == null ? null : effectiveValue(control.field, t.inForce.snapshot);
        const exception =
          status === 'excepted'
            ? exceptionInForce(baseline, control, t.tenant, at, loadedAtKey, value)
            : undefined;
        const expiringSoon =
          exception !== undefined &&
          keyNanos(exception.expires) - BigInt(atMs) * 1_000_000n <= BigInt(EXPIRING_WITHIN_MS) * 1_000_000n;
        const expired =
          t.inForce?.snapshot != null &&
          baseline.exceptions.some(
            (x) =>
              x.control === control.id &&
              x.tenants.includes(t.tenant) &&
              x.expires <= at &&
              valueKey(control.field, x.value) === valueKey(control.field, value),
          );
        return {
          id: control.id,
          title: control.title,
          severity: control.severity,
          frameworks: control.frameworks,
          status,
          value,
          since: t.since.get(control.id) ?? null,
          change:
            status === 'unknown' ? null : changeOf(t.previous?.[control.id], status, expired, expiringSoon),
          exception:
            exception === undefined
              ? null
              : {
                  rationale: exception.rationale,
                  approved_by: exception.approvedBy,
                  approved_at: approvedAtKey(exception, { loadedAtKey }),
                  retroactive: isRetroactive(exception, loadedAtKey),
                  ticket: exception.ticket,
                  expires: exception.expires,
                },
        };
      }),
    })),
  };
}

/** Whether a check fails (exit code 1): any control fail or deleted. */
export function checkFails(check: CheckJson): boolean {
  return check.tenants.some((t) => t.controls.some((c) => c.status === 'fail' || c.status === 'deleted'));
}
