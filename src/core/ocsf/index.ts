/**
 * govtrail's OCSF 1.8.0 events (docs/siem.md): the pure mapping of history entries to Entity
 * Management (3004) and of alerts to Detection Finding (2004), for the export and the SIEM sinks.
 * The JSON Lines file writer is in ./jsonl.ts (it does I/O, so it is not exported here).
 */
export * from './constants.js';
export { FINDING_STATUS_OF, findingUpdate } from './finding-update.js';
export {
  activityOfChangeKind,
  alertToDetectionFinding,
  entityManagementTypeUid,
  entryToEntityManagement,
  type OcsfActivity,
  type OcsfAnnotationFacts,
  type OcsfEntryFacts,
  type OcsfEntryInput,
  settingsEntityUid,
  severityIdOf,
} from './mapping.js';
export type * from './types.js';
