/**
 * The HTML report's Compliance section (pure): % compliant over the period in the header and the
 * section, the controls failing now with the change, actor and ticket that made them fail, every
 * control's shares, and a note on how to declare a baseline when none judges the tenant.
 */
import { describe, expect, it } from 'vitest';
import {
  complianceKpi,
  complianceSection,
  type ReportCompliance,
  type ReportControl,
} from '../../src/outputs/report/compliance-section.js';

const zero = { pass: 0, fail: 0, excepted: 0, deleted: 0, unknown: 0 };

function control(id: string, over: Partial<ReportControl> = {}): ReportControl {
  return {
    id,
    title: `Title of ${id}`,
    severity: 'high',
    share: { ...zero, pass: 1 },
    status: 'pass',
    since: '2026-01-01T00:00:00Z',
    value: 'true',
    entryId: 'E1',
    actorKind: 'ACTOR_KIND_API',
    actorUserId: 'u1',
    ticket: 'SEC-1',
    ...over,
  };
}

const data: ReportCompliance = {
  baseline: { id: 'govtrail-recommended', title: 'Recommended', sha256: 'ab'.repeat(32) },
  share: { ...zero, pass: 0.8, excepted: 0.05, fail: 0.1, unknown: 0.05 },
  controls: [
    control('AIG-01'),
    control('AIG-02', {
      status: 'fail',
      share: { ...zero, pass: 0.6, fail: 0.4 },
      value: 'AUDIT_VERBOSITY_MINIMAL',
      entryId: 'E9',
      ticket: null,
      actorKind: 'ACTOR_KIND_SUPPORT',
    }),
    control('AIG-03', { status: 'deleted', share: { ...zero, deleted: 1 }, value: null, entryId: 'E10' }),
    control('AIG-<4>', { status: 'excepted', share: { ...zero, excepted: 1 } }),
  ],
};

describe('report: compliance section', () => {
  it('the header KPI is % compliant (pass + excepted) and how many controls fail now', () => {
    expect(complianceKpi(data)).toEqual({ v: '85.0 %', l: 'compliant (2 controls failing now)', warn: true });
    expect(complianceKpi(undefined)).toBeUndefined();
  });

  it('lists the controls failing now with value, actor, ticket and entry; the others only in the shares', () => {
    const html = complianceSection(data);
    const now = html.slice(
      html.indexOf('Controls failing now'),
      html.indexOf('Every control over the period'),
    );
    expect(now).toContain('<strong>AIG-02</strong>');
    expect(now).toContain('<code class="v">AUDIT_VERBOSITY_MINIMAL</code>');
    expect(now).toContain('<span title="2026-01-01T00:00:00Z">2026-01-01 00:00 UTC</span>');
    expect(now).toContain('SUPPORT · u1');
    expect(now).toContain('<span class="bad">none</span>');
    expect(now).toContain('<code>E9</code>');
    expect(now).toContain('settings deleted');
    expect(now).not.toContain('AIG-01');
    expect(html).toContain('2 of 4 controls fail now.');
    expect(html).toContain('compliant <strong>85.0 %</strong>');
    expect(html).toContain(
      '<td>AIG-02</td><td>Title of AIG-02</td><td class="t">60.0 %</td><td class="t">40.0 %</td>',
    );
  });

  it('escapes what the baseline file says', () => {
    expect(complianceSection(data)).toContain('AIG-&lt;4&gt;');
    expect(complianceSection(data)).not.toContain('AIG-<4>');
  });

  it('all met: says so; no baseline: says how to declare one', () => {
    const ok = complianceSection({ ...data, controls: [control('AIG-01')] });
    expect(ok).toContain('Every control of the baseline is met now.');
    expect(ok).toContain('No control fails now.');
    expect(complianceSection(undefined)).toContain('GOVTRAIL_BASELINE');
  });
});
