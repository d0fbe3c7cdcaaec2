/**
 * alerts.csv: the alerts about the period's changes, with their delivery status per sink (view
 * alert_log) and their handling (alert_event, folded as alert_state folds it): who acknowledged
 * and resolved each one, when, with which note, and every event in order.
 */
import { type LifecycleEvent, replay, stateAt } from '../../../core/alert-lifecycle.js';
import { iterateAlerts } from '../../../store/read/alert-log.js';
import { cellTime } from '../writer.js';
import { type PackDataFile, writeCsv } from './pack-file.js';

const HEADER = [
  'alert_id',
  'raised_at',
  'changed_at',
  'tenant',
  'entry_id',
  'rule_id',
  'rule_version',
  'severity',
  'title',
  'summary',
  'delivery_status',
  'delivered_to',
  'pending_to',
  'failed_to',
  'last_delivered_at',
  'state',
  'assignee',
  'acknowledged_by',
  'acknowledged_at',
  'resolved_by',
  'resolved_at',
  'resolution_note',
  'handling',
] as const;

/** Every event of an alert on one line: `2026-…Z acknowledged by alice; 2026-…Z resolved by bob: note`. */
function handlingText(events: readonly LifecycleEvent[]): string {
  return events
    .map((e) => {
      const what =
        e.kind === 'assigned'
          ? `assigned to ${e.assignee ?? '?'}`
          : e.kind === 'snoozed'
            ? `snoozed until ${e.until?.toISOString() ?? '?'}`
            : e.kind;
      return `${e.at.toISOString()} ${what} by ${e.actor}${e.note ? `: ${e.note}` : ''}`;
    })
    .join('; ');
}

export const ALERTS: PackDataFile = {
  name: 'alerts.csv',
  header: HEADER,
  write: ({ db, dir, o, period, progress }) =>
    writeCsv(
      dir,
      'alerts.csv',
      HEADER,
      async (row) => {
        for await (const a of iterateAlerts(db, period, o.pageSize)) {
          const fold = replay(a.events);
          await row([
            String(a.alertId),
            cellTime(a.createdAt),
            cellTime(a.changedAt),
            o.tenantId,
            a.entryId ?? '',
            a.ruleId,
            String(a.ruleVersion),
            a.severity,
            a.title,
            a.summary,
            a.deliveryStatus,
            a.deliveredSinks.join('; '),
            a.pendingSinks.join('; '),
            a.failedSinks.join('; '),
            cellTime(a.lastDeliveredAt),
            // As of the pack's time, so that a pack made twice from the same data is the same.
            stateAt(fold, o.now),
            fold.assignee ?? '',
            fold.acknowledgedBy ?? '',
            cellTime(fold.acknowledgedAt),
            fold.resolvedBy ?? '',
            cellTime(fold.resolvedAt),
            fold.resolvedNote ?? '',
            handlingText(a.events),
          ]);
        }
      },
      progress,
    ),
};
