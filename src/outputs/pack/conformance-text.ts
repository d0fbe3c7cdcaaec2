/**
 * The evidence pack's conformance/ folder in words and rows (pure): the answer to the auditor's
 * question — does the tenant meet the declared policy now, did it at every moment of the period,
 * and where not, who, under which ticket, and was it accepted — and the rows of summary.csv,
 * periods.csv and exceptions.csv. files/conformance.ts reads the store and writes them.
 */
import type { Baseline, BaselineException } from '../../core/conformance/baseline.js';
import { valueText } from '../../core/conformance/format.js';
import {
  approvedAtKey,
  type ControlPeriod,
  isRetroactive,
  type Status,
} from '../../core/conformance/judge.js';
import type { FailPeriodJson, PeriodCause, TenantReportJson } from '../../core/conformance/report.js';
import { humanSeconds } from '../../core/format.js';
import { wrap } from './readme.js';

/** What the folder is written from. */
export interface ConformanceFacts {
  readonly tenantId: string;
  readonly baseline: Baseline;
  /** When the baseline text was first loaded (key). */
  readonly loadedAtKey: string;
  readonly fromKey: string;
  readonly toKey: string;
  /** The instant "now" is judged at: the end of the period, or the generation time when earlier (key). */
  readonly atKey: string;
  readonly report: TenantReportJson;
  /** The tenant's stored periods (control then time order). */
  readonly periods: readonly ControlPeriod[];
}

/** The status of each control just before `atKey`, with the period that holds then. */
export function statusesAt(
  facts: ConformanceFacts,
): Map<string, { status: Status; period: ControlPeriod | undefined }> {
  const out = new Map<string, { status: Status; period: ControlPeriod | undefined }>();
  for (const c of facts.baseline.controls) out.set(c.id, { status: 'unknown', period: undefined });
  for (const p of facts.periods) {
    if (p.fromKey >= facts.atKey || !out.has(p.controlId)) continue;
    out.set(p.controlId, { status: p.status, period: p });
  }
  return out;
}

/** The baseline's exceptions for this tenant that hold at some instant of the period. */
export function exceptionsInPeriod(facts: ConformanceFacts): BaselineException[] {
  return facts.baseline.exceptions.filter((x) => {
    if (!x.tenants.includes(facts.tenantId)) return false;
    const from = approvedAtKey(x, { loadedAtKey: facts.loadedAtKey });
    return from < facts.toKey && x.expires > facts.fromKey && from < x.expires;
  });
}

/** A share as a percentage, two decimals; a share too small to show is `< 0.01 %`, never `0.00 %`. */
function pct(share: number): string {
  if (share > 0 && share < 0.00005) return '< 0.01 %';
  return `${(share * 100).toFixed(2)} %`;
}

function by(c: PeriodCause | null): string {
  if (c === null) return 'nothing yet';
  if (c.entry_id === null)
    return c.cause === 'exception_expired' ? 'the expiry of an exception' : 'an exception';
  const who = [c.actor_kind ?? 'an unknown actor', c.actor_user_id]
    .filter((x) => x !== null && x !== '')
    .join(' user ');
  return `entry ${c.entry_id} by ${who}, ${c.ticket === null || c.ticket === '' ? 'WITHOUT a ticket' : `ticket ${c.ticket}`}`;
}

/** The plain-words answer, for conformance/README.txt and the pack's README.txt. */
export function conformanceAnswer(facts: ConformanceFacts): string {
  const { baseline, report } = facts;
  const now = statusesAt(facts);
  const failingNow = baseline.controls.filter((c) => {
    const s = now.get(c.id)?.status;
    return s === 'fail' || s === 'deleted';
  });
  const exceptedNow = baseline.controls.filter((c) => now.get(c.id)?.status === 'excepted');
  const fails = report.controls.flatMap((c) => c.fail_periods.map((p) => ({ c, p })));
  const excepted = report.controls.flatMap((c) => c.excepted_periods.map((p) => ({ c, p })));
  const failedControls = report.controls.filter((c) => c.fail_periods.length > 0);
  const longest = fails.reduce<{ c: (typeof fails)[number]['c']; p: FailPeriodJson } | undefined>(
    (m, x) => (m === undefined || x.p.seconds > m.p.seconds ? x : m),
    undefined,
  );
  const noTicket = fails.filter(
    (x) => x.p.opened_by.entry_id !== null && (x.p.opened_by.ticket ?? '') === '',
  );
  const exceptions = exceptionsInPeriod(facts);
  const retro = exceptions.filter((x) => isRetroactive(x, facts.loadedAtKey));

  const q1 =
    failingNow.length === 0
      ? `YES. At ${facts.atKey} every one of the ${baseline.controls.length} controls is met` +
        (exceptedNow.length > 0
          ? `, ${exceptedNow.length} of them only because an exception accepts the value (${exceptedNow.map((c) => c.id).join(', ')}).`
          : '.')
      : `NO. At ${facts.atKey}, ${failingNow.length} of the ${baseline.controls.length} controls fail: ` +
        failingNow
          .map((c) => {
            const p = now.get(c.id)?.period;
            const what =
              p?.status === 'deleted' ? 'the settings are hard-deleted' : `value ${valueText(p?.value)}`;
            return `${c.id} "${c.title}" (${what}, since ${p?.fromKey ?? '?'}, set by ${by(p === undefined ? null : causeOfPeriod(p))})`;
          })
          .join('; ') +
        '.';
  const q2 =
    fails.length === 0
      ? `YES. No control failed at any instant of the period; compliant (pass or excepted) ${pct(report.compliant)} of the time` +
        (report.share.unknown > 0
          ? `, the rest unknown (before the first stored snapshot: ${pct(report.share.unknown)}).`
          : '.')
      : `NO. Over the period the tenant was compliant ${pct(report.compliant)} of the time (pass ${pct(report.share.pass)}, ` +
        `excepted ${pct(report.share.excepted)}), failing ${pct(report.share.fail + report.share.deleted)}` +
        `${report.share.deleted > 0 ? ` (of which settings deleted ${pct(report.share.deleted)})` : ''}, unknown ${pct(report.share.unknown)}. ` +
        `${failedControls.length} control${failedControls.length === 1 ? '' : 's'} failed at some instant ` +
        `(${failedControls.map((c) => c.id).join(', ')}), in ${fails.length} period${fails.length === 1 ? '' : 's'}` +
        (longest === undefined
          ? '.'
          : `; the longest: ${longest.c.id} for ${humanSeconds(Math.round(longest.p.seconds))}, from ${longest.p.from} to ${longest.p.to}, opened by ${by(longest.p.opened_by)}.`);
  const q3 =
    fails.length === 0 && excepted.length === 0
      ? 'Nothing to account for: no fail and no excepted period in the period.'
      : `periods.csv lists every fail, deleted and excepted period with the entry, actor and ticket that opened and closed it. ` +
        `${noTicket.length} of the ${fails.length} fail periods were opened by a change without a ticket. ` +
        (excepted.length === 0
          ? 'No gap was accepted: no exception held for this tenant during the period.'
          : `${excepted.length} period${excepted.length === 1 ? ' was' : 's were'} accepted under ${exceptions.length} exception${exceptions.length === 1 ? '' : 's'} (exceptions.csv): ` +
            exceptions
              .map(
                (x) =>
                  `${x.control} accepts ${valueText(x.value)} ("${x.rationale}", approved by ${x.approvedBy}${x.ticket === null ? '' : `, ticket ${x.ticket}`}, until ${x.expires}${isRetroactive(x, facts.loadedAtKey) ? ', RETROACTIVE: approved before the baseline was first loaded' : ''})`,
              )
              .join('; ') +
            '.') +
        (retro.length > 0
          ? ` ${retro.length} exception${retro.length === 1 ? ' is' : 's are'} retroactive.`
          : '');
  return [
    wrap(`Does tenant ${facts.tenantId} meet the declared policy now? ${q1}`, '  '),
    wrap(`Did it meet it at every moment of the period? ${q2}`, '  '),
    wrap(`Where not: who, which ticket, and was it accepted? ${q3}`, '  '),
  ].join('\n\n');
}

function causeOfPeriod(p: ControlPeriod): PeriodCause {
  return {
    entry_id: p.entryId,
    actor_kind: p.actorKind,
    actor_user_id: p.actorUserId,
    ticket: p.ticket,
    cause:
      p.entryId !== null ? 'entry' : p.status === 'excepted' ? 'exception_approved' : 'exception_expired',
  };
}

/** conformance/README.txt. */
export function conformanceReadme(facts: ConformanceFacts | undefined, tenantId: string): string {
  if (facts === undefined)
    return `Conformance
===========

No baseline has judged tenant ${tenantId}, so this pack cannot say whether it met a declared policy.
Declare one (GOVTRAIL_BASELINE, or baseline: in GOVTRAIL_CONFIG; govtrail ships
baselines/recommended.yaml), sync, and make the pack again: the history is judged from its first
entry on, so the new pack covers this period too.
`;
  const b = facts.baseline;
  return `Conformance
===========

Baseline:  ${b.id} "${b.title}", sha256 ${b.sha256} (baseline.yaml, baseline.sha256)
           first loaded ${facts.loadedAtKey}; ${b.controls.length} controls, ${b.exceptions.length} exceptions
Period:    ${facts.fromKey} (included) to ${facts.toKey} (excluded)

Every control is judged at every instant of the stored history, not at sampled times: the status
changes exactly when an entry changed the settings (at the nanosecond the tenant recorded) or when an
exception was approved or expired.

${conformanceAnswer(facts)}

Files
-----
baseline.yaml     the exact baseline text the periods were judged by
baseline.sha256   its sha256 (sha256sum -c baseline.sha256, inside this folder)
summary.csv       per control (and a row for all controls): the share of the period in each status,
                  the status at the end, the number and longest of the fail periods
periods.csv       every fail, deleted and excepted period overlapping the period: from, to, entry,
                  actor and ticket that opened and closed it, the exception that accepted it
exceptions.csv    every exception of the baseline for this tenant that held at some instant of the
                  period: value, rationale, approver, approval (retroactive or not), ticket, expiry
`;
}

export const SUMMARY_HEADER = [
  'tenant',
  'control_id',
  'title',
  'severity',
  'field',
  'expect',
  'frameworks',
  'status_at_end',
  'share_pass',
  'share_fail',
  'share_excepted',
  'share_deleted',
  'share_unknown',
  'compliant_share',
  'fail_periods',
  'longest_fail_seconds',
] as const;

/** summary.csv rows: one per control, then `(all controls)`. */
export function summaryRows(facts: ConformanceFacts): string[][] {
  const now = statusesAt(facts);
  const f = (x: number) => x.toFixed(9);
  const rows = facts.report.controls.map((c) => {
    const control = facts.baseline.controls.find((x) => x.id === c.id);
    return [
      facts.tenantId,
      c.id,
      c.title,
      c.severity,
      c.field,
      control?.expectText ?? '',
      Object.entries(c.frameworks)
        .map(([k, v]) => `${k}: ${v.join(' ')}`)
        .join('; '),
      now.get(c.id)?.status ?? 'unknown',
      f(c.share.pass),
      f(c.share.fail),
      f(c.share.excepted),
      f(c.share.deleted),
      f(c.share.unknown),
      f(c.compliant),
      String(c.fail_count),
      String(c.longest_fail_seconds),
    ];
  });
  const r = facts.report;
  rows.push([
    facts.tenantId,
    '(all controls)',
    '',
    '',
    '',
    '',
    '',
    '',
    f(r.share.pass),
    f(r.share.fail),
    f(r.share.excepted),
    f(r.share.deleted),
    f(r.share.unknown),
    f(r.compliant),
    String(r.controls.reduce((n, c) => n + c.fail_count, 0)),
    String(r.controls.reduce((m, c) => Math.max(m, c.longest_fail_seconds), 0)),
  ]);
  return rows;
}

export const PERIODS_HEADER = [
  'tenant',
  'control_id',
  'title',
  'status',
  'from',
  'to',
  'open_at_end',
  'seconds_in_period',
  'opened_by_entry_id',
  'opened_by_actor_kind',
  'opened_by_actor_user_id',
  'opened_by_ticket',
  'opened_by',
  'closed_by_entry_id',
  'closed_by_actor_kind',
  'closed_by_actor_user_id',
  'closed_by_ticket',
  'closed_by',
  'exception_rationale',
  'exception_approved_by',
  'exception_ticket',
  'exception_expires',
] as const;

/** periods.csv rows: every fail, deleted and excepted period, by control then time. */
export function periodRows(facts: ConformanceFacts): string[][] {
  const rows: string[][] = [];
  const cause = (c: PeriodCause | null) =>
    c === null
      ? ['', '', '', '', '']
      : [c.entry_id ?? '', c.actor_kind ?? '', c.actor_user_id ?? '', c.ticket ?? '', c.cause];
  for (const c of facts.report.controls) {
    const all = [...c.fail_periods, ...c.excepted_periods].sort((a, b) => (a.from < b.from ? -1 : 1));
    for (const p of all) {
      const x =
        p.status === ('excepted' as string)
          ? (facts.baseline.exceptions.find(
              (e) =>
                e.control === c.id &&
                e.tenants.includes(facts.tenantId) &&
                approvedAtKey(e, { loadedAtKey: facts.loadedAtKey }) <= p.from &&
                p.from < e.expires,
            ) ??
            facts.baseline.exceptions.find(
              (e) =>
                e.control === c.id &&
                e.tenants.includes(facts.tenantId) &&
                approvedAtKey(e, { loadedAtKey: facts.loadedAtKey }) < p.to &&
                e.expires > p.from,
            ))
          : undefined;
      rows.push([
        facts.tenantId,
        c.id,
        c.title,
        p.status,
        p.from,
        p.to,
        p.closed_by === null && p.to === facts.toKey ? 'true' : 'false',
        String(p.seconds),
        ...cause(p.opened_by),
        ...cause(p.closed_by),
        x?.rationale ?? '',
        x?.approvedBy ?? '',
        x?.ticket ?? '',
        x?.expires ?? '',
      ]);
    }
  }
  return rows;
}

export const EXCEPTIONS_HEADER = [
  'tenant',
  'control_id',
  'value',
  'rationale',
  'approved_by',
  'approved_at',
  'retroactive',
  'ticket',
  'expires',
  'in_force_at_end',
] as const;

/** exceptions.csv rows. */
export function exceptionRows(facts: ConformanceFacts): string[][] {
  return exceptionsInPeriod(facts).map((x) => {
    const from = approvedAtKey(x, { loadedAtKey: facts.loadedAtKey });
    return [
      facts.tenantId,
      x.control,
      valueText(x.value),
      x.rationale,
      x.approvedBy,
      from,
      isRetroactive(x, facts.loadedAtKey) ? 'true' : 'false',
      x.ticket ?? '',
      x.expires,
      from <= facts.atKey && facts.atKey < x.expires ? 'true' : 'false',
    ];
  });
}
