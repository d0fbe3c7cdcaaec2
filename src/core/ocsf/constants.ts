/**
 * The OCSF identifiers and captions govtrail emits, taken from the OCSF 1.8.0 schema export
 * (docs/siem.md; the tests check every one of them against the export). Captions travel beside
 * their ids (`activity_name`, `severity`, …) because validators require them to match.
 */

/** The OCSF schema version the events follow and are validated against (`metadata.version`). */
export const OCSF_SCHEMA_VERSION = '1.8.0';

/** `metadata.product.name` and `vendor_name`. */
export const OCSF_PRODUCT_NAME = 'govtrail';
export const OCSF_VENDOR_NAME = 'govtrail';

/** `metadata.product.feature.name`: the stream an event belongs to. */
export const OCSF_FEATURE_HISTORY = 'history';
export const OCSF_FEATURE_ALERTS = 'alerts';
export const OCSF_FEATURE_CONFORMANCE = 'conformance';

/** The managed entity every event is about: the tenant's AI governance settings object. */
export const SETTINGS_ENTITY_TYPE = 'AI Governance Settings';
export const SETTINGS_ENTITY_NAME = 'AI governance settings';

export const ENTITY_MANAGEMENT = {
  classUid: 3004,
  className: 'Entity Management',
  categoryUid: 3,
  categoryName: 'Identity & Access Management',
} as const;

export const DETECTION_FINDING = {
  classUid: 2004,
  className: 'Detection Finding',
  categoryUid: 2,
  categoryName: 'Findings',
} as const;

export const COMPLIANCE_FINDING = {
  classUid: 2003,
  className: 'Compliance Finding',
  categoryUid: 2,
  categoryName: 'Findings',
} as const;

/** Compliance Finding activities (`activity_id` → caption). */
export const COMPLIANCE_ACTIVITY = {
  create: { id: 1, name: 'Create' },
  update: { id: 2, name: 'Update' },
} as const;

/** `compliance.status_id` captions. */
export const COMPLIANCE_STATUS = {
  unknown: { id: 0, name: 'Unknown' },
  pass: { id: 1, name: 'Pass' },
  fail: { id: 3, name: 'Fail' },
  other: { id: 99, name: 'Other' },
} as const;

/** Finding `status_id` captions (Detection and Compliance Finding share them). */
export const FINDING_STATUS = {
  unknown: { id: 0, name: 'Unknown' },
  new: { id: 1, name: 'New' },
  suppressed: { id: 3, name: 'Suppressed' },
  resolved: { id: 4, name: 'Resolved' },
} as const;

/** Entity Management activities govtrail uses (`activity_id` → caption). */
export const ENTITY_ACTIVITY = {
  unknown: { id: 0, name: 'Unknown' },
  create: { id: 1, name: 'Create' },
  update: { id: 3, name: 'Update' },
  delete: { id: 4, name: 'Delete' },
  other: { id: 99, name: 'Other' },
} as const;

/** Detection Finding activities (`activity_id` → caption). */
export const FINDING_ACTIVITY = {
  create: { id: 1, name: 'Create' },
  update: { id: 2, name: 'Update' },
  close: { id: 3, name: 'Close' },
} as const;

/** `severity_id` captions (every event class shares them). */
export const SEVERITY_CAPTIONS: Readonly<Record<number, string>> = {
  0: 'Unknown',
  1: 'Informational',
  2: 'Low',
  3: 'Medium',
  4: 'High',
  5: 'Critical',
  6: 'Fatal',
  99: 'Other',
};

/** Entity Management `status_id` 1. */
export const STATUS_SUCCESS = { id: 1, name: 'Success' } as const;
/** Detection Finding `status_id` 1. */
export const FINDING_STATUS_NEW = { id: 1, name: 'New' } as const;

/** `managed_entity.type_id` 99: the type is in `type`. */
export const ENTITY_TYPE_OTHER = 99;
/** `analytic.type_id` 1. */
export const ANALYTIC_RULE = { id: 1, name: 'Rule' } as const;
/** `resource_details.role_id` 1. */
export const RESOURCE_ROLE_TARGET = { id: 1, name: 'Target' } as const;
/** `observable.type_id` 31: the `uid` of a User object. */
export const OBSERVABLE_USER_UID = { id: 31, name: 'User Object: uid' } as const;

/** `type_uid` = `class_uid` × 100 + `activity_id`. */
export function typeUidOf(classUid: number, activityId: number): number {
  return classUid * 100 + activityId;
}

/** `type_name`: the class caption and the activity caption, as the schema words them. */
export function typeNameOf(className: string, activityCaption: string): string {
  return `${className}: ${activityCaption}`;
}
