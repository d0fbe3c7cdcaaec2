/**
 * The HTML report: one self-contained file (inline CSS and SVG, system fonts, no scripts, no
 * fetches) readable at 1280 px and printable. Pure: {@link ReportData} in, markup out.
 */
import { formatValue, humanSeconds, shortEnum } from '../../core/format.js';
import { SNAPSHOT_FIELDS } from '../../core/normalise/fields.js';
import { postureTimeline, severityBars, weeklyBars } from './charts.js';
import { complianceKpi, complianceSection } from './compliance-section.js';
import { REPORT_DISCREPANCY_ROWS, type ReportData } from './data.js';
import { esc, safeUrl } from './escape.js';

const CSS = `
:root { --ink:#1f2933; --muted:#64748b; --line:#e5e7eb; --bg:#f7f8fa; --loose:#c8553d; --tight:#2f7d78; --changed:#8a9bb0; }
* { box-sizing: border-box; }
body { margin:0; background:var(--bg); color:var(--ink);
  font: 14px/1.5 -apple-system, BlinkMacSystemFont, "Segoe UI", Roboto, "Helvetica Neue", Arial, "Noto Sans", "Liberation Sans", sans-serif; }
main { max-width: 1200px; margin: 0 auto; padding: 32px 40px 48px; }
header { display:flex; justify-content:space-between; align-items:flex-end; border-bottom: 2px solid var(--ink); padding-bottom: 14px; margin-bottom: 24px; }
h1 { font-size: 24px; margin: 0; letter-spacing: -0.01em; }
h1 small { display:block; font-size: 13px; font-weight: 500; color: var(--muted); letter-spacing: 0.04em; text-transform: uppercase; margin-bottom: 4px; }
header .meta { text-align:right; color: var(--muted); font-size: 13px; }
h2 { font-size: 16px; margin: 0 0 4px; }
section { background:#fff; border:1px solid var(--line); border-radius: 6px; padding: 20px 22px; margin-bottom: 20px; break-inside: avoid; }
section > p.note { color: var(--muted); margin: 0 0 14px; font-size: 13px; }
.kpis { display:grid; grid-template-columns: repeat(auto-fit, minmax(180px, 1fr)); gap: 14px; margin-bottom: 20px; }
.kpi { background:#fff; border:1px solid var(--line); border-radius:6px; padding: 14px 16px; }
.kpi .v { font-size: 26px; font-weight: 650; font-variant-numeric: tabular-nums; }
.kpi .l { color: var(--muted); font-size: 12px; text-transform: uppercase; letter-spacing: .04em; }
.kpi.warn .v { color: var(--loose); }
.row2 { display:grid; grid-template-columns: 1fr 1fr; gap: 20px; }
.row2 section { margin-bottom: 20px; }
.legend { display:flex; gap: 16px; font-size: 12px; color: var(--muted); margin: 0 0 10px; }
.legend i { display:inline-block; width: 12px; height: 12px; border-radius: 2px; vertical-align: -2px; margin-right: 6px; }
svg text { font-family: inherit; }
svg .tick { font-size: 11px; fill: var(--muted); }
svg .lane { font-size: 12.5px; fill: var(--ink); }
svg .seg { font-size: 11px; }
svg .num { font-size: 12px; fill: var(--ink); font-variant-numeric: tabular-nums; }
table { width:100%; border-collapse: collapse; font-size: 12.5px; }
th { text-align:left; font-weight:600; color: var(--muted); font-size: 11.5px; text-transform: uppercase; letter-spacing: .04em; border-bottom: 1px solid var(--ink); padding: 6px 8px; }
td { border-bottom: 1px solid var(--line); padding: 6px 8px; vertical-align: top; }
td.t { white-space: nowrap; font-variant-numeric: tabular-nums; color: var(--muted); }
td code, dd code { font: 11.5px ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
.badge { display:inline-block; padding: 1px 7px; border-radius: 10px; font-size: 11.5px; font-weight: 600; }
.badge.loosened { background: #f6e0da; color: var(--loose); }
.badge.tightened { background: #dcefed; color: var(--tight); }
.badge.changed { background: #eef1f5; color: #52606d; }
a { color: #1d4f91; text-decoration: none; }
a:hover { text-decoration: underline; }
dl.health { display:grid; grid-template-columns: 180px 1fr; gap: 6px 16px; margin: 0; }
dl.health dt { color: var(--muted); }
dl.health dd { margin: 0; }
.badge.alerting { background: #f6e0da; color: var(--loose); }
.badge.info { background: #eef1f5; color: #52606d; }
p.verdict { font-size: 15px; margin: 0 0 14px; }
dl.health + p.note { margin: 16px 0 10px; }
dd .note { color: var(--muted); font-size: 13px; }
td code { white-space: nowrap; }
td code.v { white-space: normal; }
.ok { color: var(--tight); font-weight: 600; }
.bad { color: var(--loose); font-weight: 600; }
footer { color: var(--muted); font-size: 12px; margin-top: 8px; }
@media print {
  body { background: #fff; }
  main { padding: 0; max-width: none; }
  section, .kpi { border-color: #ccc; }
  a { color: inherit; }
  tr { break-inside: avoid; }
}
`;

/** The alerts of the period, and what the rules find in backfilled history (never raised). */
function alertSection(data: ReportData): string {
  const list = data.alertList ?? [];
  const rows = list
    .map(
      (a) =>
        `<tr><td class="t">${esc(ts(a.changedAt ?? a.createdAt))}</td><td><span class="badge sev-${esc(a.severity)}">${esc(a.severity)}</span></td><td>${esc(a.ruleId)}</td><td>${esc(a.title)}</td><td>${a.entryId === null ? '—' : `<code>${esc(a.entryId)}</code>`}</td><td>${esc(a.deliveryStatus)}</td></tr>`,
    )
    .join('\n');
  const total = data.alerts.reduce((n, a) => n + a.n, 0);
  const note =
    list.length < total
      ? `The newest ${list.length.toLocaleString('en')} of ${total.toLocaleString('en')} alerts of the period; the evidence pack's alerts.csv has them all.`
      : `All ${total.toLocaleString('en')} alerts raised for the period, newest first.`;
  return `<section>
  <h2>Alerts</h2>
  <p class="note">${esc(note)}</p>
  <table>
    <thead><tr><th>Changed at</th><th>Severity</th><th>Rule</th><th>Title</th><th>Entry</th><th>Delivery</th></tr></thead>
    <tbody>
${rows || '<tr><td colspan="6">No alerts in this period.</td></tr>'}
    </tbody>
  </table>
${backfillPanel(data)}</section>`;
}

/** The backfilled part of the period: one digest was raised for it; these were not. */
function backfillPanel(data: ReportData): string {
  const b = data.backfill;
  if (b === undefined || b.runs.length === 0) return '';
  const found = b.findings.length + b.omitted;
  const rows = b.findings
    .map(
      (f) =>
        `<tr><td class="t">${esc(f.changedAt)}</td><td><span class="badge sev-${esc(f.severity)}">${esc(f.severity)}</span></td><td>${esc(f.ruleId)}</td><td>${esc(f.title)}</td><td><code>${esc(f.entryId)}</code></td><td>found by backfill</td></tr>`,
    )
    .join('\n');
  return `  <h2>Found by backfill (not alerted)</h2>
  <p class="note">${esc(`${b.entries.toLocaleString('en')} entries of this period were stored by a backfill (the tenant's first run: run ${b.runs.join(', ')}), which raises one digest alert (AIGOV-016) instead of an alert per change, so the list above has no per-change alert for them. Evaluated over them now, the rules find ${found.toLocaleString('en')} alert${found === 1 ? '' : 's'}: never raised or delivered, listed so that the period does not look quieter than it was.`)}</p>
  <table>
    <thead><tr><th>Changed at</th><th>Severity</th><th>Rule</th><th>Title</th><th>Entry</th><th></th></tr></thead>
    <tbody>
${rows || '<tr><td colspan="6">The rules find nothing in the backfilled entries.</td></tr>'}${b.omitted > 0 ? `\n<tr><td colspan="6">… and ${esc(b.omitted.toLocaleString('en'))} more</td></tr>` : ''}
    </tbody>
  </table>
`;
}

function ts(d: Date | null | undefined): string {
  return d ? `${d.toISOString().slice(0, 16).replace('T', ' ')} UTC` : '—';
}

function actor(kind: string | null, user: string | null): string {
  return [kind === null ? 'unknown' : shortEnum(kind), user].filter(Boolean).join(' · ');
}

/** A word for a shell command line: as is when plain, else single-quoted. */
function shellWord(word: string): string {
  return /^[A-Za-z0-9._@%+=:,/-]+$/.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`;
}

function plural(n: number, one: string, many: string): string {
  return `${n.toLocaleString('en')} ${n === 1 ? one : many}`;
}

/** A content hash shortened for the table, the whole of it in the tooltip. */
function shortHash(hex: string | null): string {
  return hex === null ? '—' : `<code title="${esc(hex)}">${esc(hex.slice(0, 12))}…</code>`;
}

/** The kinds in the order the panel lists them, with what each means and what to do about it. */
const KINDS = [
  {
    kind: 'changed_at_source',
    label: 'Changed at source',
    alerting: true,
    help: 'the source serves a stored entry with other content; the stored original is kept. Ask who rewrote it and why.',
  },
  {
    kind: 'missing_at_source',
    label: 'Missing at source',
    alerting: true,
    help: 'a stored entry is no longer served while older ones are: a hole in the source history. Treat as possible tampering.',
  },
  {
    kind: 'backdated',
    label: 'Backdated',
    alerting: true,
    help: 'an entry appeared dated before any incremental run looks; it is stored now. Ask who inserted history into the past.',
  },
  {
    kind: 'conflicting_ids',
    label: 'Conflicting ids',
    alerting: true,
    help: 'the source serves one id with two different contents in one listing; both are kept. Ask the vendor which one is true.',
  },
  {
    kind: 'expired_at_source',
    label: 'Expired at source',
    alerting: false,
    help: "older than the oldest entry the source still serves: its retention ran out. No alert; govtrail's copy is now the only one, so keep backups.",
  },
] as const;

/**
 * The "Source integrity" panel (docs/design/integrity.md): the last reconcile's verdict and coverage, open
 * discrepancies, the findings.
 */
function integrityPanel(data: ReportData): string {
  const i = data.integrity;
  const v = i.verified;
  const command = `govtrail reconcile --tenant ${shellWord(data.tenantId)}`;
  const alerting =
    i.open.changed_at_source + i.open.missing_at_source + i.open.backdated + i.open.conflicting_ids;
  const expired = i.open.expired_at_source;
  const parts: string[] = [];

  if (v === undefined) {
    const failed =
      i.lastReconcileAt === null
        ? 'No reconcile has run for this tenant'
        : `No reconcile has succeeded for this tenant: the last one, at ${esc(ts(i.lastReconcileAt))} (run ${esc(String(i.lastReconcileRunId ?? '—'))}), ${esc(i.lastReconcileStatus ?? 'did not finish')}`;
    parts.push(
      `<p class="verdict"><span class="bad">Not verified against the source.</span> ${failed}, so nothing shows that the stored history still equals what the source serves (no check for rewritten, removed, expired or backdated entries). Run <code>${esc(command)}</code>.</p>`,
    );
  } else {
    const expiredText =
      expired > 0
        ? `, and ${plural(expired, 'stored entry has', 'stored entries have')} expired at the source (retention)`
        : '';
    parts.push(
      `<p class="verdict"><span class="${alerting > 0 ? 'bad' : 'ok'}">Source verified on ${esc(ts(v.finishedAt))}: ${esc(plural(v.entriesMatched, 'entry matches', 'entries match'))}; ${esc(plural(alerting, 'discrepancy', 'discrepancies'))}</span>${esc(expiredText)}.</p>`,
    );
  }

  const rows: string[] = [];
  if (v !== undefined) {
    const from = v.coveredFromText ?? v.coveredFrom?.toISOString() ?? null;
    const to = v.coveredToText ?? v.coveredTo?.toISOString() ?? null;
    rows.push(
      `<dt>Coverage</dt><dd>${
        from === null || to === null
          ? 'the source served no entries'
          : `every entry created from <code>${esc(from)}</code> to <code>${esc(to)}</code>: ${esc(plural(v.entriesServed, 'entry', 'entries'))} served, ${esc(v.entriesMatched.toLocaleString('en'))} identical to the store`
      }</dd>`,
      `<dt>Verified by</dt><dd>reconcile run ${esc(String(v.runId))}, finished ${esc(ts(v.finishedAt))}</dd>`,
    );
    if (i.lastReconcileRunId !== null && i.lastReconcileRunId !== v.runId) {
      rows.push(
        `<dt>Latest reconcile</dt><dd><span class="bad">${esc(i.lastReconcileStatus ?? 'unknown')}</span> at ${esc(ts(i.lastReconcileAt))} (run ${esc(String(i.lastReconcileRunId))}); the figures here are from the last successful one. Run <code>${esc(command)}</code>.</dd>`,
      );
    }
  }
  for (const k of KINDS) {
    const n = i.open[k.kind];
    // Only a reconcile finds holes and expiry; syncs find rewrites, backdating and conflicting ids on the pages they read.
    const value =
      v === undefined && k.kind !== 'changed_at_source' && k.kind !== 'conflicting_ids'
        ? '<span class="bad">not checked</span>'
        : `<span class="${n > 0 && k.alerting ? 'bad' : n > 0 ? '' : 'ok'}">${esc(n.toLocaleString('en'))}</span>`;
    rows.push(`<dt>${esc(k.label)}</dt><dd>${value} <span class="note">— ${esc(k.help)}</span></dd>`);
  }
  parts.push(`<dl class="health">\n${rows.join('\n')}\n</dl>`);

  if (data.discrepancyCount === 0) {
    parts.push('<p class="note">No discrepancy has been recorded for this tenant.</p>');
  } else {
    const list = data.discrepancies
      .map((d) => {
        const k = KINDS.find((x) => x.kind === d.kind);
        return `<tr><td class="t">${esc(ts(d.detectedAt))}</td><td><code>${esc(d.entryId)}</code></td><td><span class="badge ${k?.alerting === false ? 'info' : 'alerting'}">${esc(d.kind)}</span></td><td class="t">${esc(ts(d.entryCreatedAt))}</td><td>${shortHash(d.storedSha256)}</td><td>${shortHash(d.sourceSha256)}</td><td>${esc(String(d.runId))}</td></tr>`;
      })
      .join('\n');
    const more = data.discrepancyCount - data.discrepancies.length;
    parts.push(
      `<p class="note">Findings recorded in <code>govtrail.source_discrepancy</code>, newest first${data.discrepancyCount > REPORT_DISCREPANCY_ROWS ? ` (the newest ${REPORT_DISCREPANCY_ROWS})` : ''}. Each is a fact of the moment it was found and is never changed; whether it still holds is what the counts above say.</p>
  <table>
    <thead><tr><th>Detected at</th><th>Entry</th><th>Kind</th><th>Entry created at</th><th>Stored sha256</th><th>Source sha256</th><th>Run</th></tr></thead>
    <tbody>
${list}${more > 0 ? `\n<tr><td colspan="7">and ${esc(more.toLocaleString('en'))} more</td></tr>` : ''}
    </tbody>
  </table>`,
    );
  }
  return parts.join('\n  ');
}

/** Renders the report. */
export function renderReport(data: ReportData): string {
  const fields = SNAPSHOT_FIELDS.filter((f) => f.diffed).map((f) => f.column);
  const loosened = data.weekly.filter((w) => w.direction === 'loosened').reduce((a, w) => a + w.n, 0);
  const alertTotal = data.alerts.reduce((a, x) => a + x.n, 0);
  const serious = data.alerts
    .filter((a) => a.severity === 'critical' || a.severity === 'high')
    .reduce((a, x) => a + x.n, 0);
  const h = data.health;
  const since = h?.secondsSinceSuccess ?? null;

  const kpis = [
    { v: data.changeCount.toLocaleString('en'), l: 'field changes', warn: false },
    { v: loosened.toLocaleString('en'), l: 'loosening changes', warn: loosened > 0 },
    { v: `${alertTotal.toLocaleString('en')}`, l: `alerts (${serious} critical or high)`, warn: serious > 0 },
    {
      v: since === null ? 'never' : `${humanSeconds(since).replace(/(\d+[dhm]).*/, '$1')} ago`,
      l: 'last successful sync',
      warn: since === null || since > 86_400,
    },
  ];
  const compliance = complianceKpi(data.compliance);
  if (compliance !== undefined) kpis.splice(2, 0, compliance);

  const changeRows = data.changes
    .map((c) => {
      const tickets = c.tickets
        .map((t, i) => {
          const url = safeUrl(c.ticketUrls[i]);
          return url === undefined ? esc(t) : `<a href="${esc(url)}">${esc(t)}</a>`;
        })
        .join(', ');
      return `<tr><td class="t">${esc(ts(c.changedAt))}</td><td>${esc(c.field.replaceAll('_', ' '))}</td><td>${esc(formatValue(c.field, c.oldValue))} → <strong>${esc(formatValue(c.field, c.newValue))}</strong></td><td><span class="badge ${esc(c.direction)}">${esc(c.direction)}</span></td><td>${esc(actor(c.actorKind, c.actorUserId))}</td><td>${tickets || '<span class="bad">none</span>'}</td><td><code>${esc(c.entryId)}</code></td></tr>`;
    })
    .join('\n');

  const health =
    h === undefined
      ? '<p class="note">No sync has run for this tenant.</p>'
      : `<dl class="health">
<dt>Last successful sync</dt><dd>${h.lastSuccessAt ? `<span class="ok">${esc(ts(h.lastSuccessAt))}</span>` : '<span class="bad">never</span>'}</dd>
<dt>Last failed sync</dt><dd>${h.lastFailureAt ? `<span class="bad">${esc(ts(h.lastFailureAt))}</span>` : 'none'}</dd>
<dt>Last error</dt><dd>${h.lastError ? esc(h.lastError) : '—'}</dd>
<dt>Last run</dt><dd>${esc(h.lastRunStatus ?? '—')}</dd>
<dt>Entries stored</dt><dd>${h.entriesStored.toLocaleString('en')}</dd>
<dt>Checkpoint entry</dt><dd><code>${esc(h.checkpointEntryId ?? '—')}</code></dd>
</dl>`;

  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">
<title>Governance posture — ${esc(data.tenantId)}</title>
<style>${CSS}</style>
</head>
<body>
<main>
<header>
  <h1><small>AI governance posture</small>${esc(data.tenantId)}</h1>
  <div class="meta">${esc(ts(data.from))} – ${esc(ts(data.to))}<br>generated ${esc(ts(data.generatedAt))} by govtrail</div>
</header>
<div class="kpis">
${kpis.map((k) => `<div class="kpi${k.warn ? ' warn' : ''}"><div class="v">${esc(k.v)}</div><div class="l">${esc(k.l)}</div></div>`).join('\n')}
</div>
${complianceSection(data.compliance)}
<section>
  <h2>Posture timeline</h2>
  <p class="note">Each governance setting over the period. A coloured period began with a change that loosened (or tightened) that setting; grey periods are other values; hatched means the settings were deleted.</p>
  <div class="legend"><span><i style="background:var(--loose)"></i>loosened</span><span><i style="background:var(--tight)"></i>tightened</span><span><i style="background:#d6dde6"></i>other value</span><span><i style="background:#475569"></i>deleted</span></div>
  ${postureTimeline(data.timeline, fields, data.directions, data.from, data.to)}
</section>
<div class="row2">
<section>
  <h2>Changes per week</h2>
  <p class="note">Field changes by direction, weeks starting Monday (UTC).</p>
  <div class="legend"><span><i style="background:var(--loose)"></i>loosened</span><span><i style="background:var(--tight)"></i>tightened</span><span><i style="background:var(--changed)"></i>changed</span></div>
  ${weeklyBars(data.weekly, data.from, data.to)}
</section>
<section>
  <h2>Alerts by severity</h2>
  <p class="note">Alerts raised for changes in the period; undelivered means a sink is still pending or gave up.</p>
  ${severityBars(data.alerts)}
</section>
</div>
${alertSection(data)}
<section>
  <h2>Changes</h2>
  <p class="note">${data.changes.length < data.changeCount ? `The newest ${data.changes.length.toLocaleString('en')} of ${data.changeCount.toLocaleString('en')} field changes; <code>govtrail export evidence</code> writes them all.` : `All ${data.changeCount.toLocaleString('en')} field changes of the period, newest first.`}</p>
  <table>
    <thead><tr><th>Changed at</th><th>Setting</th><th>Before → after</th><th>Direction</th><th>Actor</th><th>Tickets</th><th>Entry</th></tr></thead>
    <tbody>
${changeRows || '<tr><td colspan="7">No changes in this period.</td></tr>'}
    </tbody>
  </table>
</section>
<section>
  <h2>Exporter health</h2>
  ${health}
</section>
<section>
  <h2>Source integrity</h2>
  <p class="note">Whether the stored history still equals the tenant's whole history as the source serves it now (<code>govtrail reconcile</code> compares every entry by content hash), over all time, not only this period.</p>
  ${integrityPanel(data)}
</section>
<footer>All times UTC. Source: the govtrail views settings_timeline, change_log, alert_log, exporter_health and control_status_current, and the tables source_discrepancy, sync_run and control_period.</footer>
</main>
</body>
</html>
`;
}
