/**
 * Fleet tests' shared pieces: many tenant names over one sandbox, engine timings short enough for a
 * test, and the run ledger read per schedule slot.
 */
import { sql } from 'kysely';
import type { TenantConfig } from '../../src/config/settings.js';
import type { Sandbox } from '../../src/sandbox/index.js';
import type { Session } from '../../src/store/database.js';
import type { EngineTuning } from '../../src/worker/engine-setup.js';

/** Engine timings of the tests: quick polls and retries, the shortest heartbeat pg-boss allows. */
export const FAST_ENGINE: Partial<EngineTuning> = {
  pollingIntervalSeconds: 0.5,
  superviseIntervalSeconds: 2,
  heartbeatSeconds: 10,
  retryDelaySeconds: 1,
};

/** `count` tenants named `prefix-0…`, all served by one sandbox. */
export function sandboxTenants(sandbox: Sandbox, count: number, prefix = 't'): TenantConfig[] {
  return Array.from({ length: count }, (_, i) => ({
    name: `${prefix}-${String(i).padStart(4, '0')}`,
    baseUrl: sandbox.baseUrl,
    clientId: sandbox.credentials.secret.clientId,
    clientSecret: sandbox.credentials.secret.clientSecret,
    pageSize: 100,
    lookbackMs: 15 * 60_000,
  }));
}

/** The same tenants as a YAML configuration file's text. */
export function tenantsYaml(tenants: readonly TenantConfig[]): string {
  const lines = ['tenants:'];
  for (const t of tenants) {
    lines.push(`  - name: ${t.name}`);
    lines.push(`    base_url: ${t.baseUrl}`);
    lines.push(`    client_id: ${t.clientId}`);
    lines.push(`    client_secret: ${t.clientSecret}`);
  }
  return `${lines.join('\n')}\n`;
}

export interface LedgerRow {
  readonly tenant: string;
  readonly status: string;
  readonly startedAt: Date;
  readonly errorCode: string | null;
  /** The schedule slot the run started in (ISO). */
  readonly slot: string;
}

/** Every scheduled run of a kind, with the slot it ran for (the ledger's `slot`). */
export async function ledgerBySlot(db: Session, kind = 'sync'): Promise<LedgerRow[]> {
  const { rows } = await sql<{
    tenant_id: string;
    status: string;
    started_at: Date;
    error_code: string | null;
    slot: Date | null;
  }>`
    select tenant_id, status, started_at, error_code, slot from govtrail.sync_run
     where trigger = 'schedule' and kind = ${kind} order by run_id`.execute(db);
  return rows.map((r) => ({
    tenant: r.tenant_id,
    status: r.status,
    startedAt: new Date(r.started_at),
    errorCode: r.error_code,
    slot: r.slot === null ? 'none' : new Date(r.slot).toISOString(),
  }));
}

/** Runs per (tenant, slot): the largest count, and the slots in which every tenant ran. */
export function slotTally(
  rows: readonly LedgerRow[],
  tenants: readonly string[],
): { maxPerTenantSlot: number; completeSlots: string[]; perSlot: Map<string, Set<string>> } {
  const counts = new Map<string, number>();
  const perSlot = new Map<string, Set<string>>();
  for (const r of rows) {
    if (r.status === 'skipped') continue;
    const key = `${r.tenant}@${r.slot}`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
    const set = perSlot.get(r.slot) ?? new Set<string>();
    set.add(r.tenant);
    perSlot.set(r.slot, set);
  }
  const completeSlots = [...perSlot.entries()]
    .filter(([, set]) => tenants.every((t) => set.has(t)))
    .map(([slot]) => slot)
    .sort();
  return { maxPerTenantSlot: Math.max(0, ...counts.values()), completeSlots, perSlot };
}

/**
 * Plans a slot of a kind at the current time on a started worker and waits until every tenant's run
 * for it is finished in the ledger (one row each: give the worker no retries).
 */
export async function runSlotNow(
  worker: { planSlot(kind: 'sync' | 'reconcile', slot: Date): Promise<number> },
  db: Session,
  kind: 'sync' | 'reconcile',
  tenants: number,
  timeoutMs = 60_000,
): Promise<Date> {
  const slot = new Date();
  await worker.planSlot(kind, slot);
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { rows } = await sql<{ n: number }>`
      select count(*)::int as n from govtrail.sync_run
       where slot = ${slot.toISOString()}::timestamptz and kind = ${kind} and status <> 'running'`.execute(
      db,
    );
    if ((rows[0]?.n ?? 0) >= tenants) return slot;
    if (Date.now() > deadline) throw new Error(`slot ${slot.toISOString()} not finished in ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 200));
  }
}
