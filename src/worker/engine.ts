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
 * pg-boss's own scheduler fires at most once a minute and has no seconds field, which
 * `GOVTRAIL_SCHEDULE` has: hence the planner here, over cron-parser.
 */
import {
  fromPglite,
  type JobResult,
  type JobWithMetadata,
  type PGliteLike,
  PgBoss,
  type QueueResult,
} from 'pg-boss';
import type { DeliverySummary } from '../alerts/deliver.js';
import type { TenantConfig } from '../config/settings.js';
import type { Logger } from '../runtime/logger.js';
import type { SyncRunSummary } from '../sync/run.js';
import {
  type JobKind,
  slotAfter,
  slotAtOrBefore,
  slotJobId,
  spreadOffsetMs,
  validateSchedule,
} from './slots.js';

/** The schema pg-boss creates and migrates in the govtrail database. */
export const ENGINE_SCHEMA = 'govtrail_boss';

/** The queues, by what their jobs do. */
export const QUEUES = {
  sync: 'govtrail-sync',
  reconcile: 'govtrail-reconcile',
  deliver: 'govtrail-deliver',
  dead: 'govtrail-dead',
} as const;
export type QueueKind = keyof typeof QUEUES;

/** Where pg-boss keeps its tables: its own small pool on a server, or the embedded database's session. */
export type EngineConnection =
  | {
      readonly kind: 'postgres';
      readonly url: string;
      readonly applicationName?: string;
      readonly max?: number;
    }
  | {
      readonly kind: 'embedded';
      /** The embedded database, one statement or script at a time through its session mutex. */
      readonly pglite: PGliteLike;
    };

/** Timings of the engine; the defaults suit production, tests shorten them. */
export interface EngineTuning {
  /** Attempts after the first, inside the slot (`GOVTRAIL_JOB_RETRIES`). */
  readonly retryLimit: number;
  /** First retry delay; doubled per attempt with jitter (`GOVTRAIL_JOB_RETRY_DELAY`). */
  readonly retryDelaySeconds: number;
  /**
   * A running job's heartbeat: a replica that stops beating for this long (killed, partitioned) has
   * its job handed to another replica. Server only: the embedded database has a single worker.
   */
  readonly heartbeatSeconds: number;
  /** How often pg-boss looks for jobs whose heartbeat stopped, and refreshes its queue counts. */
  readonly superviseIntervalSeconds: number;
  /** How often an idle worker asks for a job. */
  readonly pollingIntervalSeconds: number;
  /** Completed and failed jobs are deleted after this long (retention of the queue tables). */
  readonly deleteAfterSeconds: number;
  /** Dead-letter jobs are kept this long. */
  readonly deadLetterDeleteAfterSeconds: number;
}

export const DEFAULT_TUNING: EngineTuning = {
  retryLimit: 2,
  retryDelaySeconds: 30,
  heartbeatSeconds: 30,
  superviseIntervalSeconds: 15,
  pollingIntervalSeconds: 2,
  deleteAfterSeconds: 7 * 86_400,
  deadLetterDeleteAfterSeconds: 30 * 86_400,
};

/** What a job carries. */
interface SlotJob {
  readonly tenant: string;
  /** ISO time of the slot. */
  readonly slot: string;
}

/** How one job ended, for the metrics and the tests. */
export interface JobEvent {
  readonly queue: QueueKind;
  readonly tenant: string | undefined;
  readonly slot: string | undefined;
  /** Between the time the job could start and the time it started. */
  readonly waitMs: number;
  readonly runMs: number;
  readonly outcome: 'completed' | 'retry' | 'dead' | 'superseded' | 'removed' | 'busy' | 'done';
}

export interface EngineOptions {
  readonly connection: EngineConnection;
  /** `GOVTRAIL_SCHEDULE`. */
  readonly schedule: string;
  /** `GOVTRAIL_RECONCILE_SCHEDULE`; undefined when off. */
  readonly reconcileSchedule: string | undefined;
  /** `GOVTRAIL_SPREAD`: a slot's tenants start over this window, each at a stable offset. */
  readonly spreadMs: number;
  /** Jobs this replica runs at once. */
  readonly concurrency: number;
  readonly logger: Logger;
  /** The tenants of a slot, asked when the slot is planned and when a job starts. */
  readonly tenants: () => Promise<readonly TenantConfig[]>;
  /**
   * One attempt of one tenant's run; `attempt.retriesLeft` is read when the attempt fails (false once
   * shutdown began: an aborted run is recorded).
   */
  readonly run: (
    kind: JobKind,
    tenant: TenantConfig,
    signal: AbortSignal,
    attempt: {
      readonly retriesLeft: boolean;
      readonly slot: Date;
      /** Not the job's first attempt: the run first looks for a success in its slot. */
      readonly retry: boolean;
    },
  ) => Promise<SyncRunSummary>;
  /** Delivers due alerts; resolves when the next pending one is due (undefined: none). */
  readonly deliverAlerts?: (signal: AbortSignal) => Promise<{ summary: DeliverySummary; nextDue?: Date }>;
  /**
   * The tenants among `tenants` whose reconcile of `slot` was missed (no reconcile started since the
   * slot, though the tenant was known before it): read from the run ledger at start.
   */
  readonly missedReconciles?: (slot: Date, tenants: readonly string[]) => Promise<readonly string[]>;
  readonly onRun?: (summary: SyncRunSummary) => void;
  readonly onJob?: (event: JobEvent) => void;
  readonly tuning?: Partial<EngineTuning>;
  /** Name of this replica in pg-boss's instance registry. */
  readonly instanceName?: string;
  readonly now?: () => number;
}

/** The counts of one queue, as pg-boss's monitor last cached them. */
export interface QueueCounts {
  readonly queued: number;
  readonly active: number;
  readonly failed: number;
  /** Jobs of this queue in the dead-letter queue (what kept failing). */
  readonly dead: number;
}

export interface EngineStatus {
  readonly engine: 'pg-boss';
  readonly schema: string;
  readonly running: boolean;
  readonly queues: Readonly<Record<Exclude<QueueKind, 'dead'>, QueueCounts>>;
  /** Replicas whose pg-boss heartbeat is recent (pg-boss's instance registry). */
  readonly replicasAlive: number;
}

export interface Worker {
  /**
   * Starts pg-boss, its workers and the slot planners. With `initialRun` (default) the current sync
   * slot is planned at once (a no-op when another replica already did); a reconcile slot missed while
   * no worker ran is planned once.
   */
  start(options?: { initialRun?: boolean }): Promise<void>;
  /** Plans one slot of a kind now: inserts its jobs; resolves how many were new. */
  planSlot(kind: JobKind, slot: Date): Promise<number>;
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

const MAX_TIMER_MS = 6 * 3_600_000;
const INSERT_CHUNK = 500;

/**
 * What one engine holds between its steps: its options, pg-boss, and the state of its timers, jobs
 * and caches. Created once by `createEngine`; the functions below are its steps.
 */
interface EngineState {
  readonly options: EngineOptions;
  readonly tuning: EngineTuning;
  readonly logger: Logger;
  readonly now: () => number;
  readonly embedded: boolean;
  readonly boss: PgBoss;
  /** Aborts the runs in flight when the grace period of `stop` is over. */
  readonly abort: AbortController;
  /** The batches of jobs this replica is running (one promise per batch handed out by pg-boss). */
  readonly inFlight: Set<Promise<unknown>>;
  /** The planner timers armed. */
  readonly timers: Set<NodeJS.Timeout>;
  /**
   * The slot after a job's slot, by `kind slot`, asked by every job of the slot (twice when it fails):
   * computed once per slot. cron-parser walks day by day to the next match, which costs milliseconds
   * for a sparse expression; a slot's jobs all share the answer.
   */
  readonly nextSlots: Map<string, Date | undefined>;
  /** The tenants as last asked: a job looks its tenant up here, and asks again when it is missing. */
  roster: Map<string, TenantConfig>;
  /** Set by `stop`: no more planning, delivery requests or retries. */
  draining: boolean;
  started: boolean;
  stopped: Promise<{ aborted: boolean }> | undefined;
}

/** Creates the engine; nothing touches the database before `start`. */
export function createEngine(options: EngineOptions): Worker {
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

/** The engine's state before `start`: pg-boss constructed (not connected), no timer, no job. */
function newEngineState(options: EngineOptions): EngineState {
  const tuning: EngineTuning = { ...DEFAULT_TUNING, ...options.tuning };
  const { logger } = options;
  const boss = new PgBoss({
    ...connectionOptions(options.connection),
    schema: ENGINE_SCHEMA,
    superviseIntervalSeconds: tuning.superviseIntervalSeconds,
    monitorIntervalSeconds: tuning.superviseIntervalSeconds,
    // pg-boss's cron scheduler is not used (no seconds field): the planner below is.
    schedule: false,
    instanceName: options.instanceName ?? `govtrail-${process.pid}`,
    instanceHeartbeatSeconds: 10,
  });
  boss.on('error', (err: unknown) => logger.error({ err }, 'job engine error'));
  return {
    options,
    tuning,
    logger,
    now: options.now ?? Date.now,
    embedded: options.connection.kind === 'embedded',
    boss,
    abort: new AbortController(),
    inFlight: new Set(),
    timers: new Set(),
    nextSlots: new Map(),
    roster: new Map(),
    draining: false,
    started: false,
    stopped: undefined,
  };
}

function scheduleOf(state: EngineState, kind: JobKind): string | undefined {
  return kind === 'sync' ? state.options.schedule : state.options.reconcileSchedule;
}

/** The slot after `slot` in the schedule of its kind (undefined: none, or the kind is off); cached. */
function nextSlotOf(state: EngineState, kind: JobKind, slot: string): Date | undefined {
  const schedule = scheduleOf(state, kind);
  if (schedule === undefined) return undefined;
  const key = `${kind} ${slot}`;
  if (state.nextSlots.has(key)) return state.nextSlots.get(key);
  const next = slotAfter(schedule, new Date(slot));
  // Slots of the past are not asked again for long: a few per kind are plenty.
  if (state.nextSlots.size >= 16) state.nextSlots.clear();
  state.nextSlots.set(key, next);
  return next;
}

/** Asks the tenant list and keeps it as the roster. */
async function refreshTenants(state: EngineState): Promise<readonly TenantConfig[]> {
  const list = await state.options.tenants();
  state.roster = new Map(list.map((t) => [t.name, t]));
  return list;
}

async function findTenant(state: EngineState, name: string): Promise<TenantConfig | undefined> {
  return state.roster.get(name) ?? (await refreshTenants(state)).find((t) => t.name === name);
}

/** Inserts one job per tenant for a slot (ids derived from kind, tenant and slot); resolves how many were new. */
async function planSlot(state: EngineState, kind: JobKind, slot: Date): Promise<number> {
  const { boss, options } = state;
  const tenants = await refreshTenants(state);
  const jobs = tenants.map((t) => ({
    id: slotJobId(kind, t.name, slot),
    data: { tenant: t.name, slot: slot.toISOString() } satisfies SlotJob,
    startAfter: new Date(slot.getTime() + spreadOffsetMs(t.name, options.spreadMs)),
  }));
  let inserted = 0;
  for (let i = 0; i < jobs.length; i += INSERT_CHUNK) {
    const ids = await boss.insert(QUEUES[kind], jobs.slice(i, i + INSERT_CHUNK), { returnId: true });
    inserted += ids?.length ?? 0;
  }
  state.logger.info({ kind, slot: slot.toISOString(), tenants: jobs.length, inserted }, 'slot planned');
  // The slot's first jobs are due now: this replica's idle workers fetch at once instead of at
  // their next poll (up to pollingIntervalSeconds later). Every replica plans the slot at its time,
  // so every replica's workers wake, whether or not its own inserts won.
  if (jobs.length > 0) wake(state, kind);
  return inserted;
}

/** Arms the timer of the next slot of a kind; re-arms itself after planning. */
function armPlanner(state: EngineState, kind: JobKind, schedule: string, after: Date): void {
  if (state.draining) return;
  const next = slotAfter(schedule, after);
  if (next === undefined) return;
  const wait = Math.min(Math.max(0, next.getTime() - state.now()), MAX_TIMER_MS);
  const timer = setTimeout(() => {
    state.timers.delete(timer);
    if (state.draining) return;
    if (state.now() < next.getTime()) {
      armPlanner(state, kind, schedule, after);
      return;
    }
    planSlot(state, kind, next)
      .then(() => (kind === 'sync' ? requestDelivery(state) : undefined))
      .catch((err: unknown) =>
        state.logger.error({ err, kind, slot: next.toISOString() }, 'could not plan the slot'),
      )
      .finally(() => armPlanner(state, kind, schedule, next));
  }, wait);
  state.timers.add(timer);
}

/** Queues a delivery job (at `at`, or now) when alerts are delivered and the engine is not stopping. */
async function requestDelivery(state: EngineState, at?: Date): Promise<void> {
  if (state.options.deliverAlerts === undefined || state.draining) return;
  await state.boss.send(QUEUES.deliver, {}, at !== undefined ? { startAfter: at } : {});
}

/**
 * Lets this replica's workers of a queue fetch again at once instead of waiting out their poll
 * interval: a worker that just finished a job takes the next one straight away while the slot's
 * jobs last (pg-boss's burst modes need a batch or its cached counts; this needs neither).
 */
function wake(state: EngineState, kind: JobKind): void {
  for (const w of state.boss.getWipData()) if (w.name === QUEUES[kind]) state.boss.notifyWorker(w.id);
}

/** Whether a failed attempt can be tried again before the next slot of its kind begins. */
function retriesLeft(state: EngineState, kind: JobKind, job: JobWithMetadata<SlotJob>): boolean {
  const { tuning } = state;
  if (state.draining || job.retryCount >= tuning.retryLimit) return false;
  const nextSlot = nextSlotOf(state, kind, job.data.slot);
  const longestDelayMs = tuning.retryDelaySeconds * 1000 * 2 ** job.retryCount;
  return nextSlot === undefined || state.now() + longestDelayMs < nextSlot.getTime();
}

/** How a job ends: the outcome reported to `onJob`, and the status and output handed to pg-boss. */
export interface JobDecision {
  readonly outcome: JobEvent['outcome'];
  readonly status: JobResult['status'];
  readonly output: object;
}

/** What one attempt of a tenant's run gave: its summary, or what it threw. */
export type AttemptResult = { readonly summary: SyncRunSummary } | { readonly threw: unknown };

/**
 * How a job whose run was attempted ends. `retriesLeft` is asked only when the attempt did not
 * succeed (the attempt's own answer, decided once: the ledger and the job agree).
 */
export function decideJobOutcome(
  kind: JobKind,
  result: AttemptResult,
  retriesLeft: () => boolean,
): JobDecision {
  const failed = (output: object): JobDecision =>
    retriesLeft()
      ? { outcome: 'retry', status: 'failed', output }
      : { outcome: 'dead', status: 'deadletter', output };
  if ('threw' in result) return failed({ error: String(result.threw) });
  const { summary } = result;
  if (summary.alreadyDone === true) {
    // An earlier attempt's replica committed the run and died before closing the job.
    return { outcome: 'done', status: 'completed', output: { alreadyDone: summary.runId } };
  }
  if (summary.status === 'succeeded') {
    return { outcome: 'completed', status: 'completed', output: { runId: summary.runId } };
  }
  if (summary.status === 'skipped') {
    // Another process holds the tenant (a manual `govtrail sync`, a run of the other kind, the
    // retry of an earlier slot's job): try again later in the slot. A sync still locked out at the
    // end of its slot was covered by the holder; a reconcile that never got in is dead-lettered.
    if (retriesLeft()) return { outcome: 'retry', status: 'failed', output: { busy: true } };
    return kind === 'sync'
      ? { outcome: 'busy', status: 'completed', output: { busy: true } }
      : { outcome: 'dead', status: 'deadletter', output: { busy: true } };
  }
  // The ledger row of a failed attempt stays only when it is the last one (sync/execute-run.ts): the
  // failure is recorded once, and the job's last attempt goes to the dead-letter queue.
  return failed({ runId: summary.runId, error: summary.error?.code ?? null });
}

/** Runs one slot job: skips it when superseded or its tenant is gone, else attempts the run. */
async function runSlotJob(
  state: EngineState,
  kind: JobKind,
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
function slotAttempt(state: EngineState, kind: JobKind, job: JobWithMetadata<SlotJob>) {
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
  kind: JobKind,
  tenant: TenantConfig,
  job: JobWithMetadata<SlotJob>,
  attempt: ReturnType<typeof slotAttempt>,
): Promise<AttemptResult> {
  const signal = AbortSignal.any([state.abort.signal, job.signal]);
  let summary: SyncRunSummary;
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

/** Plans, once, the last reconcile slot for the tenants the ledger says missed it. */
async function catchUpReconcile(state: EngineState): Promise<void> {
  const { options } = state;
  const schedule = options.reconcileSchedule;
  if (schedule === undefined || options.missedReconciles === undefined) return;
  const slot = slotAtOrBefore(schedule, new Date(state.now()));
  if (slot === undefined) return;
  const tenants = await refreshTenants(state);
  const missed = new Set(
    await options.missedReconciles(
      slot,
      tenants.map((t) => t.name),
    ),
  );
  if (missed.size === 0) return;
  const jobs = tenants
    .filter((t) => missed.has(t.name))
    .map((t) => ({
      id: slotJobId('reconcile', t.name, slot),
      data: { tenant: t.name, slot: slot.toISOString() } satisfies SlotJob,
    }));
  const ids = await state.boss.insert(QUEUES.reconcile, jobs, { returnId: true });
  state.logger.info(
    { slot: slot.toISOString(), missed: missed.size, inserted: ids?.length ?? 0 },
    'reconcile slot missed while no worker ran: planned once',
  );
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

/** Queue counts (pg-boss's cached monitor counts, dead letters by source queue) and live replicas. */
async function engineStatus(state: EngineState): Promise<EngineStatus> {
  const { boss } = state;
  const queues = await boss.getQueues(Object.values(QUEUES));
  const counts = (name: string): QueueCounts => {
    const q = queues.find((x: QueueResult) => x.name === name);
    return {
      queued: q?.queuedCount ?? 0,
      active: q?.activeCount ?? 0,
      failed: q?.failedCount ?? 0,
      dead: 0,
    };
  };
  const alive = (await boss.getInstances()).filter((i) => i.live && i.stoppedOn === null).length;
  // The dead-letter queue is shared: its jobs are counted by the queue they failed on.
  const { rows } = await boss
    .getDb()
    .executeSql(
      `select source_name as name, count(*)::int as n from ${ENGINE_SCHEMA}.job where name = $1 group by source_name`,
      [QUEUES.dead],
    );
  const dead = (name: string): number =>
    Number((rows as Array<{ name: string | null; n: number }>).find((r) => r.name === name)?.n ?? 0);
  return {
    engine: 'pg-boss',
    schema: ENGINE_SCHEMA,
    running: state.started && !state.draining,
    queues: {
      sync: { ...counts(QUEUES.sync), dead: dead(QUEUES.sync) },
      reconcile: { ...counts(QUEUES.reconcile), dead: dead(QUEUES.reconcile) },
      deliver: { ...counts(QUEUES.deliver), dead: dead(QUEUES.deliver) },
    },
    replicasAlive: alive,
  };
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

/** govtrail's queues; createQueue keeps an existing one, so their options are brought up to date. */
async function createEngineQueues(boss: PgBoss, tuning: EngineTuning, embedded: boolean): Promise<void> {
  await boss.createQueue(QUEUES.dead, { deleteAfterSeconds: tuning.deadLetterDeleteAfterSeconds });
  const slotQueue = {
    retryLimit: tuning.retryLimit,
    retryDelay: tuning.retryDelaySeconds,
    retryBackoff: true,
    deleteAfterSeconds: tuning.deleteAfterSeconds,
    expireInSeconds: 24 * 3_600,
    deadLetter: QUEUES.dead,
    ...(embedded ? {} : { heartbeatSeconds: tuning.heartbeatSeconds }),
  };
  for (const kind of ['sync', 'reconcile'] as const) {
    await boss.createQueue(QUEUES[kind], slotQueue);
    // createQueue keeps an existing queue as it is: bring its options up to this replica's.
    const { retryLimit, retryDelay, retryBackoff, deleteAfterSeconds, expireInSeconds } = slotQueue;
    await boss.updateQueue(QUEUES[kind], {
      retryLimit,
      retryDelay,
      retryBackoff,
      deleteAfterSeconds,
      expireInSeconds,
      deadLetter: QUEUES.dead,
    });
  }
  await boss.createQueue(QUEUES.deliver, {
    policy: 'short',
    retryLimit: 0,
    deleteAfterSeconds: tuning.deleteAfterSeconds,
  });
}

/**
 * Creates or upgrades pg-boss's schema and govtrail's queues, as the schema owner (`govtrail
 * migrate`), and lets the writer role use them: a worker connected as a `govtrail_writer` login can
 * then start without any DDL (pg-boss finds its schema current and every queue present).
 */
export async function installEngine(url: string, grantTo: string | undefined): Promise<void> {
  const boss = new PgBoss({
    connectionString: url,
    max: 1,
    schema: ENGINE_SCHEMA,
    schedule: false,
    supervise: false,
  });
  // start() and the calls below reject on failure; the emitter's copy of the error adds nothing.
  boss.on('error', () => {});
  await boss.start();
  try {
    await createEngineQueues(boss, DEFAULT_TUNING, false);
    if (grantTo !== undefined) {
      const db = boss.getDb();
      for (const statement of [
        `grant usage on schema ${ENGINE_SCHEMA} to ${grantTo}`,
        `grant select, insert, update, delete on all tables in schema ${ENGINE_SCHEMA} to ${grantTo}`,
        `grant usage, select on all sequences in schema ${ENGINE_SCHEMA} to ${grantTo}`,
        `grant execute on all functions in schema ${ENGINE_SCHEMA} to ${grantTo}`,
      ])
        await db.executeSql(statement);
    }
  } finally {
    await boss.stop({ graceful: false });
  }
}

function connectionOptions(connection: EngineConnection): ConstructorParameters<typeof PgBoss>[0] & object {
  if (connection.kind === 'postgres') {
    return {
      connectionString: connection.url,
      max: connection.max ?? 4,
      ...(connection.applicationName !== undefined ? { application_name: connection.applicationName } : {}),
    };
  }
  return { db: fromPglite(connection.pglite), backend: 'pglite' };
}
