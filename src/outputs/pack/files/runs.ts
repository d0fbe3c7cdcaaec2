/**
 * runs.csv: every run of the period, with a `gap` row wherever no run succeeded for longer than
 * two schedule intervals; the coverage it follows is what integrity.json reports.
 */
import { humanSeconds } from '../../../core/format.js';
import { findLastSuccessBefore, iterateRuns, type LedgerRun } from '../../../store/read/run-ledger.js';
import { type CoverageGap, CoverageTracker } from '../coverage.js';
import { cellTime } from '../writer.js';
import { type PackDataFile, writeCsv } from './pack-file.js';

const HEADER = [
  'record',
  'run_id',
  'kind',
  'trigger',
  'status',
  'started_at',
  'finished_at',
  'seconds_since_last_success',
  'pages_fetched',
  'entries_fetched',
  'entries_inserted',
  'entries_rejected',
  'warnings',
  'http_retries',
  'stop_reason',
  'error_code',
  'error_message',
  'covered_from',
  'covered_to',
  'note',
] as const;

export const RUNS: PackDataFile = {
  name: 'runs.csv',
  header: HEADER,
  write: async ({ db, dir, o, period, progress, found }) => {
    const coverage = new CoverageTracker({
      from: o.from,
      to: o.to,
      now: o.now,
      intervalMs: o.interval.ms,
      lastSuccessBefore: await findLastSuccessBefore(db, o.tenantId, o.from),
    });
    found.coverage = coverage;
    return writeCsv(
      dir,
      'runs.csv',
      HEADER,
      async (row) => {
        const gapRow = (g: CoverageGap) => row(gapCells(g, o.interval.ms));
        for await (const r of iterateRuns(db, period, o.pageSize)) {
          const c = coverage.add(r);
          if (c.gap !== undefined) await gapRow(c.gap);
          await row(runCells(r, c.secondsSinceLastSuccess));
        }
        const trailing = coverage.finish();
        if (trailing !== undefined) await gapRow(trailing);
      },
      progress,
    );
  },
};

function gapCells(g: CoverageGap, intervalMs: number): string[] {
  return [
    'gap',
    '',
    '',
    '',
    '',
    cellTime(g.from),
    cellTime(g.to),
    String(g.seconds),
    ...new Array<string>(11).fill(''),
    `no successful run for longer than ${humanSeconds((2 * intervalMs) / 1000)} (two schedule intervals): ${g.note}`,
  ];
}

function runCells(r: LedgerRun, secondsSinceLastSuccess: number | null): string[] {
  return [
    'run',
    String(r.runId),
    r.kind,
    r.trigger,
    r.status,
    cellTime(r.startedAt),
    cellTime(r.finishedAt),
    secondsSinceLastSuccess === null ? '' : String(secondsSinceLastSuccess),
    String(r.pagesFetched),
    String(r.entriesFetched),
    String(r.entriesInserted),
    String(r.entriesRejected),
    String(r.warnings),
    String(r.httpRetries),
    r.stopReason ?? '',
    r.errorCode ?? '',
    r.errorMessage ?? '',
    r.coveredFromText ?? '',
    r.coveredToText ?? '',
    '',
  ];
}
