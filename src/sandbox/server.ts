/**
 * The sandbox tenant's HTTP server: the token endpoint, the history listing and the owner delete of the
 * tenant API (docs/design/tenant-api.md), fault injection in front of them, and the `/_sandbox/` control
 * endpoints (see control.ts).
 *
 * Response shapes follow the real service, a Go service behind grpc-gateway:
 * - API errors are `{"code": <gRPC code>, "message": "…", "details": []}` with the HTTP status
 *   grpc-gateway maps the code to (3 → 400, 16 → 401, 7 → 403, 5 → 404, 12 → 405…);
 * - token endpoint errors are OAuth 2.0 `{"error": "…", "error_description": "…"}`;
 * - errors raised by the load balancer in front of the service (408, 502, 504) are HTML pages.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { ServerContext } from './context.js';
import { handleControl } from './control.js';
import { sendGrpcError, sendInjectedStatus } from './error-responses.js';
import type { FaultDecision, FaultRoute } from './faults.js';
import { matchOwnerPath, type OwnerPathMatch, type OwnerTuple } from './owners.js';
import { PageBuilder } from './page-builder.js';
import { type PageCursor, parseHistoryQuery } from './paging.js';
import { send, sendBytes } from './respond.js';

/** The HTTP server and how to stop it completely. */
export interface SandboxServer {
  readonly server: Server;
  /** Stops listening, destroys open sockets (hanging requests included) and cancels pending delays. */
  close(): Promise<void>;
}

const HISTORY_PATH = '/api/v1/settings/ai-governance/history';
const TOKEN_PATH = '/auth/v1/token';
const MAX_BODY_BYTES = 1 << 20;

/** A page of the history listing, encoded. */
interface RenderedPage {
  readonly body: Buffer;
  /** Entries in the page. */
  readonly count: number;
  /** Its nextPageToken. */
  readonly next: string;
}

/** Reads the whole request body (bounded). */
function readBody(req: IncomingMessage): Promise<Buffer | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        resolve(undefined);
        req.removeAllListeners('data');
        req.resume();
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

/** A page rendered ahead of the request for it, and what it was rendered for. */
interface ReadAhead {
  readonly token: string;
  readonly pageSize: number;
  readonly version: number;
  readonly page: RenderedPage;
}

/** What the request handlers share: the tenant served, and the server's own lifecycle. */
interface ServerState {
  readonly ctx: ServerContext;
  /** Pending delays of slow faults, cancelled by close(). */
  readonly timers: Set<NodeJS.Timeout>;
  /** Set by close(): delays that end afterwards answer nothing, and nothing is read ahead. */
  closing: boolean;
  /** The page after the last one served, rendered ahead; valid while the history is unchanged. */
  readAhead: ReadAhead | undefined;
}

/** Creates the server (not yet listening). */
export function createSandboxServer(ctx: ServerContext): SandboxServer {
  const state: ServerState = { ctx, timers: new Set(), closing: false, readAhead: undefined };
  const sockets = new Set<Socket>();
  const server = createServer((req, res) => {
    handle(state, req, res).catch((error: unknown) => {
      // A handler bug must surface to the client as a 500, not as a hung request.
      if (!res.headersSent && !res.destroyed) {
        sendGrpcError(res, 500, `sandbox error: ${error instanceof Error ? error.message : String(error)}`);
      } else {
        res.destroy();
      }
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  return {
    server,
    close: () =>
      new Promise<void>((resolve, reject) => {
        state.closing = true;
        for (const timer of state.timers) clearTimeout(timer);
        state.timers.clear();
        server.close((error) => (error === undefined ? resolve() : reject(error)));
        for (const socket of sockets) socket.destroy();
      }),
  };
}

/** Resolves after `ms`, unless close() cancels the timer first (then it never resolves). */
function wait(state: ServerState, ms: number): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      state.timers.delete(timer);
      resolve();
    }, ms);
    state.timers.add(timer);
  });
}

/** One request: the body is read first (bounded), then the path picks the route. */
async function handle(state: ServerState, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const { ctx } = state;
  const rawUrl = req.url ?? '/';
  const q = rawUrl.indexOf('?');
  const rawPath = q < 0 ? rawUrl : rawUrl.slice(0, q);
  const rawQuery = q < 0 ? '' : rawUrl.slice(q + 1);
  const body = await readBody(req);
  if (body === undefined) {
    sendGrpcError(res, 400, 'request body too large');
    return;
  }
  if (rawPath.startsWith('/_sandbox/')) {
    handleControl(ctx, req, res, rawPath, rawQuery, body);
    return;
  }
  ctx.stats.requests++;
  const method = req.method ?? 'GET';
  if (rawPath === TOKEN_PATH) {
    await handleToken(state, req, res, method, rawUrl, body);
    return;
  }
  if (rawPath === HISTORY_PATH) {
    await handleHistory(state, req, res, method, rawUrl, rawQuery);
    return;
  }
  const owner = matchOwnerPath(rawPath);
  if (owner.match !== 'none') {
    await handleOwnerDelete(state, req, res, method, rawUrl, owner, body);
    return;
  }
  sendGrpcError(res, 404, 'Not Found');
}

/** POST /auth/v1/token: OAuth 2.0 errors, not gRPC ones. */
async function handleToken(
  state: ServerState,
  req: IncomingMessage,
  res: ServerResponse,
  method: string,
  rawUrl: string,
  body: Buffer,
): Promise<void> {
  const { ctx } = state;
  if (method !== 'POST') {
    const error = { error: 'invalid_request', error_description: `method ${method} not allowed` };
    send(res, 405, JSON.stringify(error), 'application/json', { allow: 'POST' });
    return;
  }
  ctx.stats.tokenRequests++;
  const fault = ctx.faults.decide('token');
  if (fault !== undefined && (await injectFault(state, fault, 'token', req, res, rawUrl))) return;
  const result = await ctx.auth.token(body, req.headers['content-type'], req.headers.host);
  send(res, result.status, JSON.stringify(result.body), 'application/json', {
    'cache-control': 'no-store',
  });
}

/** GET of the history listing; the repeat-token and omit-empty faults reshape the page served. */
async function handleHistory(
  state: ServerState,
  req: IncomingMessage,
  res: ServerResponse,
  method: string,
  rawUrl: string,
  rawQuery: string,
): Promise<void> {
  const { ctx } = state;
  if (method !== 'GET') {
    sendGrpcError(res, 405, 'Method Not Allowed', { allow: 'GET' });
    return;
  }
  ctx.stats.historyRequests++;
  const fault = ctx.faults.decide('history');
  if (fault !== undefined && (await injectFault(state, fault, 'history', req, res, rawUrl))) return;
  const shape = fault?.kind === 'repeat-token' || fault?.kind === 'omit-empty' ? fault.kind : undefined;
  listHistory(state, req, res, rawQuery, shape);
}

/** DELETE of an entitlement owner: admin only, and the body must name the owner of the path. */
async function handleOwnerDelete(
  state: ServerState,
  req: IncomingMessage,
  res: ServerResponse,
  method: string,
  rawUrl: string,
  owner: Exclude<OwnerPathMatch, { readonly match: 'none' }>,
  body: Buffer,
): Promise<void> {
  const { ctx } = state;
  if (method !== 'DELETE') {
    sendGrpcError(res, 405, 'Method Not Allowed', { allow: 'DELETE' });
    return;
  }
  ctx.stats.deleteRequests++;
  const fault = ctx.faults.decide('delete');
  if (fault !== undefined && (await injectFault(state, fault, 'delete', req, res, rawUrl))) return;
  const auth = ctx.auth.check(req.headers.authorization);
  if (!auth.ok) {
    sendGrpcError(res, 401, auth.message);
    return;
  }
  if (!auth.admin) {
    sendGrpcError(res, 403, 'permission denied: deleting an entitlement owner needs an admin');
    return;
  }
  if (owner.match === 'bad') {
    sendGrpcError(res, 400, owner.message);
    return;
  }
  deleteOwner(ctx, res, owner.owner, body);
}

/**
 * Applies a fault. Returns true when the response has been dealt with, false when normal
 * handling goes on (after a slow delay, an expired token, or a fault that only reshapes the
 * normal page).
 */
async function injectFault(
  state: ServerState,
  fault: FaultDecision,
  route: FaultRoute,
  req: IncomingMessage,
  res: ServerResponse,
  rawUrl: string,
): Promise<boolean> {
  const headers: Record<string, string> =
    fault.retryAfter === undefined ? {} : { 'retry-after': fault.retryAfter };
  switch (fault.kind) {
    case 'reset':
      req.socket.destroy();
      return true;
    case 'hang':
      // No answer; close() destroys the socket.
      return true;
    case 'slow':
      await wait(state, fault.delayMs);
      return state.closing;
    case 'expire': {
      const auth = state.ctx.auth.check(req.headers.authorization);
      if (auth.ok) state.ctx.auth.revoke(auth.token);
      return false;
    }
    case 'badjson':
      send(res, 200, fault.body ?? '{"list":[{"metadata":{"id":"2', 'application/json', headers);
      return true;
    case 'list-not-array':
      send(res, 200, fault.body ?? '{"list":5}', 'application/json', headers);
      return true;
    case 'list-null':
      send(res, 200, fault.body ?? '{"list":null,"nextPageToken":""}', 'application/json', headers);
      return true;
    case 'redirect':
      send(res, 307, '', 'text/plain', {
        location: fault.location ?? `http://sandbox-redirect.invalid${rawUrl}`,
      });
      return true;
    case 'repeat-token':
    case 'omit-empty':
      return false;
    default:
      sendInjectedStatus(res, Number(fault.kind), fault.body, route, headers);
      return true;
  }
}

/** Serves one page of the listing: admin only; the page comes from the read-ahead when it matches. */
function listHistory(
  state: ServerState,
  req: IncomingMessage,
  res: ServerResponse,
  rawQuery: string,
  shape: string | undefined,
): void {
  const { ctx } = state;
  const auth = ctx.auth.check(req.headers.authorization);
  if (!auth.ok) {
    sendGrpcError(res, 401, auth.message);
    return;
  }
  if (!auth.admin) {
    sendGrpcError(res, 403, 'permission denied: listing the AI governance settings history is admin-tier');
    return;
  }
  const params = new URLSearchParams(rawQuery);
  ctx.stats.lastHistoryQuery = Object.fromEntries(params);
  const query = parseHistoryQuery(params);
  if (!query.ok) {
    sendGrpcError(res, 400, query.message);
    return;
  }
  let cursor: PageCursor | undefined;
  if (query.pageToken !== '') {
    cursor = ctx.tokens.decode(query.pageToken);
    if (cursor === undefined) {
      sendGrpcError(res, 400, 'invalid page token');
      return;
    }
  }
  const page =
    takeReadAhead(state, query.pageToken, query.pageSize, shape) ??
    buildPage(ctx, cursor, query.pageSize, query.pageToken, shape);
  ctx.stats.entriesServed += page.count;
  sendBytes(res, 200, page.body);
  if (shape === undefined && page.next !== '') readAheadNext(state, page.next, query.pageSize);
}

/** The page read ahead, when it is the one asked for and still current; the read-ahead is used up either way. */
function takeReadAhead(
  state: ServerState,
  token: string,
  pageSize: number,
  shape: string | undefined,
): RenderedPage | undefined {
  const ahead = state.readAhead;
  state.readAhead = undefined;
  return shape === undefined &&
    ahead !== undefined &&
    ahead.token === token &&
    ahead.pageSize === pageSize &&
    ahead.version === state.ctx.history.version
    ? ahead.page
    : undefined;
}

/**
 * Read ahead: while the client digests this page, prepare the next one (one page of memory).
 * A client that stops here wastes one page of work; a client that goes on gets its next page
 * without waiting for the history to render it.
 */
function readAheadNext(state: ServerState, next: string, pageSize: number): void {
  const { ctx } = state;
  const version = ctx.history.version;
  setImmediate(() => {
    if (state.closing || ctx.history.version !== version) return;
    const nextCursor = ctx.tokens.decode(next);
    if (nextCursor === undefined) return;
    state.readAhead = {
      token: next,
      pageSize,
      version,
      page: buildPage(ctx, nextCursor, pageSize, next, undefined),
    };
  });
}

/**
 * Renders one page: up to `pageSize` entries below the cursor (from the top without one),
 * newest first, and the token of the page after it. `shape` is a fault that reshapes the page.
 */
function buildPage(
  ctx: ServerContext,
  cursor: PageCursor | undefined,
  pageSize: number,
  requestToken: string,
  shape: string | undefined,
): RenderedPage {
  const { end, stop, next } = pageBounds(ctx, cursor, pageSize, requestToken, shape);
  const count = end - stop;
  const omitEmpty = shape === 'omit-empty';
  const page = new PageBuilder(count);
  if (!omitEmpty || count > 0) {
    page.write('{"list":[');
    for (let p = end - 1; p >= stop; p--) {
      if (p < end - 1) page.write(',');
      page.write(ctx.history.jsonAt(p));
    }
    page.write(']');
  } else {
    page.write('{');
  }
  if (!omitEmpty || next !== '') {
    page.write(`${omitEmpty && count === 0 ? '' : ','}"nextPageToken":${JSON.stringify(next)}`);
  }
  page.write('}');
  return { body: page.bytes(), count, next };
}

/**
 * Where a page lies in the listing (positions `stop` to `end`, exclusive, served from the top
 * down) and the token of the page after it: offset tokens stay offset tokens, keyset ones name
 * the last entry served; the repeat-token fault hands back the request's own token.
 */
function pageBounds(
  ctx: ServerContext,
  cursor: PageCursor | undefined,
  pageSize: number,
  requestToken: string,
  shape: string | undefined,
): { end: number; stop: number; next: string } {
  const { history } = ctx;
  const size = history.size;
  let end: number;
  let served: number;
  if (cursor === undefined || cursor.mode === 'top') {
    end = size;
    served = 0;
  } else if (cursor.mode === 'keyset') {
    end = history.positionOf(cursor);
    served = size - end;
  } else {
    served = cursor.offset;
    end = Math.max(0, size - cursor.offset);
  }
  const stop = Math.max(0, end - pageSize);
  const count = end - stop;
  const offsetMode = cursor === undefined ? ctx.paging === 'offset' : cursor.mode === 'offset';
  let next = '';
  if (stop > 0) {
    next = offsetMode
      ? ctx.tokens.encode({ mode: 'offset', offset: served + count })
      : ctx.tokens.encode({ mode: 'keyset', ...history.cursorAt(stop) });
  }
  if (shape === 'repeat-token') {
    next =
      requestToken !== ''
        ? requestToken
        : ctx.tokens.encode(offsetMode ? { mode: 'offset', offset: 0 } : { mode: 'top' });
  }
  return { end, stop, next };
}

function deleteOwner(ctx: ServerContext, res: ServerResponse, owner: OwnerTuple, body: Buffer): void {
  if (body.length === 0) {
    sendGrpcError(res, 400, 'missing request body: appEntitlementRef is required');
    return;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch (error) {
    sendGrpcError(res, 400, `invalid JSON body: ${error instanceof Error ? error.message : String(error)}`);
    return;
  }
  const ref =
    typeof parsed === 'object' && parsed !== null
      ? (parsed as Record<string, unknown>)['appEntitlementRef']
      : undefined;
  const refAppId =
    typeof ref === 'object' && ref !== null ? (ref as Record<string, unknown>)['appId'] : undefined;
  const refId = typeof ref === 'object' && ref !== null ? (ref as Record<string, unknown>)['id'] : undefined;
  if (refAppId !== owner.entitlementAppId || refId !== owner.entitlementId) {
    sendGrpcError(
      res,
      400,
      `appEntitlementRef in the body (appId ${JSON.stringify(refAppId)}, id ${JSON.stringify(refId)}) ` +
        `does not match the path (${JSON.stringify(owner.entitlementAppId)}, ${JSON.stringify(owner.entitlementId)})`,
    );
    return;
  }
  if (!ctx.owners.remove(owner)) {
    sendGrpcError(res, 404, 'entitlement owner not found');
    return;
  }
  send(res, 200, '{}');
}
