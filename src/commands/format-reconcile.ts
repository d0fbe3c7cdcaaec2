/** The per-tenant table `reconcile` and `demo` print (docs/design/integrity.md). */
import type { RunSummary } from '../sync/run-types.js';
import { formatTable } from './table.js';

/** Whether a reconcile shows the source and the store in agreement (expired entries allowed). */
export function agrees(s: RunSummary): boolean {
  const i = s.integrity;
  return (
    s.status === 'succeeded' &&
    i !== undefined &&
    s.counters.entriesChanged + i.entriesMissing + i.entriesBackdated + i.entriesConflicting === 0
  );
}

/**
 * The per-tenant table of docs/design/integrity.md: served, matched, new, changed, missing, expired,
 * backdated.
 */
export function formatReconcile(summaries: readonly RunSummary[]): string {
  return formatTable(
    [
      'tenant',
      'status',
      'served',
      'matched',
      'new',
      'changed',
      'missing',
      'expired',
      'backdated',
      'conflicting',
      'covered',
      'note',
    ],
    summaries.map((s) => {
      const i = s.integrity;
      const n = (v: number | undefined) => (v === undefined ? '' : String(v));
      return [
        s.tenantId,
        s.status === 'succeeded' ? (agrees(s) ? 'agrees' : 'differs') : s.status,
        n(s.counters.entriesFetched - s.counters.entriesRejected),
        n(i && s.counters.entriesMatched),
        n(i?.entriesNew),
        n(i && s.counters.entriesChanged),
        n(i?.entriesMissing),
        n(i?.entriesExpired),
        n(i?.entriesBackdated),
        n(i?.entriesConflicting),
        i?.coveredFrom && i.coveredTo ? `${i.coveredFrom.text} … ${i.coveredTo.text}` : '',
        s.error !== undefined
          ? `${s.error.code}: ${s.error.message}`
          : s.status === 'skipped'
            ? 'another process holds the tenant lock'
            : `run ${s.runId}, ${(s.durationMs / 1000).toFixed(1)}s`,
      ];
    }),
  );
}
