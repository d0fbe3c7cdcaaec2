/**
 * govtrail's OCSF 1.8.0 events (docs/siem.md): the pure mapping of history entries to Entity
 * Management (3004), of alerts to Detection Finding (2004) and of control status changes to
 * Compliance Finding (2003), for the export and the SIEM sinks.
 * The JSON Lines file writer is in ./jsonl.ts (it does I/O, so it is not exported here).
 */
export {
  type ComplianceChangeInput,
  type ComplianceControlFacts,
  type ComplianceStatus,
  complianceChangesOf,
  complianceChangeToFinding,
  complianceFindingUid,
  complianceStatusOf,
  findingStatusOf,
  type OcsfCompliance,
  type OcsfComplianceFinding,
} from './compliance.js';
export * from './constants.js';
export { alertToDetectionFinding } from './finding.js';
export { FINDING_STATUS_OF, findingUpdate } from './finding-update.js';
export {
  activityOfChangeKind,
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
