/** settings-at-start.json and settings-at-end.json: the settings in force at each end of the period. */
import { findSettingsInForce, type TimelineEntry } from '../../../store/read/settings-timeline.js';
import type { EvidencePackOptions } from '../pack-options.js';
import { writeWholeFile } from '../writer.js';
import type { PackDataFile } from './pack-file.js';

/** The settings in force at one end of the period (`justBefore`: the last instant before `at`). */
function settingsAt(
  name: string,
  at: (o: EvidencePackOptions) => Date,
  justBefore: boolean,
  meaning: string,
): PackDataFile {
  return {
    name,
    write: async ({ db, dir, o }) => {
      const row = await findSettingsInForce(db, o.tenantId, at(o), justBefore);
      return writeWholeFile(dir, name, settingsJson(o.tenantId, at(o), meaning, row), settingsCount(row));
    },
  };
}

export const SETTINGS_AT_START = settingsAt(
  'settings-at-start.json',
  (o) => o.from,
  false,
  'the settings in force at the first instant of the period: govtrail.settings_as_of(tenant, from)',
);

export const SETTINGS_AT_END = settingsAt(
  'settings-at-end.json',
  (o) => o.to,
  true,
  'the settings in force at the last instant of the period: govtrail.settings_as_of(tenant, to - 1 microsecond)',
);

function settingsCount(row: TimelineEntry | undefined): number {
  return row === undefined || row.isDeleted ? 0 : Object.keys(row.settings).length;
}

function settingsJson(tenantId: string, at: Date, meaning: string, row: TimelineEntry | undefined): string {
  return `${JSON.stringify(
    {
      tenant: tenantId,
      at: at.toISOString(),
      meaning,
      inForce:
        row === undefined
          ? null
          : {
              entryId: row.entryId,
              since: row.validFromText,
              changeKind: row.changeKind,
              actorKind: row.actorKind,
              actorUserId: row.actorUserId,
              tickets: row.tickets,
              reasons: row.reasons,
              deleted: row.isDeleted,
            },
      settings: row === undefined || row.isDeleted ? null : row.settings,
      note:
        row === undefined
          ? 'no settings recorded at this time (before the tenant’s first snapshot)'
          : row.isDeleted
            ? 'the settings were deleted (HARD_DELETE) at this time'
            : undefined,
    },
    null,
    2,
  )}\n`;
}
