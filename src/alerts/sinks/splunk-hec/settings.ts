/** Settings of the Splunk HEC sink: `url`, `token` (or `token_file`), the event's metadata, `timeout`. */
import { nonEmpty } from '../../../core/setting-values.js';
import { defineSinkSettings, text, timeoutKeys } from '../settings-reader.js';

/** Splunk HTTP Event Collector: OCSF Detection Findings in HEC's envelope. */
export interface SplunkHecSettings {
  /** `https://HOST:8088/services/collector/event`. */
  readonly url: string;
  /** The HEC token. Never logged. */
  readonly token: string;
  readonly host: string | undefined;
  readonly source: string | undefined;
  readonly sourcetype: string | undefined;
  readonly index: string | undefined;
  readonly timeoutMs: number | undefined;
}

export const splunkHecSettings = defineSinkSettings({
  keys: {
    url: text.optional(),
    token: text.optional(),
    token_file: text.optional(),
    host: text.optional(),
    source: text.optional(),
    sourcetype: text.optional(),
    index: text.optional(),
    ...timeoutKeys,
  },
  env: {
    url: 'GOVTRAIL_SPLUNK_HEC_URL',
    token: 'GOVTRAIL_SPLUNK_HEC_TOKEN',
    index: 'GOVTRAIL_SPLUNK_HEC_INDEX',
    sourcetype: 'GOVTRAIL_SPLUNK_HEC_SOURCETYPE',
    timeout: 'GOVTRAIL_SPLUNK_HEC_TIMEOUT',
    min_severity: 'GOVTRAIL_SPLUNK_HEC_MIN_SEVERITY',
  },
  build: (v, r): SplunkHecSettings => {
    if (v.url === undefined) {
      return r.fail('url', 'is required (https://HOST:8088/services/collector/event)');
    }
    const url = new URL(r.url(v.url, 'url'));
    // A bare https://HOST:8088 means the event endpoint.
    if (url.pathname === '/' || url.pathname === '') url.pathname = '/services/collector/event';
    const token = r.requiredSecret(v, 'token').trim();
    const optional = (value: string | undefined) => nonEmpty(value)?.trim();
    return {
      url: url.href,
      token,
      host: optional(v.host),
      source: optional(v.source),
      sourcetype: optional(v.sourcetype),
      index: optional(v.index),
      timeoutMs: r.duration(v.timeout, 'timeout'),
    };
  },
});
