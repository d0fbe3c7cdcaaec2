/**
 * Public surface of the sinks: each type's sink and payload builders, {@link createSinks}, and the
 * catalogue of types (registry.ts: adding a type is one folder and one line there).
 */

export { createSinks } from './create-sinks.js';
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
export {
  createJiraSink,
  type JiraSinkOptions,
  jiraComment,
  jiraDedupeLabel,
  jiraDescription,
  jiraIssue,
} from './jira/sink.js';
export { createLogSink } from './log/sink.js';
export { ALERT_CHANNEL, createNotifySink } from './notify/sink.js';
export { clipAlert, ocsfAlertEvent } from './ocsf-event.js';
export { PAGERDUTY_EVENTS_URL } from './pagerduty/settings.js';
export {
  createPagerDutySink,
  PAGERDUTY_SEVERITY,
  type PagerDutyEvent,
  type PagerDutySinkOptions,
  pagerDutyDedupKey,
  pagerDutyEvent,
} from './pagerduty/sink.js';
export {
  SINK_REGISTRY,
  SINK_TYPES,
  type SinkConfig,
  type SinkConfigOf,
  type SinkType,
} from './registry.js';
export type { SinkDeps, SinkFactory } from './sink-factory.js';
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
export { SYSLOG_DEFAULT_FACILITY, SYSLOG_FACILITIES } from './syslog/settings.js';
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
