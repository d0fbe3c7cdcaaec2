/**
 * The database behind Kysely: a PostgreSQL server over `pg` when a URL is given, else the embedded
 * PostgreSQL (PGlite, a WASM build of the real server) stored in a directory. Both run the same SQL
 * through the same code paths; only connection management differs.
 */
import { closeSync, mkdirSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { PGlite as PGliteInstance } from '@electric-sql/pglite';
import { type DatabaseConnection, Kysely, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { GovtrailError } from '../core/errors.js';
import { parseJsonText } from '../core/json-text.js';
import { CopyPayload, CopyScript } from './copy-format.js';
import type { DB } from './schema.js';

export type DatabaseKind = 'postgres' | 'embedded';

/** A connection-scoped handle: queries run on one session (advisory locks, transactions). */
export type Session = Kysely<DB>;

export interface Database {
  readonly kind: DatabaseKind;
  /** Human description without credentials, for logs and the demo. */
  readonly description: string;
  readonly db: Kysely<DB>;
  /** Runs `fn` on one dedicated session, released afterwards. */
  withSession<T>(fn: (session: Session) => Promise<T>): Promise<T>;
  /** Executes a script of several statements without parameters (migrations). */
  executeScript(session: Session, script: string): Promise<void>;
  /**
   * The embedded database as the job engine's PGlite adapter reads it: each statement (or script)
   * takes the session mutex, so it never lands inside a run's transaction. Absent on a server.
   */
  readonly serialisedLite?: SerialisedLite;
  close(): Promise<void>;
}

/** One statement with parameters, or a script of several without, on the embedded database. */
export interface SerialisedLite {
  query<T = unknown>(text: string, params?: unknown[]): Promise<{ rows: T[] }>;
  exec(text: string): Promise<Array<{ rows: unknown[] }>>;
}

export interface OpenDatabaseOptions {
  /** PostgreSQL URL; undefined selects the embedded database. */
  url?: string | undefined;
  /** Directory of the embedded database (`memory://` keeps it in memory). */
  dataDir?: string;
  /** Pool size for the server (default 10). */
  maxConnections?: number;
  /** application_name shown in pg_stat_activity. */
  applicationName?: string;
}

// Type parsers shared by both back ends: bigint as number (ids stay far below 2^53), interval and
// numeric as text (exact), timestamps as Date, json and jsonb through parseJsonText (V8 can decode an
// escaped key wrongly: core/json-text.ts).
const INT8 = 20;
const NUMERIC = 1700;
const INTERVAL = 1186;
const JSON_OID = 114;
const JSONB = 3802;

/** Opens the database named by the options. */
export async function openDatabase(options: OpenDatabaseOptions): Promise<Database> {
  if (options.url !== undefined) return openServer(options.url, options);
  return openEmbedded(options.dataDir ?? '.govtrail', options);
}

function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return `${u.protocol}//${u.username ? `${u.username}${u.password ? ':***' : ''}@` : ''}${u.host}${u.pathname}`;
  } catch {
    return 'postgres://(unparseable URL)';
  }
}

/**
 * The single parameter of a COPY statement from copy.ts (a CopyPayload), or of several run as one
 * (a CopyScript), if that is what `params` is.
 */
function soleParam<T>(params: unknown, type: abstract new (...args: never[]) => T): T | undefined {
  return Array.isArray(params) && params.length === 1 && params[0] instanceof type ? params[0] : undefined;
}
const copyPayloadOf = (params: unknown) => soleParam(params, CopyPayload);
const copyScriptOf = (params: unknown) => soleParam(params, CopyScript);

/** What pg's `query` resolves for a COPY, which is what Kysely reads. */
interface CopyResult {
  command: 'COPY';
  rowCount: number;
  rows: never[];
}

/**
 * A pg client that runs `query(copyStatement, [CopyPayload])` as `COPY … FROM STDIN`, streaming the
 * payload on this client (so inside whatever transaction it is in); any other query is pg's own.
 */
class CopyClient extends pg.Client {
  // pg's query has a dozen overloads; this one forwards all of them unchanged.
  // biome-ignore lint/suspicious/noExplicitAny: must stay assignable to every overload of pg.Client.query
  override query(...args: any[]): any {
    const script = copyScriptOf(args[1]);
    if (script !== undefined) return this.#copyScript(script);
    const payload = copyPayloadOf(args[1]);
    if (payload === undefined || typeof args[0] !== 'string') {
      return (super.query as (...a: unknown[]) => unknown)(...args);
    }
    return this.#copyScript(new CopyScript([{ text: args[0], payload }]));
  }

  async #copyScript(script: CopyScript): Promise<CopyResult> {
    const parts: Uint8Array[][] = [];
    for (const s of script.statements) if (Array.isArray(s.payload.chunks)) parts.push(s.payload.chunks);
    if (parts.length < script.statements.length) {
      // A payload encoded while it is sent cannot go out ahead: one statement after the other.
      let rowCount = 0;
      for (const s of script.statements) rowCount += (await this.#stream(s.text, s.payload)).rowCount;
      return { command: 'COPY', rowCount, rows: [] };
    }
    const copy = new EagerCopy(script.text, parts);
    super.query(copy);
    const counts = await copy.done;
    return { command: 'COPY', rowCount: counts.reduce((a, b) => a + b, 0), rows: [] };
  }

  /** A payload encoded while it is sent, through pg-copy-streams. */
  async #stream(text: string, payload: CopyPayload): Promise<CopyResult> {
    const stream = super.query(copyFrom(text));
    // pipeline rejects with the server's error (unique violation, bad value) if COPY fails.
    await pipeline(Readable.from(payload.chunks, { objectMode: false }), stream);
    return { command: 'COPY', rowCount: stream.rowCount, rows: [] };
  }
}

/** The bytes of a CopyData message's header ('d', then the length of the message). */
function copyDataHeader(bytes: number): Buffer {
  const header = Buffer.allocUnsafe(5);
  header[0] = 0x64;
  header.writeUInt32BE(bytes + 4, 1);
  return header;
}

/** pg's socket, as its Connection holds it. */
interface PgConnection {
  readonly stream: NodeJS.WritableStream & { cork(): void; uncork(): void };
  query(text: string): void;
  endCopyFrom(): void;
}

/**
 * `COPY … FROM STDIN` of payloads encoded beforehand, sent in one go: the query (one COPY statement,
 * or several run as one), then each payload's CopyData messages and its CopyDone, without waiting
 * for the server's CopyInResponse in between. The server reads each payload once it has started
 * that COPY. If a statement fails, the server skips the copy messages still to come (the protocol
 * has it ignore CopyData, CopyDone and CopyFail outside a COPY) and the rest of the query.
 * Waiting for each CopyInResponse and ReadyForQuery left the server idle until govtrail's event
 * loop next ran: 3.6-7 ms a statement on a backfill, whose encoding keeps the loop busy
 * (bench/RESULTS.md (m)). A pg "submittable": pg's Client calls these methods as the replies arrive.
 */
class EagerCopy {
  /** Rows loaded by each statement, in order. */
  readonly done: Promise<number[]>;
  readonly #counts: number[] = [];
  #resolve!: (counts: number[]) => void;
  #reject!: (err: unknown) => void;

  constructor(
    readonly text: string,
    readonly parts: readonly (readonly Uint8Array[])[],
  ) {
    this.done = new Promise<number[]>((resolve, reject) => {
      this.#resolve = resolve;
      this.#reject = reject;
    });
  }

  submit(connection: PgConnection): void {
    connection.query(this.text);
    const { stream } = connection;
    for (const chunks of this.parts) {
      for (const chunk of chunks) {
        if (chunk.length === 0) continue;
        // Header and chunk in one write (writev), the chunk not copied.
        stream.cork();
        stream.write(copyDataHeader(chunk.length));
        stream.write(chunk);
        stream.uncork();
      }
      connection.endCopyFrom();
    }
  }

  handleCopyInResponse(): void {
    // The data is on its way already.
  }

  handleCommandComplete(msg: { text?: string }): void {
    const m = /^COPY (\d+)$/.exec(msg.text ?? '');
    this.#counts.push(m === null ? 0 : Number(m[1]));
  }

  handleReadyForQuery(): void {
    this.#resolve(this.#counts);
  }

  handleError(err: unknown): void {
    this.#reject(err);
  }

  // Replies a COPY FROM never gets; pg calls them only for other statements.
  handleRowDescription(): void {}
  handleDataRow(): void {}
  handleEmptyQuery(): void {}
  handleCopyData(): void {}
  handlePortalSuspended(): void {}
}

/** The listener every pooled client carries, so that its 'error' event never goes unhandled. */
function ignoreClientError(): void {}

async function openServer(url: string, options: OpenDatabaseOptions): Promise<Database> {
  const types = {
    getTypeParser(oid: number, format?: 'text' | 'binary') {
      if (oid === INT8) return (v: string) => Number(v);
      if (oid === NUMERIC || oid === INTERVAL) return (v: string) => v;
      if (oid === JSON_OID || oid === JSONB) return parseJsonText;
      return pg.types.getTypeParser(oid, format);
    },
  };
  const pool = new pg.Pool({
    connectionString: url,
    max: options.maxConnections ?? 10,
    application_name: options.applicationName ?? 'govtrail',
    types: types as pg.CustomTypesConfig,
    Client: CopyClient,
  });
  // An idle client's error (server restart) must not crash the process; the next query reports it.
  pool.on('error', () => {});
  // Nor a checked-out client's: the one a run holds while it pages the source sits idle in its
  // transaction, and pg emits 'error' on it (not on the pool) when its backend is terminated or the
  // server restarts. Its next query fails instead, the run is closed as failed (DATABASE), and the
  // pool drops the client when it is released.
  pool.on('connect', (client) => {
    client.on('error', ignoreClientError);
  });
  try {
    const client = await pool.connect();
    client.release();
  } catch (err) {
    await pool.end().catch(() => {});
    throw new GovtrailError('DATABASE', `cannot connect to ${redactUrl(url)}: ${(err as Error).message}`, {
      cause: err,
    });
  }
  const db = new Kysely<DB>({ dialect: new PostgresDialect({ pool }) });
  return {
    kind: 'postgres',
    description: redactUrl(url),
    db,
    withSession: (fn) => db.connection().execute(fn),
    async executeScript(session, script) {
      // The simple query protocol runs several statements in one call.
      await sql.raw(script).execute(session);
    },
    async close() {
      await db.destroy();
      // Kysely ends the pool only if it ever ran a query; end it here too, or pg's idle timer keeps the process alive.
      if (!(pool as unknown as { ended?: boolean }).ended) await pool.end().catch(() => {});
    },
  };
}

/** What the embedded database's client gives Kysely for a statement: pg's result, in short. */
interface LiteResult {
  command: string | undefined;
  rowCount: number;
  rows: unknown[];
}

/** One statement on PGlite, as pg's client would run it (COPY payloads and scripts included). */
async function liteQuery(
  lite: PGliteInstance,
  text: string,
  params: readonly unknown[],
): Promise<LiteResult> {
  const script = copyScriptOf(params);
  if (script !== undefined) {
    // One statement after the other (PGlite is one session, in process: no round trip to spare).
    let rowCount = 0;
    for (const s of script.statements) rowCount += (await liteQuery(lite, s.text, [s.payload])).rowCount;
    return { command: 'COPY', rowCount, rows: [] };
  }
  const payload = copyPayloadOf(params);
  if (payload !== undefined) {
    // PGlite has no COPY FROM STDIN; it reads the data of COPY … FROM '/dev/blob' from `blob`.
    const fromBlob = text.replace(/\sfrom\s+stdin\s*$/i, " from '/dev/blob'");
    if (fromBlob === text) throw new Error(`not a COPY … FROM STDIN statement: ${text}`);
    const res = await lite.query(fromBlob, [], { blob: new Blob([...payload.chunks]) });
    return { command: 'COPY', rowCount: res.affectedRows ?? payload.rows, rows: [] };
  }
  const res = await lite.query(text, params as unknown[], { rowMode: 'object' });
  const command = /^\s*(\w+)/.exec(text)?.[1]?.toUpperCase();
  return { command, rowCount: res.affectedRows ?? res.rows.length, rows: res.rows };
}

/** A minimal pg-Pool look-alike over one PGlite instance, serialising sessions with a mutex. */
async function openEmbedded(dataDir: string, _options: OpenDatabaseOptions): Promise<Database> {
  const { PGlite, types } = await import('@electric-sql/pglite');
  const inMemory = dataDir.startsWith('memory://');
  let release: () => void = () => {};
  if (!inMemory) {
    mkdirSync(dataDir, { recursive: true });
    release = lockDirectory(dataDir);
  }
  let lite: InstanceType<typeof PGlite>;
  try {
    lite = await PGlite.create({
      dataDir: inMemory ? 'memory://' : path.resolve(dataDir, 'pgdata'),
      parsers: {
        [types.INT8]: (v: string) => Number(v),
        [types.NUMERIC]: (v: string) => v,
        [types.INTERVAL]: (v: string) => v,
        [types.JSON]: parseJsonText,
        [types.JSONB]: parseJsonText,
      },
    });
  } catch (err) {
    release();
    throw new GovtrailError(
      'DATABASE',
      `cannot open the embedded database in ${dataDir}: ${(err as Error).message}`,
      {
        cause: err,
      },
    );
  }

  // PGlite is a single session: hand it to one borrower at a time so transactions do not interleave.
  let queue: Promise<void> = Promise.resolve();
  const client = {
    query: (text: string, params: readonly unknown[] = []) => liteQuery(lite, text, params),
    release() {},
  };
  const pool = {
    connect(): Promise<typeof client & { release(): void }> {
      let unlock: () => void = () => {};
      const turn = new Promise<void>((resolve) => {
        unlock = resolve;
      });
      const ready = queue;
      queue = queue.then(() => turn);
      return ready.then(() => ({ ...client, release: unlock }));
    },
    async end() {},
  };
  const db = new Kysely<DB>({
    dialect: new PostgresDialect({ pool: pool as unknown as pg.Pool }),
  });
  return {
    kind: 'embedded',
    description: inMemory
      ? 'embedded PostgreSQL (in memory)'
      : `embedded PostgreSQL in ${path.resolve(dataDir)}`,
    db,
    withSession: (fn) => db.connection().execute(fn),
    async executeScript(_session, script) {
      // The caller holds the session, hence the mutex: PGlite's exec (several statements) is safe here.
      await lite.exec(script);
    },
    serialisedLite: {
      async query<T>(text: string, params: unknown[] = []) {
        const turn = await pool.connect();
        try {
          const res = await lite.query<T>(text, params, { rowMode: 'object' });
          return { rows: res.rows };
        } finally {
          turn.release();
        }
      },
      async exec(text: string) {
        const turn = await pool.connect();
        try {
          return (await lite.exec(text)).map((r) => ({ rows: r.rows as unknown[] }));
        } finally {
          turn.release();
        }
      },
    },
    async close() {
      await db.destroy();
      await lite.close();
      release();
    },
  };
}

/** Keeps a second process from opening the same embedded database (PGlite has no lock of its own). */
function lockDirectory(dir: string): () => void {
  const file = path.join(dir, 'govtrail.pid');
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(file, 'wx');
      writeFileSync(fd, String(process.pid));
      closeSync(fd);
      return () => rmSync(file, { force: true });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const pid = Number(readFileSync(file, 'utf8').trim());
      if (Number.isInteger(pid) && pid > 0 && pid !== process.pid && processAlive(pid)) {
        throw new GovtrailError(
          'DATABASE',
          `the embedded database in ${dir} is in use by process ${pid}; stop it, or set DATABASE_URL to share a PostgreSQL server`,
        );
      }
      rmSync(file, { force: true });
    }
  }
  throw new GovtrailError('DATABASE', `cannot lock the embedded database in ${dir}`);
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export type { DatabaseConnection };
