/**
 * The other JSON encoding a grpc-gateway service can have. By default the sandbox writes entries as protojson
 * does with its defaults (default values left out). grpc-gateway v2's own default marshaler, however, sets
 * `EmitUnpopulated: true`: every field is written, scalars with their default (`""`, `false`, `0`, `[]`, the
 * enum's `…_UNSPECIFIED` name) and unset message fields as `null`. Which one the real tenant uses is not
 * published (docs/design/tenant-api.md; "empty" syslogEventId and traceId, nullable message fields in the
 * OpenAPI description), so a client must read both; the `emitUnpopulated` option serves this form.
 */

type Defaults = ReadonlyArray<readonly [string, unknown]>;

/** Field order is protojson's (field-number order as the sandbox models it); null marks a message field. */
const METADATA: Defaults = [
  ['id', ''],
  ['createdAt', null],
  ['changeKind', 'CHANGE_KIND_UNSPECIFIED'],
  ['actor', null],
  ['annotations', []],
  ['syslogEventId', ''],
  ['traceId', ''],
];
const ACTOR: Defaults = [
  ['kind', 'ACTOR_KIND_UNSPECIFIED'],
  ['userId', ''],
];
const ANNOTATION: Defaults = [
  ['key', ''],
  ['kind', 'ANNOTATION_KIND_UNSPECIFIED'],
  ['rawValue', ''],
  ['displayValue', ''],
  ['displayLabel', ''],
  ['displayUrl', ''],
];
const SETTINGS: Defaults = [
  ['allowedClientTypes', []],
  ['auditVerbosity', 'AUDIT_VERBOSITY_UNSPECIFIED'],
  ['autoDiscoveryEnabled', false],
  ['createdAt', null],
  ['updatedAt', null],
  ['defaultClientLifecycle', null],
  ['defaultToolClassification', 'TOOL_CLASSIFICATION_UNSPECIFIED'],
  ['discoveryInterval', null],
  ['enabled', false],
  ['preferCodeModeOverDirectTools', false],
  ['requireToolApproval', false],
  ['surfaceRequestableTools', false],
  ['codeModeConcurrency', 0],
  ['untrustedJudgeDisable', false],
  ['c1awAutospillDisabled', false],
  ['c1awAutospillThresholdBytes', 0],
];
const LIFECYCLE: Defaults = [
  ['inactivityCloseAfter', null],
  ['inactivityHideAfter', null],
  ['retentionDeleteAfter', null],
];

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Known fields in order, filled with their defaults; unknown fields kept after them. */
function fill(
  value: Record<string, unknown>,
  defaults: Defaults,
  nested: (key: string, v: unknown) => unknown,
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, fallback] of defaults) out[key] = nested(key, value[key] ?? fallback);
  for (const [key, v] of Object.entries(value)) if (!Object.hasOwn(out, key)) out[key] = v;
  return out;
}

/** An entry as a grpc-gateway v2 service with its default marshaler would write it. */
export function populateEntry(entry: Record<string, unknown>): Record<string, unknown> {
  const metadata = isRecord(entry['metadata'])
    ? fill(entry['metadata'], METADATA, (key, v) => {
        if (key === 'actor' && isRecord(v)) return fill(v, ACTOR, (_k, x) => x);
        if (key === 'annotations' && Array.isArray(v)) {
          return v.map((a) => (isRecord(a) ? fill(a, ANNOTATION, (_k, x) => x) : a));
        }
        return v;
      })
    : null;
  const snapshot = isRecord(entry['snapshot'])
    ? fill(entry['snapshot'], SETTINGS, (key, v) =>
        key === 'defaultClientLifecycle' && isRecord(v) ? fill(v, LIFECYCLE, (_k, x) => x) : v,
      )
    : null;
  const out: Record<string, unknown> = { metadata, snapshot };
  for (const [key, v] of Object.entries(entry)) if (!Object.hasOwn(out, key)) out[key] = v;
  return out;
}
