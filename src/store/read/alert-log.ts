/**
 * The view alert_log: the alerts of a period with their delivery status per sink.
 * Read by the evidence pack inside its one read-only snapshot transaction; walked in keyset
 * pages in a stable order, so a period of any length holds one page in memory.
 */
import { sql } from 'kysely';
import type { Session } from '../database.js';
import type { PeriodFilter } from './period.js';

export interface PackAlert {
  readonly alertId: number;
  readonly createdAt: Date;
  /** The time of the change it is about; null for an alert without an entry. */
  readonly changedAt: Date | null;
  readonly entryId: string | null;
  readonly ruleId: string;
  readonly ruleVersion: number;
  readonly severity: string;
  readonly title: string;
  readonly summary: string;
  readonly deliveryStatus: string;
  readonly deliveredSinks: string[];
  readonly pendingSinks: string[];
  readonly failedSinks: string[];
  readonly lastDeliveredAt: Date | null;
}

/**
 * alert_log rows about the period: the change's time in [from, to), or for an alert without an
 * entry its creation time (as the report counts them). Oldest first, by that time and alert id.
 */
export async function* iterateAlerts(
  db: Session,
  filter: PeriodFilter,
  pageSize = 2000,
): AsyncGenerator<PackAlert> {
  let after: { key: string; alertId: number } | undefined;
  for (;;) {
    const { rows } = await sql<{
      alert_id: number | string;
      created_at: Date;
      changed_at: Date | null;
      at_key: string;
      entry_id: string | null;
      rule_id: string;
      rule_version: number;
      severity: string;
      title: string;
      summary: string;
      delivery_status: string;
      delivered_sinks: string[] | null;
      pending_sinks: string[] | null;
      failed_sinks: string[] | null;
      last_delivered_at: Date | null;
    }>`
      select l.alert_id, l.created_at, l.changed_at, coalesce(l.changed_at, l.created_at)::text as at_key,
             l.entry_id, l.rule_id, l.rule_version, l.severity, l.title, l.summary, l.delivery_status,
             l.delivered_sinks, l.pending_sinks, l.failed_sinks, l.last_delivered_at
      from govtrail.alert_log l
      where l.tenant_id = ${filter.tenantId}
        and coalesce(l.changed_at, l.created_at) >= ${filter.from}
        and coalesce(l.changed_at, l.created_at) < ${filter.to}
        and (${after?.key ?? null}::timestamptz is null
             or (coalesce(l.changed_at, l.created_at), l.alert_id) > (${after?.key ?? null}::timestamptz, ${after?.alertId ?? null}::bigint))
      order by coalesce(l.changed_at, l.created_at), l.alert_id
      limit ${pageSize}`.execute(db);
    for (const r of rows)
      yield {
        alertId: Number(r.alert_id),
        createdAt: r.created_at,
        changedAt: r.changed_at,
        entryId: r.entry_id,
        ruleId: r.rule_id,
        ruleVersion: r.rule_version,
        severity: r.severity,
        title: r.title,
        summary: r.summary,
        deliveryStatus: r.delivery_status,
        deliveredSinks: r.delivered_sinks ?? [],
        pendingSinks: r.pending_sinks ?? [],
        failedSinks: r.failed_sinks ?? [],
        lastDeliveredAt: r.last_delivered_at,
      };
    const last = rows.at(-1);
    if (rows.length < pageSize || last === undefined) return;
    after = { key: last.at_key, alertId: Number(last.alert_id) };
  }
}
