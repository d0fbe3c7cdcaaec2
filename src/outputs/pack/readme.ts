/**
 * README.txt of a pack: the tenant and period, the figures an auditor looks at first, what each file
 * answers, and how to check the pack without govtrail. Pure.
 */
import { humanSeconds } from '../../core/format.js';
import type { BackfillFindings } from '../../sync/backfill-findings.js';
import type { CoverageSummary } from './coverage.js';
import { ANCHOR_FILES, CHECKSUMS_FILE, MANIFEST_FILE, PACK_FILES, SIGNATURE_FILE } from './files.js';
import type { PackGroup } from './pack-options.js';

/** The pack's figures, for README.txt and the command's output. */
export interface PackSummary {
  readonly tenantId: string;
  readonly from: Date;
  readonly to: Date;
  readonly generatedAt: Date;
  readonly version: string;
  readonly changes: number;
  readonly changesWithoutTicket: number;
  readonly settingPeriods: number;
  readonly alerts: number;
  readonly coverage: CoverageSummary;
  /** Where the schedule interval came from, e.g. `GOVTRAIL_SCHEDULE "*\/15 * * * *"`. */
  readonly intervalSource: string;
  readonly verify: { readonly ok: boolean; readonly rowsVerified: number; readonly findings: number };
  /** The last successful reconcile, when there was one. */
  readonly reconcile: { readonly finishedAt: Date; readonly entriesMatched: number } | undefined;
  readonly discrepancies: number;
  /** Thumbprint of the signing key, when signed. */
  readonly signedBy: string | undefined;
  /** The report's timeline was thinned (more rows than the chart keeps). */
  readonly reportThinned: boolean;
  /** Names of the anchor files the pack holds (ANCHOR_FILES), when an anchor was found. */
  readonly anchorFiles?: readonly string[];
  /** What the rules find in backfilled entries of the period (no per-entry alerts were raised). */
  readonly backfill?: BackfillFindings | undefined;
  /** conformance/: the plain-words answer; undefined when no baseline judged the tenant. */
  readonly conformance?: string | undefined;
  /** The group this pack is a member pack of, with its members at the time. */
  readonly group?: PackGroup | undefined;
}

/**
 * The README's section on backfilled history, or '' when the period has none: a backfill raised
 * one digest instead of per-entry alerts, so alerts.csv alone would make the period look quiet.
 */
export function backfillText(b: BackfillFindings | undefined): string {
  if (b === undefined || b.runs.length === 0) return '';
  const runs = b.runs.map(String).join(', ');
  const intro =
    `${n(b.entries)} entr${b.entries === 1 ? 'y' : 'ies'} of this period were stored by a backfill (the first run of the tenant: run ${runs}), ` +
    'which raises one digest alert (AIGOV-016) instead of an alert per change. alerts.csv therefore lists no per-change alert for them. ' +
    `Evaluated over them now, the rules find ${n(b.findings.length + b.omitted)} alert${b.findings.length + b.omitted === 1 ? '' : 's'}, ` +
    'listed below and in report.html, marked as found by backfill: they were never raised or delivered.';
  const lines = b.findings.map(
    (f) =>
      `  ${f.changedAt}  ${f.severity.toUpperCase().padEnd(8)} ${f.ruleId}  ${f.title}  (entry ${f.entryId}) [found by backfill]`,
  );
  if (b.omitted > 0) lines.push(`  … and ${n(b.omitted)} more`);
  return `Backfilled history
------------------
${wrap(intro, '')}

${lines.length > 0 ? lines.join('\n') : '  (none: the rules find nothing in the backfilled entries)'}

`;
}

/** The README's answer to the auditor's question (conformance/README.txt has the detail). */
function conformanceText(s: PackSummary): string {
  return `Conformance to the declared policy
----------------------------------
${
  s.conformance === undefined
    ? wrap(
        'No baseline has judged this tenant, so this pack cannot say whether it met a declared policy (conformance/README.txt says how to declare one).',
        '',
      )
    : s.conformance
}

`;
}

function n(v: number): string {
  return v.toLocaleString('en');
}

/** Word-wraps text to `width` columns, each line prefixed with `indent`. */
export function wrap(text: string, indent: string, width = 96): string {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(/\s+/)) {
    if (line !== '' && indent.length + line.length + 1 + word.length > width) {
      lines.push(indent + line);
      line = word;
    } else line = line === '' ? word : `${line} ${word}`;
  }
  if (line !== '') lines.push(indent + line);
  return lines.join('\n');
}

export function readmeText(s: PackSummary): string {
  const c = s.coverage;
  const figures = [
    `${n(s.changes)} field changes (changes.csv)`,
    `${n(s.changesWithoutTicket)} entries without a ticket (changes-without-ticket.csv)`,
    `${n(s.settingPeriods)} setting periods (setting-periods.csv)`,
    `${n(s.alerts)} alerts (alerts.csv)`,
    `${n(c.runs)} runs (${n(c.succeeded)} succeeded, ${n(c.failed)} failed, ${n(c.skipped)} skipped); ` +
      `${n(c.gaps)} gap${c.gaps === 1 ? '' : 's'} without a successful run for longer than ` +
      `${humanSeconds(c.gapThresholdSeconds)} (2 × ${humanSeconds(c.intervalSeconds)}, from ${s.intervalSource})` +
      (c.gaps > 0 ? `, the longest ${humanSeconds(c.longestGapSeconds)}` : '') +
      ' (runs.csv)',
    s.verify.ok
      ? `Tamper-evidence chain intact: ${n(s.verify.rowsVerified)} stored entries verified (integrity.json)`
      : `TAMPER-EVIDENCE CHAIN BROKEN: ${n(s.verify.findings)} finding(s) over ${n(s.verify.rowsVerified)} stored entries (integrity.json)`,
    s.reconcile === undefined
      ? 'Never verified against the source: no reconcile has succeeded (integrity.json)'
      : `Last verified against the source on ${s.reconcile.finishedAt.toISOString()}: ${n(s.reconcile.entriesMatched)} entries matched (integrity.json)`,
    `${n(s.discrepancies)} source discrepanc${s.discrepancies === 1 ? 'y' : 'ies'} recorded for entries of the period (integrity.json)`,
  ];
  const anchors = ANCHOR_FILES.filter((f) => s.anchorFiles?.includes(f.name) === true);
  const listed = PACK_FILES.filter(
    (f) =>
      (f.name !== SIGNATURE_FILE || s.signedBy !== undefined) &&
      (s.conformance !== undefined ||
        !f.name.startsWith('conformance/') ||
        f.name === 'conformance/README.txt'),
  );
  const at = listed.findIndex((f) => f.name === CHECKSUMS_FILE);
  const files = [...listed.slice(0, at), ...anchors, ...listed.slice(at)]
    .map((f) => `${f.name}\n${wrap(f.answers, '    ')}\n${wrap(f.detail, '    ')}`)
    .join('\n\n');
  return `govtrail evidence pack
======================

Tenant:     ${s.tenantId}
${s.group === undefined ? '' : `Group:      ${s.group.name}\nMembers:    ${s.group.members.join(', ')}\n            (the group's tenants when the pack was made: one pack each, beside this one)\n`}Period:     ${s.from.toISOString()} (included) to ${s.to.toISOString()} (excluded), UTC
Generated:  ${s.generatedAt.toISOString()} by govtrail ${s.version}, every file from one consistent
            snapshot of the database
Signed:     ${s.signedBy === undefined ? 'no (GOVTRAIL_EVIDENCE_SIGNING_KEY was not set)' : `yes, Ed25519 key with RFC 7638 thumbprint ${s.signedBy} (${SIGNATURE_FILE})`}

In figures
----------
${figures.map((f) => wrap(f, '  ')).join('\n')}
${s.reportThinned ? `\n${wrap('report.html draws the posture timeline from one row per 1/2000 of the period (the period has more timeline rows than the chart keeps); setting-periods.csv lists every period exactly.', '')}\n` : ''}
${conformanceText(s)}${backfillText(s.backfill)}Files
-----
${files}

How to check this pack
----------------------
1. The files are intact:       sha256sum -c ${CHECKSUMS_FILE}
   (${CHECKSUMS_FILE} is itself listed with its sha256 in ${MANIFEST_FILE}.)
2. Who produced it (signed):   govtrail verify-pack <this directory> --public-key <signer's public key>
   checks every hash, that no file was added or removed, and the signature. Without govtrail, see
   docs/evidence-pack.md of govtrail for an openssl recipe.
3. Only the files listed in ${MANIFEST_FILE} belong to the pack: anything else in this directory was
   added afterwards.
${
  anchors.length > 0
    ? `4. The history against its anchor (kept outside the database): with the signer's public key,
   govtrail verify --anchors <the anchor directory> --public-key <key> exits 1 if any entry up to
   anchor.json was edited, inserted or deleted; openssl alone checks anchor.json's signature
   (docs/tamper-evidence.md of govtrail).
`
    : ''
}
Times are UTC. The CSV files are RFC 4180 (UTF-8, CRLF line ends). A cell a spreadsheet would run as a
formula (starting with =, +, -, @, a tab or a carriage return) is prefixed with ' so it shows as text;
the values are exact otherwise.
`;
}
