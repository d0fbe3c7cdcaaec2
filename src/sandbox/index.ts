/**
 * The sandbox tenant: an in-process HTTP server that implements the tenant API
 * (docs/design/tenant-api.md) — token endpoint, AI governance settings history with the paging convention,
 * and DeleteEntitlementOwner — over a seeded, realistic history, with fault injection. govtrail
 * runs and is tested against it when no real tenant is configured.
 *
 * It is the client's adversary (docs/design/style.md, the sandbox rule): nothing here comes from
 * src/source/ or src/core/normalise/, so a misreading of the API cannot hide on both sides of the wire.
 *
 * Choices where the API documentation is silent, made the way the real service (Go behind grpc-gateway)
 * would: entries are protojson with default values left out (emitUnpopulated serves the other
 * encoding); errors are `{code, message, details}` with gRPC codes; page_size 0 means the
 * default; a HARD_DELETE entry has no snapshot (history.ts); the delete refuses a body that
 * disagrees with its path (400) and answers 404 for an owner that does not exist.
 *
 * ```ts
 * const sandbox = await startSandbox({ entries: 2000 });
 * // sandbox.baseUrl, sandbox.credentials.secret.clientId / .clientSecret
 * await sandbox.close();
 * ```
 */
import { createHash } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { AuthService, type SandboxCredentialSet } from './auth.js';
import type { MutableStats, SandboxStats } from './context.js';
import { FaultInjector, type FaultRule } from './faults.js';
import { type EntrySpec, type ExpireResult, HistoryStore, type RewriteSpec } from './history.js';
import { OwnerStore, type OwnerTuple, type SandboxOwners, seededOwners } from './owners.js';
import { PageTokens } from './paging.js';
import { appendScenarios } from './scenarios.js';
import { createSandboxServer } from './server.js';
import { parseTimestamp, type SandboxEntry } from './wire.js';

export type { SandboxCredentialSet, SandboxCredentials } from './auth.js';
export type { SandboxStats } from './context.js';
export type { FaultKind, FaultRoute, FaultRule } from './faults.js';
export { FAULT_KINDS, parseFaultSpec, RANDOM_FAULT_KINDS } from './faults.js';
export type { AnnotationSpec, EntrySpec, ExpireResult, RewriteSpec } from './history.js';
export { decodeKsuid, encodeKsuid, KSUID_EPOCH, ksuidAt, ksuidSeconds } from './ksuid.js';
export type { OwnerTuple, SandboxOwners } from './owners.js';
export type { SandboxActor, SandboxAnnotation, SandboxEntry, SandboxMetadata } from './wire.js';

/** How to start a sandbox; every option has a default. */
export interface SandboxOptions {
  /** Listen address; default '127.0.0.1'. */
  host?: string;
  /** Listen port; default 0 (ephemeral). */
  port?: number;
  /**
   * Length of the seeded history; default 200 (0: an empty history). Entries are minutes to days
   * apart, with bursts inside one second; a history whose natural spread would exceed a year is
   * squeezed into about a year (a million entries: about 30 s apart on average).
   */
  entries?: number;
  /** PRNG seed; default 1. The same seed and entries give a byte-identical history. */
  seed?: number;
  /** createdAt of the oldest seeded entry; default '2025-01-06T09:00:00Z'. */
  start?: string;
  /** Client id of the admin plain-secret client; default like `calm-otter-51234@127.0.0.1/pcc`. */
  clientId?: string;
  /** Its secret; default random. */
  clientSecret?: string;
  /** expires_in of issued tokens; default 3600. */
  tokenTtlSeconds?: number;
  /** Random fault spec, e.g. '429:0.1,500:0.05,reset:0.02,slow:0.02' (see parseFaultSpec). */
  faults?: string;
  /** Seed of the random fault draws; default the history seed. */
  faultSeed?: number;
  /**
   * 'keyset' (default): page tokens name the last entry served, stable under appends.
   * 'offset': tokens count entries served; appends during a listing re-serve entries across
   * page boundaries (for duplicate tests).
   */
  paging?: 'keyset' | 'offset';
  /** Owners seeded in addition to the built-in awkward ones. */
  owners?: OwnerTuple[];
  /**
   * Appends a curated tail of notable changes after the seeded history (14 entries, on top of
   * `entries`), so that every default alert rule fires at least once (scenarios.ts). Default false.
   */
  scenarios?: boolean;
  /**
   * Write every field of every entry, defaults included — `""`, `false`, `0`, `[]`,
   * `…_UNSPECIFIED`, and `null` for unset messages — as grpc-gateway v2's default marshaler
   * does, instead of leaving defaults out. Default false (see populate.ts).
   */
  emitUnpopulated?: boolean;
}

/** The seeded history, and ways to change it while a client reads it. */
export interface SandboxHistory {
  /** Number of entries served. */
  readonly size: number;
  /** Every entry exactly as served, newest first: the truth tests compare against. */
  entries(): SandboxEntry[];
  /** The JSON text of every entry, newest first, produced lazily. */
  jsonLines(): Iterable<string>;
  /**
   * Appends generated changes after the newest entry (PUTs, or a CREATE while the settings are
   * deleted). `at` is the createdAt of the first; the others follow at realistic intervals.
   */
  append(count?: number, options?: { at?: string }): SandboxEntry[];
  /** Appends one entry built from a spec. */
  appendEntry(spec?: EntrySpec): SandboxEntry;
  /** Inserts a late arrival: createdAt and KSUID behind the newest entry, visible from now on. */
  insertLate(spec: EntrySpec & { at: string }): SandboxEntry;
  /** Serves any JSON value as an entry, at the top or where an entry created at `at` would sort. */
  insertRaw(raw: unknown, options?: { at?: string }): void;
  /** Serves a JSON text verbatim as an entry, as insertRaw does (for values JSON.stringify cannot write). */
  insertRawText(json: string, options?: { at?: string }): void;
  /**
   * Backdates an entry: inserted into the past, however far behind the newest entry, served where
   * its KSUID sorts. The same as insertLate.
   */
  backdate(spec: EntrySpec & { at: string }): SandboxEntry;
  /**
   * Rewrites an entry at the source: same id, createdAt and position, other content from now on
   * (`set` over its snapshot, `metadata` over its metadata; with neither, a default change that
   * differs from every earlier version). Returns the entry as now served.
   */
  rewrite(id: string, change?: RewriteSpec): SandboxEntry;
  /**
   * Serves the id twice, as a faulty source does: a second version (same id and createdAt, other
   * content: `change` as for rewrite, by default a change of its own) listed beside the unchanged
   * original. Each call adds one more version. Returns the version added.
   */
  duplicate(id: string, change?: RewriteSpec): SandboxEntry;
  /** Stops serving the entry with this id (anywhere in the history). Returns it as it was served. */
  remove(id: string): SandboxEntry;
  /** Retention: stops serving the `count` oldest entries (default 1). */
  expire(count?: number): ExpireResult;
  /** Listing position (0 = oldest) of the entry served with this metadata.id, or -1. */
  positionOfId(id: string): number;
}

/** Scripted and random fault injection. */
export interface SandboxFaults {
  /** Adds a scripted rule; rules apply in order, before random faults. */
  add(rule: FaultRule): void;
  /** Removes every scripted rule and the random spec. */
  clear(): void;
  /** Sets (or with undefined, removes) the random spec; `seed` restarts the draws. */
  setRandom(spec: string | undefined, seed?: number): void;
  /** Injected faults by kind ('429', 'reset', 'expire'…). */
  readonly injected: Readonly<Record<string, number>>;
}

/** A running sandbox tenant. */
export interface Sandbox {
  /** 'http://127.0.0.1:PORT', no trailing slash. */
  readonly baseUrl: string;
  readonly credentials: SandboxCredentialSet;
  readonly history: SandboxHistory;
  readonly owners: SandboxOwners;
  readonly faults: SandboxFaults;
  /** Live counters. */
  readonly stats: SandboxStats;
  /** Every token issued so far becomes invalid (next use: 401). */
  expireTokens(): void;
  /**
   * Appends the curated tail of notable changes (scenarios.ts) now, on top of the history: what the
   * demo uses to show per-entry alerts after a backfill. Deterministic for a seed; returns the count.
   */
  appendScenarios(): number;
  /** Access tokens issued so far, expired ones included (the most recent 10 000). */
  issuedTokens(): string[];
  /** client_assertion values received so far, accepted or not (the most recent 10 000). */
  receivedAssertions(): string[];
  /** Closes the server and every open socket. Idempotent. */
  close(): Promise<void>;
}

const DEFAULTS = {
  host: '127.0.0.1',
  port: 0,
  entries: 200,
  seed: 1,
  start: '2025-01-06T09:00:00Z',
  tokenTtlSeconds: 3600,
} as const;

function checkInteger(name: string, value: number, min: number, max = Number.MAX_SAFE_INTEGER): void {
  if (!Number.isSafeInteger(value) || value < min || value > max) {
    throw new RangeError(`sandbox option ${name} must be an integer from ${min} to ${max}, not ${value}`);
  }
}

/** The host as it appears in a URL and in client ids: wildcard listen addresses become loopback. */
function publicHost(host: string): string {
  if (host === '0.0.0.0') return '127.0.0.1';
  if (host === '::') return '::1';
  return host;
}

/** Starts a sandbox tenant and resolves once it listens. */
export async function startSandbox(options: SandboxOptions = {}): Promise<Sandbox> {
  const host = options.host ?? DEFAULTS.host;
  const port = options.port ?? DEFAULTS.port;
  const entries = options.entries ?? DEFAULTS.entries;
  const seed = options.seed ?? DEFAULTS.seed;
  const start = options.start ?? DEFAULTS.start;
  const tokenTtlSeconds = options.tokenTtlSeconds ?? DEFAULTS.tokenTtlSeconds;
  checkInteger('port', port, 0, 65_535);
  checkInteger('entries', entries, 0);
  checkInteger('tokenTtlSeconds', tokenTtlSeconds, 1);
  if (!Number.isFinite(seed)) throw new RangeError('sandbox option seed must be a finite number');
  parseTimestamp(start);
  const paging = options.paging ?? 'keyset';
  if (paging !== 'keyset' && paging !== 'offset')
    throw new RangeError('sandbox option paging must be keyset or offset');

  const hostname = publicHost(host);
  const faults = new FaultInjector(options.faults, options.faultSeed ?? seed);
  const auth = new AuthService({
    hostname,
    seed,
    clientId: options.clientId,
    clientSecret: options.clientSecret,
    tokenTtlSeconds,
  });
  const history = new HistoryStore({
    entries,
    seed,
    start,
    emitUnpopulated: options.emitUnpopulated === true,
  });
  if (options.scenarios === true) appendScenarios(history);
  const owners = new OwnerStore([...seededOwners(), ...(options.owners ?? [])]);
  const tokens = new PageTokens(createHash('sha256').update(`govtrail-sandbox-page-tokens:${seed}`).digest());
  const stats: MutableStats = {
    requests: 0,
    tokenRequests: 0,
    historyRequests: 0,
    deleteRequests: 0,
    entriesServed: 0,
    lastHistoryQuery: undefined,
  };
  const { server, close } = createSandboxServer({ history, auth, faults, owners, tokens, paging, stats });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const urlHost = hostname.includes(':') ? `[${hostname}]` : hostname;
  let closed: Promise<void> | undefined;
  return {
    baseUrl: `http://${urlHost}:${address.port}`,
    credentials: auth.credentials,
    history,
    owners,
    faults,
    stats,
    expireTokens: () => auth.expireAll(),
    appendScenarios: () => appendScenarios(history),
    issuedTokens: () => auth.issuedTokens(),
    receivedAssertions: () => auth.receivedAssertions(),
    close: () => {
      closed ??= close();
      return closed;
    },
  };
}
