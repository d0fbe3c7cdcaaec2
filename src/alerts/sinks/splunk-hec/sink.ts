/**
 * The Splunk HTTP Event Collector sink: one OCSF Detection Finding per alert, POSTed to
 * `https://HOST:8088/services/collector/event` with `Authorization: Splunk <token>` in HEC's
 * envelope:
 *
 * ```json
 * {"time": 1741046400.123, "host": "govtrail-prod", "source": "govtrail",
 *  "sourcetype": "ocsf:govtrail", "index": "security", "event": { …OCSF 2004… }}
 * ```
 *
 * `time` is the alert's creation time in epoch seconds with a fraction (OCSF's own `time` is in
 * milliseconds). HEC answers `{"text", "code"}`; codes 8, 9 and 18–20 (server busy, unhealthy) are
 * retried, like 408, 429 and 5xx; token problems (2, 3, 4: 401/403) and bad data (5, 6, 7, 12, 13:
 * 400) are permanent, the answer's text and code kept in `last_error`. A 200 means "valid", not
 * "indexed" (no indexer acknowledgement). Wire facts: docs/design/alert-destinations.md, "Splunk HTTP Event
 * Collector".
 *
 * Size: the envelope is kept under {@link SPLUNK_BUDGET_BYTES}, below the 10,000 bytes at which
 * Splunk's default `TRUNCATE` of a sourcetype cuts an event, so the JSON is never cut inside Splunk:
 * long values in the event are shortened instead.
 */
import type { Dispatcher } from 'undici';
import type { AlertMessage, Sink } from '../../../core/alert.js';
import { isAnnounced } from '../../../core/follow-up.js';
import { findingUpdate } from '../../../core/ocsf/index.js';
import type { OcsfDetectionFinding } from '../../../core/ocsf/types.js';
import { permanentFailure, retryableFailure } from '../delivery-failure.js';
import { isRetryableStatus, postJson } from '../http-post.js';
import { ocsfAlertEvent } from '../ocsf-event.js';
import type { SinkFactory } from '../sink-factory.js';
import type { SplunkHecSettings } from './settings.js';

/** Bytes of one HEC envelope: under Splunk's default per-event TRUNCATE of 10,000 bytes. */
export const SPLUNK_BUDGET_BYTES = 9_500;

/** The default sourcetype: Splunk's `ocsf:` prefix, one sourcetype for the product (docs/siem.md). */
export const SPLUNK_DEFAULT_SOURCETYPE = 'ocsf:govtrail';
export const SPLUNK_DEFAULT_SOURCE = 'govtrail';

/** HEC status codes worth retrying: 8 internal error, 9 server busy, 18–20 unhealthy/queues full. */
const RETRYABLE_HEC_CODES = new Set([8, 9, 18, 19, 20]);

export interface SplunkHecSinkOptions {
  /** Sink name in alert_delivery and messages; `splunk_hec` by default. */
  readonly name?: string | undefined;
  /** `https://HOST:8088/services/collector/event`. */
  readonly url: string;
  /** The HEC token: the credential. */
  readonly token: string;
  readonly host?: string | undefined;
  readonly source?: string | undefined;
  readonly sourcetype?: string | undefined;
  readonly index?: string | undefined;
  readonly dispatcher?: Dispatcher | undefined;
  readonly timeoutMs?: number | undefined;
  /** For tests: the OCSF `processed_time` and product version. */
  readonly now?: (() => Date) | undefined;
  readonly productVersion?: string | undefined;
}

/** One HEC event envelope. */
export interface SplunkHecEvent {
  readonly time: number;
  readonly host?: string;
  readonly source: string;
  readonly sourcetype: string;
  readonly index?: string;
  readonly event: OcsfDetectionFinding;
}

/** The envelope of an alert, its OCSF event cut so that the whole fits {@link SPLUNK_BUDGET_BYTES}. */
export function splunkHecEvent(
  alert: AlertMessage,
  o: Omit<SplunkHecSinkOptions, 'url' | 'token' | 'dispatcher' | 'timeoutMs' | 'now'> & {
    readonly now?: Date | undefined;
  } = {},
): SplunkHecEvent {
  const created = Date.parse(alert.createdAt);
  const ms = Number.isFinite(created) ? created : (o.now ?? new Date()).getTime();
  const head = {
    time: ms / 1000,
    ...(o.host === undefined ? {} : { host: o.host }),
    source: o.source ?? SPLUNK_DEFAULT_SOURCE,
    sourcetype: o.sourcetype ?? SPLUNK_DEFAULT_SOURCETYPE,
    ...(o.index === undefined ? {} : { index: o.index }),
  };
  const overhead = Buffer.byteLength(JSON.stringify({ ...head, event: {} }), 'utf8');
  const event = ocsfAlertEvent(alert, {
    budgetBytes: SPLUNK_BUDGET_BYTES - overhead,
    now: o.now,
    productVersion: o.productVersion,
  });
  return { ...head, event };
}

/** HEC's `code` in an answer body, if it is HEC's JSON. */
export function hecCode(body: string): number | undefined {
  try {
    const code = (JSON.parse(body) as { code?: unknown }).code;
    return typeof code === 'number' ? code : undefined;
  } catch {
    return undefined;
  }
}

/** Whether a non-2xx HEC answer is worth retrying: by HEC code when there is one, else by status. */
export function isRetryableHecAnswer(status: number, body: string): boolean {
  const code = hecCode(body);
  if (code !== undefined && status !== 429) return RETRYABLE_HEC_CODES.has(code) || status >= 500;
  return isRetryableStatus(status);
}

/** Creates the Splunk HEC sink. */
export function createSplunkHecSink(o: SplunkHecSinkOptions): Sink {
  const name = o.name ?? 'splunk_hec';
  return {
    name,
    async deliverEvent(alert, event) {
      if (!isAnnounced(event.kind)) return;
      const envelope = splunkHecEvent(alert, {
        host: o.host,
        source: o.source,
        sourcetype: o.sourcetype,
        index: o.index,
        productVersion: o.productVersion,
        now: o.now?.(),
      });
      await post({
        ...envelope,
        time: event.at.getTime() / 1000,
        event: findingUpdate(envelope.event, event),
      });
    },
    async deliver(alert) {
      const envelope = splunkHecEvent(alert, {
        host: o.host,
        source: o.source,
        sourcetype: o.sourcetype,
        index: o.index,
        productVersion: o.productVersion,
        now: o.now?.(),
      });
      await post(envelope);
    },
  };
  async function post(envelope: SplunkHecEvent): Promise<void> {
    const result = await postJson({
      sink: name,
      url: o.url,
      body: Buffer.from(JSON.stringify(envelope), 'utf8'),
      headers: { authorization: `Splunk ${o.token}` },
      dispatcher: o.dispatcher,
      timeoutMs: o.timeoutMs,
      isRetryable: isRetryableHecAnswer,
    });
    // A 2xx whose body says something other than success (code 0) did not take the event.
    const code = hecCode(result.body);
    if (code !== undefined && code !== 0) {
      const reason = `HTTP ${result.status} with HEC code ${code}: ${result.body}`;
      if (RETRYABLE_HEC_CODES.has(code)) throw retryableFailure(name, reason, { status: result.status });
      throw permanentFailure(name, reason, { status: result.status });
    }
  }
}

/** Builds the sink from its configured settings (the registry's factory of this type). */
export const fromConfig: SinkFactory<SplunkHecSettings> = (c, d) =>
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
  });
