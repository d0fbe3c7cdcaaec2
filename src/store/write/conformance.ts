/**
 * The writes of conformance (docs/design/conformance.md): the baseline texts, which baseline judges
 * each tenant, the maintained periods of every control (control_period) and the record of checks.
 * Their reads: store/read/control-periods.ts and store/read/conformance-history.ts.
 */
import { sql } from 'kysely';
import type { Baseline } from '../../core/conformance/baseline.js';
import type { ControlPeriod, Status } from '../../core/conformance/judge.js';
import { toJsonbText } from '../../core/normalise/canonical.js';
import type { Session } from '../database.js';
import { CHUNK, UTC_KEY } from '../read/conformance-history.js';

/**
 * Keeps the baseline's text (once per id and sha256; the first load's time stays) and returns when
 * it was first loaded, as a nanosecond key: the approval time of an exception that gives none.
 */
export async function recordBaselineText(
  db: Session,
  baseline: Baseline,
): Promise<{ firstLoadedKey: string }> {
  await sql`insert into govtrail.baseline_text (baseline_id, sha256, text)
            values (${baseline.id}, ${baseline.sha256}, ${baseline.text})
            on conflict (baseline_id, sha256) do nothing`.execute(db);
  const { rows } = await sql<{ key: string }>`
    select ${UTC_KEY('first_loaded_at')} as key from govtrail.baseline_text
    where baseline_id = ${baseline.id} and sha256 = ${baseline.sha256}`.execute(db);
  return { firstLoadedKey: (rows[0] as { key: string }).key };
}

/** Records in the registry which baseline judged the tenant (a tenant not registered is left out). */
export async function setTenantBaseline(db: Session, tenantId: string, baseline: Baseline): Promise<void> {
  await sql`update govtrail.tenant
            set baseline_id = ${baseline.id}, baseline_sha256 = ${baseline.sha256}, baseline_judged_at = now()
            where tenant_id = ${tenantId}`.execute(db);
}

/**
 * Replaces the tenant's periods from `fromKey` on (all of them when null) with a fresh judgement:
 * deletes the stored rows that begin at or after it, rewrites the ends of `rewrite` (by control
 * and start), and inserts `insert`. Runs in the caller's transaction.
 */
export async function replaceControlPeriods(
  db: Session,
  tenantId: string,
  baseline: Pick<Baseline, 'id' | 'sha256'>,
  fromKey: string | null,
  rewrite: readonly ControlPeriod[],
  insert: readonly ControlPeriod[],
): Promise<void> {
  if (fromKey === null)
    await sql`delete from govtrail.control_period where tenant_id = ${tenantId}`.execute(db);
  else
    await sql`delete from govtrail.control_period where tenant_id = ${tenantId} and valid_from_key >= ${fromKey}`.execute(
      db,
    );
  for (const p of rewrite) {
    await sql`update govtrail.control_period
              set valid_to_key = ${p.toKey}, valid_to = ${p.toKey}::timestamptz
              where tenant_id = ${tenantId} and control_id = ${p.controlId} and valid_from_key = ${p.fromKey}`.execute(
      db,
    );
  }
  for (let i = 0; i < insert.length; i += CHUNK) {
    const part = insert.slice(i, i + CHUNK);
    await sql`
      insert into govtrail.control_period
        (tenant_id, baseline_id, baseline_sha256, control_id, status, valid_from, valid_to, valid_from_key,
         valid_to_key, entry_id, actor_kind, actor_user_id, ticket, value)
      select ${tenantId}, ${baseline.id}, ${baseline.sha256}, p.control_id, p.status, p.from_key::timestamptz,
             p.to_key::timestamptz, p.from_key, p.to_key, p.entry_id, p.actor_kind, p.actor_user_id, p.ticket,
             p.value::jsonb
      from unnest(${part.map((p) => p.controlId)}::text[], ${part.map((p) => p.status)}::text[],
                  ${part.map((p) => p.fromKey)}::text[], ${part.map((p) => p.toKey)}::text[],
                  ${part.map((p) => p.entryId)}::text[], ${part.map((p) => p.actorKind)}::text[],
                  ${part.map((p) => p.actorUserId)}::text[], ${part.map((p) => p.ticket)}::text[],
                  ${part.map((p) => (p.status === 'deleted' ? null : toJsonbText(p.value)))}::text[])
           as p(control_id, status, from_key, to_key, entry_id, actor_kind, actor_user_id, ticket, value)`.execute(
      db,
    );
  }
}

/** Records what a `baseline check` saw, for the next one to compare with. */
export async function recordCheck(
  db: Session,
  tenantId: string,
  baseline: Pick<Baseline, 'id' | 'sha256'>,
  statuses: Readonly<Record<string, Status>>,
): Promise<void> {
  await sql`insert into govtrail.baseline_check (tenant_id, baseline_id, baseline_sha256, statuses)
            values (${tenantId}, ${baseline.id}, ${baseline.sha256}, ${toJsonbText(statuses)}::jsonb)`.execute(
    db,
  );
}
