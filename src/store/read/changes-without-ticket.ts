/**
 * The view changes_without_ticket: the entries of a period made without a TICKET annotation.
 * Read by the evidence pack inside its one read-only snapshot transaction; walked in keyset
 * pages in a stable order, so a period of any length holds one page in memory.
 */
import { sql } from 'kysely';
import type { Session } from '../database.js';
import type { PeriodFilter } from './period.js';

export interface UnticketedEntry {
  readonly changedAt: Date;
  readonly changedAtText: string;
  readonly entryId: string;
  readonly changeKind: string | null;
  readonly actorKind: string | null;
  readonly actorUserId: string | null;
  readonly fields: string[];
  readonly reasons: string[];
  readonly syslogEventId: string | null;
  readonly traceId: string | null;
}

/** changes_without_ticket rows of the period, oldest first by (changed_at, entry_id). */
export async function* iterateChangesWithoutTicket(
  db: Session,
  filter: PeriodFilter,
  pageSize = 2000,
): AsyncGenerator<UnticketedEntry> {
  let after: { key: string; entryId: string } | undefined;
  for (;;) {
    const { rows } = await sql<{
      changed_at: Date;
      changed_at_key: string;
      created_at_text: string | null;
      entry_id: string;
      change_kind: string | null;
      actor_kind: string | null;
      actor_user_id: string | null;
      fields: string[] | null;
      reasons: string[] | null;
      syslog_event_id: string | null;
      trace_id: string | null;
    }>`
      select w.changed_at, w.changed_at::text as changed_at_key, e.created_at_text, w.entry_id, w.change_kind,
             w.actor_kind, w.actor_user_id, w.fields, w.reasons, w.syslog_event_id, w.trace_id
      from govtrail.changes_without_ticket w
      join govtrail.history_entry e on e.tenant_id = w.tenant_id and e.entry_id = w.entry_id
      where w.tenant_id = ${filter.tenantId}
        and w.changed_at >= ${filter.from} and w.changed_at < ${filter.to}
        and (${after?.key ?? null}::timestamptz is null or w.changed_at >= ${after?.key ?? null}::timestamptz)
        and (${after?.key ?? null}::timestamptz is null
             or (w.changed_at, w.entry_id) > (${after?.key ?? null}::timestamptz, ${after?.entryId ?? null}::text collate "C"))
      order by w.changed_at, w.entry_id
      limit ${pageSize}`.execute(db);
    for (const r of rows)
      yield {
        changedAt: r.changed_at,
        changedAtText: r.created_at_text ?? r.changed_at.toISOString(),
        entryId: r.entry_id,
        changeKind: r.change_kind,
        actorKind: r.actor_kind,
        actorUserId: r.actor_user_id,
        fields: r.fields ?? [],
        reasons: r.reasons ?? [],
        syslogEventId: r.syslog_event_id,
        traceId: r.trace_id,
      };
    const last = rows.at(-1);
    if (rows.length < pageSize || last === undefined) return;
    after = { key: last.changed_at_key, entryId: last.entry_id };
  }
}
