/**
 * The frame of a run in as few round trips as it can take (sync.md "One run"; scaling.md "Round
 * trips"): one call opens the run (lock, orphans, slot already done, checkpoint, newest stored
 * entries, ledger row: `govtrail.open_run`, sql/0040 and 0041), and one statement closes a run that found
 * nothing to write.
 */
import { sql } from 'kysely';
import type { Session } from '../database.js';
import type { Checkpoint } from '../read/checkpoint.js';
import type { StoredVersion } from '../read/stored-entries.js';
import { type RunKind, type RunTrigger, tenantLockKey } from './runs.js';

/** What a ledger row left `running` by a dead process is closed with. */
export const ORPHAN_MESSAGE =
  'the process running this run ended before it finished (killed or crashed); nothing it fetched was kept';

/** What `openRun` found. */
export type OpenedRun =
  | {
      /** Another session holds the tenant's lock; `runId`: the `skipped` row recorded, else 0. */
      readonly locked: false;
      readonly runId: number;
    }
  | {
      readonly locked: true;
      /** A succeeded run of the attempt's slot (nothing opened); undefined when none was asked or found. */
      readonly doneRunId: number | undefined;
      /** The ledger row opened (0 when the slot was done). */
      readonly runId: number;
      /** Rows left `running` by a dead process, closed as failed. */
      readonly orphans: number;
      readonly checkpoint: Checkpoint | undefined;
      /** Whether the tenant had a checkpoint or a succeeded run before this one. */
      readonly succeededBefore: boolean;
      /** The newest stored entries, newest first by (created_at, entry_id), with their versions. */
      readonly recent: OpenedRecent;
      /** The baseline the tenant's periods were judged by, and when it was last judged. */
      readonly judged: JudgedState;
    };

/** A tenant's newest stored entries, with their versions (undefined: stored without a content hash). */
export type OpenedRecent = ReadonlyArray<{
  readonly entryId: string;
  readonly version: StoredVersion | undefined;
}>;

/** The baseline a tenant's control periods were judged by (conformance.md), and when last. */
export interface JudgedState {
  readonly baseline: { readonly id: string; readonly sha256: string } | undefined;
  /** Nanosecond UTC key; undefined when never judged. */
  readonly atKey: string | undefined;
}

interface OpenRunRow {
  locked: boolean;
  opened_run_id: string | number | null;
  done_run_id: string | number | null;
  orphans: number;
  cp_entry_id: string | null;
  cp_created_at: Date | null;
  cp_created_at_key: string | null;
  cp_run_id: string | number | null;
  succeeded_before: boolean | null;
  recent: RecentJson | string | null;
  judged_baseline_id: string | null;
  judged_baseline_sha256: string | null;
  judged_at_key: string | null;
}

type RecentJson = Array<{ id: string; sha: string | null; served: string | null; run: number }>;

/**
 * Opens a run of `tenantId` in one round trip: takes the tenant's advisory lock (when another session
 * holds it, records a `skipped` row if `recordSkip`, and opens nothing); closes orphaned runs; with
 * `doneSlot`, returns the slot's succeeded run instead of opening another; reads the checkpoint and
 * the `recent` newest stored entries; inserts the `running` ledger row.
 */
export async function openRun(
  db: Session,
  o: {
    readonly tenantId: string;
    readonly trigger: RunTrigger;
    readonly kind: RunKind;
    readonly slot: Date | undefined;
    readonly doneSlot: boolean;
    readonly recordSkip: boolean;
    readonly recent: number;
  },
): Promise<OpenedRun> {
  const { rows } = await sql<OpenRunRow>`
    select * from govtrail.open_run(${o.tenantId}, ${tenantLockKey(o.tenantId)}::bigint, ${o.trigger},
      ${o.kind}, ${o.slot?.toISOString() ?? null}::timestamptz, ${o.doneSlot}, ${o.recordSkip},
      ${o.recent}::integer, ${ORPHAN_MESSAGE})`.execute(db);
  const r = rows[0];
  if (r === undefined) throw new Error('govtrail.open_run returned no row');
  if (!r.locked) return { locked: false, runId: Number(r.opened_run_id ?? 0) };
  const recent = typeof r.recent === 'string' ? (JSON.parse(r.recent) as RecentJson) : r.recent;
  return {
    locked: true,
    doneRunId: r.done_run_id === null ? undefined : Number(r.done_run_id),
    runId: Number(r.opened_run_id ?? 0),
    orphans: Number(r.orphans),
    checkpoint:
      r.cp_entry_id === null || r.cp_created_at === null || r.cp_created_at_key === null
        ? undefined
        : {
            entryId: r.cp_entry_id,
            createdAt: r.cp_created_at,
            createdAtKey: r.cp_created_at_key,
            runId: Number(r.cp_run_id),
          },
    succeededBefore: r.succeeded_before === true,
    judged: {
      baseline:
        r.judged_baseline_id === null || r.judged_baseline_sha256 === null
          ? undefined
          : { id: r.judged_baseline_id, sha256: r.judged_baseline_sha256 },
      atKey: r.judged_at_key ?? undefined,
    },
    recent: (recent ?? []).map((e) => ({
      entryId: e.id,
      // A row stored before content hashes (migration 0004) has none here: not comparable, so unknown.
      version:
        e.sha === null
          ? undefined
          : {
              contentHash: Buffer.from(e.sha, 'hex'),
              servedDigest: e.served ?? undefined,
              runId: Number(e.run),
            },
    })),
  };
}

/** What a run that found nothing to write records: its counts. */
export interface QuietOutcome {
  readonly pagesFetched: number;
  readonly entriesFetched: number;
  readonly httpRetries: number;
  /** The checkpoint, unchanged (its entry). */
  readonly checkpointEntryId: string;
  /** Rules whose unresolved alerts of the tenant are asked about (`openAlerts`). */
  readonly alertRules: readonly string[];
  /** The baseline the run judged the tenant by (nothing new to judge): recorded with the time. */
  readonly judged?: { readonly id: string; readonly sha256: string };
}

/**
 * Closes, in one statement, a sync that found nothing to write (sync.md "A run with nothing new"):
 * the checkpoint stays on its entry and records this run, the ledger row is closed as succeeded with
 * `stop_reason = checkpoint`, the judgement by an unchanged baseline is recorded (`judged`), and the
 * tenant's lock is released. Also tells whether the tenant has
 * an alert of `alertRules` that may be unresolved (its last event other than a note is not a
 * resolution), so that the caller needs no query of its own to find none.
 *
 * The lock is released inside the statement, before it commits. That is safe: the next holder's
 * `open_run` first updates the tenant's `running` ledger rows, which waits for this statement's row
 * lock on the run's own row, and everything it reads after that sees this commit.
 */
export async function closeQuietRun(
  db: Session,
  tenantId: string,
  runId: number,
  o: QuietOutcome,
): Promise<{ openAlerts: boolean }> {
  const { rows } = await sql<{ closed: number; open_alerts: boolean }>`
    with cp as (
      update govtrail.checkpoint set run_id = ${runId}, updated_at = now()
       where tenant_id = ${tenantId} and entry_id = ${o.checkpointEntryId}
      returning tenant_id),
    fin as (
      update govtrail.sync_run
         set status = 'succeeded', finished_at = clock_timestamp(), pages_fetched = ${o.pagesFetched},
             entries_fetched = ${o.entriesFetched}, entries_inserted = 0, entries_rejected = 0, warnings = 0,
             http_retries = ${o.httpRetries}, checkpoint_after = ${o.checkpointEntryId}, stop_reason = 'checkpoint',
             error_code = null, error_message = null, entries_changed = 0
       where run_id = ${runId} and exists (select 1 from cp)
      returning run_id)${
        o.judged === undefined
          ? sql``
          : sql`,
    judged as (
      update govtrail.tenant set baseline_id = ${o.judged.id}, baseline_sha256 = ${o.judged.sha256},
             baseline_judged_at = now()
       where tenant_id = ${tenantId} and exists (select 1 from fin)
      returning tenant_id)`
      }
    select (select count(*) from fin)::int as closed,
           exists (
             select 1 from govtrail.alert a
              where a.tenant_id = ${tenantId} and a.rule_id = any(${o.alertRules as string[]}::text[])
                and coalesce((select e.kind from govtrail.alert_event e
                               where e.alert_id = a.alert_id and e.kind <> 'noted'
                               order by e.event_id desc limit 1), '') <> 'resolved') as open_alerts,
           pg_advisory_unlock(${tenantLockKey(tenantId)}::bigint) as unlocked`.execute(db);
  const r = rows[0];
  if (r === undefined || r.closed !== 1) {
    throw new Error(`run ${runId}: the checkpoint of ${tenantId} moved while the run held its lock`);
  }
  return { openAlerts: r.open_alerts };
}
