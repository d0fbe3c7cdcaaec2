/**
 * Wire entry → rows of history_entry, history_annotation and settings_snapshot (docs/design/data-model.md).
 * Tolerant by contract (docs/design/sync.md S6): unknown enum values, unknown fields, nulls and absent fields
 * are stored as received and never throw. Only an entry that cannot be keyed (no `metadata.id`)
 * is rejected, and the caller keeps it in rejected_entry. Pure: no clock, no I/O.
 */
import type { WireSettings } from '../wire.js';
import { parseDuration } from './duration.js';
import { MAPPED_LIFECYCLE_KEYS, MAPPED_TOP_LEVEL_KEYS } from './fields.js';
import { ksuidTime } from './ksuid.js';
import { dateKey, parseTimestamp, timestampKey } from './time.js';
import type { AnnotationRow, EntryRow, NormaliseResult, SnapshotRow } from './types.js';

/**
 * The documented limits (docs/design/tenant-api.md, the entry table); past them an annotation is still
 * stored, with a warning.
 */
export const MAX_ANNOTATIONS = 16;
export const ANNOTATION_KEY = /^[a-z][a-z0-9_.-]{0,63}$/;
export const MAX_ANNOTATION_RAW_BYTES = 512;

type Obj = Record<string, unknown>;

function isObject(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * Text for a text column: PostgreSQL text cannot hold NUL nor unpaired surrogates, so those become
 * U+FFFD here (the verbatim value stays in `raw`, where the store applies the same rule).
 */
export function cleanText(s: string): string {
  // Most text has neither: return it as it is, without a copy.
  if (s.isWellFormed() && !s.includes('\u0000')) return s;
  return s.toWellFormed().replace(/\u0000/g, '\uFFFD');
}

/** A text column from a wire value: strings kept, empty → NULL when `emptyIsNull`, other types as JSON. */
function textColumn(v: unknown, warnings: string[], name: string, emptyIsNull = true): string | null {
  if (v === null || v === undefined) return null;
  if (typeof v === 'string') return emptyIsNull && v === '' ? null : cleanText(v);
  warnings.push(`${name} is ${Array.isArray(v) ? 'an array' : typeof v}, stored as JSON text`);
  return cleanText(JSON.stringify(v));
}

/** A proto3 bool: absent or null means false (proto3 JSON omits default values). */
function boolColumn(v: unknown, warnings: string[], name: string): boolean | null {
  if (v === undefined || v === null) return false;
  if (typeof v === 'boolean') return v;
  warnings.push(`${name} is not a boolean (${JSON.stringify(v)}); column left NULL, raw keeps it`);
  return null;
}

function durationColumn(v: unknown, warnings: string[], name: string): string | null {
  if (v === undefined || v === null) return null;
  const d = parseDuration(v);
  if (d === undefined) {
    warnings.push(`${name} is not a duration (${JSON.stringify(v)}); column left NULL, raw keeps it`);
    return null;
  }
  return d.interval;
}

/**
 * Times read and their keys: slot 0 the entry's createdAt, slots 1-2 the last two other times
 * parsed. A history repeats them (the settings' createdAt stays the same entry after entry, and
 * updatedAt is often the entry's own createdAt), and comparing texts costs less than parsing one.
 */
const recent = { texts: ['', '', ''], keys: ['', '', ''], next: 1 };

function rememberKey(text: string, key: string, slot: number): void {
  recent.texts[slot] = text;
  recent.keys[slot] = key;
}

function timestampColumn(v: unknown, warnings: string[], name: string): string | null {
  if (v === undefined || v === null || v === '') return null;
  const at = recent.texts.indexOf(v as string);
  if (at >= 0) return recent.keys[at] as string;
  const t = parseTimestamp(v);
  if (t === undefined) {
    warnings.push(`${name} is not an RFC 3339 time (${JSON.stringify(v)}); column left NULL, raw keeps it`);
    return null;
  }
  rememberKey(v as string, t.key, recent.next);
  recent.next = recent.next === 1 ? 2 : 1;
  return t.key;
}

function normaliseSnapshot(tenantId: string, entryId: string, s: Obj, warnings: string[]): SnapshotRow {
  const extra: Record<string, unknown> = {};
  for (const k in s) {
    if (!Object.hasOwn(s, k) || MAPPED_TOP_LEVEL_KEYS.has(k)) continue;
    // An unknown field named "__proto__" is a field like any other: assigned, it would set the
    // prototype of `extra` and be lost from the extra column.
    if (k === '__proto__')
      Object.defineProperty(extra, k, { value: s[k], enumerable: true, writable: true, configurable: true });
    else extra[k] = s[k];
  }

  let lifecycle: Obj = {};
  const lc = s['defaultClientLifecycle'];
  if (isObject(lc)) {
    lifecycle = lc;
    for (const k in lc) {
      if (Object.hasOwn(lc, k) && !MAPPED_LIFECYCLE_KEYS.has(k)) extra[`defaultClientLifecycle.${k}`] = lc[k];
    }
  } else if (lc !== undefined && lc !== null) {
    warnings.push('snapshot.defaultClientLifecycle is not an object; kept in extra_fields');
    extra['defaultClientLifecycle'] = lc;
  }

  const types = s['allowedClientTypes'];
  let allowed: string[] | null = null;
  if (Array.isArray(types)) {
    allowed = types.map((t, i) => {
      if (typeof t === 'string') return cleanText(t);
      warnings.push(`snapshot.allowedClientTypes[${i}] is not a string; stored as JSON text`);
      return cleanText(JSON.stringify(t) ?? 'null');
    });
  } else if (types !== undefined && types !== null) {
    warnings.push('snapshot.allowedClientTypes is not a list; column left NULL, raw keeps it');
  }

  return {
    tenantId,
    entryId,
    allowedClientTypes: allowed,
    // docs/design/tenant-api.md: an empty list means all types are permitted, and proto3 JSON omits empty
    // lists.
    allowsAllClientTypes: allowed === null ? types === undefined || types === null : allowed.length === 0,
    auditVerbosity: textColumn(s['auditVerbosity'], warnings, 'snapshot.auditVerbosity'),
    autoDiscoveryEnabled: boolColumn(s['autoDiscoveryEnabled'], warnings, 'snapshot.autoDiscoveryEnabled'),
    defaultToolClassification: textColumn(
      s['defaultToolClassification'],
      warnings,
      'snapshot.defaultToolClassification',
    ),
    discoveryInterval: durationColumn(s['discoveryInterval'], warnings, 'snapshot.discoveryInterval'),
    inactivityCloseAfter: durationColumn(lifecycle['inactivityCloseAfter'], warnings, 'inactivityCloseAfter'),
    inactivityHideAfter: durationColumn(lifecycle['inactivityHideAfter'], warnings, 'inactivityHideAfter'),
    retentionDeleteAfter: durationColumn(lifecycle['retentionDeleteAfter'], warnings, 'retentionDeleteAfter'),
    enabled: boolColumn(s['enabled'], warnings, 'snapshot.enabled'),
    preferCodeModeOverDirectTools: boolColumn(
      s['preferCodeModeOverDirectTools'],
      warnings,
      'snapshot.preferCodeModeOverDirectTools',
    ),
    requireToolApproval: boolColumn(s['requireToolApproval'], warnings, 'snapshot.requireToolApproval'),
    surfaceRequestableTools: boolColumn(
      s['surfaceRequestableTools'],
      warnings,
      'snapshot.surfaceRequestableTools',
    ),
    settingsCreatedAt: timestampColumn(s['createdAt'], warnings, 'snapshot.createdAt'),
    settingsUpdatedAt: timestampColumn(s['updatedAt'], warnings, 'snapshot.updatedAt'),
    extraFields: extra,
  };
}

function normaliseAnnotations(
  tenantId: string,
  entryId: string,
  list: unknown,
  warnings: string[],
): AnnotationRow[] {
  if (list === undefined || list === null) return [];
  if (!Array.isArray(list)) {
    warnings.push('metadata.annotations is not a list; raw keeps it');
    return [];
  }
  if (list.length > MAX_ANNOTATIONS) {
    warnings.push(`${list.length} annotations, more than the documented ${MAX_ANNOTATIONS}; all stored`);
  }
  return list.map((a, ordinal) => {
    const o: Obj = isObject(a) ? a : {};
    if (!isObject(a)) warnings.push(`annotation ${ordinal} is not an object; stored with empty columns`);
    const key = textColumn(o['key'], warnings, `annotation ${ordinal} key`);
    if (key !== null && !ANNOTATION_KEY.test(key)) {
      warnings.push(
        `annotation ${ordinal} key ${JSON.stringify(key)} is outside the documented pattern; stored`,
      );
    }
    const rawValue = textColumn(o['rawValue'], warnings, `annotation ${ordinal} rawValue`, false);
    // A UTF-16 unit is at most 3 UTF-8 bytes: a short value needs no count.
    if (
      rawValue !== null &&
      rawValue.length * 3 > MAX_ANNOTATION_RAW_BYTES &&
      Buffer.byteLength(rawValue) > MAX_ANNOTATION_RAW_BYTES
    ) {
      warnings.push(
        `annotation ${ordinal} rawValue is longer than ${MAX_ANNOTATION_RAW_BYTES} bytes; stored`,
      );
    }
    return {
      tenantId,
      entryId,
      ordinal,
      key,
      kind: textColumn(o['kind'], warnings, `annotation ${ordinal} kind`),
      rawValue,
      displayValue: textColumn(o['displayValue'], warnings, `annotation ${ordinal} displayValue`, false),
      displayLabel: textColumn(o['displayLabel'], warnings, `annotation ${ordinal} displayLabel`, false),
      // docs/design/tenant-api.md: an empty string when there is no URL.
      displayUrl: textColumn(o['displayUrl'], warnings, `annotation ${ordinal} displayUrl`),
    };
  });
}

/** Where an entry sits in the history: what a run needs of an entry it may already have stored. */
export interface EntryKey {
  readonly entryId: string;
  /** UTC, nine fractional digits. */
  readonly createdAtKey: string;
  readonly createdAtText: string | null;
}

/**
 * The key of a wire entry — its id and time, exactly as normaliseEntry would give them — without
 * normalising the rest; undefined when normaliseEntry would reject the entry. A run looks up
 * stored entries by this and normalises only the ones it has to store.
 */
export function entryKeyOf(raw: unknown): EntryKey | undefined {
  if (!isObject(raw)) return undefined;
  const meta = raw['metadata'];
  if (!isObject(meta)) return undefined;
  const id = meta['id'];
  if (typeof id !== 'string' || id.trim() === '') return undefined;
  const entryId = cleanText(id);
  const createdAtRaw = meta['createdAt'];
  const key = timestampKey(createdAtRaw);
  if (key !== undefined)
    return { entryId, createdAtKey: key, createdAtText: cleanText(createdAtRaw as string) };
  const fromId = ksuidTime(entryId);
  if (fromId === undefined) return undefined;
  return {
    entryId,
    createdAtKey: dateKey(fromId),
    createdAtText: typeof createdAtRaw === 'string' && createdAtRaw !== '' ? cleanText(createdAtRaw) : null,
  };
}

/**
 * Normalises one wire entry. Never throws. `servedDigest`: sha256 of the entry's bytes as served,
 * in hex, when it was served as bytes (served-entry.ts), stored beside it.
 */
export function normaliseEntry(tenantId: string, raw: unknown, servedDigest?: string): NormaliseResult {
  if (!isObject(raw)) {
    return {
      ok: false,
      reason: `entry is ${raw === null ? 'null' : Array.isArray(raw) ? 'an array' : typeof raw}, not an object`,
      raw,
    };
  }
  const meta = raw['metadata'];
  if (!isObject(meta)) return { ok: false, reason: 'entry has no metadata object, so no metadata.id', raw };
  const id = meta['id'];
  if (typeof id !== 'string' || id.trim() === '')
    return { ok: false, reason: 'entry has no metadata.id', raw };
  const entryId = cleanText(id);
  const warnings: string[] = [];

  const createdAtRaw = meta['createdAt'];
  let createdAtText: string | null =
    typeof createdAtRaw === 'string' && createdAtRaw !== '' ? cleanText(createdAtRaw) : null;
  let time = parseTimestamp(createdAtRaw);
  if (time !== undefined) rememberKey(createdAtRaw as string, time.key, 0);
  else {
    // Fall back on the KSUID's own timestamp (second precision) rather than lose the entry.
    const fromId = ksuidTime(entryId);
    if (fromId === undefined) {
      return {
        ok: false,
        reason: 'entry has neither a valid metadata.createdAt nor a KSUID id to date it by',
        raw,
      };
    }
    warnings.push(
      createdAtText === null
        ? 'metadata.createdAt is absent; dated by the KSUID (second precision)'
        : `metadata.createdAt ${JSON.stringify(createdAtRaw)} is not RFC 3339; dated by the KSUID (second precision)`,
    );
    time = { key: dateKey(fromId), date: fromId };
    if (typeof createdAtRaw !== 'string') createdAtText = null;
  }

  const actorRaw = meta['actor'];
  const actor: Obj = isObject(actorRaw) ? actorRaw : {};
  if (actorRaw !== undefined && actorRaw !== null && !isObject(actorRaw)) {
    warnings.push('metadata.actor is not an object; raw keeps it');
  }

  const entry: EntryRow = {
    tenantId,
    entryId,
    createdAtText,
    createdAtKey: time.key,
    createdAt: time.date,
    changeKind: textColumn(meta['changeKind'], warnings, 'metadata.changeKind'),
    actorKind: textColumn(actor['kind'], warnings, 'metadata.actor.kind'),
    actorUserId: textColumn(actor['userId'], warnings, 'metadata.actor.userId'),
    syslogEventId: textColumn(meta['syslogEventId'], warnings, 'metadata.syslogEventId'),
    traceId: textColumn(meta['traceId'], warnings, 'metadata.traceId'),
    raw,
    servedDigest: servedDigest ?? null,
  };

  const snapRaw = raw['snapshot'];
  let snapshot: SnapshotRow | null = null;
  let snapshotWire: WireSettings | null = null;
  if (isObject(snapRaw)) {
    snapshot = normaliseSnapshot(tenantId, entryId, snapRaw, warnings);
    snapshotWire = snapRaw as WireSettings;
  } else if (snapRaw !== undefined && snapRaw !== null) {
    warnings.push('snapshot is not an object; no settings_snapshot row, raw keeps it');
  }

  return {
    ok: true,
    value: {
      entry,
      annotations: normaliseAnnotations(tenantId, entryId, meta['annotations'], warnings),
      snapshot,
      snapshotWire,
      warnings,
    },
  };
}
