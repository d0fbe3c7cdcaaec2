/** The per-tenant summary table `sync` and `demo` print. */
import type { RunSummary } from '../sync/run-types.js';
import { formatTable } from './table.js';

/** One row per tenant run: status, counters, time, and why it stopped or failed. */
export function formatSummaries(summaries: readonly RunSummary[]): string {
  return formatTable(
    ['tenant', 'status', 'new', 'fetched', 'pages', 'rejected', 'alerts', 'time', 'note'],
    summaries.map((s) => [
      s.tenantId,
      s.status,
      String(s.counters.entriesInserted),
      String(s.counters.entriesFetched),
      String(s.counters.pagesFetched),
      String(s.counters.entriesRejected),
      String(s.alerts),
      `${(s.durationMs / 1000).toFixed(1)}s`,
      s.error !== undefined
        ? `${s.error.code}: ${s.error.message}`
        : s.status === 'skipped'
          ? 'another process is syncing it'
          : s.isBackfill
            ? 'backfill'
            : (s.stopReason ?? ''),
    ]),
  );
}
