/** Settings of the generic JSON webhook: `url` (or `url_file`), `secret`, `format`, `timeout`. */
import { defineSinkSettings, text, timeoutKeys } from '../settings-reader.js';

/** Generic JSON webhook. */
export interface WebhookSettings {
  readonly url: string;
  /** HMAC key of the signature header; unsigned without it. Never logged. */
  readonly secret: string | undefined;
  /** `json` (govtrail's own body, the default) or `ocsf` (an OCSF Detection Finding). */
  readonly format: 'json' | 'ocsf';
  readonly timeoutMs: number | undefined;
}

export const webhookSettings = defineSinkSettings({
  keys: {
    url: text.optional(),
    url_file: text.optional(),
    secret: text.optional(),
    secret_file: text.optional(),
    format: text.optional(),
    ...timeoutKeys,
  },
  env: {
    url: 'GOVTRAIL_WEBHOOK_URL',
    secret: 'GOVTRAIL_WEBHOOK_SECRET',
    format: 'GOVTRAIL_WEBHOOK_FORMAT',
    timeout: 'GOVTRAIL_WEBHOOK_TIMEOUT',
    min_severity: 'GOVTRAIL_WEBHOOK_MIN_SEVERITY',
  },
  build: (v, r): WebhookSettings => {
    const format = (v.format ?? 'json').trim().toLowerCase();
    if (format !== 'json' && format !== 'ocsf') {
      r.fail('format', `must be json or ocsf, got ${JSON.stringify(v.format)}`);
    }
    return {
      url: r.url(r.requiredSecret(v, 'url'), 'url'),
      secret: r.secret(v, 'secret'),
      format: format as 'json' | 'ocsf',
      timeoutMs: r.duration(v.timeout, 'timeout'),
    };
  },
});
