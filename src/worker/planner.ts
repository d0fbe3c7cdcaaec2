/**
 * The planner of the job engine (docs/design/scaling.md): every replica plans each schedule slot
 * itself, at the slot's time: one job per tenant whose id is derived from (kind, tenant, slot), so
 * only the first replica's insert of a job wins. Also the catch-up of a reconcile slot missed while
 * no worker ran, the delivery jobs, and the wake-up of this replica's idle workers.
 *
 * pg-boss's own scheduler fires at most once a minute and has no seconds field, which
 * `GOVTRAIL_SCHEDULE` has: hence this planner, over cron-parser (slots.ts).
 */ import type { TenantConfig } from '../config/settings.js';
import type { RunKind } from '../store/write/runs.js';
import { type EngineState, QUEUES, type SlotJob } from './engine-setup.js';
import { slotAfter, slotAtOrBefore, slotJobId, spreadOffsetMs } from './slots.js';

const MAX_TIMER_MS = 6 * 3_600_000;
const INSERT_CHUNK = 500;

export function scheduleOf(state: EngineState, kind: RunKind): string | undefined {
  return kind === 'sync' ? state.options.schedule : state.options.reconcileSchedule;
}

/** The slot after `slot` in the schedule of its kind (undefined: none, or the kind is off); cached. */
export function nextSlotOf(state: EngineState, kind: RunKind, slot: string): Date | undefined {
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
export async function refreshTenants(state: EngineState): Promise<readonly TenantConfig[]> {
  const list = await state.options.tenants();
  state.roster = new Map(list.map((t) => [t.name, t]));
  return list;
}

export async function findTenant(state: EngineState, name: string): Promise<TenantConfig | undefined> {
  return state.roster.get(name) ?? (await refreshTenants(state)).find((t) => t.name === name);
}

/** Inserts one job per tenant for a slot (ids derived from kind, tenant and slot); resolves how many were new. */
export async function planSlot(state: EngineState, kind: RunKind, slot: Date): Promise<number> {
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
export function armPlanner(state: EngineState, kind: RunKind, schedule: string, after: Date): void {
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
export async function requestDelivery(state: EngineState, at?: Date): Promise<void> {
  if (state.options.deliverAlerts === undefined || state.draining) return;
  await state.boss.send(QUEUES.deliver, {}, at !== undefined ? { startAfter: at } : {});
}

/**
 * Lets this replica's workers of a queue fetch again at once instead of waiting out their poll
 * interval: a worker that just finished a job takes the next one straight away while the slot's
 * jobs last (pg-boss's burst modes need a batch or its cached counts; this needs neither).
 */
export function wake(state: EngineState, kind: RunKind): void {
  for (const w of state.boss.getWipData()) if (w.name === QUEUES[kind]) state.boss.notifyWorker(w.id);
}

/** Plans, once, the last reconcile slot for the tenants the ledger says missed it. */
export async function catchUpReconcile(state: EngineState): Promise<void> {
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
