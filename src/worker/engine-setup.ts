/**
 * The job engine's set-up (docs/design/scaling.md): its options and timings, pg-boss constructed over
 * the govtrail database (schema `govtrail_boss`) on a server or the embedded database, govtrail's
 * queues created and brought up to date (`govtrail migrate` installs them), the state one engine
 * holds between its steps, and its status for /healthz and /metrics.
 */
import { fromPglite, type PGliteLike, PgBoss, type QueueResult } from 'pg-boss';
import type { DeliverySummary } from '../alerts/deliver.js';
import type { TenantConfig } from '../config/settings.js';
import type { Logger } from '../runtime/logger.js';
import { countDeadLetters, engineGrants } from '../store/job-queue.js';
import type { RunKind } from '../store/write/runs.js';
import type { EngineAttempt, RunSummary } from '../sync/run-types.js';

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
export interface SlotJob {
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
    kind: RunKind,
    tenant: TenantConfig,
    signal: AbortSignal,
    /** Every field set: a job always has a slot, and knows whether it is a retry. */
    attempt: Required<EngineAttempt>,
  ) => Promise<RunSummary>;
  /** Delivers due alerts; resolves when the next pending one is due (undefined: none). */
  readonly deliverAlerts?: (signal: AbortSignal) => Promise<{ summary: DeliverySummary; nextDue?: Date }>;
  /**
   * The tenants among `tenants` whose reconcile of `slot` was missed (no reconcile started since the
   * slot, though the tenant was known before it): read from the run ledger at start.
   */
  readonly missedReconciles?: (slot: Date, tenants: readonly string[]) => Promise<readonly string[]>;
  readonly onRun?: (summary: RunSummary) => void;
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

/**
 * What one engine holds between its steps: its options, pg-boss, and the state of its timers, jobs
 * and caches. Created once by `createEngine`; the functions below are its steps.
 */
export interface EngineState {
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

/** The engine's state before `start`: pg-boss constructed (not connected), no timer, no job. */
export function newEngineState(options: EngineOptions): EngineState {
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

/** Queue counts (pg-boss's cached monitor counts, dead letters by source queue) and live replicas. */
export async function engineStatus(state: EngineState): Promise<EngineStatus> {
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
  const dead = await countDeadLetters(boss.getDb(), ENGINE_SCHEMA, QUEUES.dead);
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

/** govtrail's queues; createQueue keeps an existing one, so their options are brought up to date. */
export async function createEngineQueues(
  boss: PgBoss,
  tuning: EngineTuning,
  embedded: boolean,
): Promise<void> {
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
      for (const statement of engineGrants(ENGINE_SCHEMA, grantTo)) await db.executeSql(statement);
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
