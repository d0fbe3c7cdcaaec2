/** The configured sinks, built from the settings that name them. */
import type { Logger } from '../../logger.js';
import type { Sink } from '../types.js';
import { createLogSink } from './log.js';
import { createNotifySink } from './notify.js';
import { createSlackSink } from './slack.js';
import { createWebhookSink } from './webhook.js';

export { createLogSink } from './log.js';
export { ALERT_CHANNEL, createNotifySink } from './notify.js';
export {
  createSlackSink,
  escapeMrkdwn,
  SEVERITY_COLOURS,
  type SlackSinkOptions,
  slackPayload,
} from './slack.js';
export {
  createWebhookSink,
  signBody,
  type WebhookPayload,
  type WebhookSinkOptions,
  webhookPayload,
} from './webhook.js';

/** The sink settings of Config. */
export interface SinkSettings {
  readonly webhookUrl?: string | undefined;
  readonly webhookSecret?: string | undefined;
  readonly slackWebhookUrl?: string | undefined;
}

/**
 * The log sink always, then the webhook and Slack sinks when their URL is set, then NOTIFY when a
 * notify function is given (the database layer supplies it).
 */
export function createSinks(
  settings: SinkSettings,
  logger: Logger,
  notify?: (channel: string, payload: string) => Promise<void>,
): Sink[] {
  const sinks: Sink[] = [createLogSink(logger)];
  if (settings.webhookUrl !== undefined && settings.webhookUrl !== '') {
    sinks.push(createWebhookSink({ url: settings.webhookUrl, secret: settings.webhookSecret }));
  }
  if (settings.slackWebhookUrl !== undefined && settings.slackWebhookUrl !== '') {
    sinks.push(createSlackSink({ url: settings.slackWebhookUrl }));
  }
  if (notify !== undefined) sinks.push(createNotifySink(notify));
  return sinks;
}
