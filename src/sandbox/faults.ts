/**
 * Fault injection: what a flaky network, a load balancer or a buggy deployment does to a
 * client. Scripted rules fire first, in the order they were added; a seeded random spec draws
 * for the remaining requests (benchmarks and soak tests).
 */
import { Random } from './random.js';

/** Every scripted fault kind. */
export const FAULT_KINDS = [
  '400',
  '401',
  '403',
  '404',
  '408',
  '429',
  '500',
  '502',
  '503',
  '504',
  'reset',
  'slow',
  'hang',
  'badjson',
  'list-not-array',
  'list-null',
  'omit-empty',
  'repeat-token',
  'redirect',
] as const;

/**
 * What a fault does:
 * - a status code: that status with the body a real deployment sends (grpc-gateway JSON
 *   `{code, message, details}`; OAuth `{error, error_description}` on the token route; an HTML
 *   page from the load balancer for 408, 502 and 504);
 * - `reset`: the socket is destroyed without a response; `hang`: no response until close;
 * - `slow`: the normal response, with headers delayed by `delayMs`;
 * - `badjson`: 200 with a truncated JSON body; `list-not-array`: 200 `{"list": 5}`;
 *   `list-null`: 200 `{"list": null, "nextPageToken": ""}`;
 * - `omit-empty`: the normal page, written as pure proto3 JSON (an empty list and an empty
 *   nextPageToken left out, `{}` for an empty history) — what grpc-gateway does by default;
 * - `repeat-token`: the normal page, but nextPageToken is the request's own page_token (a paging
 *   loop; on a first request without a token, a token that serves the first page again);
 * - `redirect`: 307 to `location` (default: the same path on another host).
 */
export type FaultKind = (typeof FAULT_KINDS)[number];

/** The routes faults apply to. */
export type FaultRoute = 'token' | 'history' | 'delete';

/** One scripted fault. */
export interface FaultRule {
  /** Default 'history'. */
  route?: FaultRoute | 'any';
  kind: FaultKind;
  /** How many matching requests it hits; default 1, Infinity allowed. */
  times?: number;
  /** Matching requests to let through before it starts. */
  afterRequests?: number;
  /** Retry-After header value (seconds or HTTP date). */
  retryAfter?: string;
  /** For slow: header delay, default 2000 ms. */
  delayMs?: number;
  /** Replaces the error body. */
  body?: string;
  /** For redirect. */
  location?: string;
}

/** A fault chosen for one request. */
export interface FaultDecision {
  readonly kind: FaultKind | 'expire';
  readonly retryAfter?: string | undefined;
  readonly delayMs: number;
  readonly body?: string | undefined;
  readonly location?: string | undefined;
}

/** Kinds a random spec may name. */
export const RANDOM_FAULT_KINDS = [
  '408',
  '429',
  '500',
  '502',
  '503',
  '504',
  'reset',
  'slow',
  'expire',
] as const;
type RandomKind = (typeof RANDOM_FAULT_KINDS)[number];

/** A parsed random spec. */
export interface RandomFaultSpec {
  readonly kinds: ReadonlyArray<readonly [RandomKind, number]>;
  /** Retry-After seconds sent with a random 429. */
  readonly retryAfter: number;
}

const DEFAULT_DELAY_MS = 2000;

/**
 * Parses `429:0.1,500:0.05,reset:0.02,slow:0.02,expire:0.01,retry-after:2`: each kind with the
 * probability that a request gets it (together at most 1), and optionally the Retry-After
 * seconds of random 429s (default 1). Throws a RangeError naming the bad part.
 */
export function parseFaultSpec(spec: string): RandomFaultSpec {
  const kinds: Array<readonly [RandomKind, number]> = [];
  let retryAfter = 1;
  let total = 0;
  for (const part of spec.split(',')) {
    const item = part.trim();
    if (item === '') continue;
    const m = /^([a-z0-9-]+):([0-9]*\.?[0-9]+)$/i.exec(item);
    if (m === null)
      throw new RangeError(`fault spec: expected kind:probability, got ${JSON.stringify(item)}`);
    const name = m[1]!.toLowerCase();
    const value = Number(m[2]);
    if (name === 'retry-after') {
      if (!Number.isSafeInteger(value)) throw new RangeError('fault spec: retry-after must be whole seconds');
      retryAfter = value;
      continue;
    }
    if (!(RANDOM_FAULT_KINDS as readonly string[]).includes(name)) {
      throw new RangeError(
        `fault spec: unknown kind ${JSON.stringify(name)} (one of ${RANDOM_FAULT_KINDS.join(', ')})`,
      );
    }
    if (value > 1) throw new RangeError(`fault spec: probability of ${name} above 1`);
    total += value;
    kinds.push([name as RandomKind, value]);
  }
  if (total > 1 + 1e-9) throw new RangeError('fault spec: probabilities add up to more than 1');
  return { kinds, retryAfter };
}

interface ActiveRule {
  readonly rule: FaultRule;
  readonly route: FaultRoute | 'any';
  remaining: number;
  toSkip: number;
}

/** Checks a rule from an untrusted source (the control endpoint); throws a RangeError. */
function validateFaultRule(value: unknown): FaultRule {
  if (typeof value !== 'object' || value === null) throw new RangeError('a fault rule is an object');
  const r = value as Record<string, unknown>;
  if (!(FAULT_KINDS as readonly unknown[]).includes(r['kind'])) {
    throw new RangeError(`fault rule: kind must be one of ${FAULT_KINDS.join(', ')}`);
  }
  if (r['route'] !== undefined && !['token', 'history', 'delete', 'any'].includes(r['route'] as string)) {
    throw new RangeError('fault rule: route must be token, history, delete or any');
  }
  // JSON has no Infinity: accept "Infinity" or null for "every request".
  const times = r['times'] === 'Infinity' || r['times'] === null ? Number.POSITIVE_INFINITY : r['times'];
  if (times !== undefined && (typeof times !== 'number' || !(times >= 0))) {
    throw new RangeError('fault rule: times must be a non-negative number');
  }
  for (const name of ['afterRequests', 'delayMs'] as const) {
    const v = r[name];
    if (v !== undefined && (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0)) {
      throw new RangeError(`fault rule: ${name} must be a non-negative integer`);
    }
  }
  for (const name of ['retryAfter', 'body', 'location'] as const) {
    if (r[name] !== undefined && typeof r[name] !== 'string')
      throw new RangeError(`fault rule: ${name} must be a string`);
  }
  return { ...(r as unknown as FaultRule), ...(times === undefined ? {} : { times: times as number }) };
}

/** Scripted and random faults, and what was injected. */
export class FaultInjector {
  private rules: ActiveRule[] = [];
  private random: RandomFaultSpec | undefined;
  private rng: Random;
  private readonly counts: Record<string, number> = {};

  constructor(spec: string | undefined, seed: number) {
    this.rng = new Random(seed, 0xfa17);
    this.random = spec === undefined ? undefined : parseFaultSpec(spec);
  }

  /** Counts of injected faults by kind (a live view). */
  get injected(): Readonly<Record<string, number>> {
    return this.counts;
  }

  /** Adds a scripted rule after the existing ones. */
  add(rule: FaultRule): void {
    const checked = validateFaultRule(rule);
    this.rules.push({
      rule: checked,
      route: checked.route ?? 'history',
      remaining: checked.times ?? 1,
      toSkip: checked.afterRequests ?? 0,
    });
  }

  /** Removes scripted rules and the random spec. */
  clear(): void {
    this.rules = [];
    this.random = undefined;
  }

  /** Replaces the random spec (undefined: none), optionally reseeding the draws. */
  setRandom(spec: string | undefined, seed?: number): void {
    this.random = spec === undefined || spec === '' ? undefined : parseFaultSpec(spec);
    if (seed !== undefined) this.rng = new Random(seed, 0xfa17);
  }

  /** The fault for one request on `route`, if any; counts it as injected. */
  decide(route: FaultRoute): FaultDecision | undefined {
    for (const active of this.rules) {
      if (active.route !== 'any' && active.route !== route) continue;
      if (active.remaining <= 0) continue;
      if (active.toSkip > 0) {
        active.toSkip--;
        continue;
      }
      active.remaining--;
      const { rule } = active;
      this.count(rule.kind);
      return {
        kind: rule.kind,
        retryAfter: rule.retryAfter,
        delayMs: rule.delayMs ?? DEFAULT_DELAY_MS,
        body: rule.body,
        location: rule.location,
      };
    }
    this.rules = this.rules.filter((r) => r.remaining > 0);
    // Random faults model an unreliable path to the tenant: the listing and token fetches, not remediation calls.
    if (this.random === undefined || route === 'delete') return undefined;
    let r = this.rng.next();
    for (const [kind, p] of this.random.kinds) {
      r -= p;
      if (r < 0) {
        if (kind === 'expire' && route !== 'history') return undefined;
        this.count(kind);
        return {
          kind,
          retryAfter: kind === '429' ? String(this.random.retryAfter) : undefined,
          delayMs: DEFAULT_DELAY_MS,
        };
      }
    }
    return undefined;
  }

  private count(kind: string): void {
    this.counts[kind] = (this.counts[kind] ?? 0) + 1;
  }
}
