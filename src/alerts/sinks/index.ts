/**
 * The configured sinks, built from Config.sinks. Each sink type has one factory here; adding a
 * type means a module beside this one, its settings in src/config.ts (SinkSettingsByType and
 * SINK_SPECS), and one line in {@link SINK_FACTORIES}.
 */
import type { Dispatcher } from 'undici';
import type { SinkConfig, SinkConfigOf, SinkType } from '../../config.js';
import { GovtrailError } from '../../errors.js';
import type { Logger } from '../../logger.js';
import type { Sink } from '../types.js';
import { createLogSink } from './log.js';
import { createNotifySink } from './notify.js';
import { createPagerDutySink } from './pagerduty.js';
import { createSlackSink } from './slack.js';
import { createTeamsSink } from './teams.js';
import { createWebhookSink } from './webhook.js';

export {
  DeliveryError,
  isPermanentFailure,
  permanentFailure,
  retryableFailure,
} from './failure.js';
export { isRetryableStatus, type PostResult, postJson } from './http.js';
export { createLogSink } from './log.js';
export { ALERT_CHANNEL, createNotifySink } from './notify.js';
export {
  createPagerDutySink,
  PAGERDUTY_EVENTS_URL,
  PAGERDUTY_SEVERITY,
  type PagerDutyEvent,
  type PagerDutySinkOptions,
  pagerDutyDedupKey,
  pagerDutyEvent,
} from './pagerduty.js';
export {
  createSlackSink,
  escapeMrkdwn,
  SEVERITY_COLOURS,
  type SlackSinkOptions,
  slackPayload,
} from './slack.js';
export {
  createTeamsSink,
  escapeCardMarkdown,
  TEAMS_CARD_VERSION,
  type TeamsSinkOptions,
  teamsMessage,
} from './teams.js';
export {
  createWebhookSink,
  signBody,
  type WebhookPayload,
  type WebhookSinkOptions,
  webhookPayload,
} from './webhook.js';

/** What the factories may need besides a sink's own settings. */
export interface SinkDeps {
  /** The log sink writes here. */
  readonly logger: Logger;
  /** Runs `SELECT pg_notify(channel, payload)`; the database layer supplies it. */
  readonly notify?: ((channel: string, payload: string) => Promise<void>) | undefined;
  /** Runbook link template of Config.runbookUrl. */
  readonly runbookUrl?: string | undefined;
  /** undici dispatcher of the HTTP sinks (tests, proxies); the global one otherwise. */
  readonly dispatcher?: Dispatcher | undefined;
}

type SinkFactory<T extends SinkType> = (config: SinkConfigOf<T>, deps: SinkDeps) => Sink;

/** One factory per sink type. */
export const SINK_FACTORIES: { readonly [T in SinkType]: SinkFactory<T> } = {
  log: (c, d) => createLogSink(d.logger, c.name),
  notify: (c, d) => {
    if (d.notify === undefined) {
      throw new GovtrailError('INTERNAL', `sink "${c.name}": NOTIFY needs the database, and none was given`);
    }
    return createNotifySink(d.notify, c.name);
  },
  webhook: (c, d) =>
    createWebhookSink({
      name: c.name,
      url: c.url,
      secret: c.secret,
      timeoutMs: c.timeoutMs,
      dispatcher: d.dispatcher,
    }),
  slack: (c, d) =>
    createSlackSink({ name: c.name, url: c.url, timeoutMs: c.timeoutMs, dispatcher: d.dispatcher }),
  pagerduty: (c, d) =>
    createPagerDutySink({
      name: c.name,
      routingKey: c.routingKey,
      url: c.url,
      runbookUrl: d.runbookUrl,
      timeoutMs: c.timeoutMs,
      dispatcher: d.dispatcher,
    }),
  teams: (c, d) =>
    createTeamsSink({
      name: c.name,
      url: c.url,
      runbookUrl: d.runbookUrl,
      timeoutMs: c.timeoutMs,
      dispatcher: d.dispatcher,
    }),
};

/** Builds every configured sink, in configuration order. */
export function createSinks(configs: readonly SinkConfig[], deps: SinkDeps): Sink[] {
  // TypeScript cannot tie c.type to c's settings through the map; SINK_FACTORIES' type does.
  return configs.map((c) =>
    (SINK_FACTORIES[c.type] as (config: SinkConfig, deps: SinkDeps) => Sink)(c, deps),
  );
}
