/**
 * The NOTIFY sink end to end: a separate LISTEN connection on the test database receives the id
 * of every alert a sync raised, once delivery has run.
 */
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { ALERT_CHANNEL } from '../../src/alerts/sinks/index.js';
import { createAlerting } from '../../src/app/alerting.js';
import { alertRows, deliveryRows, runScenario } from '../helpers/alerts.js';
import { NEEDS_SERVER, onServer } from '../helpers/database.js';
import type { Harness } from '../helpers/harness.js';

let h: Harness | undefined;
let listener: pg.Client | undefined;
afterEach(async () => {
  await listener?.end();
  await h?.close();
  listener = undefined;
  h = undefined;
});

describe('NOTIFY govtrail_alerts', () => {
  it.skipIf(!onServer)(
    `a LISTEN client receives each alert id after sync and delivery (${NEEDS_SERVER})`,
    async () => {
      const s = await runScenario({ after: [{ annotations: [], set: { requireToolApproval: false } }] });
      h = s.h;
      const alerts = await alertRows(h.database.db);
      expect(alerts.map((a) => a.rule_id)).toEqual(['AIGOV-016', 'AIGOV-002', 'AIGOV-013']);

      listener = new pg.Client({ connectionString: h.testDb.url });
      await listener.connect();
      const payloads: string[] = [];
      const all = new Promise<void>((resolve) => {
        listener?.on('notification', (n) => {
          if (n.channel !== ALERT_CHANNEL) return;
          payloads.push(n.payload ?? '');
          if (payloads.length === alerts.length) resolve();
        });
      });
      await listener.query(`LISTEN ${ALERT_CHANNEL}`);

      // Nothing is announced before delivery: the outbox holds the alerts until then.
      expect(payloads).toEqual([]);
      const summary = await createAlerting(h.config, h.logger, h.database).deliver();
      expect(summary.bySink['notify']).toEqual({ delivered: alerts.length, retried: 0, failed: 0 });
      await all;
      expect(payloads.sort()).toEqual(alerts.map((a) => String(a.alert_id)).sort());
      const notify = (await deliveryRows(h.database.db)).filter((d) => d.sink === 'notify');
      expect(notify.every((d) => d.status === 'delivered' && d.attempts === 1)).toBe(true);
    },
  );
});
