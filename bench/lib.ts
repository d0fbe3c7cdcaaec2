/**
 * Shared pieces of the benchmark and the soak: the sandbox in its own process, scratch databases,
 * govtrail CLI child processes.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { launchOf } from '../src/runtime/launch.js';

export const ROOT = fileURLToPath(new URL('..', import.meta.url));
export const SERVER_URL =
  process.env['BENCH_DATABASE_URL'] ??
  process.env['TEST_DATABASE_URL'] ??
  'postgres://postgres@127.0.0.1:5432/postgres';

export interface SandboxProcess {
  readonly baseUrl: string;
  readonly clientId: string;
  readonly clientSecret: string;
  readonly child: ChildProcess;
  control<T = unknown>(method: 'GET' | 'POST', path: string, body?: unknown): Promise<T>;
  close(): Promise<void>;
}

/**
 * How a child runs govtrail: from the build in dist/ (as installed; `buildGovtrail()` first) or
 * from the TypeScript sources through tsx (the default: no build step, slower start).
 */
let entry: string[] = ['--import', 'tsx', 'src/main.ts'];

/** Builds dist/ as `npm run build` does (tsc, then the vendored bundles) and makes every later child run the build. */
export function buildGovtrail(): void {
  for (const args of [
    [path.join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json'],
    [path.join(ROOT, 'scripts/bundle-vendor.mjs')],
  ]) {
    const r = spawnSync(process.execPath, args, { cwd: ROOT, stdio: 'inherit' });
    if (r.status !== 0) throw new Error(`build failed (${r.status}): ${args.join(' ')}`);
  }
  useBuiltGovtrail();
}

/**
 * Makes every later child run the build in dist/ as it is (built beforehand), started as the
 * `govtrail` binary starts: with the Node flags and environment of its first line.
 */
export function useBuiltGovtrail(): void {
  // BENCH_PLAIN_NODE=1: Node's defaults instead, to measure what the binary's settings do.
  const launch =
    process.env['BENCH_PLAIN_NODE'] === '1'
      ? { env: {}, nodeArgs: [] }
      : launchOf(path.join(ROOT, 'dist/src/main.js'));
  launchArgs = launch.nodeArgs;
  entry = ['dist/src/main.js'];
  launchEnv = launch.env;
}

/** The Node flags of the binary's first line (none while children run from the sources). */
let launchArgs: readonly string[] = [];

/** The environment the binary's first line sets (none while children run from the sources). */
let launchEnv: Readonly<Record<string, string>> = {};

/** A child's environment with the binary's own settings (MALLOC_ARENA_MAX) under `env`'s. */
export function withLaunchEnv(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return { ...launchEnv, ...env };
}

/** The command line of `govtrail <args>` as the benchmarks run it (after buildGovtrail: the build). */
export function govtrailArgv(args: readonly string[]): string[] {
  return [...launchArgs, ...entry, ...args];
}

/** `govtrail sandbox --json` in a child process; resolves once it printed its line. */
export async function startSandboxProcess(args: string[]): Promise<SandboxProcess> {
  const child = spawn(process.execPath, govtrailArgv(['sandbox', '--json', ...args]), {
    cwd: ROOT,
    env: withLaunchEnv(process.env),
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const line = await new Promise<string>((resolve, reject) => {
    const rl = createInterface({ input: child.stdout as NodeJS.ReadableStream });
    rl.once('line', (l) => resolve(l));
    child.once('exit', (code) => reject(new Error(`sandbox exited with ${code}`)));
  });
  const info = JSON.parse(line) as {
    baseUrl: string;
    credentials: { secret: { clientId: string; clientSecret: string } };
  };
  const baseUrl = info.baseUrl;
  return {
    baseUrl,
    clientId: info.credentials.secret.clientId,
    clientSecret: info.credentials.secret.clientSecret,
    child,
    async control<T>(method: 'GET' | 'POST', path: string, body?: unknown): Promise<T> {
      const res = await fetch(`${baseUrl}${path}`, {
        method,
        ...(body === undefined
          ? {}
          : { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } }),
      });
      const text = await res.text();
      if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text}`);
      return JSON.parse(text) as T;
    },
    close: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

/** The sandbox's truth, newest first. */
export async function sandboxTruth(sb: SandboxProcess): Promise<unknown[]> {
  const res = await fetch(`${sb.baseUrl}/_sandbox/entries`);
  const text = await res.text();
  return text
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as unknown);
}

export interface ScratchDatabase {
  readonly url: string;
  readonly name: string;
  drop(): Promise<void>;
}

export async function createScratchDatabase(
  prefix = 'govtrail_bench',
  serverUrl = SERVER_URL,
): Promise<ScratchDatabase> {
  const name = `${prefix}_${process.pid}_${randomBytes(3).toString('hex')}`;
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  try {
    await admin.query(`create database ${name}`);
  } finally {
    await admin.end();
  }
  const u = new URL(serverUrl);
  u.pathname = `/${name}`;
  return {
    url: u.toString(),
    name,
    async drop() {
      const a = new pg.Client({ connectionString: serverUrl });
      await a.connect();
      try {
        await a.query(`drop database if exists ${name} with (force)`);
      } finally {
        await a.end();
      }
    },
  };
}

export const FAST_HTTP_ENV = {
  GOVTRAIL_HTTP_RETRY_BASE: '5ms',
  GOVTRAIL_HTTP_RETRY_MAX_DELAY: '50ms',
  GOVTRAIL_HTTP_RETRY_AFTER_CAP: '50ms',
  GOVTRAIL_HTTP_HEADERS_TIMEOUT: '2s',
};

/** Environment for a govtrail CLI child syncing the sandbox into `databaseUrl`. */
export function govtrailEnv(
  sb: SandboxProcess,
  databaseUrl: string,
  extra: Record<string, string> = {},
): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const k of ['PATH', 'HOME', 'TMPDIR', 'LANG'])
    if (process.env[k] !== undefined) env[k] = process.env[k];
  return {
    ...env,
    DATABASE_URL: databaseUrl,
    GOVTRAIL_BASE_URL: sb.baseUrl,
    GOVTRAIL_CLIENT_ID: sb.clientId,
    GOVTRAIL_CLIENT_SECRET: sb.clientSecret,
    GOVTRAIL_TENANT: 'acme',
    LOG_LEVEL: 'info',
    ...extra,
  };
}

export interface ChildResult {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly ms: number;
  readonly stdout: string;
  readonly stderr: string;
  /** Peak RSS in KiB, when measured. */
  readonly peakRssKb: number | undefined;
  /**
   * CPU seconds of the govtrail process alone (user, system), when measured: the resource usage
   * `/usr/bin/time -v` reports, which is what wait4() returns for exactly that one child (its own
   * children included, it has none), not the bench's nor the sandbox's.
   */
  readonly cpu: { readonly userS: number; readonly systemS: number } | undefined;
  /** Instructions retired by the child (`perf stat -e instructions`), when measured and supported. */
  readonly instructions: number | undefined;
}

/**
 * Whether `perf stat -e instructions` counts here: perf must be installed and the machine must
 * expose a hardware counter (a VM often has none: perf then prints `<not supported>`). Checked
 * once; `BENCH_PERF_EVENT` names another event to count instead (e.g. `task-clock`, to try the
 * plumbing on a machine without counters).
 */
let perfChecked: string | false | undefined;
export function perfEvent(): string | false {
  if (perfChecked !== undefined) return perfChecked;
  const event = process.env['BENCH_PERF_EVENT'] ?? 'instructions';
  const r = spawnSync('perf', ['stat', '-x', ',', '-e', event, 'true'], { encoding: 'utf8' });
  const line = r.status === 0 ? (r.stderr ?? '').split('\n').find((l) => l.includes(`,${event}`)) : undefined;
  perfChecked = line !== undefined && /^[\d.]+,/.test(line) ? event : false;
  return perfChecked;
}

/** Takes `perf stat -x,` output out of a child's stderr: the count, and the stderr without it. */
function perfCount(stderr: string, event: string): { count: number | undefined; rest: string } {
  let count: number | undefined;
  const rest = stderr
    .split('\n')
    .filter((l) => {
      const m = /^([\d.]+),[^,]*,([^,]+),/.exec(l);
      if (m === null || !(m[2] as string).startsWith(event)) return true;
      count = Number(m[1]);
      return false;
    })
    .join('\n');
  return { count, rest };
}

/** `govtrail migrate` with `env` (a scratch database); throws with its stderr when it fails. */
export async function migrateOrThrow(env: NodeJS.ProcessEnv): Promise<void> {
  const r = await runGovtrail(['migrate'], env);
  if (r.code !== 0) throw new Error(`migrate failed: ${r.stderr}`);
}

/** A sandbox and a scratch database migrated for it, as {@link withFreshStore} hands them over. */
export interface FreshStore {
  readonly sb: SandboxProcess;
  readonly scratch: ScratchDatabase;
  /** govtrail's environment for them (with `extraEnv`). */
  readonly env: NodeJS.ProcessEnv;
}

/**
 * Runs `body` on a sandbox of `entries` entries and a fresh scratch database that `govtrail
 * migrate` prepared (with `extraEnv` in govtrail's environment); closes the sandbox and drops the
 * database afterwards, unless `keep`: then it prints the database's name.
 */
export async function withFreshStore<T>(
  entries: number,
  body: (store: FreshStore) => Promise<T>,
  options: { extraEnv?: Record<string, string>; keep?: boolean } = {},
): Promise<T> {
  const sb = await startSandboxProcess(['--entries', String(entries)]);
  const scratch = await createScratchDatabase();
  try {
    const env = govtrailEnv(sb, scratch.url, options.extraEnv);
    await migrateOrThrow(env);
    return await body({ sb, scratch, env });
  } finally {
    await sb.close();
    if (options.keep === true) process.stdout.write(`kept database ${scratch.name}\n`);
    else await scratch.drop();
  }
}

/**
 * Runs `govtrail <args>` as a child. With `memory`, `/usr/bin/time -v` measures its peak RSS and
 * CPU seconds, and, where `perfEvent()` says the machine counts them, `perf stat` its instructions.
 */
export function runGovtrail(
  args: string[],
  env: NodeJS.ProcessEnv,
  options: {
    memory?: boolean;
    onSpawn?: (child: ChildProcess) => void;
    /** Node options before the script (flags NODE_OPTIONS refuses, such as --trace-gc). */
    nodeArgs?: readonly string[];
  } = {},
): Promise<ChildResult> {
  // The binary's flags first: a flag of `nodeArgs` given again comes later and wins.
  const node = [process.execPath, ...launchArgs, ...(options.nodeArgs ?? []), ...entry, ...args];
  const perf = options.memory ? perfEvent() : false;
  // perf outside time: time's own instructions (a fork and a wait4) are noise next to Node's.
  const argv = options.memory
    ? [
        ...(perf === false ? [] : ['perf', 'stat', '-x', ',', '-e', perf, '--']),
        '/usr/bin/time',
        '-v',
        ...node,
      ]
    : node;
  const started = performance.now();
  const child = spawn(argv[0] as string, argv.slice(1), {
    cwd: ROOT,
    env: withLaunchEnv(env),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  options.onSpawn?.(child);
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (d: Buffer) => {
    stdout += d.toString();
  });
  child.stderr?.on('data', (d: Buffer) => {
    stderr += d.toString();
  });
  return new Promise((resolve) => {
    child.once('close', (code, signal) => {
      const ms = performance.now() - started;
      let instructions: number | undefined;
      if (perf !== false) {
        const p = perfCount(stderr, perf);
        instructions = p.count;
        stderr = p.rest;
      }
      const m = /Maximum resident set size \(kbytes\): (\d+)/.exec(stderr);
      const user = /User time \(seconds\): ([\d.]+)/.exec(stderr);
      const system = /System time \(seconds\): ([\d.]+)/.exec(stderr);
      resolve({
        code,
        signal,
        ms,
        stdout,
        stderr,
        peakRssKb: m === null ? undefined : Number(m[1]),
        cpu:
          user === null || system === null
            ? undefined
            : { userS: Number(user[1]), systemS: Number(system[1]) },
        instructions,
      });
    });
  });
}

/** The 'sync succeeded' log line of a CLI run, parsed. */
export function syncLog(
  stderr: string,
  kind: 'sync' | 'reconcile' = 'sync',
): Record<string, unknown> | undefined {
  for (const l of stderr.split('\n')) {
    if (!l.startsWith('{')) continue;
    try {
      const o = JSON.parse(l) as Record<string, unknown>;
      if (o['msg'] === `${kind} succeeded`) return o;
    } catch {}
  }
  return undefined;
}

/**
 * A benchmark store kept between runs: a dedicated database on the local server, filled once by a
 * `govtrail sync` of N entries from a sandbox process (minutes for a million) and reused after.
 */
export interface KeptStore {
  /** Its connection URL. */
  readonly url: string;
  /** Runs `fn` on a client of the store (or, with `server`, of the server's own database). */
  query<T>(fn: (c: pg.Client) => Promise<T>, on?: 'store' | 'server'): Promise<T>;
  /** Entries stored, or -1 when the database does not exist or is not migrated. */
  storedEntries(): Promise<number>;
  /** Drops and recreates the database, then migrates it and syncs N entries into it. */
  fill(entries: number): Promise<void>;
}

export function keptStore(database: string): KeptStore {
  if (!/^[a-z_][a-z0-9_]*$/.test(database)) throw new Error(`--database: not a plain name: ${database}`);
  const u = new URL(SERVER_URL);
  u.pathname = `/${database}`;
  const url = u.toString();
  const query = async <T>(fn: (c: pg.Client) => Promise<T>, on: 'store' | 'server' = 'store'): Promise<T> => {
    const c = new pg.Client({ connectionString: on === 'server' ? SERVER_URL : url });
    await c.connect();
    try {
      return await fn(c);
    } finally {
      await c.end();
    }
  };
  return {
    url,
    query,
    async storedEntries() {
      const exists = await query(
        (c) => c.query('select 1 from pg_database where datname = $1', [database]),
        'server',
      );
      if (exists.rowCount === 0) return -1;
      return query(async (c) => {
        const t = await c.query(`select to_regclass('govtrail.history_entry') as t`);
        if (t.rows[0]?.t === null) return -1;
        const r = await c.query<{ n: string }>('select count(*) as n from govtrail.history_entry');
        return Number(r.rows[0]?.n ?? 0);
      });
    },
    async fill(entries) {
      await query(async (c) => {
        await c.query(`drop database if exists ${database} with (force)`);
        await c.query(`create database ${database}`);
      }, 'server');
      process.stderr.write(
        `bench: filling ${database} with ${entries.toLocaleString('en')} entries (sync from a sandbox)\n`,
      );
      const sb = await startSandboxProcess(['--entries', String(entries)]);
      try {
        const env = govtrailEnv(sb, url, { LOG_LEVEL: 'warn' });
        await migrateOrThrow(env);
        const s = await runGovtrail(['sync'], env);
        if (s.code !== 0) throw new Error(`sync failed (${s.code}): ${s.stderr.slice(-2000)}`);
        process.stderr.write(`bench: sync took ${(s.ms / 1000).toFixed(1)} s\n`);
      } finally {
        await sb.close();
      }
    },
  };
}

/**
 * CPU seconds (user + system) that the local PostgreSQL server's exited backends have used so far:
 * the postmaster's reaped-children times (/proc/<postmaster>/stat, cutime + cstime). The
 * difference around a run is what its connections cost the server, once they have closed (wait a
 * moment after the run). Undefined where the server is not local or its data directory cannot be
 * read (the postmaster's pid is in postmaster.pid there).
 */
export async function postgresChildCpuS(serverUrl = SERVER_URL): Promise<number | undefined> {
  const admin = new pg.Client({ connectionString: serverUrl });
  try {
    await admin.connect();
    const { rows } = await admin.query<{ setting: string }>(
      `select setting from pg_settings where name = 'data_directory'`,
    );
    await admin.end();
    const dir = rows[0]?.setting;
    if (dir === undefined) return undefined;
    const pid = readFileSync(path.join(dir, 'postmaster.pid'), 'utf8').split('\n')[0];
    // Fields after the command's closing parenthesis; cutime and cstime are the 14th and 15th.
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
    const ticks = Number(fields[13]) + Number(fields[14]);
    return Number.isFinite(ticks) ? ticks / CLOCK_TICKS : undefined;
  } catch {
    await admin.end().catch(() => {});
    return undefined;
  }
}

/** USER_HZ: the unit of /proc's CPU times on Linux. */
const CLOCK_TICKS = 100;

/**
 * Runs `govtrail <args>` as `runGovtrail` does with `memory`, adding the CPU seconds its
 * connections cost the local PostgreSQL server (see postgresChildCpuS), where that can be read.
 */
export async function runGovtrailWithServerCpu(
  args: string[],
  env: NodeJS.ProcessEnv,
): Promise<ChildResult & { serverCpuS: number | undefined }> {
  const before = await postgresChildCpuS();
  const r = await runGovtrail(args, env, { memory: true });
  // The backends exit once govtrail's connections close; the postmaster reaps them a moment later.
  await new Promise((resolve) => setTimeout(resolve, 500));
  const after = await postgresChildCpuS();
  return {
    ...r,
    serverCpuS: before === undefined || after === undefined ? undefined : Number((after - before).toFixed(2)),
  };
}

/**
 * A TCP relay in front of a PostgreSQL server that counts round trips: the client messages after
 * which a client waits for the server — a simple Query ('Q'), an extended-protocol Sync ('S') —
 * and the connections opened. COPY data, Parse, Bind and Execute ride along without a wait. Point a
 * child's DATABASE_URL at `url(database)`: every statement it sends, pg-boss's included, is counted.
 */
export interface RoundTripCounter {
  /** The URL of `database` through the relay. */
  url(database: string): string;
  /** Round trips (Query + Sync messages) so far. */
  readonly roundTrips: number;
  /** Connections opened through the relay so far. */
  readonly connections: number;
  /** With `capture`: each round trip's statements (the texts of its Query, or of the Parses before its Sync). */
  readonly statements: readonly string[];
  close(): Promise<void>;
}

export async function startRoundTripCounter(
  serverUrl = SERVER_URL,
  options: { capture?: boolean } = {},
): Promise<RoundTripCounter> {
  const statements: string[] = [];
  const upstream = new URL(serverUrl);
  const net = await import('node:net');
  let roundTrips = 0;
  let connections = 0;
  const sockets = new Set<import('node:net').Socket>();
  const server = net.createServer((client) => {
    connections++;
    const pgSocket = net.connect(Number(upstream.port || 5432), upstream.hostname);
    sockets.add(client);
    sockets.add(pgSocket);
    // Client → server: the untyped start-up packets (SSLRequest, GSSENCRequest, StartupMessage)
    // first, then typed messages: a type byte and a length that counts itself.
    let started = false;
    let pending: Buffer = Buffer.alloc(0);
    let parsed: string[] = [];
    client.on('data', (chunk: Buffer) => {
      pgSocket.write(chunk);
      pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
      let at = 0;
      for (;;) {
        if (!started) {
          if (pending.length - at < 8) break;
          const len = pending.readInt32BE(at);
          if (pending.length - at < len) break;
          const code = pending.readInt32BE(at + 4);
          // SSLRequest / GSSENCRequest: a StartupMessage follows; anything else is the startup.
          if (code !== 80877103 && code !== 80877104) started = true;
          at += len;
          continue;
        }
        if (pending.length - at < 5) break;
        const type = pending[at];
        const len = pending.readInt32BE(at + 1);
        if (pending.length - at < 1 + len) break;
        if (type === 0x51 /* Q */ || type === 0x53 /* S */) roundTrips++;
        if (options.capture === true) {
          const body = pending.subarray(at + 5, at + 1 + len);
          if (type === 0x51) statements.push(body.toString('utf8', 0, Math.min(body.length, 300)));
          if (type === 0x50 /* P: name, then the text */) {
            const nul = body.indexOf(0);
            parsed.push(
              body.toString('utf8', nul + 1, Math.min(body.length, nul + 300)).replace(/\0.*$/s, ''),
            );
          }
          if (type === 0x53) {
            statements.push(parsed.length === 0 ? '(Sync: prepared statement again)' : parsed.join(' ; '));
            parsed = [];
          }
        }
        at += 1 + len;
      }
      pending = pending.subarray(at);
    });
    pgSocket.pipe(client);
    const end = () => {
      client.destroy();
      pgSocket.destroy();
      sockets.delete(client);
      sockets.delete(pgSocket);
    };
    client.on('close', end);
    pgSocket.on('close', end);
    client.on('error', end);
    pgSocket.on('error', end);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as import('node:net').AddressInfo).port;
  return {
    url(database) {
      const u = new URL(serverUrl);
      u.hostname = '127.0.0.1';
      u.port = String(port);
      u.pathname = `/${database}`;
      return u.toString();
    },
    get roundTrips() {
      return roundTrips;
    },
    get connections() {
      return connections;
    },
    statements,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
