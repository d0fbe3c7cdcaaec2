/**
 * The report's "Compliance" section (docs/design/conformance.md): the share of the period the
 * tenant met its baseline, and the controls failing now with the change that made them fail.
 * Pure: {@link ReportCompliance} in, markup out.
 */
import { shortEnum } from '../../core/format.js';
import { esc } from './escape.js';

export type ReportStatus = 'pass' | 'fail' | 'excepted' | 'deleted' | 'unknown';
export type ReportShares = Readonly<Record<ReportStatus, number>>;

export interface ReportControl {
  readonly id: string;
  readonly title: string;
  readonly severity: string;
  /** The share of the report's period in each status. */
  readonly share: ReportShares;
  /** The status now (at the report's generation). */
  readonly status: ReportStatus;
  /** Since when (RFC 3339 text), null when unknown. */
  readonly since: string | null;
  /** The field's effective value now, as text. */
  readonly value: string | null;
  readonly entryId: string | null;
  readonly actorKind: string | null;
  readonly actorUserId: string | null;
  readonly ticket: string | null;
}

export interface ReportCompliance {
  readonly baseline: { readonly id: string; readonly title: string; readonly sha256: string };
  /** Over all controls (time-weighted mean). */
  readonly share: ReportShares;
  readonly controls: readonly ReportControl[];
}

/** The share compliant: pass or excepted (an accepted exception). */
export function compliantShare(share: ReportShares): number {
  return share.pass + share.excepted;
}

/** `93.4 %`. */
export function percent(share: number): string {
  return `${(share * 100).toFixed(1)} %`;
}

/** `2026-01-04 07:48 UTC` of an RFC 3339 text, as the report's other times; the full text in a tooltip. */
function shortTime(text: string): string {
  return `${text.slice(0, 16).replace('T', ' ')} UTC`;
}

function failing(s: ReportStatus): boolean {
  return s === 'fail' || s === 'deleted';
}

function who(c: ReportControl): string {
  if (c.entryId === null) return 'an exception expiry';
  const kind = c.actorKind === null || c.actorKind === '' ? 'unknown actor' : shortEnum(c.actorKind);
  return [kind, c.actorUserId].filter((x) => x !== null && x !== '').join(' · ');
}

/** The KPI of the report's header: % compliant over the period, or nothing without a baseline. */
export function complianceKpi(
  c: ReportCompliance | undefined,
): { v: string; l: string; warn: boolean } | undefined {
  if (c === undefined) return undefined;
  const share = compliantShare(c.share);
  const now = c.controls.filter((x) => failing(x.status)).length;
  return {
    v: percent(share),
    l: `compliant (${now} control${now === 1 ? '' : 's'} failing now)`,
    warn: now > 0,
  };
}

/** The section; a note saying how to declare a policy when no baseline judges the tenant. */
export function complianceSection(c: ReportCompliance | undefined): string {
  if (c === undefined)
    return `<section>
  <h2>Compliance</h2>
  <p class="note">No baseline judges this tenant, so nothing says whether it meets a declared policy. Set <code>GOVTRAIL_BASELINE</code> (for example to the shipped <code>baselines/recommended.yaml</code>) or <code>baseline:</code> in <code>GOVTRAIL_CONFIG</code>, then sync.</p>
</section>`;
  const now = c.controls.filter((x) => failing(x.status));
  const verdict =
    now.length === 0
      ? `<span class="ok">Every control of the baseline is met now.</span>`
      : `<span class="bad">${now.length} of ${c.controls.length} controls fail now.</span>`;
  const failingRows = now
    .map(
      (x) =>
        `<tr><td><strong>${esc(x.id)}</strong></td><td>${esc(x.title)}</td><td><span class="badge sev-${esc(x.severity)}">${esc(x.severity)}</span></td><td><span class="bad">${esc(x.status === 'deleted' ? 'settings deleted' : 'fail')}</span></td><td class="t">${x.since === null ? '—' : `<span title="${esc(x.since)}">${esc(shortTime(x.since))}</span>`}</td><td>${x.value === null ? '—' : `<code class="v">${esc(x.value)}</code>`}</td><td>${esc(who(x))}</td><td>${x.ticket === null || x.ticket === '' ? '<span class="bad">none</span>' : esc(x.ticket)}</td><td>${x.entryId === null ? '—' : `<code>${esc(x.entryId)}</code>`}</td></tr>`,
    )
    .join('\n');
  const controlRows = c.controls
    .map(
      (x) =>
        `<tr><td>${esc(x.id)}</td><td>${esc(x.title)}</td><td class="t">${esc(percent(compliantShare(x.share)))}</td><td class="t">${esc(percent(x.share.fail + x.share.deleted))}</td><td class="t">${esc(percent(x.share.excepted))}</td><td class="t">${esc(percent(x.share.unknown))}</td><td>${failing(x.status) ? `<span class="bad">${esc(x.status)}</span>` : x.status === 'pass' ? `<span class="ok">pass</span>` : esc(x.status)}</td></tr>`,
    )
    .join('\n');
  return `<section>
  <h2>Compliance</h2>
  <p class="note">Every control of baseline <strong>${esc(c.baseline.id)}</strong> (${esc(c.baseline.title)}, sha256 <code title="${esc(c.baseline.sha256)}">${esc(c.baseline.sha256.slice(0, 12))}…</code>) judged at every instant of the period, not sampled. Compliant means the value met the control, or an exception in force accepted it; time before the first stored snapshot is unknown.</p>
  <p class="verdict">${verdict} Over the period the tenant was compliant <strong>${esc(percent(compliantShare(c.share)))}</strong> of the time (failing ${esc(percent(c.share.fail + c.share.deleted))}, excepted ${esc(percent(c.share.excepted))}, unknown ${esc(percent(c.share.unknown))}).</p>
  <h2>Controls failing now</h2>
  <table>
    <thead><tr><th>Control</th><th>Title</th><th>Severity</th><th>Status</th><th>Since</th><th>Value</th><th>Changed by</th><th>Ticket</th><th>Entry</th></tr></thead>
    <tbody>
${failingRows || '<tr><td colspan="9">No control fails now.</td></tr>'}
    </tbody>
  </table>
  <h2>Every control over the period</h2>
  <table>
    <thead><tr><th>Control</th><th>Title</th><th>Compliant</th><th>Failing</th><th>Excepted</th><th>Unknown</th><th>Now</th></tr></thead>
    <tbody>
${controlRows || '<tr><td colspan="7">The baseline has no controls.</td></tr>'}
    </tbody>
  </table>
</section>`;
}
