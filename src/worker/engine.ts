/**
 * The worker's job engine: pg-boss over the govtrail database (schema `govtrail_boss`), on a server
 * and on the embedded database alike. Every replica plans each schedule slot itself: at the slot's
 * time it inserts one job per tenant whose id is derived from (kind, tenant, slot), so only the first
 * replica's insert of a job wins and a tenant runs once per slot whatever the number of replicas.
 * pg-boss hands the jobs out (one replica each), retries a failed one with backoff inside its slot,
 * takes over the job of a replica that died (its heartbeat stops) and moves what kept failing to a
 * dead-letter queue. Nothing here is a queue, lease or lock of our own; the tenant advisory lock
 * stays inside a run as a guard.
 *
 * This file runs the jobs and starts and stops the engine; the slots are planned by planner.ts, a
 * job's end is decided by job-outcome.ts, and pg-boss is set up in engine-setup.ts.
 */
import type { JobResult, JobWithMetadata } from 'pg-boss';
import type { TenantConfig } from '../config/settings.js';
import type { RunKind } from '../store/write/runs.js';
import type { RunSummary } from '../sync/run-types.js';
import {
  createEngineQueues,
  ENGINE_SCHEMA,
  type EngineOptions,
  type EngineState,
  type EngineStatus,
  engineStatus,
  newEngineState,
  QUEUES,
  type SlotJob,
} from './engine-setup.js';
import { type AttemptResult, decideJobOutcome, type JobDecision } from './job-outcome.js';
import {
  armPlanner,
  catchUpReconcile,
  findTenant,
  nextSlotOf,
  planSlot,
  refreshTenants,
  requestDelivery,
  scheduleOf,
  wake,
} from './planner.js';
import { slotAtOrBefore, validateSchedule } from './slots.js';

/** The job engine of one replica, as `createEngine` returns it. */
export interface Engine {
  /**
   * Starts pg-boss, its workers and the slot planners. With `initialRun` (default) the current sync
   * slot is planned at once (a no-op when another replica already did); a reconcile slot missed while
   * no worker ran is planned once.
   */
  start(options?: { initialRun?: boolean }): Promise<void>;
  /** Plans one slot of a kind now: inserts its jobs; resolves how many were new. */
  planSlot(kind: RunKind, slot: Date): Promise<number>;
  /** Asks the tenant list again now (after SIGHUP): a job of a tenant no longer listed is dropped. */
  refreshTenants(): Promise<void>;
  /** Queue counts and live replicas, for /healthz and /metrics. */
  status(): Promise<EngineStatus>;
  /**
   * Stops planning and fetching, waits up to `graceMs` for the jobs in flight, then aborts them and
   * waits for them to roll back; stops pg-boss. Resolves whether it had to abort. Idempotent.
   */
  stop(graceMs: number): Promise<{ aborted: boolean }>;
  /** Whether a job is running in this replica. */
  readonly busy: boolean;
}
/** Creates the engine; nothing touches the database before `start`. */
export function createEngine(options: EngineOptions): Engine {
  validateSchedule(options.schedule, 'GOVTRAIL_SCHEDULE');
  if (options.reconcileSchedule !== undefined) {
    validateSchedule(options.reconcileSchedule, 'GOVTRAIL_RECONCILE_SCHEDULE');
  }
  const state = newEngineState(options);
  return {
    get busy() {
      return state.inFlight.size > 0;
    },
    planSlot: (kind, slot) => planSlot(state, kind, slot),
    async refreshTenants() {
      await refreshTenants(state);
    },
    start: (startOptions = {}) => startEngine(state, startOptions),
    status: () => engineStatus(state),
    stop(graceMs) {
      state.stopped ??= stopEngine(state, graceMs);
      return state.stopped;
    },
  };
}

/** Whether a failed attempt can be tried again before the next slot of its kind begins. */
function retriesLeft(state: EngineState, kind: RunKind, job: JobWithMetadata<SlotJob>): boolean {
  const { tuning } = state;
  if (state.draining || job.retryCount >= tuning.retryLimit) return false;
  const nextSlot = nextSlotOf(state, kind, job.data.slot);
  const longestDelayMs = tuning.retryDelaySeconds * 1000 * 2 ** job.retryCount;
  return nextSlot === undefined || state.now() + longestDelayMs < nextSlot.getTime();
}

/** Runs one slot job: skips it when superseded or its tenant is gone, else attempts the run. */
async function runSlotJob(
  state: EngineState,
  kind: RunKind,
  job: JobWithMetadata<SlotJob>,
): Promise<JobResult> {
  const startedAt = state.now();
  const { tenant: name, slot } = job.data;
  const finish = ({ outcome, status, output }: JobDecision): JobResult => {
    const waitMs = Math.max(0, startedAt - waitStart(job));
    state.options.onJob?.({
      queue: kind,
      tenant: name,
      slot,
      waitMs,
      runMs: state.now() - startedAt,
      outcome,
    });
    wake(state, kind);
    return { id: job.id, status, output };
  };
  const nextSlot = nextSlotOf(state, kind, slot);
  if (nextSlot !== undefined && startedAt >= nextSlot.getTime()) {
    // The next slot has its own job for this tenant: running this one too would run it twice.
    state.logger.info({ kind, tenant: name, slot }, 'job superseded by the next slot; not run');
    return finish({ outcome: 'superseded', status: 'completed', output: { superseded: true } });
  }
  const tenant = await findTenant(state, name);
  if (tenant === undefined) {
    state.logger.info({ kind, tenant: name, slot }, 'tenant no longer scheduled; job dropped');
    return finish({ outcome: 'removed', status: 'completed', output: { removed: true } });
  }
  const attempt = slotAttempt(state, kind, job);
  const result = await attemptRun(state, kind, tenant, job, attempt);
  return finish(decideJobOutcome(kind, result, () => attempt.retriesLeft));
}

/** The attempt handed to the run; `retriesLeft` is decided once, when first asked (the run asks as it fails). */
function slotAttempt(state: EngineState, kind: RunKind, job: JobWithMetadata<SlotJob>) {
  let decided: boolean | undefined;
  return {
    slot: new Date(job.data.slot),
    // A job taken over from a dead replica comes back as a retry (its heartbeat failed it).
    retry: job.retryCount > 0,
    get retriesLeft() {
      decided ??= retriesLeft(state, kind, job);
      return decided;
    },
  };
}

/** One attempt of a tenant's run; reports a run that ran (`onRun`) and asks delivery of its alerts. */
async function attemptRun(
  state: EngineState,
  kind: RunKind,
  tenant: TenantConfig,
  job: JobWithMetadata<SlotJob>,
  attempt: ReturnType<typeof slotAttempt>,
): Promise<AttemptResult> {
  const signal = AbortSignal.any([state.abort.signal, job.signal]);
  let summary: RunSummary;
  try {
    summary = await state.options.run(kind, tenant, signal, attempt);
  } catch (err) {
    state.logger.error({ err, kind, tenant: job.data.tenant, slot: job.data.slot }, 'tenant run threw');
    return { threw: err };
  }
  if (summary.alreadyDone === true) return { summary };
  state.options.onRun?.(summary);
  if (summary.status === 'succeeded' && summary.alerts > 0) await requestDelivery(state).catch(() => {});
  return { summary };
}

/** A delivery job: delivers the due alerts and queues the next delivery at its time. */
async function deliver(state: EngineState): Promise<void> {
  const { options, logger } = state;
  if (options.deliverAlerts === undefined) return;
  const { summary, nextDue } = await options.deliverAlerts(state.abort.signal);
  if (summary.delivered + summary.retried + summary.failed > 0) {
    logger.info(
      { delivered: summary.delivered, retried: summary.retried, givenUp: summary.failed },
      'alerts delivered',
    );
  }
  // A delivery to retry later gets a job at its time (the queue keeps one waiting at most).
  if (nextDue !== undefined) await requestDelivery(state, nextDue);
}

/** Keeps `work` in the in-flight set until it settles (`busy`, and the grace period of `stop`). */
function track<T>(state: EngineState, work: Promise<T>): Promise<T> {
  state.inFlight.add(work);
  return work.finally(() => state.inFlight.delete(work));
}

/** Registers this replica's workers: one per scheduled kind of slot job, and the delivery worker. */
async function startWorkers(state: EngineState): Promise<void> {
  const { boss, options, tuning } = state;
  const slotOptions = {
    localConcurrency: options.concurrency,
    batchSize: 1,
    pollingIntervalSeconds: tuning.pollingIntervalSeconds,
    perJobResults: true,
    includeMetadata: true,
  } as const;
  for (const kind of ['sync', 'reconcile'] as const) {
    if (scheduleOf(state, kind) === undefined) continue;
    await boss.work<SlotJob, unknown, typeof slotOptions>(
      QUEUES[kind],
      slotOptions,
      (jobs: JobWithMetadata<SlotJob>[]) =>
        track(state, Promise.all(jobs.map((job) => runSlotJob(state, kind, job)))),
    );
  }
  if (options.deliverAlerts !== undefined) {
    await boss.work(QUEUES.deliver, { pollingIntervalSeconds: tuning.pollingIntervalSeconds }, () =>
      track(state, deliver(state)),
    );
  }
}

/**
 * Starts pg-boss, creates the queues, registers the workers, plans the current sync slot (unless
 * `initialRun` is false) and a missed reconcile slot, arms the planners and asks one delivery.
 */
async function startEngine(state: EngineState, startOptions: { initialRun?: boolean }): Promise<void> {
  if (state.started || state.draining) return;
  state.started = true;
  const { boss, options } = state;
  await boss.start();
  await createEngineQueues(boss, state.tuning, state.embedded);
  await startWorkers(state);
  const at = new Date(state.now());
  if (startOptions.initialRun !== false) {
    const current = slotAtOrBefore(options.schedule, at);
    if (current !== undefined) await planSlot(state, 'sync', current);
  }
  await catchUpReconcile(state);
  armPlanner(state, 'sync', options.schedule, at);
  if (options.reconcileSchedule !== undefined) armPlanner(state, 'reconcile', options.reconcileSchedule, at);
  await requestDelivery(state);
  state.logger.info(
    {
      engine: 'pg-boss',
      schema: ENGINE_SCHEMA,
      schedule: options.schedule,
      reconcileSchedule: options.reconcileSchedule ?? 'off',
      spreadMs: options.spreadMs,
      timezone: 'UTC',
    },
    'schedule started',
  );
}

/**
 * Stops the planners and the fetching, lets the jobs in flight finish within `graceMs` (else aborts
 * them), then stops pg-boss. Called once (`stop` keeps its promise). Runs synchronously up to the
 * first await, so the planners are stopped when `stop` returns.
 */
async function stopEngine(state: EngineState, graceMs: number): Promise<{ aborted: boolean }> {
  state.draining = true;
  for (const timer of state.timers) clearTimeout(timer);
  state.timers.clear();
  if (!state.started) return { aborted: false };
  for (const name of Object.values(QUEUES)) await state.boss.offWork(name, { wait: false }).catch(() => {});
  const aborted = state.inFlight.size > 0 ? await drainInFlight(state, graceMs) : false;
  await state.boss.stop({ graceful: true, close: true, timeout: 5_000 });
  return { aborted };
}

/** Waits up to `graceMs` for the jobs in flight; then aborts them and waits for them to roll back. Resolves whether it aborted. */
async function drainInFlight(state: EngineState, graceMs: number): Promise<boolean> {
  const { logger, inFlight } = state;
  logger.info({ graceMs }, 'waiting for the run in flight to finish');
  let timer: NodeJS.Timeout | undefined;
  const settled = Promise.allSettled([...inFlight]).then(() => false);
  const timedOut = await Promise.race([
    settled,
    new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(true), graceMs);
    }),
  ]);
  clearTimeout(timer);
  if (!timedOut) return false;
  logger.warn({ graceMs }, 'grace period over: aborting the run in flight (its transaction rolls back)');
  state.abort.abort(new Error('shutdown'));
  await Promise.allSettled([...inFlight]);
  return true;
}

/** When the job could have started: its start-after time (the slot plus its spread offset). */
function waitStart(job: JobWithMetadata<SlotJob>): number {
  return new Date(job.startAfter ?? job.data.slot).getTime();
}
