/**
 * A validator of OCSF events against the schema export of test/fixtures/ocsf (a subset of the OCSF
 * 1.8.0 export: the classes govtrail emits and every object they reach). It walks the export:
 *
 * - required attributes present (those of a profile only when `metadata.profiles` names it);
 * - no attribute the class or object does not define, none of a profile not named, none
 *   deprecated; free-form objects (`object_type` "object", such as `unmapped`) and `json_t` values
 *   are not looked into;
 * - no `null`; arrays where `is_array`, single values elsewhere; types per the dictionary (string,
 *   integer/long, float, boolean, regexes and length limits of derived types, port range);
 * - integer enums are closed sets; a sibling caption (`activity_name`, `severity`, `status`,
 *   `type_name`, `class_name`, `category_name`, …) equals its id's caption, except for 99 Other,
 *   where it carries the source's own value;
 * - object constraints (`at_least_one`, `just_one`);
 * - `type_uid` = `class_uid` × 100 + `activity_id`, `category_uid` that of the class,
 *   `metadata.version` the schema version.
 *
 * Returns the problems found, each prefixed with the attribute path; an empty list means valid.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

interface AttributeDef {
  readonly type: string;
  readonly requirement?: string;
  readonly object_type?: string;
  readonly is_array?: boolean;
  readonly enum?: Readonly<Record<string, { readonly caption?: string }>>;
  readonly sibling?: string;
  readonly profiles?: readonly string[] | null;
  readonly '@deprecated'?: unknown;
}

interface ObjectDef {
  readonly name: string;
  readonly caption?: string;
  readonly attributes: Readonly<Record<string, AttributeDef>>;
  readonly constraints?: { readonly at_least_one?: readonly string[]; readonly just_one?: readonly string[] };
}

interface ClassDef extends ObjectDef {
  readonly uid: number;
  readonly category_uid: number;
}

interface TypeDef {
  readonly type?: string;
  readonly regex?: string;
  readonly max_len?: number;
  readonly range?: readonly [number, number];
  readonly values?: readonly unknown[];
}

export interface OcsfSchema {
  readonly version: string;
  readonly types: Readonly<Record<string, TypeDef>>;
  readonly classes: Readonly<Record<string, ClassDef>>;
  readonly objects: Readonly<Record<string, ObjectDef>>;
}

export const OCSF_FIXTURES = path.join(
  path.dirname(fileURLToPath(import.meta.url)),
  '..',
  'fixtures',
  'ocsf',
);

let cached: OcsfSchema | undefined;

/** The 1.8.0 schema subset of the fixtures. */
export function loadOcsfSchema(): OcsfSchema {
  cached ??= JSON.parse(
    readFileSync(path.join(OCSF_FIXTURES, 'schema-1.8.0-subset.json'), 'utf8'),
  ) as OcsfSchema;
  return cached;
}

/** The class definition of a class_uid, or undefined when the fixtures do not hold it. */
export function ocsfClassOf(classUid: number, schema: OcsfSchema = loadOcsfSchema()): ClassDef | undefined {
  return Object.values(schema.classes).find((c) => c.uid === classUid);
}

const INT32 = 2 ** 31;
/** Object types whose content is free (`unmapped`, `xattributes`). */
const FREE_FORM_OBJECT = 'object';

/** Validates one event; returns the problems found (empty when it is valid). */
export function validateOcsfEvent(event: unknown, schema: OcsfSchema = loadOcsfSchema()): string[] {
  const errors: string[] = [];
  if (!isObject(event)) return ['event: not a JSON object'];
  const classUid = event['class_uid'];
  if (typeof classUid !== 'number') return ['class_uid: required integer is missing'];
  const cls = ocsfClassOf(classUid, schema);
  if (cls === undefined) return [`class_uid: ${classUid} is not a class of the schema fixtures`];
  const metadata = event['metadata'];
  const declared = isObject(metadata) && Array.isArray(metadata['profiles']) ? metadata['profiles'] : [];
  const profiles = new Set(declared.filter((p): p is string => typeof p === 'string'));
  const v = new Walker(schema, profiles, errors);
  v.object(event, cls, '');

  const activity = event['activity_id'];
  if (typeof activity === 'number' && event['type_uid'] !== cls.uid * 100 + activity)
    errors.push(
      `type_uid: ${String(event['type_uid'])} is not class_uid × 100 + activity_id (${cls.uid * 100 + activity})`,
    );
  if (event['category_uid'] !== cls.category_uid)
    errors.push(
      `category_uid: ${String(event['category_uid'])} is not the class's category ${cls.category_uid}`,
    );
  if (isObject(metadata) && metadata['version'] !== schema.version)
    errors.push(`metadata.version: ${JSON.stringify(metadata['version'])} is not ${schema.version}`);
  return errors;
}

class Walker {
  constructor(
    private readonly schema: OcsfSchema,
    private readonly profiles: ReadonlySet<string>,
    private readonly errors: string[],
  ) {}

  object(value: Record<string, unknown>, def: ObjectDef, at: string): void {
    const where = (k: string) => (at === '' ? k : `${at}.${k}`);
    for (const [key, attr] of Object.entries(def.attributes)) {
      if (attr.requirement === 'required' && this.applies(attr) && !(key in value))
        this.errors.push(`${where(key)}: required attribute is missing`);
    }
    for (const [key, item] of Object.entries(value)) {
      const attr = def.attributes[key];
      if (attr === undefined) {
        this.errors.push(`${where(key)}: not an attribute of ${def.name}`);
        continue;
      }
      if (!this.applies(attr))
        this.errors.push(
          `${where(key)}: belongs to profile ${(attr.profiles ?? []).join('/')}, not named in metadata.profiles`,
        );
      if (attr['@deprecated'] !== undefined) this.errors.push(`${where(key)}: deprecated attribute`);
      this.attribute(item, attr, where(key));
      this.sibling(value, key, attr, where);
    }
    const c = def.constraints;
    if (c?.at_least_one !== undefined && !c.at_least_one.some((k) => k in value))
      this.errors.push(`${at || def.name}: needs at least one of ${c.at_least_one.join(', ')}`);
    if (c?.just_one !== undefined && c.just_one.filter((k) => k in value).length !== 1)
      this.errors.push(`${at || def.name}: needs exactly one of ${c.just_one.join(', ')}`);
  }

  /** An attribute without profiles always applies; one with profiles only when one is named. */
  private applies(attr: AttributeDef): boolean {
    const p = attr.profiles;
    return p === undefined || p === null || p.length === 0 || p.some((x) => this.profiles.has(x));
  }

  private attribute(value: unknown, attr: AttributeDef, at: string): void {
    if (value === null || value === undefined) {
      this.errors.push(`${at}: null is not a value (leave the attribute out)`);
      return;
    }
    if (attr.is_array === true) {
      if (!Array.isArray(value)) {
        this.errors.push(`${at}: must be an array`);
        return;
      }
      value.forEach((item, i) => {
        if (item === null) this.errors.push(`${at}[${i}]: null is not a value`);
        else this.single(item, attr, `${at}[${i}]`);
      });
      return;
    }
    if (Array.isArray(value) && attr.type !== 'json_t') {
      this.errors.push(`${at}: must not be an array`);
      return;
    }
    this.single(value, attr, at);
  }

  private single(value: unknown, attr: AttributeDef, at: string): void {
    if (attr.type === 'object_t') {
      if (!isObject(value)) {
        this.errors.push(`${at}: must be an object (${attr.object_type})`);
        return;
      }
      if (attr.object_type === FREE_FORM_OBJECT) return;
      const def = attr.object_type === undefined ? undefined : this.schema.objects[attr.object_type];
      if (def === undefined) {
        this.errors.push(`${at}: object type ${String(attr.object_type)} is not in the schema fixtures`);
        return;
      }
      this.object(value, def, at);
      return;
    }
    if (attr.type === 'json_t') return;
    this.scalar(value, attr.type, at);
    if (attr.enum !== undefined && !(String(value) in attr.enum))
      this.errors.push(`${at}: ${JSON.stringify(value)} is not one of ${Object.keys(attr.enum).join(', ')}`);
  }

  private scalar(value: unknown, type: string, at: string): void {
    const def = this.schema.types[type];
    if (def === undefined) {
      this.errors.push(`${at}: type ${type} is not in the dictionary`);
      return;
    }
    const base = def.type ?? type;
    switch (base) {
      case 'string_t':
        if (typeof value !== 'string') {
          this.errors.push(`${at}: must be a string (${type}), not ${JSON.stringify(value)}`);
          return;
        }
        if (def.regex !== undefined && !new RegExp(def.regex).test(value))
          this.errors.push(`${at}: ${JSON.stringify(value)} does not match the ${type} pattern`);
        if (def.max_len !== undefined && value.length > def.max_len)
          this.errors.push(`${at}: longer than ${def.max_len} characters (${type})`);
        return;
      case 'integer_t':
        if (!Number.isSafeInteger(value) || Math.abs(value as number) >= INT32)
          this.errors.push(`${at}: must be a 32-bit integer (${type}), not ${JSON.stringify(value)}`);
        else if (
          def.range !== undefined &&
          ((value as number) < def.range[0] || (value as number) > def.range[1])
        )
          this.errors.push(`${at}: ${String(value)} is outside ${def.range.join('..')}`);
        return;
      case 'long_t':
        if (!Number.isSafeInteger(value))
          this.errors.push(`${at}: must be an integer (${type}), not ${JSON.stringify(value)}`);
        return;
      case 'float_t':
        if (typeof value !== 'number' || !Number.isFinite(value))
          this.errors.push(`${at}: must be a number (${type}), not ${JSON.stringify(value)}`);
        return;
      case 'boolean_t':
        if (typeof value !== 'boolean')
          this.errors.push(`${at}: must be true or false (${type}), not ${JSON.stringify(value)}`);
        return;
      default:
        this.errors.push(`${at}: type ${type} (${base}) is not understood by this validator`);
    }
  }

  /** An enum's sibling carries its caption, except for 99 Other (the source's own value). */
  private sibling(
    value: Record<string, unknown>,
    key: string,
    attr: AttributeDef,
    where: (k: string) => string,
  ): void {
    if (attr.sibling === undefined || attr.enum === undefined || !(attr.sibling in value)) return;
    const id = value[key];
    const caption = attr.enum[String(id)]?.caption;
    if (caption === undefined || id === 99) return;
    if (value[attr.sibling] !== caption)
      this.errors.push(
        `${where(attr.sibling)}: ${JSON.stringify(value[attr.sibling])} is not the caption of ${key} ${String(id)} (${JSON.stringify(caption)})`,
      );
  }
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Asserts every event validates; the message lists the first problems with the event's uid. */
export function ocsfProblems(events: readonly unknown[], schema: OcsfSchema = loadOcsfSchema()): string[] {
  const out: string[] = [];
  for (const e of events) {
    const problems = validateOcsfEvent(e, schema);
    if (problems.length === 0) continue;
    const uid = isObject(e) && isObject(e['metadata']) ? String(e['metadata']['uid']) : '?';
    out.push(...problems.map((p) => `${uid}: ${p}`));
  }
  return out;
}
