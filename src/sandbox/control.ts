/**
 * Control endpoints, for a sandbox running in another process (benchmarks, soak tests, the CLI
 * end-to-end tests). They live under `/_sandbox/`, need no token, are never faulted and are not
 * counted in the request statistics. Errors are `400 {"error": "…"}`.
 *
 * | request | does |
 * |---|---|
 * | `POST /_sandbox/append?count=N[&at=RFC3339]` | appends N generated entries (default 1); answers `{"appended": N, "size": S, "ids": […]}` |
 * | `POST /_sandbox/entry` (body: EntrySpec) | appends one entry built from the spec; answers the entry |
 * | `POST /_sandbox/late` (body: EntrySpec with `at`) | inserts a late arrival; answers the entry |
 * | `POST /_sandbox/backdate` (body: EntrySpec with `at`) | the same as `/late`: an entry inserted into the past, however far, served where its KSUID sorts; answers the entry |
 * | `POST /_sandbox/rewrite` (body: `{"id", "set"?, "metadata"?}`) | the entry keeps id, createdAt and position but is served changed: `set` merged over its snapshot (as EntrySpec.set), `metadata` over its metadata; with neither, a default change (HistoryStore.rewrite); answers the entry as now served |
 * | `POST /_sandbox/duplicate` (body: `{"id", "set"?, "metadata"?}`) | the source serves the id twice: a second version (same id and createdAt, `set`/`metadata` as for `/rewrite`, by default a change of its own) listed beside the unchanged original; answers the version added |
 * | `POST /_sandbox/remove` (body: `{"id"}`, or `?id=`) | the entry is no longer served; answers `{"removed": id, "size": S}` |
 * | `POST /_sandbox/expire?count=N` | retention: the N oldest entries (default 1) are no longer served; answers `{"expired": N, "size": S, "oldest": createdAt of the oldest still served, or null}` |
 * | `POST /_sandbox/raw[?at=RFC3339]` (body: any JSON) | serves the body as an entry, at the top or where `at` sorts |
 * | `POST /_sandbox/expire-tokens` | every token issued so far stops working |
 * | `POST /_sandbox/faults` | body: a FaultRule, `{"random": "429:0.1,…", "seed"?: n}`, or `{"clear": true}` |
 * | `GET /_sandbox/stats` | counters, injected faults by kind, history size |
 * | `GET /_sandbox/entries` | the truth: every entry as served, newest first, as NDJSON (streamed) |
 * | `GET /_sandbox/owners` | the owner tuples |
 * | `POST /_sandbox/owners` (body: an owner tuple) | adds an owner |
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ServerContext } from './context.js';
import type { EntrySpec, RewriteSpec } from './history.js';
import { validateOwner } from './owners.js';
import { send } from './respond.js';

const NDJSON_CHUNK_BYTES = 64 * 1024;

function sendJson(res: ServerResponse, status: number, value: unknown): void {
  send(res, status, JSON.stringify(value));
}

function parseJsonBody(body: Buffer): unknown {
  if (body.length === 0) return {};
  return JSON.parse(body.toString('utf8'));
}

/** The body as a JSON object whose fields are all among `allowed`. */
function parseObjectBody(body: Buffer, allowed: readonly string[]): Record<string, unknown> {
  const value = parseJsonBody(body);
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new RangeError('the body must be a JSON object');
  }
  for (const key of Object.keys(value)) {
    if (!allowed.includes(key)) {
      throw new RangeError(`unknown field ${JSON.stringify(key)}; expected ${allowed.join(', ')}`);
    }
  }
  return value as Record<string, unknown>;
}

/** The body of /rewrite and /duplicate: the entry's id and the change to serve it with. */
function parseChangeBody(body: Buffer): { id: string; change: RewriteSpec } {
  const { id, set, metadata } = parseObjectBody(body, ['id', 'set', 'metadata']);
  const change: RewriteSpec = {};
  if (set !== undefined) change.set = set as Record<string, unknown>;
  if (metadata !== undefined) change.metadata = metadata as Record<string, unknown>;
  return { id: id as string, change };
}

/** A /faults command: clear them all, set the random faults, or add one rule. */
function applyFaultCommand(ctx: ServerContext, command: Record<string, unknown>): void {
  if (command['clear'] === true) ctx.faults.clear();
  else if (Object.hasOwn(command, 'random')) {
    const spec = command['random'];
    const seed = command['seed'];
    if (spec !== null && typeof spec !== 'string') throw new RangeError('random must be a string or null');
    if (seed !== undefined && typeof seed !== 'number') throw new RangeError('seed must be a number');
    ctx.faults.setRandom(spec ?? undefined, seed);
  } else ctx.faults.add(command as never);
}

/** Streams every entry as NDJSON with backpressure, in 64 KiB writes. */
function streamEntries(ctx: ServerContext, res: ServerResponse): void {
  res.writeHead(200, { 'content-type': 'application/x-ndjson' });
  const lines = ctx.history.jsonLines();
  const pump = (): void => {
    for (;;) {
      let chunk = '';
      let done = false;
      while (chunk.length < NDJSON_CHUNK_BYTES) {
        const next = lines.next();
        if (next.done === true) {
          done = true;
          break;
        }
        chunk += `${next.value}\n`;
      }
      if (done) {
        res.end(chunk);
        return;
      }
      if (!res.write(chunk)) {
        res.once('drain', pump);
        return;
      }
    }
  };
  res.on('close', () => lines.return(undefined));
  pump();
}

/** Handles one request under /_sandbox/. */
export function handleControl(
  ctx: ServerContext,
  req: IncomingMessage,
  res: ServerResponse,
  rawPath: string,
  rawQuery: string,
  body: Buffer,
): void {
  const method = req.method ?? 'GET';
  const query = new URLSearchParams(rawQuery);
  const at = query.get('at') ?? undefined;
  const route = `${method} ${rawPath}`;
  try {
    switch (route) {
      case 'POST /_sandbox/append': {
        const count = Number(query.get('count') ?? '1');
        const appended = ctx.history.append(count, at === undefined ? {} : { at });
        sendJson(res, 200, {
          appended: appended.length,
          size: ctx.history.size,
          ids: appended.map((e) => e.metadata?.id),
        });
        return;
      }
      case 'POST /_sandbox/entry':
        sendJson(res, 200, ctx.history.appendEntry(parseJsonBody(body) as EntrySpec));
        return;
      case 'POST /_sandbox/late':
      case 'POST /_sandbox/backdate':
        sendJson(res, 200, ctx.history.insertLate(parseJsonBody(body) as EntrySpec & { at: string }));
        return;
      case 'POST /_sandbox/rewrite': {
        const { id, change } = parseChangeBody(body);
        sendJson(res, 200, ctx.history.rewrite(id, change));
        return;
      }
      case 'POST /_sandbox/duplicate': {
        const { id, change } = parseChangeBody(body);
        sendJson(res, 200, ctx.history.duplicate(id, change));
        return;
      }
      case 'POST /_sandbox/remove': {
        const id = query.get('id') ?? parseObjectBody(body, ['id'])['id'];
        ctx.history.remove(id as string);
        sendJson(res, 200, { removed: id, size: ctx.history.size });
        return;
      }
      case 'POST /_sandbox/expire': {
        const count = query.get('count') ?? '1';
        if (!/^\d+$/.test(count))
          throw new RangeError(`count must be a non-negative integer, not ${JSON.stringify(count)}`);
        sendJson(res, 200, ctx.history.expire(Number(count)));
        return;
      }
      case 'POST /_sandbox/raw':
        ctx.history.insertRaw(JSON.parse(body.toString('utf8')), at === undefined ? {} : { at });
        sendJson(res, 200, { size: ctx.history.size });
        return;
      case 'POST /_sandbox/expire-tokens':
        ctx.auth.expireAll();
        sendJson(res, 200, {});
        return;
      case 'POST /_sandbox/faults':
        applyFaultCommand(ctx, parseJsonBody(body) as Record<string, unknown>);
        sendJson(res, 200, {});
        return;
      case 'GET /_sandbox/stats':
        sendJson(res, 200, { ...ctx.stats, injected: ctx.faults.injected, size: ctx.history.size });
        return;
      case 'GET /_sandbox/entries':
        streamEntries(ctx, res);
        return;
      case 'GET /_sandbox/owners':
        sendJson(res, 200, ctx.owners.list());
        return;
      case 'POST /_sandbox/owners':
        ctx.owners.add(validateOwner(parseJsonBody(body)));
        sendJson(res, 200, {});
        return;
      default:
        sendJson(res, 404, { error: `no control endpoint ${route}` });
        return;
    }
  } catch (error) {
    sendJson(res, 400, { error: error instanceof Error ? error.message : String(error) });
  }
}
