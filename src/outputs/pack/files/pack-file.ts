/**
 * What every data file of the evidence pack is: a name, a CSV header where it has one, and a writer
 * that writes it inside the pack's snapshot transaction. pack.ts writes them in the order of
 * DATA_FILES (files/index.ts); a new file is one module here and one line there (and its
 * description in ../files.ts).
 */
import type { Session } from '../../../store/database.js';
import type { PeriodFilter } from '../../../store/read/period.js';
import type { CoverageTracker } from '../coverage.js';
import type { EvidencePackOptions } from '../pack-options.js';
import type { PackSummary } from '../readme.js';
import type { TimelineSampler } from '../timeline-sampler.js';
import { PackCsvWriter, type WrittenFile } from '../writer.js';

/** Reports what the pack is doing: a step and the rows it has written. */
export type Progress = (step: string, rows: number) => void;

/** What every data file is written with, and what the files found for the ones after them. */
export interface PackWriting {
  readonly db: Session;
  readonly dir: string;
  readonly o: EvidencePackOptions;
  readonly period: PeriodFilter;
  readonly progress: Progress;
  /** Fed by setting-periods.csv with the timeline it reads; report.html draws its chart from it. */
  readonly sampler: TimelineSampler;
  /** Set by the files that find them, in the order of DATA_FILES. */
  readonly found: PackFindings;
}

/** What written files found that later files and README.txt need. */
export interface PackFindings {
  /** runs.csv: the run coverage, read by integrity.json. */
  coverage?: CoverageTracker;
  /** integrity.json: verify, the last reconcile, and the discrepancies listed. */
  integrity?: {
    verify: PackSummary['verify'];
    reconcile: PackSummary['reconcile'];
    discrepancies: number;
  };
  /** report.html: what the rules find in backfilled entries. */
  backfill?: PackSummary['backfill'];
}

/** One data file of the pack. */
export interface PackDataFile {
  readonly name: string;
  /** The CSV header (a CSV file only). */
  readonly header?: readonly string[];
  write(w: PackWriting): Promise<WrittenFile>;
}

/** A CSV file from a producer of rows, reporting progress every 1 000 rows. */
export async function writeCsv(
  dir: string,
  name: string,
  header: readonly string[],
  produce: (row: (cells: readonly string[]) => Promise<void>) => Promise<void>,
  progress: (step: string, rows: number) => void,
): Promise<WrittenFile> {
  const csv = await PackCsvWriter.open(dir, name, header);
  try {
    progress(name, 0);
    await produce(async (cells) => {
      await csv.row(cells);
      if (csv.rows % 1000 === 0) progress(name, csv.rows);
    });
    return await csv.close();
  } catch (err) {
    csv.destroy();
    throw err;
  }
}
