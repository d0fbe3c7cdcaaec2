/**
 * `govtrail export oscal`: the conformance of one or more tenants over [from, to) as an OSCAL 1.2.1
 * assessment-results document (docs/design/conformance.md). The figures are `baseline report`'s,
 * from the stored control periods; the mapping is pure (core/oscal/). Written beside its final
 * name and renamed when complete.
 */
import { renameSync, rmSync, writeFileSync } from 'node:fs';
import { buildReport } from '../../core/conformance/report.js';
import type { Ranks } from '../../core/diff.js';
import { GovtrailError } from '../../core/errors.js';
import { dateKey } from '../../core/normalise/time.js';
import { conformanceToOscal, oscalInputOfReport } from '../../core/oscal/assessment-results.js';
import type { Session } from '../../store/database.js';
import { loadTenantConformance, statusAt, type TenantConformance } from './load.js';

export interface OscalExportOptions {
  readonly tenantIds: readonly string[];
  readonly from: Date;
  readonly to: Date;
  readonly out: string;
  readonly now: Date;
  readonly productVersion: string;
  readonly ranks: Ranks;
}

export interface OscalExportResult {
  readonly path: string;
  readonly baseline: { readonly id: string; readonly sha256: string };
  readonly results: number;
  readonly observations: number;
  readonly findings: number;
  readonly bytes: number;
}

/**
 * Writes the document. Every tenant must have been judged, and by the same baseline (one document
 * imports one plan).
 * @throws GovtrailError `USAGE` for a tenant no baseline judged, or tenants judged by different baselines.
 */
export async function writeOscal(db: Session, options: OscalExportOptions): Promise<OscalExportResult> {
  const fromKey = dateKey(options.from);
  const toKey = dateKey(options.to);
  const judged: TenantConformance[] = [];
  for (const tenantId of options.tenantIds) {
    const c = await loadTenantConformance(db, tenantId, options.ranks, toKey);
    if (c === undefined)
      throw new GovtrailError(
        'USAGE',
        `no baseline has judged tenant ${tenantId} (set GOVTRAIL_BASELINE or baseline: in GOVTRAIL_CONFIG, then sync)`,
      );
    judged.push(c);
  }
  const first = judged[0];
  if (first === undefined) throw new GovtrailError('USAGE', 'no tenant has been judged by a baseline');
  const other = judged.find(
    (c) => c.baseline.id !== first.baseline.id || c.baseline.sha256 !== first.baseline.sha256,
  );
  if (other !== undefined)
    throw new GovtrailError(
      'USAGE',
      `tenants ${first.tenantId} and ${other.tenantId} are judged by different baselines (${first.baseline.id}, ${other.baseline.id}): export one with --tenant`,
    );
  const { baseline } = first;
  const report = buildReport(
    baseline,
    fromKey,
    toKey,
    judged.map((c) => ({ tenant: c.tenantId, periods: c.periods })),
  );
  const byTenant = new Map(judged.map((c) => [c.tenantId, c]));
  const input = oscalInputOfReport(report, {
    text: baseline.text,
    expectText: (id) => baseline.controls.find((c) => c.id === id)?.expectText ?? '',
    statusAtEnd: (tenant, id) => statusAt(byTenant.get(tenant)?.periods ?? [], id, toKey),
    generatedAt: options.now,
    productVersion: options.productVersion,
  });
  const doc = conformanceToOscal(input);
  const text = `${JSON.stringify(doc, null, 2)}\n`;
  const partial = `${options.out}.partial`;
  try {
    writeFileSync(partial, text);
    renameSync(partial, options.out);
  } catch (err) {
    rmSync(partial, { force: true });
    throw err;
  }
  const results = doc['assessment-results'].results;
  return {
    path: options.out,
    baseline: { id: baseline.id, sha256: baseline.sha256 },
    results: results.length,
    observations: results.reduce((n, r) => n + (r.observations?.length ?? 0), 0),
    findings: results.reduce((n, r) => n + (r.findings?.length ?? 0), 0),
    bytes: Buffer.byteLength(text, 'utf8'),
  };
}
