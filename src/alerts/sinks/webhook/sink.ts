/**
 * The generic JSON webhook sink (`GOVTRAIL_WEBHOOK_URL`).
 *
 * Request: `POST <url>` with headers
 * - `Content-Type: application/json`
 * - `X-Govtrail-Event: alert`
 * - `X-Govtrail-Delivery: <id>` — the same on every retry of one alert to one sink; drop repeats by it
 *   (or by `alert.dedupeKey`): delivery is at least once
 * - `X-Govtrail-Attempt: <n>` — 1 for the first attempt
 * - with `GOVTRAIL_WEBHOOK_SECRET`, the Standard Webhooks signature (https://www.standardwebhooks.com):
 *   `webhook-id` (the delivery id), `webhook-timestamp` (Unix seconds of this attempt) and
 *   `webhook-signature: v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<body>">`. A `whsec_<base64>`
 *   secret is keyed by its decoded bytes, as the Standard Webhooks libraries do; any other secret by
 *   its UTF-8 bytes (those libraries take it with `{ format: "raw" }`). Binding the id and the time
 *   into the signature lets a receiver reject replays older than its tolerance.
 * - `X-Govtrail-Signature: sha256=<hex>` — the previous scheme, HMAC-SHA256 of the body alone with the
 *   secret string as key. Deprecated: it is still sent in this release and will be removed in the next
 *
 * Body ({@link WebhookPayload}), identical on every retry:
 * ```json
 * { "type": "govtrail.alert",
 *   "alert": { "id": "…", "ruleId": "AIGOV-002", "ruleVersion": 1, "severity": "high",
 *              "title": "Tool approval was turned off", "summary": "…", "tenantId": "acme",
 *              "entryId": "…", "dedupeKey": "AIGOV-002:acme:…", "createdAt": "…", "context": { … } } }
 * ```
 * With `format: ocsf` (`GOVTRAIL_WEBHOOK_FORMAT=ocsf`) the body is instead the alert's OCSF 1.8.0
 * Detection Finding (class 2004, docs/siem.md), with the same headers and signature.
 *
 * A 2xx answer means delivered. 408, 429 (after its Retry-After), 5xx, timeouts and network errors
 * are retried; any other status is permanent: the delivery is marked `failed` at once with the
 * status and the start of the answer. Redirects are not followed.
 */
import { createHmac } from 'node:crypto';
import type { Dispatcher } from 'undici';
import type {
  AlertContext,
  AlertFollowUp,
  AlertMessage,
  DeliveryAttempt,
  Severity,
  Sink,
} from '../../../core/alert.js';
import { followUpType, isAnnounced } from '../../../core/follow-up.js';
import { postJson } from '../http-post.js';
import { ocsfAlertEvent, ocsfFollowUpEvent } from '../ocsf-event.js';
import type { SinkFactory } from '../sink-factory.js';
import type { WebhookSettings } from './settings.js';

/** Budget of an OCSF body (`format: ocsf`): long values are cut past 1 MiB. */
export const WEBHOOK_OCSF_BUDGET_BYTES = 1024 * 1024;

/** The JSON body of a webhook delivery. */
export interface WebhookPayload {
  readonly type: 'govtrail.alert';
  readonly alert: {
    readonly id: string;
    readonly ruleId: string;
    readonly ruleVersion: number;
    readonly severity: Severity;
    readonly title: string;
    readonly summary: string;
    readonly tenantId: string;
    readonly entryId: string | null;
    readonly dedupeKey: string;
    readonly createdAt: string;
    readonly context: AlertContext;
  };
}

export interface WebhookSinkOptions {
  /** Sink name in alert_delivery and messages; `webhook` by default. */
  readonly name?: string | undefined;
  readonly url: string;
  /** Signing secret (Standard Webhooks and `X-Govtrail-Signature`); no signature without it. */
  readonly secret?: string | undefined;
  /** Clock for `webhook-timestamp`; injected by tests. */
  readonly now?: (() => Date) | undefined;
  /**
   * `json` (default): {@link WebhookPayload}; `ocsf`: the alert's OCSF Detection Finding (class
   * 2004, docs/siem.md), for SIEM pipelines that take OCSF over HTTP. Headers are the same.
   */
  readonly format?: 'json' | 'ocsf' | undefined;
  /** undici dispatcher (tests, proxies); the global one otherwise. */
  readonly dispatcher?: Dispatcher | undefined;
  readonly timeoutMs?: number | undefined;
}

/** Builds the webhook body of an alert. */
export function webhookPayload(alert: AlertMessage): WebhookPayload {
  return {
    type: 'govtrail.alert',
    alert: {
      id: alert.alertId,
      ruleId: alert.ruleId,
      ruleVersion: alert.ruleVersion,
      severity: alert.severity,
      title: alert.title,
      summary: alert.summary,
      tenantId: alert.tenantId,
      entryId: alert.entryId,
      dedupeKey: alert.dedupeKey,
      createdAt: alert.createdAt,
      context: alert.context,
    },
  };
}

/**
 * The webhook body of a lifecycle event (`format: json`): the Standard Webhooks `type`
 * `alert.acknowledged`, `alert.resolved`, …, the alert as in {@link webhookPayload}, and the event.
 */
export function webhookFollowUpPayload(alert: AlertMessage, e: AlertFollowUp): Record<string, unknown> {
  return {
    type: followUpType(e.kind),
    alert: webhookPayload(alert).alert,
    event: {
      id: e.eventId,
      kind: e.kind,
      actor: e.actor,
      at: e.at.toISOString(),
      automatic: e.automatic,
      ...(e.note ? { note: e.note } : {}),
      ...(e.assignee ? { assignee: e.assignee } : {}),
      ...(e.until ? { until: e.until.toISOString() } : {}),
    },
  };
}

/** `sha256=<hex HMAC-SHA256 of body>`, the value of `X-Govtrail-Signature`. */
export function signBody(secret: string, body: Buffer | string): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
}

/** The HMAC key of a Standard Webhooks secret: `whsec_<base64>` decoded, anything else as UTF-8. */
export function standardWebhookKey(secret: string): Buffer {
  return secret.startsWith('whsec_')
    ? Buffer.from(secret.slice('whsec_'.length), 'base64')
    : Buffer.from(secret, 'utf8');
}

/**
 * The Standard Webhooks headers of one attempt: `webhook-signature` is `v1,` and the base64
 * HMAC-SHA256 of `<id>.<timestamp>.<body>`, keyed by {@link standardWebhookKey}.
 */
export function standardWebhookHeaders(
  secret: string,
  id: string,
  at: Date,
  body: Buffer,
): Record<'webhook-id' | 'webhook-timestamp' | 'webhook-signature', string> {
  const timestamp = String(Math.floor(at.getTime() / 1000));
  const mac = createHmac('sha256', standardWebhookKey(secret))
    .update(`${id}.${timestamp}.`, 'utf8')
    .update(body)
    .digest('base64');
  return { 'webhook-id': id, 'webhook-timestamp': timestamp, 'webhook-signature': `v1,${mac}` };
}

/** Creates the webhook sink. */
export function createWebhookSink(o: WebhookSinkOptions): Sink {
  const name = o.name ?? 'webhook';
  const post = async (payload: unknown, event: string, delivery: DeliveryAttempt): Promise<void> => {
    const body = Buffer.from(JSON.stringify(payload), 'utf8');
    const headers: Record<string, string> = {
      'x-govtrail-event': event,
      'x-govtrail-delivery': delivery.deliveryId,
      'x-govtrail-attempt': String(delivery.attempt),
    };
    if (o.secret !== undefined && o.secret !== '') {
      Object.assign(
        headers,
        standardWebhookHeaders(o.secret, delivery.deliveryId, (o.now ?? (() => new Date()))(), body),
      );
      headers['x-govtrail-signature'] = signBody(o.secret, body);
    }
    await postJson({
      sink: name,
      url: o.url,
      body,
      headers,
      dispatcher: o.dispatcher,
      timeoutMs: o.timeoutMs,
    });
  };
  return {
    name,
    async deliver(alert, delivery) {
      const payload =
        o.format === 'ocsf'
          ? ocsfAlertEvent(alert, { budgetBytes: WEBHOOK_OCSF_BUDGET_BYTES })
          : webhookPayload(alert);
      await post(payload, 'alert', delivery);
    },
    async deliverEvent(alert, event, delivery) {
      if (!isAnnounced(event.kind)) return;
      const payload =
        o.format === 'ocsf'
          ? ocsfFollowUpEvent(alert, event, { budgetBytes: WEBHOOK_OCSF_BUDGET_BYTES })
          : webhookFollowUpPayload(alert, event);
      await post(payload, followUpType(event.kind), delivery);
    },
  };
}

/** Builds the sink from its configured settings (the registry's factory of this type). */
export const fromConfig: SinkFactory<WebhookSettings> = (c, d) =>
  createWebhookSink({
    name: c.name,
    url: c.url,
    secret: c.secret,
    format: c.format,
    timeoutMs: c.timeoutMs,
    dispatcher: d.dispatcher,
  });
