/**
 * Conformance alerts (docs/design/conformance.md "Alerts", docs/design/alerts.md): built from what a
 * run's judgement wrote. Pure. Kept apart from the rule pack: these alerts follow the baseline's
 * controls, not rules, and carry the control's own severity so that routes by severity treat a
 * control's failure and its resolution alike.
 *
 * - CONF-001 a control moved to fail or deleted (by an entry this run stored, or by an exception's
 *   expiry that has come to pass since the last judgement);
 * - CONF-002 the move back to pass: a resolution naming the CONF-001 alert it ends
 *   (`details.resolves`: that alert's dedupe key), so a sink that can resolve does;
 * - CONF-003 an exception in force expires within 14 days (once per exception);
 * - CONF-004 the first judgement of a tenant (or by a new baseline): one digest of what fails now,
 *   never one alert per historical failure.
 */
import type { AlertContext, AlertDraft, Severity } from '../alert.js';
import type { Baseline, Control } from './baseline.js';
import { type ControlPeriod, keyNanos } from './judge.js';
import { EXPIRING_WITHIN_MS } from './report.js';

export const CONFORMANCE_RULES = {
  failing: { id: 'CONF-001', name: 'control-failing' },
  resolved: { id: 'CONF-002', name: 'control-back-in-policy' },
  expiring: { id: 'CONF-003', name: 'exception-expiring' },
  digest: { id: 'CONF-004', name: 'conformance-digest' },
} as const;

/** Facts about an entry that opened a period, for the alert's context. */
export interface OpenerFacts {
  readonly changedAt: string | null;
  readonly changeKind: string | null;
}

export interface ConformanceAlertInput {
  readonly tenant: string;
  readonly baseline: Baseline;
  /** `full` judgements raise the digest only. */
  readonly scope: 'full' | 'from' | 'none';
  /** The periods the judgement wrote (rewritten stored rows and new rows). */
  readonly written: readonly ControlPeriod[];
  /** Per control, the stored period before the first written one (what a status moved from). */
  readonly before: ReadonlyMap<string, ControlPeriod>;
  /** Entries this run stored (only their moves raise CONF-001 / CONF-002), with their facts. */
  readonly runEntries: ReadonlyMap<string, OpenerFacts>;
  /** Periods in force now, per control (for the digest and the expiring exceptions). */
  readonly inForce: ReadonlyMap<string, ControlPeriod>;
  /** Expiry-opened fail periods that began since the last judgement and are not in the future. */
  readonly expired: readonly ControlPeriod[];
  /** Now, as a nanosecond key and in milliseconds. */
  readonly nowKey: string;
  readonly nowMs: number;
  readonly runbook: string;
}

/** The dedupe key of the CONF-001 alert of a fail period (what CONF-002 resolves). */
export function failingKey(tenant: string, baseline: Baseline, controlId: string, fromKey: string): string {
  return `${CONFORMANCE_RULES.failing.id}:${tenant}:${baseline.id}:${controlId}:${fromKey}`;
}

function context(
  input: ConformanceAlertInput,
  rule: { readonly id: string; readonly name: string },
  period: ControlPeriod | null,
  details: Record<string, unknown>,
): AlertContext {
  const facts = period?.entryId == null ? undefined : input.runEntries.get(period.entryId);
  return {
    tenantId: input.tenant,
    entryId: period?.entryId ?? null,
    changedAt: facts?.changedAt ?? period?.fromKey ?? null,
    changeKind: facts?.changeKind ?? null,
    actor: { kind: period?.actorKind ?? null, userId: period?.actorUserId ?? null },
    tickets: period?.ticket == null ? [] : [{ value: period.ticket, url: null }],
    reasons: [],
    changes: [],
    allChanges: [],
    syslogEventId: null,
    traceId: null,
    runbook: input.runbook,
    ruleName: rule.name,
    details: { baseline: { id: input.baseline.id, sha256: input.baseline.sha256 }, ...details },
  };
}

function controlFacts(c: Control, value: unknown): Record<string, unknown> {
  return {
    control: c.id,
    title: c.title,
    field: c.field.name,
    frameworks: c.frameworks,
    value,
    severity: c.severity,
  };
}

function frameworksText(c: Control): string {
  const parts = Object.entries(c.frameworks).map(([k, v]) => `${k} ${v.join(', ')}`);
  return parts.length === 0 ? '' : ` (${parts.join('; ')})`;
}

function valueShown(v: unknown): string {
  return typeof v === 'string' ? v : JSON.stringify(v);
}

/** Every conformance alert a run's judgement raises. */
export function conformanceAlerts(input: ConformanceAlertInput): AlertDraft[] {
  const out: AlertDraft[] = [];
  const controls = new Map(input.baseline.controls.map((c) => [c.id, c]));
  if (input.scope === 'full') {
    const failing = input.baseline.controls.filter((c) => {
      const p = input.inForce.get(c.id);
      return p !== undefined && (p.status === 'fail' || p.status === 'deleted');
    });
    if (failing.length > 0) {
      const rule = CONFORMANCE_RULES.digest;
      const list = failing.map((c) => `${c.id} ${c.title}`).join('; ');
      out.push({
        ruleId: rule.id,
        ruleVersion: 1,
        severity: highest(failing.map((c) => c.severity)),
        title: `Baseline ${input.baseline.id}: ${failing.length} control${failing.length === 1 ? '' : 's'} failing`,
        summary: `Tenant ${input.tenant} judged against baseline ${input.baseline.id} for the first time: failing now: ${list}.`,
        entryId: null,
        dedupeKey: `${rule.id}:${input.tenant}:${input.baseline.id}:${input.baseline.sha256}`,
        context: context(input, rule, null, {
          failing: failing.map((c) => controlFacts(c, input.inForce.get(c.id)?.value ?? null)),
        }),
      });
    }
    return out;
  }
  // Moves made by this run's entries, in time order per control.
  const byControl = new Map<string, ControlPeriod[]>();
  for (const p of input.written) byControl.set(p.controlId, [...(byControl.get(p.controlId) ?? []), p]);
  for (const [controlId, list] of byControl) {
    const control = controls.get(controlId);
    if (control === undefined) continue;
    list.sort((a, b) => (a.fromKey < b.fromKey ? -1 : 1));
    let previous = input.before.get(controlId);
    for (const p of list) {
      const moved = previous === undefined || previous.fromKey !== p.fromKey;
      const byRun = p.entryId !== null && input.runEntries.has(p.entryId);
      if (moved && byRun) {
        if (p.status === 'fail' || p.status === 'deleted') out.push(failingAlert(input, control, p));
        else if (
          p.status === 'pass' &&
          previous !== undefined &&
          (previous.status === 'fail' || previous.status === 'deleted')
        ) {
          out.push(resolvedAlert(input, control, p, previous));
        }
      }
      previous = p;
    }
  }
  for (const p of input.expired) {
    const control = controls.get(p.controlId);
    if (control !== undefined && p.status === 'fail') out.push(failingAlert(input, control, p));
  }
  // Exceptions in force that expire within 14 days: one low alert each.
  for (const x of input.baseline.exceptions) {
    if (!x.tenants.includes(input.tenant)) continue;
    const p = input.inForce.get(x.control);
    const control = controls.get(x.control);
    if (p === undefined || control === undefined || p.status !== 'excepted') continue;
    const left = keyNanos(x.expires) - BigInt(input.nowMs) * 1_000_000n;
    if (left <= 0n || left > BigInt(EXPIRING_WITHIN_MS) * 1_000_000n) continue;
    const rule = CONFORMANCE_RULES.expiring;
    out.push({
      ruleId: rule.id,
      ruleVersion: 1,
      severity: 'low',
      title: `Exception for ${control.id} expires ${x.expires.slice(0, 10)}`,
      summary: `The exception accepting ${valueShown(x.value)} for ${control.id} "${control.title}" on tenant ${input.tenant} expires at ${x.expires}${x.ticket === null ? '' : ` (ticket ${x.ticket})`}; the control fails from then unless the value changes or the exception is renewed.`,
      entryId: null,
      dedupeKey: `${rule.id}:${input.tenant}:${input.baseline.id}:${control.id}:${x.expires}`,
      context: context(input, rule, null, {
        ...controlFacts(control, p.value),
        exception: {
          expires: x.expires,
          approved_by: x.approvedBy,
          rationale: x.rationale,
          ticket: x.ticket,
        },
      }),
    });
  }
  return out;
}

function failingAlert(input: ConformanceAlertInput, control: Control, p: ControlPeriod): AlertDraft {
  const rule = CONFORMANCE_RULES.failing;
  const who =
    p.entryId === null
      ? 'an exception expired'
      : `by ${p.actorKind ?? 'unknown actor'}${p.actorUserId === null ? '' : ` ${p.actorUserId}`}`;
  const what =
    p.status === 'deleted' ? 'the settings were deleted' : `${control.field.name} = ${valueShown(p.value)}`;
  return {
    ruleId: rule.id,
    ruleVersion: 1,
    severity: control.severity,
    title: `${control.id} ${control.title}: ${p.status === 'deleted' ? 'settings deleted' : 'out of policy'}`,
    summary: `Tenant ${input.tenant} fails control ${control.id} "${control.title}"${frameworksText(control)} since ${p.fromKey}: ${what}, ${who}.`,
    entryId: p.entryId,
    dedupeKey: failingKey(input.tenant, input.baseline, control.id, p.fromKey),
    context: context(input, rule, p, {
      ...controlFacts(control, p.value),
      status: p.status,
      since: p.fromKey,
    }),
  };
}

function resolvedAlert(
  input: ConformanceAlertInput,
  control: Control,
  p: ControlPeriod,
  failed: ControlPeriod,
): AlertDraft {
  const rule = CONFORMANCE_RULES.resolved;
  const resolves = failingKey(input.tenant, input.baseline, control.id, failed.fromKey);
  return {
    ruleId: rule.id,
    ruleVersion: 1,
    severity: control.severity,
    title: `${control.id} ${control.title}: back in policy`,
    summary: `Tenant ${input.tenant} meets control ${control.id} "${control.title}" again since ${p.fromKey} (${control.field.name} = ${valueShown(p.value)}); it had failed since ${failed.fromKey}.`,
    entryId: p.entryId,
    dedupeKey: `${rule.id}:${resolves}`,
    context: context(input, rule, p, {
      ...controlFacts(control, p.value),
      resolves,
      failedSince: failed.fromKey,
    }),
  };
}

function highest(list: readonly Severity[]): Severity {
  const order: Severity[] = ['low', 'medium', 'high', 'critical'];
  return list.reduce<Severity>((m, s) => (order.indexOf(s) > order.indexOf(m) ? s : m), 'low');
}
