/**
 * integrity.json: `govtrail verify` of the tenant's chain, the last reconcile (coverage record and
 * open discrepancies), the run coverage, and every discrepancy recorded for an entry of the period
 * (streamed, one a line).
 */
import type { Session } from '../../../store/database.js';
import {
  countDiscrepancies,
  findEntryTimes,
  iterateDiscrepancies,
} from '../../../store/read/discrepancies.js';
import { findSourceIntegrity } from '../../../store/read/integrity.js';
import type { PeriodFilter } from '../../../store/read/period.js';
import { verifyStore } from '../../../store/verify/verify.js';
import type { CoverageTracker } from '../coverage.js';
import { StreamedList, writeJson } from '../json-stream.js';
import { PackFileWriter, type WrittenFile } from '../writer.js';
import type { PackDataFile, PackWriting } from './pack-file.js';

export const INTEGRITY: PackDataFile = {
  name: 'integrity.json',
  write: writeIntegrity,
};

async function writeIntegrity({ db, dir, o, period, progress, found }: PackWriting): Promise<WrittenFile> {
  progress('integrity.json (verifying the tamper-evidence chain)', 0);
  const coverage = (found.coverage as CoverageTracker).summary();
  const verified = await verifyStore(db, { tenantId: o.tenantId });
  const times = await findEntryTimes(
    db,
    o.tenantId,
    verified.findings.flatMap((f) => (f.entryId === null ? [] : [f.entryId])),
  );
  const inPeriod = (entryId: string | null) => {
    const t = entryId === null ? undefined : times.get(entryId);
    return t !== undefined && t >= o.from && t < o.to;
  };
  const source = await findSourceIntegrity(db, o.tenantId);
  const v = source.verified;
  const head = {
    tenant: o.tenantId,
    from: o.from.toISOString(),
    to: o.to.toISOString(),
    generatedAt: o.now.toISOString(),
    verify: {
      ok: verified.findings.length === 0,
      scope:
        'the tenant’s whole row_hash chain, from its first stored entry: a hash chain can only be checked from its start, and it covers every entry of the period',
      rowsVerified: verified.rowsVerified,
      findings: verified.findings.map((f) => ({ ...f, inPeriod: inPeriod(f.entryId) })),
      findingsInPeriod: verified.findings.filter((f) => inPeriod(f.entryId)).length,
    },
    reconcile: {
      lastReconcileAt: source.lastReconcileAt?.toISOString() ?? null,
      lastReconcileStatus: source.lastReconcileStatus,
      lastReconcileRunId: source.lastReconcileRunId,
      lastVerified:
        v === undefined
          ? null
          : {
              runId: v.runId,
              finishedAt: v.finishedAt.toISOString(),
              entriesServed: v.entriesServed,
              entriesMatched: v.entriesMatched,
              coveredFrom: v.coveredFromText ?? v.coveredFrom?.toISOString() ?? null,
              coveredTo: v.coveredToText ?? v.coveredTo?.toISOString() ?? null,
              ranAfterPeriodEnd: v.finishedAt >= o.to,
              statement: `on ${v.finishedAt.toISOString()}, every one of ${v.entriesServed} entries the source served${v.coveredFrom !== null && v.coveredTo !== null ? ` (created from ${v.coveredFromText ?? v.coveredFrom.toISOString()} to ${v.coveredToText ?? v.coveredTo.toISOString()})` : ''} was compared with the store by content hash: ${v.entriesMatched} matched`,
            },
      openDiscrepancies: source.open,
    },
    coverage: { ...coverage, intervalSource: o.interval.source },
  };
  const discrepancies = new StreamedList(listDiscrepancies(db, period, o.pageSize));
  const file = new PackFileWriter(dir, 'integrity.json');
  try {
    await writeJson(file, {
      ...head,
      discrepancies: {
        selection:
          'every discrepancy recorded for an entry created in the period, whenever it was found, in the order found (table source_discrepancy)',
        recordedForTenant: await countDiscrepancies(db, o.tenantId),
        list: discrepancies,
      },
    });
    found.integrity = {
      verify: {
        ok: verified.findings.length === 0,
        rowsVerified: verified.rowsVerified,
        findings: verified.findings.length,
      },
      reconcile: v === undefined ? undefined : { finishedAt: v.finishedAt, entriesMatched: v.entriesMatched },
      discrepancies: discrepancies.count,
    };
    return await file.close(discrepancies.count + verified.findings.length);
  } catch (err) {
    file.destroy();
    throw err;
  }
}

/** The discrepancies of the period as integrity.json lists them (times as ISO text). */
async function* listDiscrepancies(db: Session, period: PeriodFilter, pageSize: number | undefined) {
  for await (const d of iterateDiscrepancies(db, period, pageSize)) {
    yield {
      ...d,
      detectedAt: d.detectedAt.toISOString(),
      entryCreatedAt: d.entryCreatedAt?.toISOString() ?? null,
    };
  }
}
