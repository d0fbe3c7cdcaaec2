/** alerts.csv: the alerts about the period's changes, with their delivery status per sink (view alert_log). */
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
] as const;

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
          ]);
        }
      },
      progress,
    ),
};
