/** changes-without-ticket.csv: the entries of the period made without a ticket (view changes_without_ticket). */
import { shortEnum } from '../../../core/format.js';
import { iterateChangesWithoutTicket } from '../../../store/read/changes-without-ticket.js';
import { type PackDataFile, writeCsv } from './pack-file.js';

const HEADER = [
  'tenant',
  'changed_at',
  'actor_kind',
  'actor_user_id',
  'change_kind',
  'fields',
  'reasons',
  'entry_id',
  'syslog_event_id',
  'trace_id',
] as const;

export const CHANGES_WITHOUT_TICKET: PackDataFile = {
  name: 'changes-without-ticket.csv',
  header: HEADER,
  write: ({ db, dir, o, period, progress }) =>
    writeCsv(
      dir,
      'changes-without-ticket.csv',
      HEADER,
      async (row) => {
        for await (const e of iterateChangesWithoutTicket(db, period, o.pageSize)) {
          await row([
            o.tenantId,
            e.changedAtText,
            e.actorKind === null ? '' : shortEnum(e.actorKind),
            e.actorUserId ?? '',
            e.changeKind === null ? '' : shortEnum(e.changeKind),
            e.fields.join('; '),
            e.reasons.join('; '),
            e.entryId,
            e.syslogEventId ?? '',
            e.traceId ?? '',
          ]);
        }
      },
      progress,
    ),
};
