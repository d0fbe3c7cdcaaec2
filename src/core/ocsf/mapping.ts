/**
 * Pure mapping of govtrail's records to OCSF 1.8.0 events (docs/siem.md): a history entry with its
 * field changes becomes an **Entity Management** (3004) event, an alert a **Detection Finding**
 * (2004). No I/O and no clock: the time of processing and govtrail's version are parameters, so the
 * same input always gives the same event.
 *
 * Honest values: an attribute govtrail has no value for is left out, never `null` and never
 * "unknown" — proto3 omits default values, so an absent field means its default, not "unknown".
 * Values the tenant sends that this version does not know (a new change kind, actor kind, enum
 * value) are passed through as received.
 */

import type { AlertChange, Severity } from '../alert.js';
import { type FieldChange, wireNameOf } from '../diff.js';
import { shortEnum } from '../format.js';
import type { AnnotationRow, EntryRow } from '../normalise/types.js';
import type { WireSettings } from '../wire.js';
import {
  ENTITY_ACTIVITY,
  ENTITY_MANAGEMENT,
  ENTITY_TYPE_OTHER,
  OBSERVABLE_USER_UID,
  OCSF_FEATURE_HISTORY,
  OCSF_PRODUCT_NAME,
  OCSF_SCHEMA_VERSION,
  OCSF_VENDOR_NAME,
  SETTINGS_ENTITY_NAME,
  SETTINGS_ENTITY_TYPE,
  SEVERITY_CAPTIONS,
  STATUS_SUCCESS,
  typeNameOf,
  typeUidOf,
} from './constants.js';
import type {
  OcsfActor,
  OcsfEntityManagement,
  OcsfEntityUnmapped,
  OcsfFieldChange,
  OcsfKeyValue,
  OcsfManagedEntity,
  OcsfMetadata,
  OcsfObservable,
  OcsfOptions,
  OcsfProduct,
} from './types.js';

/** The entry facts the mapping reads; an {@link EntryRow} fits. */
export type OcsfEntryFacts = Pick<
  EntryRow,
  | 'tenantId'
  | 'entryId'
  | 'createdAt'
  | 'createdAtText'
  | 'changeKind'
  | 'actorKind'
  | 'actorUserId'
  | 'syslogEventId'
  | 'traceId'
>;

/** The annotation facts the mapping reads; an {@link AnnotationRow} fits. Order is kept. */
export type OcsfAnnotationFacts = Pick<
  AnnotationRow,
  'key' | 'kind' | 'rawValue' | 'displayValue' | 'displayLabel' | 'displayUrl'
>;

/** One history entry with what the Entity Management event tells about it. */
export interface OcsfEntryInput {
  readonly entry: OcsfEntryFacts;
  /** The entry's annotations in wire order (history_annotation by ordinal). */
  readonly annotations: readonly OcsfAnnotationFacts[];
  /** The entry's snapshot exactly as received (`raw.snapshot`); null when absent or not an object. */
  readonly snapshot: WireSettings | null;
  /**
   * The snapshot of the tenant's previous entry by (created_at, entry_id) — what `changes` diffs
   * against; null for the first entry, after a hard delete, or when that entry had none.
   */
  readonly previousSnapshot: WireSettings | null;
  /** The entry's field_change rows. */
  readonly changes: readonly FieldChange[];
  /** When govtrail stored the entry (history_entry.loaded_at): `metadata.logged_time`. */
  readonly loadedAt?: Date | undefined;
}

/** An Entity Management activity: id and the caption or raw value that goes in `activity_name`. */
export interface OcsfActivity {
  readonly id: number;
  readonly name: string;
  /** The schema's caption of the id (differs from `name` for 99 Other). */
  readonly caption: string;
}

/**
 * The Entity Management activity of a change kind: CREATE → 1 Create, PUT → 3 Update,
 * HARD_DELETE → 4 Delete; absent or `CHANGE_KIND_UNSPECIFIED` (proto3 omits the zero value, so
 * both mean "not given") → 0 Unknown; any other value → 99 Other with the raw value as its name.
 */
export function activityOfChangeKind(changeKind: string | null | undefined): OcsfActivity {
  switch (changeKind) {
    case 'CHANGE_KIND_CREATE':
      return { ...ENTITY_ACTIVITY.create, caption: ENTITY_ACTIVITY.create.name };
    case 'CHANGE_KIND_PUT':
      return { ...ENTITY_ACTIVITY.update, caption: ENTITY_ACTIVITY.update.name };
    case 'CHANGE_KIND_HARD_DELETE':
      return { ...ENTITY_ACTIVITY.delete, caption: ENTITY_ACTIVITY.delete.name };
    case null:
    case undefined:
    case '':
    case 'CHANGE_KIND_UNSPECIFIED':
      return { ...ENTITY_ACTIVITY.unknown, caption: ENTITY_ACTIVITY.unknown.name };
    default:
      return { id: ENTITY_ACTIVITY.other.id, name: changeKind, caption: ENTITY_ACTIVITY.other.name };
  }
}

/** OCSF `severity_id` of an alert severity: low 2, medium 3, high 4, critical 5; anything else 99 Other. */
export function severityIdOf(severity: Severity | string): number {
  switch (severity) {
    case 'low':
      return 2;
    case 'medium':
      return 3;
    case 'high':
      return 4;
    case 'critical':
      return 5;
    default:
      return 99;
  }
}

/** The managed entity's uid: one settings object per tenant. */
export function settingsEntityUid(tenantId: string): string {
  return `${tenantId}/ai-governance-settings`;
}

/** The Entity Management `type_uid` a history entry of this change kind is emitted with. */
export function entityManagementTypeUid(changeKind: string | null | undefined): number {
  return typeUidOf(ENTITY_MANAGEMENT.classUid, activityOfChangeKind(changeKind).id);
}

/**
 * Maps one history entry to an OCSF Entity Management (3004) event.
 *
 * - `activity_id` from the change kind ({@link activityOfChangeKind}); `time` is the entry's
 *   `createdAt` in epoch ms; `metadata.original_time` keeps it verbatim (nanoseconds).
 * - `entity` is the settings object (`type_id` 99, `type` "AI Governance Settings"). Its `data`
 *   is the state the activity is about: the created settings for a Create, the settings before
 *   the change otherwise (a Delete's deleted settings); `entity_result.data` is the snapshot the
 *   entry carries, for every activity but Create. Snapshots are as received: proto3 JSON omits
 *   defaults, so an absent field is its default, not unknown.
 * - `actor.app_name` is the actor kind as received, `actor.user.uid` the user id (omitted when
 *   empty); `comment` the REASON annotations; `metadata.tags` every annotation with a value
 *   (`{name: "ticket", value}`…); `metadata.uid` the entry's KSUID, `original_event_uid` the
 *   syslogEventId, `correlation_uid` the traceId, `event_code` the raw change kind.
 * - `unmapped.field_changes` is the field-level diff with directions (OCSF has no home for it).
 */
export function entryToEntityManagement(input: OcsfEntryInput, options: OcsfOptions): OcsfEntityManagement {
  const { entry } = input;
  const activity = activityOfChangeKind(entry.changeKind);
  const after = plainObject(input.snapshot);
  const before = plainObject(input.previousSnapshot);
  const identity = settingsIdentity(entry.tenantId);
  const entityData = activity.id === ENTITY_ACTIVITY.create.id ? after : before;
  const entity: OcsfManagedEntity = entityData === undefined ? identity : { ...identity, data: entityData };
  const result: OcsfManagedEntity | undefined =
    activity.id !== ENTITY_ACTIVITY.create.id && after !== undefined
      ? { ...identity, data: after }
      : undefined;

  const actor = actorOf(entry.actorKind, entry.actorUserId);
  const reasons = input.annotations
    .filter((a) => a.kind === 'ANNOTATION_KIND_REASON')
    .map(annotationValue)
    .filter((v): v is string => v !== undefined);
  const tags = input.annotations.flatMap((a): OcsfKeyValue[] => {
    const value = annotationValue(a);
    return value === undefined ? [] : [{ name: tagName(a.kind), value }];
  });
  const fieldChanges = input.changes.map(
    (c): OcsfFieldChange => ({
      field: c.field,
      name: wireNameOf(c.field),
      old_value: c.oldValue,
      new_value: c.newValue,
      direction: c.direction,
    }),
  );
  const annotations = input.annotations.map(annotationRecord);
  const unmapped: OcsfEntityUnmapped = {
    field_changes: fieldChanges,
    ...(annotations.length > 0 ? { annotations } : {}),
    ...(after === undefined ? { snapshot_absent: true as const } : {}),
  };

  const metadata: OcsfMetadata = {
    version: OCSF_SCHEMA_VERSION,
    product: product(options, OCSF_FEATURE_HISTORY),
    uid: entry.entryId,
    log_name: 'history',
    tenant_uid: entry.tenantId,
    ...present('original_event_uid', entry.syslogEventId),
    ...present('correlation_uid', entry.traceId),
    ...present('event_code', entry.changeKind),
    ...present('original_time', entry.createdAtText),
    ...(tags.length > 0 ? { tags } : {}),
    ...(input.loadedAt !== undefined && Number.isFinite(input.loadedAt.getTime())
      ? { logged_time: input.loadedAt.getTime() }
      : {}),
    processed_time: options.now.getTime(),
  };
  const observables = userObservable('actor.user.uid', entry.actorUserId);

  return {
    class_uid: ENTITY_MANAGEMENT.classUid,
    class_name: ENTITY_MANAGEMENT.className,
    category_uid: ENTITY_MANAGEMENT.categoryUid,
    category_name: ENTITY_MANAGEMENT.categoryName,
    activity_id: activity.id,
    activity_name: activity.name,
    type_uid: typeUidOf(ENTITY_MANAGEMENT.classUid, activity.id),
    type_name: typeNameOf(ENTITY_MANAGEMENT.className, activity.caption),
    // A record of a change, not a judgement of it: the alerts (Detection Findings) carry severity.
    severity_id: 1,
    severity: SEVERITY_CAPTIONS[1] as string,
    time: entry.createdAt.getTime(),
    metadata,
    message: entryMessage(entry, activity, input.changes, after === undefined),
    status_id: STATUS_SUCCESS.id,
    status: STATUS_SUCCESS.name,
    entity,
    ...(result !== undefined ? { entity_result: result } : {}),
    ...(actor !== undefined ? { actor } : {}),
    ...(reasons.length > 0 ? { comment: reasons.join('; ') } : {}),
    ...(observables !== undefined ? { observables } : {}),
    unmapped,
  };
}

export function product(options: OcsfOptions, feature: string): OcsfProduct {
  return {
    name: OCSF_PRODUCT_NAME,
    vendor_name: OCSF_VENDOR_NAME,
    version: options.productVersion,
    feature: { name: feature },
  };
}

export function settingsIdentityCore(tenantId: string): { uid: string; name: string; type: string } {
  return { uid: settingsEntityUid(tenantId), name: SETTINGS_ENTITY_NAME, type: SETTINGS_ENTITY_TYPE };
}

export function settingsIdentity(tenantId: string): OcsfManagedEntity {
  const core = settingsIdentityCore(tenantId);
  return { uid: core.uid, name: core.name, type_id: ENTITY_TYPE_OTHER, type: core.type };
}

/** `actor`, or undefined when neither the kind nor the user is known (the object needs one). */
export function actorOf(kind: string | null, userId: string | null): OcsfActor | undefined {
  const hasKind = typeof kind === 'string' && kind !== '';
  const hasUser = typeof userId === 'string' && userId !== '';
  if (!hasKind && !hasUser) return undefined;
  return {
    ...(hasKind ? { app_name: kind } : {}),
    ...(hasUser ? { user: { uid: userId } } : {}),
  };
}

export function userObservable(name: string, userId: string | null): OcsfObservable[] | undefined {
  if (typeof userId !== 'string' || userId === '') return undefined;
  return [{ name, type_id: OBSERVABLE_USER_UID.id, type: OBSERVABLE_USER_UID.name, value: userId }];
}

export function alertChange(c: AlertChange): OcsfFieldChange {
  return {
    field: c.field,
    name: c.label ?? wireNameOf(c.field),
    old_value: c.oldValue ?? null,
    new_value: c.newValue ?? null,
    direction: c.direction,
  };
}

/** The value an annotation shows a human: its display value, else its raw value. */
export function annotationValue(a: OcsfAnnotationFacts): string | undefined {
  const v = a.displayValue ?? a.rawValue;
  return typeof v === 'string' && v !== '' ? v : undefined;
}

/** `ANNOTATION_KIND_TICKET` → `ticket`; a kind this version does not know keeps its own words. */
export function tagName(kind: string | null): string {
  if (kind === null || kind === '') return 'annotation';
  return shortEnum(kind).toLowerCase();
}

export function annotationRecord(a: OcsfAnnotationFacts): Record<string, string> {
  return {
    ...present('kind', a.kind),
    ...present('key', a.key),
    ...present('raw_value', a.rawValue),
    ...present('display_value', a.displayValue),
    ...present('display_label', a.displayLabel),
    ...present('display_url', a.displayUrl),
  };
}

export function entryMessage(
  entry: OcsfEntryFacts,
  activity: OcsfActivity,
  changes: readonly FieldChange[],
  snapshotAbsent: boolean,
): string {
  const verb =
    activity.id === ENTITY_ACTIVITY.create.id
      ? 'created'
      : activity.id === ENTITY_ACTIVITY.update.id
        ? 'updated'
        : activity.id === ENTITY_ACTIVITY.delete.id
          ? 'deleted'
          : activity.id === ENTITY_ACTIVITY.unknown.id
            ? 'changed (change kind not given)'
            : `changed (change kind ${activity.name})`;
  const who =
    entry.actorKind !== null && entry.actorKind !== ''
      ? ` by ${shortEnum(entry.actorKind)}${entry.actorUserId !== null && entry.actorUserId !== '' ? ` user ${entry.actorUserId}` : ''}`
      : entry.actorUserId !== null && entry.actorUserId !== ''
        ? ` by user ${entry.actorUserId}`
        : '';
  let what: string;
  if (changes.length === 0) what = snapshotAbsent ? 'no settings snapshot' : 'no field changed';
  else {
    const names = changes.slice(0, 5).map((c) => wireNameOf(c.field));
    const more = changes.length > 5 ? ` and ${changes.length - 5} more` : '';
    const loosened = changes.filter((c) => c.direction === 'loosened').length;
    what = `${names.join(', ')}${more}${loosened > 0 ? ` (${loosened} loosened)` : ''}`;
  }
  return `AI governance settings of tenant ${entry.tenantId} ${verb}${who}: ${what}`;
}

export function plainObject(v: unknown): Readonly<Record<string, unknown>> | undefined {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
    ? (v as Record<string, unknown>)
    : undefined;
}

/** `{[key]: value}` when value is a non-empty string, else nothing: absent is never written as null. */
export function present<K extends string>(key: K, value: string | null | undefined): { [P in K]?: string } {
  return typeof value === 'string' && value !== '' ? ({ [key]: value } as { [P in K]: string }) : {};
}
