/**
 * The configured sinks, built from Config.sinks. Each sink type has one factory here; adding a
 * type means a module beside this one, its settings in src/config/settings.ts (SinkSettingsByType and
 * SINK_SPECS), and one line in {@link SINK_FACTORIES}.
 */
import type { Dispatcher } from 'undici';
import type { SinkConfig, SinkConfigOf, SinkType } from '../../config/settings.js';
import type { Sink } from '../../core/alert.js';
import { GovtrailError } from '../../core/errors.js';
import type { Logger } from '../../runtime/logger.js';
import { createEmailSink } from './email/sink.js';
import { createLogSink } from './log/sink.js';
import { createNotifySink } from './notify/sink.js';
import { createPagerDutySink } from './pagerduty/sink.js';
import { createSlackSink } from './slack/sink.js';
import { createSplunkHecSink } from './splunk-hec/sink.js';
import { createSyslogSink } from './syslog/sink.js';
import { createTeamsSink } from './teams/sink.js';
import { createWebhookSink } from './webhook/sink.js';

export {
  DeliveryError,
  isPermanentFailure,
  permanentFailure,
  retryableFailure,
} from './delivery-failure.js';
export {
  type AlertMail,
  alertMail,
  createEmailSink,
  DIGEST_FULL_ALERTS,
  digestMail,
  type EmailSinkOptions,
  escapeHtml,
  isPermanentSmtpError,
} from './email/sink.js';
export { isRetryableStatus, type PostResult, postJson } from './http-post.js';
export { createLogSink } from './log/sink.js';
export { ALERT_CHANNEL, createNotifySink } from './notify/sink.js';
export { clipAlert, ocsfAlertEvent, productVersion } from './ocsf-event.js';
export {
  createPagerDutySink,
  PAGERDUTY_EVENTS_URL,
  PAGERDUTY_SEVERITY,
  type PagerDutyEvent,
  type PagerDutySinkOptions,
  pagerDutyDedupKey,
  pagerDutyEvent,
} from './pagerduty/sink.js';
export {
  createSlackSink,
  escapeMrkdwn,
  SEVERITY_COLOURS,
  type SlackSinkOptions,
  slackPayload,
} from './slack/sink.js';
export {
  createSplunkHecSink,
  isRetryableHecAnswer,
  SPLUNK_BUDGET_BYTES,
  type SplunkHecEvent,
  type SplunkHecSinkOptions,
  splunkHecEvent,
} from './splunk-hec/sink.js';
export {
  createSyslogSink,
  escapeSdValue,
  octetCountingFrame,
  SYSLOG_MAX_BYTES,
  SYSLOG_SD_ID,
  SYSLOG_SEVERITY,
  type SyslogSinkOptions,
  structuredData,
  syslogMessage,
} from './syslog/sink.js';
export {
  createTeamsSink,
  escapeCardMarkdown,
  TEAMS_CARD_VERSION,
  type TeamsSinkOptions,
  teamsMessage,
} from './teams/sink.js';
export {
  createWebhookSink,
  signBody,
  type WebhookPayload,
  type WebhookSinkOptions,
  webhookPayload,
} from './webhook/sink.js';

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
      format: c.format,
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
  splunk_hec: (c, d) =>
    createSplunkHecSink({
      name: c.name,
      url: c.url,
      token: c.token,
      host: c.host,
      source: c.source,
      sourcetype: c.sourcetype,
      index: c.index,
      timeoutMs: c.timeoutMs,
      dispatcher: d.dispatcher,
    }),
  syslog: (c) =>
    createSyslogSink({
      name: c.name,
      protocol: c.protocol,
      host: c.host,
      port: c.port,
      facility: c.facility,
      hostname: c.hostname,
      ca: c.ca,
      cert: c.cert,
      key: c.key,
      rejectUnauthorized: c.rejectUnauthorized,
      timeoutMs: c.timeoutMs,
    }),
  email: (c, d) =>
    createEmailSink({
      name: c.name,
      host: c.host,
      port: c.port,
      security: c.security,
      user: c.user,
      password: c.password,
      from: c.from,
      to: c.to,
      ca: c.ca,
      rejectUnauthorized: c.rejectUnauthorized,
      runbookUrl: d.runbookUrl,
      timeoutMs: c.timeoutMs,
      mode: c.mode,
    }),
};

/** Builds every configured sink, in configuration order. */
export function createSinks(configs: readonly SinkConfig[], deps: SinkDeps): Sink[] {
  // TypeScript cannot tie c.type to c's settings through the map; SINK_FACTORIES' type does.
  return configs.map((c) =>
    (SINK_FACTORIES[c.type] as (config: SinkConfig, deps: SinkDeps) => Sink)(c, deps),
  );
}
