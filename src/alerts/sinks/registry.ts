/**
 * The sink catalogue: every sink type, once, with its settings and its factory.
 *
 * Adding a sink type is one folder and one line here:
 *
 * 1. `src/alerts/sinks/<type>/settings.ts` (a `_` in the type is a `-` in the folder name:
 *    splunk_hec → splunk-hec/): the settings interface and `defineSinkSettings({ keys, env, build })`
 *    (settings-reader.ts): the YAML keys it accepts, the environment variables of its short form,
 *    and the checks that turn keys into settings. It imports no I/O module (undici, nodemailer,
 *    node:net/tls/dgram): config/ reads this catalogue for every command, and must not load a sink
 *    to do so (test/unit/sinks-catalogue.test.ts checks it).
 * 2. `src/alerts/sinks/<type>/sink.ts`: the sink, and `fromConfig`, the SinkFactory (sink-factory.ts) that
 *    builds it from the settings.
 * 3. A line in {@link SINK_REGISTRY}: `<type>: sinkEntry(<type>Settings, () => import('./<type>/sink.js'))`.
 *
 * The common keys (`type`, `name`, `min_severity`, `rules`, `tenants`), the `*_file` variants of
 * secrets, the short form and the error messages come with it (sink-settings.ts). The factory is
 * loaded only where sinks are built (create-sinks.ts), so reading settings loads no sink code.
 */
import type { SinkRoute } from '../../core/routing.js';
import { emailSettings } from './email/settings.js';
import { jiraSettings } from './jira/settings.js';
import { logSettings } from './log/settings.js';
import { notifySettings } from './notify/settings.js';
import { pagerDutySettings } from './pagerduty/settings.js';
import type { SinkSettingsSpec } from './settings-reader.js';
import type { SinkFactory } from './sink-factory.js';
import { slackSettings } from './slack/settings.js';
import { splunkHecSettings } from './splunk-hec/settings.js';
import { syslogSettings } from './syslog/settings.js';
import { teamsSettings } from './teams/settings.js';
import { webhookSettings } from './webhook/settings.js';

/** One sink type: its settings, and its module, whose `fromConfig` builds the sink. */
export interface SinkEntry<S> {
  readonly settings: SinkSettingsSpec<S>;
  readonly load: () => Promise<{ readonly fromConfig: SinkFactory<S> }>;
}

/** A registry line; ties the factory's settings to the type's. */
function sinkEntry<S>(
  settings: SinkSettingsSpec<S>,
  load: () => Promise<{ readonly fromConfig: SinkFactory<NoInfer<S>> }>,
): SinkEntry<S> {
  return { settings, load };
}

/** Every sink type, in the order the environment short forms are added. */
export const SINK_REGISTRY = {
  log: sinkEntry(logSettings, () => import('./log/sink.js')),
  webhook: sinkEntry(webhookSettings, () => import('./webhook/sink.js')),
  slack: sinkEntry(slackSettings, () => import('./slack/sink.js')),
  pagerduty: sinkEntry(pagerDutySettings, () => import('./pagerduty/sink.js')),
  teams: sinkEntry(teamsSettings, () => import('./teams/sink.js')),
  splunk_hec: sinkEntry(splunkHecSettings, () => import('./splunk-hec/sink.js')),
  syslog: sinkEntry(syslogSettings, () => import('./syslog/sink.js')),
  email: sinkEntry(emailSettings, () => import('./email/sink.js')),
  jira: sinkEntry(jiraSettings, () => import('./jira/sink.js')),
  notify: sinkEntry(notifySettings, () => import('./notify/sink.js')),
} as const;

export type SinkType = keyof typeof SINK_REGISTRY;

/** Every sink type, in the order the short forms are added. */
export const SINK_TYPES = Object.keys(SINK_REGISTRY) as readonly SinkType[];

/** The settings of each sink type beyond its name, type and filters. */
export type SinkSettingsByType = {
  readonly [T in SinkType]: (typeof SINK_REGISTRY)[T] extends SinkEntry<infer S> ? S : never;
};

/** What every configured sink has. */
export interface SinkCommon<T extends SinkType> {
  readonly type: T;
  /** Unique; the `sink` column of alert_delivery. Defaults to the type. */
  readonly name: string;
  /** Which alerts get a delivery row for this sink (decided when the alert is stored). */
  readonly route: SinkRoute;
  /** Where it was configured, for messages: `<file>: sinks[2]`, an environment variable, or `default`. */
  readonly origin: string;
  /** Values to scrub from logs: keys, secrets, URLs that carry credentials. Never logged. */
  readonly secrets: readonly string[];
}

export type SinkConfigOf<T extends SinkType> = SinkCommon<T> & SinkSettingsByType[T];

/** One configured sink. */
export type SinkConfig = { [T in SinkType]: SinkConfigOf<T> }[SinkType];
