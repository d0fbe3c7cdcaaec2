/**
 * The scheduled loop: node-cron fires ticks (UTC); each tick syncs every tenant with bounded
 * concurrency, then delivers pending alerts. Ticks never overlap: one that fires while the previous
 * is still running is skipped and logged. Shutdown stops the schedule, lets the tick in flight
 * finish within a grace period, then aborts it.
 *
 * The tenant run and the delivery are injected, so the timing logic is tested with fake timers
 * and no database; `service.ts` wires the real ones.
 */
import cron, { type ScheduledTask } from 'node-cron';
import type { DeliverySummary } from '../alerts/deliver.js';
import type { TenantConfig } from '../config.js';
import { ConfigError } from '../errors.js';
import type { Logger } from '../logger.js';
import type { SyncRunSummary } from '../sync/run.js';
import { runBounded } from './pool.js';

export type TickReason = 'startup' | 'schedule' | 'manual';
/** A tick syncs every tenant, or reconciles every tenant. */
export type TickKind = 'sync' | 'reconcile';

export interface WorkerOptions {
  readonly tenants: readonly TenantConfig[];
  /** Cron expression, evaluated in UTC. */
  readonly schedule: string;
  /** Tenants synced at once within a tick. */
  readonly concurrency: number;
  readonly logger: Logger;
  /** One run for one tenant; must honour `signal` (abort = roll back and return). */
  readonly syncTenant: (tenant: TenantConfig, signal: AbortSignal) => Promise<SyncRunSummary>;
  /**
   * The reconcile of every tenant on a schedule of its own (integrity.md); absent when `off`. Its
   * ticks run beside the sync ticks: the tenant's advisory lock keeps a sync and a reconcile of one
   * tenant apart (the later one records `skipped`).
   */
  readonly reconcile?: {
    readonly schedule: string;
    readonly run: (tenant: TenantConfig, signal: AbortSignal) => Promise<SyncRunSummary>;
  };
  /** Delivers pending alerts after the tenants of a tick. */
  readonly deliverAlerts?: (signal: AbortSignal) => Promise<DeliverySummary>;
  /** Called with every run's summary (metrics). */
  readonly onRun?: (summary: SyncRunSummary) => void;
}

export interface TickResult {
  readonly reason: TickReason;
  readonly summaries: readonly SyncRunSummary[];
  /** Tenants whose run threw instead of returning a summary (a bug or a lost database). */
  readonly errors: ReadonlyArray<{ tenant: string; error: unknown }>;
  readonly delivery: DeliverySummary | undefined;
}

export interface Worker {
  /** Starts the cron schedule and, unless told otherwise, a tick right away. */
  start(options?: { initialRun?: boolean }): void;
  /**
   * Runs one tick now. Resolves 'overlap' without doing anything when a tick is still running,
   * and 'stopped' once shutdown began.
   */
  tick(reason?: TickReason, kind?: TickKind): Promise<TickResult | 'overlap' | 'stopped'>;
  /**
   * Stops scheduling, waits up to `graceMs` for the tick in flight, then aborts it and waits for
   * it to roll back. Resolves whether it had to abort. Idempotent.
   */
  stop(graceMs: number): Promise<{ aborted: boolean }>;
  /** Whether a tick is running. */
  readonly busy: boolean;
}

export function createWorker(options: WorkerOptions): Worker {
  const { logger } = options;
  if (!cron.validate(options.schedule)) {
    throw new ConfigError('GOVTRAIL_SCHEDULE', `not a valid cron expression: ${options.schedule}`);
  }
  if (options.reconcile !== undefined && !cron.validate(options.reconcile.schedule)) {
    throw new ConfigError(
      'GOVTRAIL_RECONCILE_SCHEDULE',
      `not a valid cron expression: ${options.reconcile.schedule} (or "off")`,
    );
  }
  const abort = new AbortController();
  let draining = false;
  const tasks: ScheduledTask[] = [];
  const current = new Map<TickKind, Promise<TickResult>>();
  let stopped: Promise<{ aborted: boolean }> | undefined;

  const runTick = async (reason: TickReason, kind: TickKind): Promise<TickResult> => {
    const started = Date.now();
    const runTenant = kind === 'reconcile' ? options.reconcile?.run : options.syncTenant;
    if (runTenant === undefined) throw new Error('reconcile is off');
    logger.info({ reason, kind, tenants: options.tenants.length }, 'tick started');
    const summaries: SyncRunSummary[] = [];
    const errors: Array<{ tenant: string; error: unknown }> = [];
    const results = await runBounded(
      options.tenants,
      options.concurrency,
      async (tenant) => {
        const summary = await runTenant(tenant, abort.signal);
        options.onRun?.(summary);
        return summary;
      },
      // Once shutdown begins no new tenant starts; the ones in flight finish (or are aborted).
      () => !draining,
    );
    results.forEach((r, i) => {
      const tenant = options.tenants[i]?.name ?? '?';
      if (r?.status === 'fulfilled') summaries.push(r.value);
      else if (r?.status === 'rejected') {
        errors.push({ tenant, error: r.reason });
        logger.error({ tenant, err: r.reason }, 'tenant run threw; the other tenants went on');
      }
    });
    let delivery: DeliverySummary | undefined;
    if (options.deliverAlerts !== undefined && !abort.signal.aborted) {
      try {
        delivery = await options.deliverAlerts(abort.signal);
      } catch (err) {
        // Pending deliveries stay in the outbox; the next tick (or another replica) retries them.
        logger.error({ err }, 'alert delivery failed; will retry next tick');
      }
    }
    const count = (s: SyncRunSummary['status']) => summaries.filter((x) => x.status === s).length;
    logger.info(
      {
        reason,
        kind,
        ms: Date.now() - started,
        succeeded: count('succeeded'),
        failed: count('failed') + errors.length,
        skipped: count('skipped'),
        ...(delivery !== undefined
          ? { delivered: delivery.delivered, retried: delivery.retried, givenUp: delivery.failed }
          : {}),
      },
      'tick finished',
    );
    return { reason, summaries, errors, delivery };
  };

  const tick = (
    reason: TickReason = 'manual',
    kind: TickKind = 'sync',
  ): Promise<TickResult | 'overlap' | 'stopped'> => {
    if (draining) return Promise.resolve('stopped');
    if (kind === 'reconcile' && options.reconcile === undefined) return Promise.resolve('stopped');
    if (current.has(kind)) {
      logger.warn({ reason, kind }, 'previous tick still running; this tick is skipped');
      return Promise.resolve('overlap');
    }
    const run = runTick(reason, kind).finally(() => {
      current.delete(kind);
    });
    current.set(kind, run);
    return run;
  };

  return {
    get busy() {
      return current.size > 0;
    },
    start(startOptions = {}) {
      if (tasks.length > 0 || draining) return;
      // The callbacks return nothing, so node-cron never waits on a tick: overlap is decided here.
      tasks.push(
        cron.schedule(
          options.schedule,
          () => {
            void tick('schedule', 'sync');
          },
          { timezone: 'UTC', name: 'govtrail-worker' },
        ),
      );
      if (options.reconcile !== undefined) {
        tasks.push(
          cron.schedule(
            options.reconcile.schedule,
            () => {
              void tick('schedule', 'reconcile');
            },
            { timezone: 'UTC', name: 'govtrail-reconcile' },
          ),
        );
      }
      logger.info(
        {
          schedule: options.schedule,
          reconcileSchedule: options.reconcile?.schedule ?? 'off',
          timezone: 'UTC',
        },
        'schedule started',
      );
      if (startOptions.initialRun !== false) void tick('startup');
    },
    tick,
    stop(graceMs) {
      stopped ??= (async () => {
        draining = true;
        for (const task of tasks) await task.destroy();
        if (current.size === 0) return { aborted: false };
        const inFlight = Promise.all(current.values());
        logger.info({ graceMs }, 'waiting for the run in flight to finish');
        let timer: NodeJS.Timeout | undefined;
        const timedOut = await Promise.race([
          inFlight.then(
            () => false,
            () => false,
          ),
          new Promise<boolean>((resolve) => {
            timer = setTimeout(() => resolve(true), graceMs);
          }),
        ]);
        clearTimeout(timer);
        if (!timedOut) return { aborted: false };
        logger.warn(
          { graceMs },
          'grace period over: aborting the run in flight (its transaction rolls back)',
        );
        abort.abort(new Error('shutdown'));
        await inFlight.catch(() => {});
        return { aborted: true };
      })();
      return stopped;
    },
  };
}
