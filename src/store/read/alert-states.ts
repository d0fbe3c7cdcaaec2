/** Alerts by handling state (view alert_state), for `alerts list --status`. */
import { sql } from 'kysely';
import type { Severity } from '../../core/alert.js';
import type { AlertState } from '../../core/alert-lifecycle.js';
import type { Session } from '../database.js';

/** One row of `alerts list --status`: the alert and its handling (alert_state). */
export interface AlertStateRow {
  readonly alertId: string;
  readonly tenantId: string;
  readonly ruleId: string;
  readonly severity: Severity;
  readonly title: string;
  readonly createdAt: Date;
  readonly state: AlertState;
  readonly assignee: string | null;
  readonly acknowledgedBy: string | null;
  readonly acknowledgedAt: Date | null;
  readonly resolvedBy: string | null;
  readonly resolvedAt: Date | null;
  readonly resolvedNote: string | null;
  readonly snoozedUntil: Date | null;
  readonly repeats: number;
}

/** Alerts by handling state, newest first. */
export async function findAlertStates(
  db: Session,
  o: {
    readonly states?: readonly AlertState[] | undefined;
    readonly assignee?: string | undefined;
    readonly tenantId?: string | undefined;
    readonly limit: number;
  },
): Promise<AlertStateRow[]> {
  const { rows } = await sql<{
    alert_id: string;
    tenant_id: string;
    rule_id: string;
    severity: Severity;
    title: string;
    created_at: Date;
    state: AlertState;
    assignee: string | null;
    acknowledged_by: string | null;
    acknowledged_at: Date | null;
    resolved_by: string | null;
    resolved_at: Date | null;
    resolved_note: string | null;
    snoozed_until: Date | null;
    repeats: number;
  }>`
    select alert_id::text, tenant_id, rule_id, severity, title, created_at, state, assignee, acknowledged_by,
           acknowledged_at, resolved_by, resolved_at, resolved_note, snoozed_until, repeats
    from govtrail.alert_state
    where (${o.states ?? null}::text[] is null or state = any(${o.states ?? null}::text[]))
      and (${o.assignee ?? null}::text is null or assignee = ${o.assignee ?? null})
      and (${o.tenantId ?? null}::text is null or tenant_id = ${o.tenantId ?? null})
    order by created_at desc, alert_id desc
    limit ${o.limit}`.execute(db);
  return rows.map((r) => ({
    alertId: r.alert_id,
    tenantId: r.tenant_id,
    ruleId: r.rule_id,
    severity: r.severity,
    title: r.title,
    createdAt: r.created_at,
    state: r.state,
    assignee: r.assignee,
    acknowledgedBy: r.acknowledged_by,
    acknowledgedAt: r.acknowledged_at,
    resolvedBy: r.resolved_by,
    resolvedAt: r.resolved_at,
    resolvedNote: r.resolved_note,
    snoozedUntil: r.snoozed_until,
    repeats: r.repeats,
  }));
}
