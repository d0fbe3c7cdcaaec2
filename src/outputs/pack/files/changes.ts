/** changes.csv: the evidence export's rows and cells, to the letter (`govtrail export evidence`). */
import { iterateChanges } from '../../../store/read/views.js';
import { EVIDENCE_HEADER, evidenceCells } from '../../evidence/evidence.js';
import { type PackDataFile, writeCsv } from './pack-file.js';

export const CHANGES: PackDataFile = {
  name: 'changes.csv',
  header: EVIDENCE_HEADER,
  write: ({ db, dir, o, progress }) => {
    progress('changes.csv', 0);
    return writeCsv(
      dir,
      'changes.csv',
      EVIDENCE_HEADER,
      async (row) => {
        for await (const c of iterateChanges(
          db,
          { tenantId: o.tenantId, since: o.from, until: o.to },
          o.pageSize,
        )) {
          await row(evidenceCells(c));
        }
      },
      progress,
    );
  },
};
