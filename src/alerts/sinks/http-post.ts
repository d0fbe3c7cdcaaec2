/**
 * The one HTTP exchange the HTTP sinks share: POST a body, read a little of the answer, and turn
 * anything but a 2xx into a {@link DeliveryError} that says whether a retry may help.
 */
import { type Dispatcher, request } from 'undici';
import { parseRetryAfter } from '../../core/backoff.js';
import { isAbortError, RETRYABLE_STATUSES } from '../../core/errors.js';
import { redact, redactCut } from '../../core/redact.js';
import { permanentFailure, retryableFailure } from './delivery-failure.js';
import { DEFAULT_SINK_TIMEOUT_MS } from './settings-reader.js';

/** How much of a response body is kept: enough for PagerDuty's list of errors. */
const BODY_BYTES = 1000;

/** Upper bound on an honoured Retry-After: the outbox's own longest delay. */
const RETRY_AFTER_CAP_MS = 3_600_000;

export interface PostOptions {
  /** The sink's name, first in every error message. */
  readonly sink: string;
  readonly url: string;
  readonly body: Buffer;
  readonly headers: Readonly<Record<string, string>>;
  readonly dispatcher?: Dispatcher | undefined;
  readonly timeoutMs?: number | undefined;
  /**
   * Whether a non-2xx answer is worth retrying; by default 408, 429 and 5xx are, every other status
   * is permanent (docs/design/alert-destinations.md, "classify errors").
   */
  readonly isRetryable?: ((status: number, body: string) => boolean) | undefined;
}

/** A 2xx answer: its status and the first bytes of its body. */
export interface PostResult {
  readonly status: number;
  readonly body: string;
}

/** The default classification of a non-2xx status. */
export function isRetryableStatus(status: number): boolean {
  return RETRYABLE_STATUSES.has(status) || status >= 500;
}

/**
 * POSTs `body` to `url` as JSON. Redirects are not followed (undici's `request` never does): a
 * receiver that redirects is misconfigured, and following it would send the alert somewhere
 * unreviewed. A Retry-After on a retryable answer travels with the error to the outbox.
 * @throws DeliveryError — retryable for network errors, timeouts and the statuses of `isRetryable`.
 */
export async function postJson(o: PostOptions): Promise<PostResult> {
  const timeoutMs = o.timeoutMs ?? DEFAULT_SINK_TIMEOUT_MS;
  let res: Dispatcher.ResponseData;
  try {
    res = await request(o.url, {
      method: 'POST',
      headers: { ...o.headers, 'content-type': 'application/json' },
      body: o.body,
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
      signal: AbortSignal.timeout(timeoutMs),
      ...(o.dispatcher === undefined ? {} : { dispatcher: o.dispatcher }),
    });
  } catch (err) {
    const what = isAbortError(err) || isTimeout(err) ? `timed out after ${timeoutMs} ms` : describe(err);
    throw retryableFailure(o.sink, what, { cause: err });
  }
  const status = res.statusCode;
  const body = await readSnippet(res.body);
  if (status >= 200 && status < 300) return { status, body };
  const retryable = (o.isRetryable ?? isRetryableStatus)(status, body);
  const reason = `HTTP ${status}${body === '' ? '' : `: ${body}`}`;
  if (!retryable) throw permanentFailure(o.sink, reason, { status });
  const header = res.headers['retry-after'];
  const retryAfterMs = parseRetryAfter(
    Array.isArray(header) ? header[0] : header,
    Date.now(),
    RETRY_AFTER_CAP_MS,
  );
  throw retryableFailure(o.sink, reason, { status, retryAfterMs });
}

/**
 * Reads up to {@link BODY_BYTES} of a body, whitespace collapsed; the rest is dropped. Secrets are
 * redacted before anything is cut: a body cut at the byte limit may end in the head of a secret,
 * which {@link redactCut} drops too.
 */
async function readSnippet(body: Dispatcher.ResponseData['body']): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of body) {
      const b = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as Uint8Array);
      chunks.push(b);
      size += b.length;
      // Leaving the loop destroys the stream: the rest of a large page is not worth reading.
      if (size >= BODY_BYTES) break;
    }
  } catch {
    // The status says what happened; a broken body adds nothing to that.
    return '';
  }
  const text = Buffer.concat(chunks).toString('utf8');
  const clean = size >= BODY_BYTES ? redactCut(text) : redact(text);
  return clean.replace(/\s+/g, ' ').trim().slice(0, BODY_BYTES);
}

function isTimeout(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return (
    code === 'UND_ERR_HEADERS_TIMEOUT' ||
    code === 'UND_ERR_BODY_TIMEOUT' ||
    code === 'UND_ERR_CONNECT_TIMEOUT' ||
    (err instanceof Error && err.name === 'TimeoutError')
  );
}

function describe(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const code = (err as { code?: unknown }).code;
  const cause = err.cause instanceof Error ? ` (${err.cause.message})` : '';
  return `${typeof code === 'string' ? `${code}: ` : ''}${err.message}${cause}`;
}
