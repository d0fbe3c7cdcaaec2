/** Settings of the PagerDuty sink: `routing_key` (or `_file`), `host` or `url`, `timeout`. */
import { defineSinkSettings, text, timeoutKeys } from '../settings-reader.js';

/** The Events API v2 endpoint of PagerDuty's US service region. */
export const PAGERDUTY_EVENTS_URL = 'https://events.pagerduty.com/v2/enqueue';

/** PagerDuty Events API v2. */
export interface PagerDutySettings {
  /** The integration's routing key. Never logged. */
  readonly routingKey: string;
  /** The enqueue endpoint: `https://<host>/v2/enqueue`. */
  readonly url: string;
  readonly timeoutMs: number | undefined;
}

/** PagerDuty Events API v2 routing keys are 32 characters. */
const ROUTING_KEY = /^[A-Za-z0-9]{32}$/;

export const pagerDutySettings = defineSinkSettings({
  keys: {
    routing_key: text.optional(),
    routing_key_file: text.optional(),
    host: text.optional(),
    url: text.optional(),
    ...timeoutKeys,
  },
  env: {
    routing_key: 'GOVTRAIL_PAGERDUTY_ROUTING_KEY',
    host: 'GOVTRAIL_PAGERDUTY_HOST',
    url: 'GOVTRAIL_PAGERDUTY_URL',
    timeout: 'GOVTRAIL_PAGERDUTY_TIMEOUT',
    min_severity: 'GOVTRAIL_PAGERDUTY_MIN_SEVERITY',
  },
  build: (v, r): PagerDutySettings => {
    const routingKey = r.requiredSecret(v, 'routing_key').trim();
    if (!ROUTING_KEY.test(routingKey)) {
      r.fail(
        v.routing_key_file === undefined ? 'routing_key' : 'routing_key_file',
        'must be the 32-character integration key of an Events API v2 integration',
      );
    }
    if (v.host !== undefined && v.url !== undefined)
      r.fail('host', `set either ${r.name('url')} or this, not both`);
    let url = PAGERDUTY_EVENTS_URL;
    if (v.url !== undefined) url = r.url(v.url, 'url');
    else if (v.host !== undefined) {
      const host = v.host.trim();
      if (!/^[A-Za-z0-9.-]+(:\d{1,5})?$/.test(host)) {
        r.fail(
          'host',
          `must be a bare host name such as events.eu.pagerduty.com, got ${JSON.stringify(host)}`,
        );
      }
      url = `https://${host}/v2/enqueue`;
    }
    return { routingKey, url, timeoutMs: r.duration(v.timeout, 'timeout') };
  },
});
