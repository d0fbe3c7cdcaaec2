/**
 * The conformance/ folder of the pack (docs/evidence-pack.md): the baseline text the stored periods
 * were judged by and its sha256, the summary per control, every fail, deleted and excepted period
 * with entry, actor and ticket, the exceptions that held, and a README that answers the auditor's
 * question in plain words. Without a baseline, only the README, saying so. The same answer goes
 * into the pack's README.txt (found.conformance).
 */
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { tenantReport } from '../../../core/conformance/report.js';
import { DEFAULT_RANKS } from '../../../core/diff.js';
import { dateKey } from '../../../core/normalise/time.js';
import { loadTenantConformance } from '../../conformance/load.js';
import {
  type ConformanceFacts,
  conformanceAnswer,
  conformanceReadme,
  EXCEPTIONS_HEADER,
  exceptionRows,
  PERIODS_HEADER,
  periodRows,
  SUMMARY_HEADER,
  summaryRows,
} from '../conformance-text.js';
import { type WrittenFile, writeWholeFile } from '../writer.js';
import { type PackDataFile, type PackWriting, writeCsv } from './pack-file.js';

/** The folder of the conformance files inside the pack. */
export const CONFORMANCE_DIR = 'conformance';

/** The folder's files, in manifest order (README.txt always; the others when a baseline judged the tenant). */
export const CONFORMANCE_FILES = {
  readme: `${CONFORMANCE_DIR}/README.txt`,
  baseline: `${CONFORMANCE_DIR}/baseline.yaml`,
  sha256: `${CONFORMANCE_DIR}/baseline.sha256`,
  summary: `${CONFORMANCE_DIR}/summary.csv`,
  periods: `${CONFORMANCE_DIR}/periods.csv`,
  exceptions: `${CONFORMANCE_DIR}/exceptions.csv`,
} as const;

async function facts(w: PackWriting): Promise<ConformanceFacts | undefined> {
  const { o } = w;
  const toKey = dateKey(o.to);
  const c = await loadTenantConformance(w.db, o.tenantId, o.rulePack?.ranks ?? DEFAULT_RANKS);
  if (c === undefined) return undefined;
  const fromKey = dateKey(o.from);
  const nowKey = dateKey(o.now);
  return {
    tenantId: o.tenantId,
    baseline: c.baseline,
    loadedAtKey: c.loadedAtKey,
    fromKey,
    toKey,
    atKey: nowKey < toKey ? nowKey : toKey,
    report: tenantReport(o.tenantId, c.baseline, c.periods, fromKey, toKey),
    periods: c.periods,
  };
}

export const CONFORMANCE: PackDataFile = {
  name: CONFORMANCE_FILES.readme,
  write: async (w): Promise<WrittenFile[]> => {
    const { dir, o, progress } = w;
    progress(CONFORMANCE_DIR, 0);
    mkdirSync(path.join(dir, CONFORMANCE_DIR), { recursive: true });
    const f = await facts(w);
    w.found.conformance = f === undefined ? undefined : conformanceAnswer(f);
    const files = [
      await writeWholeFile(dir, CONFORMANCE_FILES.readme, conformanceReadme(f, o.tenantId), null),
    ];
    if (f === undefined) return files;
    files.push(await writeWholeFile(dir, CONFORMANCE_FILES.baseline, f.baseline.text, null));
    files.push(
      await writeWholeFile(dir, CONFORMANCE_FILES.sha256, `${f.baseline.sha256}  baseline.yaml\n`, 1),
    );
    const csv = async (name: string, header: readonly string[], rows: string[][]) =>
      writeCsv(
        dir,
        name,
        header,
        async (row) => {
          for (const r of rows) await row(r);
        },
        progress,
      );
    files.push(await csv(CONFORMANCE_FILES.summary, SUMMARY_HEADER, summaryRows(f)));
    files.push(await csv(CONFORMANCE_FILES.periods, PERIODS_HEADER, periodRows(f)));
    files.push(await csv(CONFORMANCE_FILES.exceptions, EXCEPTIONS_HEADER, exceptionRows(f)));
    return files;
  },
};
