/**
 * PostgreSQL `NOTIFY govtrail_alerts, '<alert id>'`. The payload is only the id: listeners read
 * the alert from the `alert` table, and NOTIFY payloads must stay under 8000 bytes.
 */
import type { Sink } from '../../../core/alert.js';
import { GovtrailError } from '../../../core/errors.js';
import { permanentFailure, retryableFailure } from '../delivery-failure.js';
import type { SinkFactory } from '../sink-factory.js';
import type { NotifySettings } from './settings.js';

/** The channel listeners `LISTEN` on. */
export const ALERT_CHANNEL = 'govtrail_alerts';

const MAX_PAYLOAD_BYTES = 7999;

/**
 * Creates the notify sink (name `notify` by default) over a function that runs
 * `SELECT pg_notify($1, $2)`, so this module needs no database driver.
 */
export function createNotifySink(
  notify: (channel: string, payload: string) => Promise<void>,
  name = 'notify',
): Sink {
  return {
    name,
    async deliver(alert) {
      const payload = alert.alertId;
      if (Buffer.byteLength(payload, 'utf8') > MAX_PAYLOAD_BYTES) {
        throw permanentFailure(name, `alert id longer than ${MAX_PAYLOAD_BYTES} bytes`);
      }
      try {
        await notify(ALERT_CHANNEL, payload);
      } catch (err) {
        const reason = err instanceof Error ? err.message : String(err);
        throw retryableFailure(name, reason, { cause: err });
      }
    },
  };
}

/** Builds the sink from its configured settings (the registry's factory of this type). */
export const fromConfig: SinkFactory<NotifySettings> = (c, d) => {
  if (d.notify === undefined) {
    throw new GovtrailError('INTERNAL', `sink "${c.name}": NOTIFY needs the database, and none was given`);
  }
  return createNotifySink(d.notify, c.name);
};
