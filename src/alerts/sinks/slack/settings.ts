/** Settings of the Slack sink: `url` (or `url_file`) and `timeout`. */
import { defineSinkSettings, text, timeoutKeys } from '../settings-reader.js';

/** Slack incoming webhook (the URL is the credential). */
export interface SlackSettings {
  readonly url: string;
  readonly timeoutMs: number | undefined;
}

export const slackSettings = defineSinkSettings({
  keys: { url: text.optional(), url_file: text.optional(), ...timeoutKeys },
  env: {
    url: 'GOVTRAIL_SLACK_WEBHOOK_URL',
    timeout: 'GOVTRAIL_SLACK_TIMEOUT',
    min_severity: 'GOVTRAIL_SLACK_MIN_SEVERITY',
  },
  build: (v, r): SlackSettings => ({
    url: r.url(r.requiredSecret(v, 'url'), 'url'),
    timeoutMs: r.duration(v.timeout, 'timeout'),
  }),
});
