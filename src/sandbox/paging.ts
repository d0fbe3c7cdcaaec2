/**
 * The paging convention (docs/design/tenant-api.md, "Paging") as the sandbox serves it: page_size clamped
 * to 10–100 (default 25), opaque page tokens, an empty nextPageToken at the end.
 *
 * Tokens are base64url of a small versioned payload plus a truncated HMAC, so a client cannot
 * read meaning into them or forge one, and a damaged token is answered with 400 rather than a
 * wrong page. Two kinds exist:
 * - keyset (the default): names the last entry served; the next page starts strictly below it,
 *   so entries added at the top during a listing do not shift later pages;
 * - offset: counts entries already served from the top; an append during a listing shifts
 *   everything down and re-serves entries across page boundaries — how naive services behave.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

/** Where the next page starts. */
export type PageCursor =
  | { readonly mode: 'keyset'; readonly key: string; readonly index: number }
  /** Keyset token that starts at the very top (minted only by the repeat-token fault). */
  | { readonly mode: 'top' }
  | { readonly mode: 'offset'; readonly offset: number };

const VERSION = 1;
const TAG_BYTES = 12;

/** Mints and reads page tokens with one secret. */
export class PageTokens {
  private readonly secret: Buffer;

  constructor(secret: Buffer) {
    this.secret = secret;
  }

  private tag(payload: Buffer): Buffer {
    return createHmac('sha256', this.secret).update(payload).digest().subarray(0, TAG_BYTES);
  }

  /** The opaque token for a cursor. */
  encode(cursor: PageCursor): string {
    const fields =
      cursor.mode === 'keyset'
        ? ['k', cursor.key, cursor.index]
        : cursor.mode === 'top'
          ? ['t']
          : ['o', cursor.offset];
    const payload = Buffer.concat([Buffer.of(VERSION), Buffer.from(JSON.stringify(fields))]);
    return Buffer.concat([payload, this.tag(payload)]).toString('base64url');
  }

  /** The cursor a token names, or undefined when the token is not one this sandbox minted. */
  decode(token: string): PageCursor | undefined {
    if (!/^[A-Za-z0-9_-]+$/.test(token)) return undefined;
    const raw = Buffer.from(token, 'base64url');
    // Node's decoder skips stray trailing characters: only the canonical spelling is this token.
    if (raw.toString('base64url') !== token) return undefined;
    if (raw.length <= TAG_BYTES + 1 || raw[0] !== VERSION) return undefined;
    const payload = raw.subarray(0, raw.length - TAG_BYTES);
    if (!timingSafeEqual(raw.subarray(raw.length - TAG_BYTES), this.tag(payload))) return undefined;
    let fields: unknown;
    try {
      fields = JSON.parse(payload.subarray(1).toString('utf8'));
    } catch {
      return undefined;
    }
    if (!Array.isArray(fields)) return undefined;
    const [mode, a, b] = fields as unknown[];
    if (mode === 'k' && typeof a === 'string' && typeof b === 'number')
      return { mode: 'keyset', key: a, index: b };
    if (mode === 't') return { mode: 'top' };
    if (mode === 'o' && typeof a === 'number' && Number.isSafeInteger(a) && a >= 0)
      return { mode: 'offset', offset: a };
    return undefined;
  }
}

/** Default, minimum and maximum page sizes (docs/design/tenant-api.md, "Paging"). */
const PAGE_SIZE = { default: 25, min: 10, max: 100 } as const;

/** A parsed history query, or the reason it is invalid (answered with 400, code 3). */
export type HistoryQuery =
  | { readonly ok: true; readonly pageSize: number; readonly pageToken: string }
  | { readonly ok: false; readonly message: string };

const UINT32_MAX = 4_294_967_295;

/**
 * Reads page_size and page_token as grpc-gateway would into a uint32 and a string: unknown
 * parameters are ignored, a repeated one is an error, and page_size 0 is the proto3 default —
 * indistinguishable from absent — so it means 25, not 10.
 */
export function parseHistoryQuery(params: URLSearchParams): HistoryQuery {
  const sizes = params.getAll('page_size');
  const tokens = params.getAll('page_token');
  if (sizes.length > 1) return { ok: false, message: 'too many values for parameter "page_size"' };
  if (tokens.length > 1) return { ok: false, message: 'too many values for parameter "page_token"' };
  let pageSize: number = PAGE_SIZE.default;
  const size = sizes[0];
  if (size !== undefined && size !== '') {
    if (!/^\d+$/.test(size) || Number(size) > UINT32_MAX) {
      return {
        ok: false,
        message: `parsing field "page_size": strconv.ParseUint: parsing ${JSON.stringify(size)}: invalid syntax`,
      };
    }
    const n = Number(size);
    if (n !== 0) pageSize = Math.min(PAGE_SIZE.max, Math.max(PAGE_SIZE.min, n));
  }
  return { ok: true, pageSize, pageToken: tokens[0] ?? '' };
}
