/**
 * The maintained periods of every control (control_period), the baseline they were judged by and
 * the record of checks (baseline_check), as the conformance commands and the judge read them.
 */
import { type Selectable, sql } from 'kysely';
import type { ControlPeriod, Status } from '../../core/conformance/judge.js';
import type { Session } from '../database.js';
import type { ControlPeriodTable } from '../schema.js';

/** The baseline a tenant's stored periods were judged by; undefined when it has none. */
export async function judgedBaselineOf(
  db: Session,
  tenantId: string,
): Promise<{ readonly id: string; readonly sha256: string } | undefined> {
  const { rows } = await sql<{ baseline_id: string; baseline_sha256: string }>`
    select baseline_id, baseline_sha256 from govtrail.control_period where tenant_id = ${tenantId} limit 1`.execute(
    db,
  );
  const r = rows[0];
  return r === undefined ? undefined : { id: r.baseline_id, sha256: r.baseline_sha256 };
}

/** The columns of control_period (store/schema.ts) a ControlPeriod is made of; status as stored. */
type PeriodRow = Pick<
  Selectable<ControlPeriodTable>,
  | 'control_id'
  | 'valid_from_key'
  | 'valid_to_key'
  | 'entry_id'
  | 'actor_kind'
  | 'actor_user_id'
  | 'ticket'
  | 'value'
> & { status: Exclude<Status, 'unknown'> };

function toPeriod(r: PeriodRow): ControlPeriod {
  return {
    controlId: r.control_id,
    status: r.status,
    fromKey: r.valid_from_key,
    toKey: r.valid_to_key,
    entryId: r.entry_id,
    actorKind: r.actor_kind,
    actorUserId: r.actor_user_id,
    ticket: r.ticket,
    value: r.value,
  };
}

/**
 * Per control, the last stored period that began before `key`: what a judgement from `key`
 * continues. One index probe per control, whatever the length of the history.
 */
export async function periodsBefore(
  db: Session,
  tenantId: string,
  controlIds: readonly string[],
  key: string,
): Promise<Map<string, ControlPeriod>> {
  if (controlIds.length === 0) return new Map();
  const { rows } = await sql<PeriodRow>`
    select p.* from unnest(${[...controlIds]}::text[]) as c(id)
    cross join lateral (
      select control_id, status, valid_from_key, valid_to_key, entry_id, actor_kind, actor_user_id, ticket, value
      from govtrail.control_period
      where tenant_id = ${tenantId} and control_id = c.id and valid_from_key < ${key}
      order by valid_from_key desc limit 1) p`.execute(db);
  return new Map(rows.map((r) => [r.control_id, toPeriod(r)]));
}

/** The stored periods of a tenant that overlap [fromKey, toKey) (all when both are null), in control then time order. */
export async function readControlPeriods(
  db: Session,
  tenantId: string,
  fromKey: string | null = null,
  toKey: string | null = null,
): Promise<ControlPeriod[]> {
  const { rows } = await sql<PeriodRow>`
    select control_id, status, valid_from_key, valid_to_key, entry_id, actor_kind, actor_user_id, ticket, value
    from govtrail.control_period
    where tenant_id = ${tenantId}
      and (${toKey}::text is null or valid_from_key < ${toKey})
      and (${fromKey}::text is null or valid_to_key is null or valid_to_key > ${fromKey})
    order by control_id, valid_from_key`.execute(db);
  return rows.map(toPeriod);
}

/** The periods of every tenant, grouped by tenant: for tests and the evidence pack. */
export async function readAllControlPeriods(db: Session): Promise<Map<string, ControlPeriod[]>> {
  const { rows } = await sql<PeriodRow & { tenant_id: string }>`
    select tenant_id, control_id, status, valid_from_key, valid_to_key, entry_id, actor_kind, actor_user_id, ticket, value
    from govtrail.control_period order by tenant_id, control_id, valid_from_key`.execute(db);
  const out = new Map<string, ControlPeriod[]>();
  for (const r of rows) out.set(r.tenant_id, [...(out.get(r.tenant_id) ?? []), toPeriod(r)]);
  return out;
}

/** The statuses the previous `baseline check` of this tenant and baseline saw; undefined for the first. */
export async function previousCheck(
  db: Session,
  tenantId: string,
  baselineId: string,
): Promise<Readonly<Record<string, Status>> | undefined> {
  const { rows } = await sql<{ statuses: Record<string, Status> }>`
    select statuses from govtrail.baseline_check where tenant_id = ${tenantId} and baseline_id = ${baselineId}
    order by check_id desc limit 1`.execute(db);
  return rows[0]?.statuses;
}

/** Per control, the stored period in force at `key`: one index probe per control. */
export async function periodsInForce(
  db: Session,
  tenantId: string,
  controlIds: readonly string[],
  key: string,
): Promise<Map<string, ControlPeriod>> {
  if (controlIds.length === 0) return new Map();
  const { rows } = await sql<PeriodRow>`
    select p.* from unnest(${[...controlIds]}::text[]) as c(id)
    cross join lateral (
      select control_id, status, valid_from_key, valid_to_key, entry_id, actor_kind, actor_user_id, ticket, value
      from govtrail.control_period
      where tenant_id = ${tenantId} and control_id = c.id and valid_from_key <= ${key}
      order by valid_from_key desc limit 1) p
    where p.valid_to_key is null or p.valid_to_key > ${key}`.execute(db);
  return new Map(rows.map((r) => [r.control_id, toPeriod(r)]));
}

/** Periods opened by no entry (an exception's approval or expiry) that begin in (afterKey, uptoKey]. */
export async function periodsOpenedWithoutEntry(
  db: Session,
  tenantId: string,
  afterKey: string,
  uptoKey: string,
): Promise<ControlPeriod[]> {
  const { rows } = await sql<PeriodRow>`
    select control_id, status, valid_from_key, valid_to_key, entry_id, actor_kind, actor_user_id, ticket, value
    from govtrail.control_period
    where tenant_id = ${tenantId} and valid_from_key > ${afterKey} and valid_from_key <= ${uptoKey} and entry_id is null
    order by control_id, valid_from_key`.execute(db);
  return rows.map(toPeriod);
}
