/**
 * The shapes of the OCSF 1.8.0 events govtrail emits: only the attributes it fills. Every optional
 * attribute is left out when govtrail has no value for it — never `null` (OCSF validators reject
 * it) and never a made-up "unknown".
 */

/** `key_value_object`. */
export interface OcsfKeyValue {
  readonly name: string;
  readonly value: string;
}

/** `product`. */
export interface OcsfProduct {
  readonly name: string;
  readonly vendor_name: string;
  readonly version: string;
  readonly feature: { readonly name: string };
}

/** `metadata`. */
export interface OcsfMetadata {
  /** The OCSF schema version, `1.8.0`. */
  readonly version: string;
  readonly product: OcsfProduct;
  /** Unique per emitted event. */
  readonly uid: string;
  readonly log_name: string;
  readonly tenant_uid: string;
  readonly original_event_uid?: string;
  readonly correlation_uid?: string;
  readonly event_code?: string;
  readonly original_time?: string;
  readonly tags?: readonly OcsfKeyValue[];
  /** Epoch ms: when govtrail stored the record. */
  readonly logged_time?: number;
  /** Epoch ms: when the event was built (the `now` option). */
  readonly processed_time: number;
}

/** `user`. */
export interface OcsfUser {
  readonly uid: string;
}

/** `actor`: at least one of `app_name` and `user`. */
export interface OcsfActor {
  /** The tenant's actor kind as received (`ACTOR_KIND_API`, or a kind this version does not know). */
  readonly app_name?: string;
  readonly user?: OcsfUser;
}

/** `managed_entity`: the tenant's AI governance settings object. */
export interface OcsfManagedEntity {
  readonly uid: string;
  readonly name: string;
  readonly type_id: number;
  readonly type: string;
  /** The settings snapshot exactly as the tenant served it (proto3 JSON: defaults omitted). */
  readonly data?: Readonly<Record<string, unknown>>;
}

/** `observable`. */
export interface OcsfObservable {
  readonly name: string;
  readonly type_id: number;
  readonly type: string;
  readonly value: string;
}

/** One field change as it travels in `unmapped` and in evidence `data`. */
export interface OcsfFieldChange {
  /** The field_change name: a settings_snapshot column or `extra_fields.<wire name>`. */
  readonly field: string;
  /** The wire name, for humans: `requireToolApproval`. */
  readonly name: string;
  /** Effective value before (null for a tenant's first snapshot, or an unset value). */
  readonly old_value: unknown;
  readonly new_value: unknown;
  readonly direction: string;
}

/** What every event of both classes carries. */
export interface OcsfBaseEvent {
  readonly class_uid: number;
  readonly class_name: string;
  readonly category_uid: number;
  readonly category_name: string;
  readonly activity_id: number;
  readonly activity_name: string;
  readonly type_uid: number;
  readonly type_name: string;
  readonly severity_id: number;
  readonly severity: string;
  /** Epoch milliseconds, UTC. */
  readonly time: number;
  readonly metadata: OcsfMetadata;
  readonly message: string;
  readonly status_id: number;
  readonly status: string;
  readonly observables?: readonly OcsfObservable[];
}

/** Entity Management (3004): one history entry. */
export interface OcsfEntityManagement extends OcsfBaseEvent {
  readonly class_uid: 3004;
  readonly category_uid: 3;
  readonly entity: OcsfManagedEntity;
  readonly entity_result?: OcsfManagedEntity;
  readonly actor?: OcsfActor;
  /** The entry's REASON annotations, joined by "; ". */
  readonly comment?: string;
  readonly unmapped: OcsfEntityUnmapped;
}

/** What Entity Management has no attribute for. */
export interface OcsfEntityUnmapped {
  /** The field-level diff against the previous snapshot, with directions (loosened/tightened/changed). */
  readonly field_changes: readonly OcsfFieldChange[];
  /** Every annotation as stored (keys of absent parts left out). */
  readonly annotations?: readonly Readonly<Record<string, string>>[];
  /** Present (true) when the entry came without a settings snapshot. */
  readonly snapshot_absent?: true;
}

/** `analytic`. */
export interface OcsfAnalytic {
  readonly type_id: number;
  readonly type: string;
  readonly uid: string;
  readonly name?: string;
  readonly version: string;
}

/** `related_event`. */
export interface OcsfRelatedEvent {
  readonly uid: string;
  readonly type_uid: number;
  readonly type_name: string;
}

/** `finding_info`. */
export interface OcsfFindingInfo {
  /** The alert's dedupe key: the same for every activity (create, update, close) of one alert. */
  readonly uid: string;
  readonly title: string;
  readonly desc: string;
  readonly analytic: OcsfAnalytic;
  readonly created_time?: number;
  /** Time of the latest lifecycle event (an Update or Close). */
  readonly modified_time?: number;
  readonly related_events?: readonly OcsfRelatedEvent[];
}

/** `evidences`. */
export interface OcsfEvidence {
  readonly actor?: OcsfActor;
  readonly data: Readonly<Record<string, unknown>>;
}

/** `resource_details`. */
export interface OcsfResource {
  readonly uid: string;
  readonly name: string;
  readonly type: string;
  readonly role_id: number;
  readonly role: string;
}

/** Detection Finding (2004): one alert. */
export interface OcsfDetectionFinding extends OcsfBaseEvent {
  readonly class_uid: 2004;
  readonly category_uid: 2;
  readonly is_alert: true;
  readonly finding_info: OcsfFindingInfo;
  readonly evidences: readonly OcsfEvidence[];
  readonly resources: readonly OcsfResource[];
  readonly remediation?: { readonly desc: string };
  readonly unmapped: Readonly<Record<string, unknown>>;
}

/** What the mapping needs besides the record: it reads no clock and no package file. */
export interface OcsfOptions {
  /** Becomes `metadata.processed_time`. */
  readonly now: Date;
  /** govtrail's version, `metadata.product.version`. */
  readonly productVersion: string;
}
