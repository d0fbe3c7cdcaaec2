/**
 * Alerting as the commands use it: the rule pack (validated at start), the configured sinks with
 * their routes, and delivery of pending alerts over the database's outbox.
 */
import type { Dispatcher } from 'undici';
import { type DeliverySummary, deliverPending } from '../alerts/deliver.js';
import { createSinks } from '../alerts/sinks/index.js';
import { loadRulePack } from '../config/rule-pack.js';
import { type Config, sinkSecrets } from '../config/settings.js';
import type { Sink } from '../core/alert.js';
import { ConfigError } from '../core/errors.js';
import type { RoutedSink } from '../core/routing.js';
import type { RulePack } from '../core/rules/rules.js';
import { type Logger, registerSecret } from '../runtime/logger.js';
import type { Database } from '../store/database.js';
import { eventDeliveryStore } from '../store/write/alert-events.js';
import { deliveryStore, notifyChannel } from '../store/write/outbox.js';

export interface Alerting {
  readonly pack: RulePack;
  readonly sinks: readonly Sink[];
  /** Every sink's name and route: the outbox writes a delivery row for the sinks whose route allows. */
  readonly routes: readonly RoutedSink[];
  readonly sinkNames: readonly string[];
  /** Attempts every due delivery once. */
  deliver(signal?: AbortSignal): Promise<DeliverySummary>;
  /** Closes what the sinks hold open. */
  close(): Promise<void>;
}

export interface AlertingOptions {
  /** undici dispatcher of the HTTP sinks (tests); the global one otherwise. */
  readonly dispatcher?: Dispatcher | undefined;
}

/**
 * Loads the rule pack and builds the sinks. Registers every sink secret for redaction, and fails
 * with a ConfigError when a route names a rule the pack does not have (a typo would silently route
 * nothing, or everything).
 */
export function createAlerting(
  config: Config,
  logger: Logger,
  database: Database,
  options: AlertingOptions = {},
): Alerting {
  const pack = loadRulePack(config.alertRulesPath);
  for (const secret of sinkSecrets(config)) registerSecret(secret);
  checkRouteRules(config, pack);
  const notify = async (channel: string, payload: string) => {
    await notifyChannel(database.db, channel, payload);
  };
  const sinks = createSinks(config.sinks, {
    logger: logger.child({ component: 'alerts' }),
    notify,
    runbookUrl: config.runbookUrl,
    dispatcher: options.dispatcher,
  });
  return {
    pack,
    sinks,
    routes: config.sinks.map((s) => ({ name: s.name, route: s.route })),
    sinkNames: sinks.map((s) => s.name),
    async deliver(signal) {
      let total: DeliverySummary = { delivered: 0, retried: 0, failed: 0, bySink: {} };
      // The alerts first, then their follow-ups (an acknowledge waits for its trigger).
      for (const store of [deliveryStore(database.db), eventDeliveryStore(database.db)]) {
        // Work through the backlog in pages; stop when a page delivers nothing new (the rest is not due yet).
        for (let i = 0; i < 100; i++) {
          const page = await deliverPending({ store, sinks, logger, signal, limit: 200 });
          total = merge(total, page);
          if (page.delivered + page.retried + page.failed < 200 || signal?.aborted) break;
        }
      }
      return total;
    },
    async close() {
      await Promise.allSettled(sinks.map((s) => s.close?.()));
    },
  };
}

/**
 * Runs `work` with alerting built for it and closes the sinks afterwards, whatever happens: a TCP
 * or TLS syslog connection or a pooled SMTP transport would otherwise keep the process alive after
 * the command has printed its result.
 */
export async function withAlerting<T>(
  config: Config,
  logger: Logger,
  database: Database,
  work: (alerting: Alerting) => Promise<T>,
  options: AlertingOptions = {},
): Promise<T> {
  const alerting = createAlerting(config, logger, database, options);
  try {
    return await work(alerting);
  } finally {
    await alerting.close();
  }
}

function checkRouteRules(config: Config, pack: RulePack): void {
  const known = new Set(pack.rules.map((r) => r.id));
  for (const s of config.sinks) {
    for (const [key, ids] of [
      ['rules.include', s.route.includeRules],
      ['rules.exclude', s.route.excludeRules],
    ] as const) {
      const unknown = (ids ?? []).find((id) => !known.has(id));
      if (unknown !== undefined) {
        throw new ConfigError(
          `${s.origin}.${key}`,
          `names no rule of the pack: ${JSON.stringify(unknown)} (rules: ${[...known].join(', ')})`,
        );
      }
    }
  }
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
