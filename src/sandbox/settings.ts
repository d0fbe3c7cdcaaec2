/**
 * The AI governance settings object and how an administrator changes it over time.
 *
 * Settings are modelled as a small array of value indexes (one byte per field) so that a
 * million-entry history keeps one 14-byte model per entry instead of a JSON document; the wire
 * form is rebuilt on demand. Index 0 of every field is the proto3 default, which protojson omits.
 */
import type { Random } from './random.js';
import { orderKeys } from './wire.js';

/** Positions of the fields in a model. */
export const F = {
  clientTypes: 0,
  auditVerbosity: 1,
  autoDiscovery: 2,
  closeAfter: 3,
  hideAfter: 4,
  deleteAfter: 5,
  toolClassification: 6,
  discoveryInterval: 7,
  enabled: 8,
  preferCodeMode: 9,
  requireToolApproval: 10,
  surfaceRequestable: 11,
  codeModeConcurrency: 12,
  untrustedJudgeDisable: 13,
} as const;

/** Bytes per model. */
export const MODEL_SIZE = 14;

/** Marks a field whose wire value is outside the vocabulary (set through an EntrySpec). */
const FOREIGN = 255;

/**
 * Client types in enum order; bit i of the clientTypes mask selects entry i. The last one is unknown to
 * docs/design/tenant-api.md.
 */
const CLIENT_TYPES = [
  'MCP_CLIENT_TYPE_PERSONAL',
  'MCP_CLIENT_TYPE_SHARED',
  'MCP_CLIENT_TYPE_SERVICE',
  'MCP_CLIENT_TYPE_EPHEMERAL',
  'MCP_CLIENT_TYPE_ROBOT',
] as const;
const ROBOT_BIT = 1 << 4;

const AUDIT = [
  undefined,
  'AUDIT_VERBOSITY_MINIMAL',
  'AUDIT_VERBOSITY_STANDARD',
  'AUDIT_VERBOSITY_FULL',
  'AUDIT_VERBOSITY_DEBUG',
] as const;
const TOOL_CLASSIFICATION = [
  undefined,
  'TOOL_CLASSIFICATION_READ',
  'TOOL_CLASSIFICATION_WRITE',
  'TOOL_CLASSIFICATION_DESTRUCTIVE',
  'TOOL_CLASSIFICATION_SENSITIVE',
  'TOOL_CLASSIFICATION_DANGEROUS',
] as const;
/** Lifecycle durations: unset, disabled ("0s"), 1 d, 7 d, 14 d, 30 d, 90 d, 180 d, 365 d. */
const LIFECYCLE = [
  undefined,
  '0s',
  '86400s',
  '604800s',
  '1209600s',
  '2592000s',
  '7776000s',
  '15552000s',
  '31536000s',
] as const;
/** Discovery intervals; "1.500s" is the odd value a typo in a Terraform plan produces. */
const INTERVAL = [undefined, '300s', '900s', '3600s', '21600s', '43200s', '86400s', '1.500s', '0s'] as const;
const CONCURRENCY = [undefined, 1, 2, 4, 8, 16] as const;

/** Wire names in the order protojson writes them. */
const SETTINGS_KEY_ORDER = [
  'allowedClientTypes',
  'auditVerbosity',
  'autoDiscoveryEnabled',
  'createdAt',
  'updatedAt',
  'defaultClientLifecycle',
  'defaultToolClassification',
  'discoveryInterval',
  'enabled',
  'preferCodeModeOverDirectTools',
  'requireToolApproval',
  'surfaceRequestableTools',
  'codeModeConcurrency',
  'untrustedJudgeDisable',
] as const;
const LIFECYCLE_KEY_ORDER = ['inactivityCloseAfter', 'inactivityHideAfter', 'retentionDeleteAfter'] as const;

/** The settings an administrator creates the object with. */
export function createModel(rng: Random): Uint8Array {
  const m = new Uint8Array(MODEL_SIZE);
  m[F.clientTypes] = rng.weighted([
    [0, 50],
    [0b0011, 30],
    [0b0111, 20],
  ]);
  m[F.auditVerbosity] = rng.weighted([
    [2, 80],
    [3, 20],
  ]);
  m[F.autoDiscovery] = rng.chance(0.8) ? 1 : 0;
  m[F.hideAfter] = 5;
  m[F.closeAfter] = 6;
  m[F.deleteAfter] = 8;
  m[F.toolClassification] = rng.weighted([
    [0, 30],
    [1, 50],
    [2, 20],
  ]);
  m[F.discoveryInterval] = 3;
  m[F.enabled] = 1;
  m[F.requireToolApproval] = rng.chance(0.7) ? 1 : 0;
  return m;
}

type Choice = readonly [number, number];

function pickOther(rng: Random, current: number, options: readonly Choice[]): number {
  const rest = options.filter(([v]) => v !== current);
  return rng.weighted(rest);
}

/**
 * One PUT: the one or two fields an administrator changes, as (field, new value) pairs.
 * `phase` is the position in the seeded history (0 → oldest, 1 → newest): fields the live API
 * gained later (code mode, the untrusted-content judge) are only touched past their release.
 */
export function chooseChange(
  model: Uint8Array,
  rng: Random,
  phase: number,
): Array<readonly [number, number]> {
  const fields: Choice[] = [
    [F.clientTypes, 14],
    [F.auditVerbosity, 12],
    [F.autoDiscovery, 6],
    [F.closeAfter, 5],
    [F.hideAfter, 5],
    [F.deleteAfter, 4],
    [F.toolClassification, 12],
    [F.discoveryInterval, 8],
    [F.enabled, phase > 0.3 ? 3 : 1],
    [F.requireToolApproval, 12],
    [F.surfaceRequestable, 6],
  ];
  if (phase > 0.2) fields.push([F.preferCodeMode, 6]);
  if (phase > 0.35) fields.push([F.codeModeConcurrency, 6]);
  if (phase > 0.55) fields.push([F.untrustedJudgeDisable, 4]);
  const count = rng.chance(0.25) ? 2 : 1;
  const changes: Array<readonly [number, number]> = [];
  for (let i = 0; i < count; i++) {
    const field = rng.weighted(fields.filter(([f]) => !changes.some(([c]) => c === f)));
    changes.push([field, newValue(field, model[field]!, rng)]);
  }
  return changes;
}

function newValue(field: number, current: number, rng: Random): number {
  switch (field) {
    case F.clientTypes: {
      const masks: Choice[] = [
        [0, 30],
        [0b0001, 10],
        [0b0011, 25],
        [0b0111, 15],
        [0b0110, 10],
        [0b1111, 5],
        [rng.int(1, 15), 5],
      ];
      const mask = pickOther(rng, current, masks);
      // A client type docs/design/tenant-api.md does not know yet, as a newer server would send it.
      return rng.chance(0.05) ? mask | ROBOT_BIT : mask;
    }
    case F.auditVerbosity:
      return pickOther(rng, current, [
        [0, 2],
        [1, 25],
        [2, 35],
        [3, 33],
        [4, 5],
      ]);
    case F.toolClassification:
      return pickOther(rng, current, [
        [0, 8],
        [1, 30],
        [2, 25],
        [3, 12],
        [4, 15],
        [5, 10],
      ]);
    case F.closeAfter:
    case F.hideAfter:
    case F.deleteAfter:
      return pickOther(rng, current, [
        [0, 3],
        [1, 12],
        [2, 8],
        [3, 15],
        [4, 12],
        [5, 20],
        [6, 15],
        [7, 8],
        [8, 7],
      ]);
    case F.discoveryInterval:
      return pickOther(rng, current, [
        [0, 4],
        [1, 10],
        [2, 20],
        [3, 30],
        [4, 15],
        [5, 8],
        [6, 8],
        [7, 2],
        [8, 3],
      ]);
    case F.codeModeConcurrency:
      return pickOther(rng, current, [
        [0, 20],
        [1, 25],
        [2, 25],
        [3, 15],
        [4, 10],
        [5, 5],
      ]);
    default:
      // Booleans; a foreign value (FOREIGN) becomes a plain true.
      return current === 1 ? 0 : 1;
  }
}

/** Applies changes to a model in place. */
export function applyChange(model: Uint8Array, changes: ReadonlyArray<readonly [number, number]>): void {
  for (const [field, value] of changes) model[field] = value;
}

const BOOLEAN = [undefined, true] as const;

/** Wire values of each field by model index; index 0 is the default protojson omits. */
const VOCABULARY: Readonly<Record<number, readonly unknown[]>> = {
  [F.auditVerbosity]: AUDIT,
  [F.toolClassification]: TOOL_CLASSIFICATION,
  [F.closeAfter]: LIFECYCLE,
  [F.hideAfter]: LIFECYCLE,
  [F.deleteAfter]: LIFECYCLE,
  [F.discoveryInterval]: INTERVAL,
  [F.codeModeConcurrency]: CONCURRENCY,
};

/** The wire value of one field of a model, or undefined when protojson would omit it. */
function fieldValue(field: number, v: number): unknown {
  if (field === F.clientTypes) {
    if (v === 0) return undefined;
    const list: string[] = [];
    for (let bit = 0; bit < CLIENT_TYPES.length; bit++) if (v & (1 << bit)) list.push(CLIENT_TYPES[bit]!);
    return list;
  }
  return (VOCABULARY[field] ?? BOOLEAN)[v];
}

const TOP_LEVEL: ReadonlyArray<readonly [string, number]> = [
  ['allowedClientTypes', F.clientTypes],
  ['auditVerbosity', F.auditVerbosity],
  ['autoDiscoveryEnabled', F.autoDiscovery],
  ['defaultToolClassification', F.toolClassification],
  ['discoveryInterval', F.discoveryInterval],
  ['enabled', F.enabled],
  ['preferCodeModeOverDirectTools', F.preferCodeMode],
  ['requireToolApproval', F.requireToolApproval],
  ['surfaceRequestableTools', F.surfaceRequestable],
  ['codeModeConcurrency', F.codeModeConcurrency],
  ['untrustedJudgeDisable', F.untrustedJudgeDisable],
];
const LIFECYCLE_FIELDS: ReadonlyArray<readonly [string, number]> = [
  ['inactivityCloseAfter', F.closeAfter],
  ['inactivityHideAfter', F.hideAfter],
  ['retentionDeleteAfter', F.deleteAfter],
];

/**
 * The snapshot as served: model fields in protojson order, defaults omitted. The lifecycle
 * message is always set on this object (the service creates it with the settings), so it is
 * written even when all three durations are unset.
 */
export function modelToWire(
  model: Uint8Array,
  createdAt: string,
  updatedAt: string,
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const clientTypes = fieldValue(F.clientTypes, model[F.clientTypes]!);
  if (clientTypes !== undefined) out['allowedClientTypes'] = clientTypes;
  const audit = fieldValue(F.auditVerbosity, model[F.auditVerbosity]!);
  if (audit !== undefined) out['auditVerbosity'] = audit;
  if (model[F.autoDiscovery] === 1) out['autoDiscoveryEnabled'] = true;
  out['createdAt'] = createdAt;
  out['updatedAt'] = updatedAt;
  const lifecycle: Record<string, unknown> = {};
  for (const [name, field] of LIFECYCLE_FIELDS) {
    const v = fieldValue(field, model[field]!);
    if (v !== undefined) lifecycle[name] = v;
  }
  out['defaultClientLifecycle'] = lifecycle;
  for (const [name, field] of TOP_LEVEL.slice(3)) {
    const v = fieldValue(field, model[field]!);
    if (v !== undefined) out[name] = v;
  }
  return out;
}

/**
 * Reads a served snapshot back into a model, so that generated changes can continue from
 * settings an EntrySpec wrote. Values outside the vocabulary become FOREIGN: the generator
 * then replaces them rather than guessing.
 */
export function wireToModel(wire: Record<string, unknown>): Uint8Array {
  const m = new Uint8Array(MODEL_SIZE);
  const types = wire['allowedClientTypes'];
  if (Array.isArray(types)) {
    let mask = 0;
    for (const t of types) {
      const bit = CLIENT_TYPES.indexOf(t as (typeof CLIENT_TYPES)[number]);
      mask = bit < 0 || mask === FOREIGN ? FOREIGN : mask | (1 << bit);
    }
    m[F.clientTypes] = mask;
  } else if (types !== undefined && types !== null) m[F.clientTypes] = FOREIGN;
  const lifecycle = wire['defaultClientLifecycle'];
  const lc =
    typeof lifecycle === 'object' && lifecycle !== null ? (lifecycle as Record<string, unknown>) : {};
  for (const [name, field] of LIFECYCLE_FIELDS) m[field] = indexOf(field, lc[name]);
  for (const [name, field] of TOP_LEVEL.slice(1)) m[field] = indexOf(field, wire[name]);
  return m;
}

function indexOf(field: number, value: unknown): number {
  // An explicit proto3 default in an EntrySpec (false, 0, "") reads as the default.
  if (value === undefined || value === null || value === false || value === 0 || value === '') return 0;
  const index = (VOCABULARY[field] ?? BOOLEAN).indexOf(value);
  return index < 0 ? FOREIGN : index;
}

/**
 * The wire value (protojson-omitted when default) each changed field takes; used to apply a
 * generated change to a snapshot that may hold fields the model does not know.
 */
export function applyChangeToWire(
  wire: Record<string, unknown>,
  changes: ReadonlyArray<readonly [number, number]>,
): Record<string, unknown> {
  const out: Record<string, unknown> = { ...wire };
  const lifecycle: Record<string, unknown> =
    typeof out['defaultClientLifecycle'] === 'object' && out['defaultClientLifecycle'] !== null
      ? { ...(out['defaultClientLifecycle'] as Record<string, unknown>) }
      : {};
  for (const [field, value] of changes) {
    const v = fieldValue(field, value);
    const lifecycleName = LIFECYCLE_FIELDS.find(([, f]) => f === field)?.[0];
    const name = lifecycleName ?? TOP_LEVEL.find(([, f]) => f === field)?.[0];
    if (name === undefined) continue;
    const target = lifecycleName === undefined ? out : lifecycle;
    if (v === undefined) delete target[name];
    else target[name] = v;
  }
  out['defaultClientLifecycle'] = orderKeys(lifecycle, LIFECYCLE_KEY_ORDER);
  return orderKeys(out, SETTINGS_KEY_ORDER);
}

/** Merges EntrySpec `set` fields over a snapshot: one level deep for objects, defaults omitted. */
export function mergeSettings(
  wire: Record<string, unknown>,
  set: Record<string, unknown>,
): Record<string, unknown> {
  const out: Record<string, unknown> = { ...wire };
  for (const [key, value] of Object.entries(set)) {
    const before = out[key];
    if (
      typeof value === 'object' &&
      value !== null &&
      !Array.isArray(value) &&
      typeof before === 'object' &&
      before !== null &&
      !Array.isArray(before)
    ) {
      const merged: Record<string, unknown> = { ...(before as Record<string, unknown>) };
      for (const [k, v] of Object.entries(value)) merged[k] = v;
      out[key] = key === 'defaultClientLifecycle' ? orderKeys(merged, LIFECYCLE_KEY_ORDER) : merged;
    } else {
      out[key] = value;
    }
  }
  return orderKeys(out, SETTINGS_KEY_ORDER);
}

/** `"name":value` for every value of every field, precomputed: serving writes snapshots by concatenation. */
function fragments(name: string, field: number, count: number): string[] {
  return Array.from({ length: count }, (_, v) => {
    const value = fieldValue(field, v);
    return value === undefined ? '' : `${JSON.stringify(name)}:${JSON.stringify(value)}`;
  });
}
const CLIENT_TYPE_JSON = fragments('allowedClientTypes', F.clientTypes, 1 << CLIENT_TYPES.length);
const FIELD_JSON = TOP_LEVEL.map(([name, field]) =>
  fragments(name, field, (VOCABULARY[field] ?? BOOLEAN).length),
);
const LIFECYCLE_JSON = LIFECYCLE_FIELDS.map(([name, field]) => fragments(name, field, LIFECYCLE.length));

/** Exactly `JSON.stringify(modelToWire(model, createdAt, updatedAt))`, without building the object. */
export function modelToJson(model: Uint8Array, createdAt: string, updatedAt: string): string {
  let json = '{';
  const clientTypes = CLIENT_TYPE_JSON[model[F.clientTypes]!]!;
  if (clientTypes !== '') json += `${clientTypes},`;
  const audit = FIELD_JSON[1]![model[F.auditVerbosity]!]!;
  if (audit !== '') json += `${audit},`;
  const discovery = FIELD_JSON[2]![model[F.autoDiscovery]!]!;
  if (discovery !== '') json += `${discovery},`;
  json += `"createdAt":"${createdAt}","updatedAt":"${updatedAt}","defaultClientLifecycle":{`;
  let first = true;
  for (let i = 0; i < LIFECYCLE_FIELDS.length; i++) {
    const fragment = LIFECYCLE_JSON[i]![model[LIFECYCLE_FIELDS[i]![1]]!]!;
    if (fragment === '') continue;
    json += first ? fragment : `,${fragment}`;
    first = false;
  }
  json += '}';
  for (let i = 3; i < TOP_LEVEL.length; i++) {
    const fragment = FIELD_JSON[i]![model[TOP_LEVEL[i]![1]]!]!;
    if (fragment !== '') json += `,${fragment}`;
  }
  return `${json}}`;
}
