/**
 * Alerting as the commands use it: the rule pack (validated at start), the configured sinks, and
 * delivery of pending alerts over the database's outbox.
 */
import { sql } from 'kysely';
import type { Config } from '../config.js';
import type { Logger } from '../logger.js';
import { deliveryStore } from '../store/alerts.js';
import type { Database } from '../store/database.js';
import { type DeliverySummary, deliverPending } from './deliver.js';
import { loadRulePack, type RulePack } from './rules.js';
import { createSinks } from './sinks/index.js';
import type { Sink } from './types.js';

export interface Alerting {
  readonly pack: RulePack;
  readonly sinks: readonly Sink[];
  readonly sinkNames: readonly string[];
  /** Attempts every due delivery once. */
  deliver(signal?: AbortSignal): Promise<DeliverySummary>;
}

export function createAlerting(config: Config, logger: Logger, database: Database): Alerting {
  const pack = loadRulePack(config.alertRulesPath);
  const notify = async (channel: string, payload: string) => {
    await sql`select pg_notify(${channel}, ${payload})`.execute(database.db);
  };
  const sinks = createSinks(
    {
      webhookUrl: config.webhookUrl,
      webhookSecret: config.webhookSecret,
      slackWebhookUrl: config.slackWebhookUrl,
    },
    logger.child({ component: 'alerts' }),
    notify,
  );
  return {
    pack,
    sinks,
    sinkNames: sinks.map((s) => s.name),
    async deliver(signal) {
      let total: DeliverySummary = { delivered: 0, retried: 0, failed: 0, bySink: {} };
      // Work through the backlog in pages; stop when a page delivers nothing new (the rest is not due yet).
      for (let i = 0; i < 100; i++) {
        const page = await deliverPending({
          store: deliveryStore(database.db),
          sinks,
          logger,
          signal,
          limit: 200,
        });
        total = merge(total, page);
        if (page.delivered + page.retried + page.failed < 200 || signal?.aborted) break;
      }
      return total;
    },
  };
}

function merge(a: DeliverySummary, b: DeliverySummary): DeliverySummary {
  const bySink = { ...a.bySink };
  for (const [k, v] of Object.entries(b.bySink)) {
    const x = bySink[k] ?? { delivered: 0, retried: 0, failed: 0 };
    bySink[k] = {
      delivered: x.delivered + v.delivered,
      retried: x.retried + v.retried,
      failed: x.failed + v.failed,
    };
  }
  return {
    delivered: a.delivered + b.delivered,
    retried: a.retried + b.retried,
    failed: a.failed + b.failed,
    bySink,
  };
}
