/**
 * What /healthz and /metrics read from the run ledger and the checkpoints. Read from the database
 * rather than kept in memory, so that every replica reports the same truth whichever of them ran
 * the tenant last (the others only recorded `skipped`).
 */
import type { TenantHealth } from '../store/read/health.js';

/** A tenant is unhealthy once its last this-many finished runs all failed. */
export const UNHEALTHY_AFTER_FAILURES = 3;

/** The job engine as /healthz reports it. */
export interface EngineHealth {
  readonly name: 'pg-boss';
  readonly state: 'running' | 'stopped' | 'unreachable';
  readonly schema?: string;
  readonly replicasAlive?: number;
  readonly queues?: Readonly<
    Record<string, { queued: number; active: number; failed: number; dead: number }>
  >;
}

export interface HealthReport {
  readonly status: 'ok' | 'unhealthy';
  readonly database: 'ok' | 'unreachable';
  /** Absent when the database did not answer. */
  readonly engine?: EngineHealth;
  /** The whole fleet in counts (absent when the database did not answer). */
  readonly fleet?: {
    readonly tenants: number;
    /** Tenants whose last UNHEALTHY_AFTER_FAILURES runs failed. */
    readonly failing: number;
    /** Tenants without a successful sync for longer than staleAfterSeconds. */
    readonly stale: number;
    readonly staleAfterSeconds: number;
  };
  /** Up to 100 tenants, failing and stale ones first: the fleet's counts are in `fleet`. */
  readonly tenants: readonly TenantHealth[];
}

/** The health verdict: the database answered and no tenant failed its last N runs. */
export function healthVerdict(tenants: readonly TenantHealth[]): 'ok' | 'unhealthy' {
  return tenants.some((t) => t.consecutiveFailures >= UNHEALTHY_AFTER_FAILURES) ? 'unhealthy' : 'ok';
}
