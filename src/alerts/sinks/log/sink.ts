/** The log sink: always configured, so an alert is never only in the database. */

import type { Sink } from '../../../core/alert.js';
import { followUpLine } from '../../../core/follow-up.js';
import type { Logger } from '../../../runtime/logger.js';
import type { SinkFactory } from '../sink-factory.js';
import type { LogSettings } from './settings.js';

/**
 * Creates the log sink (name `log` by default): one structured line per alert, at `warn` for high
 * and critical alerts and `info` otherwise, so a log-based pager can key on the level.
 */
export function createLogSink(logger: Logger, name = 'log'): Sink {
  return {
    name,
    async deliver(alert, delivery) {
      const level = alert.severity === 'high' || alert.severity === 'critical' ? 'warn' : 'info';
      logger[level](
        {
          alert: {
            alertId: alert.alertId,
            ruleId: alert.ruleId,
            ruleVersion: alert.ruleVersion,
            severity: alert.severity,
            tenantId: alert.tenantId,
            entryId: alert.entryId,
            dedupeKey: alert.dedupeKey,
            title: alert.title,
            summary: alert.summary,
            changes: alert.context.changes,
          },
          deliveryId: delivery.deliveryId,
        },
        `alert ${alert.ruleId} (${alert.severity}): ${alert.title}`,
      );
    },
    async deliverEvent(alert, event, delivery) {
      logger.info(
        {
          alert: { alertId: alert.alertId, ruleId: alert.ruleId, dedupeKey: alert.dedupeKey },
          event: { eventId: event.eventId, kind: event.kind, actor: event.actor, automatic: event.automatic },
          deliveryId: delivery.deliveryId,
        },
        followUpLine(alert, event),
      );
    },
  };
}

/** Builds the sink from its configured settings (the registry's factory of this type). */
export const fromConfig: SinkFactory<LogSettings> = (c, d) => createLogSink(d.logger, c.name);
