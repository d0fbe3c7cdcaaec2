/**
 * The data files of the evidence pack, in the order they are written (and listed in the manifest:
 * ../files.ts describes each). Order matters where a file feeds a later one: setting-periods.csv
 * fills the report's timeline sampler, runs.csv the coverage that integrity.json reports.
 */
import { ALERTS } from './alerts.js';
import { CHANGES } from './changes.js';
import { CHANGES_WITHOUT_TICKET } from './changes-without-ticket.js';
import { INTEGRITY } from './integrity.js';
import type { PackDataFile } from './pack-file.js';
import { REPORT } from './report.js';
import { RUNS } from './runs.js';
import { SETTING_PERIODS } from './setting-periods.js';
import { SETTINGS_AT_END, SETTINGS_AT_START } from './settings-at.js';

export const DATA_FILES: readonly PackDataFile[] = [
  CHANGES,
  CHANGES_WITHOUT_TICKET,
  SETTING_PERIODS,
  SETTINGS_AT_START,
  SETTINGS_AT_END,
  ALERTS,
  RUNS,
  INTEGRITY,
  REPORT,
];
