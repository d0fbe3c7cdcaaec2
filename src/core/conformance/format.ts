/**
 * Text forms of `baseline check` and `baseline report`: JUnit XML (one testsuite per tenant, one
 * testcase per control), table rows and CSV rows. Pure.
 */
import { canonicalJson } from '../normalise/canonical.js';
import type { CheckJson, ReportJson } from './report.js';

/** Text made safe for XML content and attributes; characters XML 1.0 forbids are dropped. */
export function xmlEscape(text: string): string {
  return text
    .replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]/g, '')
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&apos;');
}

/** A value as one short line: `true`, `AUDIT_VERBOSITY_FULL`, `["A","B"]`, `(deleted)`. */
export function valueText(value: unknown): string {
  if (value === null || value === undefined) return '(unset)';
  if (typeof value === 'string') return value;
  return canonicalJson(value);
}

/** JUnit XML a CI system reads: `<failure>` for fail and deleted, `<skipped>` for excepted. */
export function checkJunit(checks: readonly CheckJson[]): string {
  const lines = ['<?xml version="1.0" encoding="UTF-8"?>'];
  let tests = 0;
  let failures = 0;
  let skipped = 0;
  const suites: string[] = [];
  for (const check of checks) {
    for (const t of check.tenants) {
      const f = t.controls.filter((c) => c.status === 'fail' || c.status === 'deleted').length;
      const s = t.controls.filter((c) => c.status === 'excepted').length;
      tests += t.controls.length;
      failures += f;
      skipped += s;
      suites.push(
        `  <testsuite name="${xmlEscape(t.tenant)}" tests="${t.controls.length}" failures="${f}" errors="0" skipped="${s}" timestamp="${xmlEscape(check.at)}">`,
        `    <properties><property name="baseline" value="${xmlEscape(check.baseline.id)}"/><property name="baseline_sha256" value="${check.baseline.sha256}"/></properties>`,
      );
      for (const c of t.controls) {
        const name = xmlEscape(`${c.id}: ${c.title}`);
        const head = `    <testcase classname="${xmlEscape(`${check.baseline.id}.${t.tenant}`)}" name="${name}"`;
        const value = valueText(c.value);
        if (c.status === 'fail' || c.status === 'deleted') {
          const message =
            c.status === 'deleted' ? 'the settings are deleted' : `value ${value} does not meet the control`;
          const body = `${c.status} since ${c.since ?? 'unknown'}; severity ${c.severity}${c.change === null ? '' : `; ${c.change}`}`;
          suites.push(
            `${head}>`,
            `      <failure message="${xmlEscape(message)}" type="${c.status}">${xmlEscape(body)}</failure>`,
            '    </testcase>',
          );
        } else if (c.status === 'excepted') {
          const why =
            c.exception === null
              ? 'excepted'
              : `excepted until ${c.exception.expires}: ${c.exception.rationale}`;
          suites.push(`${head}>`, `      <skipped message="${xmlEscape(why)}"/>`, '    </testcase>');
        } else if (c.status === 'unknown') {
          suites.push(
            `${head}>`,
            '      <skipped message="no settings stored yet (unknown)"/>',
            '    </testcase>',
          );
        } else {
          suites.push(`${head}/>`);
        }
      }
      suites.push('  </testsuite>');
    }
  }
  lines.push(
    `<testsuites name="govtrail baseline check" tests="${tests}" failures="${failures}" errors="0" skipped="${skipped}">`,
  );
  lines.push(...suites, '</testsuites>');
  return `${lines.join('\n')}\n`;
}

/** Rows of the check's table: tenant, control, status, value, since, change, title. */
export function checkRows(checks: readonly CheckJson[]): string[][] {
  return checks.flatMap((check) =>
    check.tenants.flatMap((t) =>
      t.controls.map((c) => [
        t.tenant,
        c.id,
        c.status,
        valueText(c.value),
        c.since ?? '',
        c.change ?? '',
        c.title,
      ]),
    ),
  );
}

export const CHECK_HEADERS = ['tenant', 'control', 'status', 'value', 'since', 'change', 'title'];

const pct = (x: number) => (x * 100).toFixed(3);

/** Header of the report's table and CSV. */
export const REPORT_HEADERS = [
  'tenant',
  'control',
  'pass_pct',
  'fail_pct',
  'excepted_pct',
  'deleted_pct',
  'unknown_pct',
  'fail_periods',
  'longest_fail_s',
];

/** Rows of the report: one per tenant and control, then one per tenant (control `*`: the mean). */
export function reportRows(reports: readonly ReportJson[]): string[][] {
  const rows: string[][] = [];
  for (const r of reports) {
    for (const t of r.tenants) {
      for (const c of t.controls) {
        rows.push([
          t.tenant,
          c.id,
          pct(c.share.pass),
          pct(c.share.fail),
          pct(c.share.excepted),
          pct(c.share.deleted),
          pct(c.share.unknown),
          String(c.fail_count),
          String(c.longest_fail_seconds),
        ]);
      }
      rows.push([
        t.tenant,
        '*',
        pct(t.share.pass),
        pct(t.share.fail),
        pct(t.share.excepted),
        pct(t.share.deleted),
        pct(t.share.unknown),
        String(t.controls.reduce((n, c) => n + c.fail_count, 0)),
        String(t.controls.reduce((m, c) => Math.max(m, c.longest_fail_seconds), 0)),
      ]);
    }
  }
  return rows;
}
