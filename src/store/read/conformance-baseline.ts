/**
 * The baseline a tenant's stored control periods were judged by, with its exact text
 * (baseline_text), for the outputs that report on those periods: `export oscal`, `export ocsf
 * --kind compliance`, the evidence pack's conformance/ folder, the report and the demo. They judge
 * nothing: they say what the periods say, under the policy that produced them.
 */
import { sql } from 'kysely';
import type { Session } from '../database.js';

export interface JudgingBaseline {
  readonly tenantId: string;
  readonly id: string;
  readonly sha256: string;
  readonly text: string;
  /** When this text was first loaded, as a nanosecond key (the approval time of an exception without one). */
  readonly firstLoadedKey: string;
  readonly firstLoadedAt: Date;
}

/**
 * The baseline that judged the tenant's stored periods (the registry's tenant.baseline_*, else the
 * periods' own baseline columns); undefined when no baseline has judged it.
 */
export async function findJudgingBaseline(
  db: Session,
  tenantId: string,
): Promise<JudgingBaseline | undefined> {
  const { rows } = await sql<{
    baseline_id: string;
    sha256: string;
    text: string;
    first_loaded_key: string;
    first_loaded_at: Date;
  }>`
    with judged as (
      (select baseline_id, baseline_sha256 from govtrail.tenant
       where tenant_id = ${tenantId} and baseline_id is not null)
      union all
      (select baseline_id, baseline_sha256 from govtrail.control_period where tenant_id = ${tenantId} limit 1)
    )
    select b.baseline_id, b.sha256, b.text, b.first_loaded_at,
           to_char(b.first_loaded_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US') || '000Z' as first_loaded_key
    from (select * from judged limit 1) j
    join govtrail.baseline_text b on b.baseline_id = j.baseline_id and b.sha256 = j.baseline_sha256`.execute(
    db,
  );
  const r = rows[0];
  if (r === undefined) return undefined;
  return {
    tenantId,
    id: r.baseline_id,
    sha256: r.sha256,
    text: r.text,
    firstLoadedKey: r.first_loaded_key,
    firstLoadedAt: r.first_loaded_at,
  };
}

/** The tenants some baseline has judged (they have control periods), by name. */
export async function listJudgedTenants(db: Session): Promise<string[]> {
  const { rows } = await sql<{ tenant_id: string }>`
    select distinct tenant_id from govtrail.control_period order by tenant_id`.execute(db);
  return rows.map((r) => r.tenant_id);
}
