/**
 * The one HTTP exchange the webhook and Slack sinks share: POST a body, drain the response, and
 * turn anything but a 2xx into a DELIVERY_FAILED error that says whether a retry may help.
 */
import { type Dispatcher, request } from 'undici';
import { GovtrailError, isAbortError, RETRYABLE_STATUSES } from '../../errors.js';

/** Default time allowed for one delivery, connection to last body byte. */
export const DEFAULT_SINK_TIMEOUT_MS = 10_000;

/** How much of an error response body is kept for the error message. */
const ERROR_BODY_BYTES = 300;

export interface PostOptions {
  readonly sink: string;
  readonly url: string;
  readonly body: Buffer;
  readonly headers: Readonly<Record<string, string>>;
  readonly dispatcher?: Dispatcher | undefined;
  readonly timeoutMs?: number | undefined;
}

/**
 * POSTs `body` to `url`. Redirects are not followed (undici's `request` never does): a receiver
 * that redirects is misconfigured, and following it would send the alert somewhere unreviewed.
 * @throws GovtrailError `DELIVERY_FAILED`; retryable for 408, 429, 5xx, network errors and timeouts.
 */
export async function postJson(o: PostOptions): Promise<void> {
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
    throw new GovtrailError('DELIVERY_FAILED', `${o.sink}: ${what}`, { cause: err, retryable: true });
  }
  const status = res.statusCode;
  if (status >= 200 && status < 300) {
    // Drain so the connection returns to the pool.
    await res.body.dump();
    return;
  }
  const snippet = await readSnippet(res.body);
  const retryable = RETRYABLE_STATUSES.has(status) || status >= 500;
  throw new GovtrailError(
    'DELIVERY_FAILED',
    `${o.sink}: HTTP ${status}${snippet === '' ? '' : `: ${snippet}`}`,
    {
      retryable,
      status,
    },
  );
}

async function readSnippet(body: Dispatcher.ResponseData['body']): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of body) {
      const b = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as Uint8Array);
      chunks.push(b);
      size += b.length;
      // Leaving the loop destroys the stream: the rest of a large error page is not worth reading.
      if (size >= ERROR_BODY_BYTES) break;
    }
  } catch {
    // The status already says the delivery failed; a broken error body adds nothing to that.
    return '';
  }
  const text = Buffer.concat(chunks).toString('utf8').slice(0, ERROR_BODY_BYTES);
  return text.replace(/\s+/g, ' ').trim();
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
