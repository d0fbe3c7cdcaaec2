/**
 * The baseline file (docs/design/conformance.md): a declared policy of controls over the tenant's
 * settings, and the exceptions accepted to it. Parsing and validation are pure: the caller reads
 * the file and passes its text. Every refusal names the file and the line, so an operator can fix
 * it without guessing.
 */
import { createHash } from 'node:crypto';
import { isMap, isScalar, isSeq, LineCounter, type Node, parseDocument, type YAMLMap } from 'yaml';
import { SEVERITIES, type Severity } from '../alert.js';
import type { Ranks } from '../diff.js';
import { GovtrailError } from '../errors.js';
import { parseTimestamp } from '../normalise/time.js';
import { describeYamlError } from '../yaml-error.js';
import {
  type Bound,
  CONTROL_FIELDS,
  EXPECTATION_KEYS,
  type Expectation,
  type FieldRef,
  fieldRef,
  parseBaselineDuration,
} from './expect.js';

/** One control: a field of the settings and what it must hold. */
export interface Control {
  /** Unique in the file, e.g. `AIG-01`. */
  readonly id: string;
  /** Human title; the id when the file gives none. */
  readonly title: string;
  readonly field: FieldRef;
  readonly expect: Expectation;
  /** The expectation as written, for reports (`{ at_least: AUDIT_VERBOSITY_STANDARD }`). */
  readonly expectText: string;
  readonly severity: Severity;
  /** Framework name → control references, as written. */
  readonly frameworks: Readonly<Record<string, readonly string[]>>;
}

/** One accepted deviation: a value of one control, for some tenants, for a time. */
export interface BaselineException {
  readonly control: string;
  readonly tenants: readonly string[];
  /** The accepted value, as written (compared with the field's value by meaning). */
  readonly value: unknown;
  readonly rationale: string;
  readonly approvedBy: string;
  /** Nanosecond UTC key of `approved_at`; null = from the time the baseline text was first loaded. */
  readonly approvedAt: string | null;
  readonly ticket: string | null;
  /** Nanosecond UTC key of `expires`: the exception no longer holds from this instant on. */
  readonly expires: string;
}

/** A validated baseline. Its identity is `id` plus the sha256 of its bytes. */
export interface Baseline {
  readonly id: string;
  readonly title: string;
  readonly controls: readonly Control[];
  readonly exceptions: readonly BaselineException[];
  /** Hex sha256 of the file's bytes. */
  readonly sha256: string;
  /** The file's text, kept so that a report and the evidence pack can show what judged. */
  readonly text: string;
}

const BASELINE_ID = /^[a-z0-9][a-z0-9-]*$/;
const TOP_KEYS = ['baseline', 'title', 'controls', 'exceptions'];
const CONTROL_KEYS = ['id', 'title', 'field', 'expect', 'severity', 'frameworks'];
const EXCEPTION_KEYS = [
  'control',
  'tenants',
  'value',
  'rationale',
  'approved_by',
  'approved_at',
  'ticket',
  'expires',
];

/** Hex sha256 of a baseline's bytes. */
export function baselineSha256(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

class Refusal {
  constructor(
    readonly node: Node | null | undefined,
    readonly problem: string,
  ) {}
}

function refuse(node: Node | null | undefined, problem: string): never {
  throw new Refusal(node, problem);
}

/**
 * Parses and validates a baseline file.
 * @throws GovtrailError `BASELINE_INVALID`, message `FILE:LINE: problem`.
 */
export function parseBaseline(text: string, file: string, ranks: Ranks): Baseline {
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, prettyErrors: false, uniqueKeys: true });
  const lineOf = (node: Node | null | undefined): number =>
    node?.range === undefined || node.range === null ? 1 : lines.linePos(node.range[0]).line;
  if (doc.errors.length > 0) {
    const err = doc.errors[0];
    const line = err?.linePos?.[0]?.line ?? 1;
    throw new GovtrailError(
      'BASELINE_INVALID',
      `${file}:${line}: ${describeYamlError(err, text).replace(/ at line \d+, column \d+$/, '')}`,
    );
  }
  try {
    return build(doc.contents, text, ranks);
  } catch (err) {
    if (err instanceof Refusal)
      throw new GovtrailError('BASELINE_INVALID', `${file}:${lineOf(err.node)}: ${err.problem}`);
    throw err;
  }
}

function mapOf(node: unknown, what: string, keys: readonly string[]): YAMLMap<unknown, unknown> {
  if (!isMap(node)) refuse(node as Node, `${what} must be a mapping`);
  for (const pair of node.items) {
    const k = isScalar(pair.key) ? String(pair.key.value) : undefined;
    if (k === undefined || !keys.includes(k)) {
      refuse(
        pair.key as Node,
        `${what}: unknown key ${JSON.stringify(k ?? '?')} (known: ${keys.join(', ')})`,
      );
    }
  }
  return node;
}

function child(map: YAMLMap<unknown, unknown>, key: string): Node | undefined {
  return map.get(key, true) as Node | undefined;
}

function plain(node: Node | undefined): unknown {
  return node === undefined ? undefined : node.toJSON();
}

function requiredText(map: YAMLMap<unknown, unknown>, key: string, what: string): string {
  const n = child(map, key);
  const v = plain(n);
  if (typeof v !== 'string' || v.trim() === '')
    refuse(n ?? map, `${what}: ${key} is required (a non-empty text)`);
  return v.trim();
}

function optionalText(map: YAMLMap<unknown, unknown>, key: string, what: string): string | null {
  const n = child(map, key);
  if (n === undefined) return null;
  const v = plain(n);
  if (typeof v !== 'string' && typeof v !== 'number') refuse(n, `${what}: ${key} must be a text`);
  return String(v);
}

function build(root: unknown, text: string, ranks: Ranks): Baseline {
  const top = mapOf(root, 'the baseline file', TOP_KEYS);
  const idNode = child(top, 'baseline');
  const id = plain(idNode);
  if (typeof id !== 'string' || !BASELINE_ID.test(id)) {
    refuse(
      idNode ?? top,
      'baseline: the id is required: lower-case letters, digits and "-", starting with a letter or digit',
    );
  }
  const title = optionalText(top, 'title', 'the baseline file') ?? id;
  const controlsNode = child(top, 'controls');
  if (!isSeq(controlsNode) || controlsNode.items.length === 0)
    refuse(controlsNode ?? top, 'controls: a non-empty list is required');
  const controls: Control[] = [];
  const seen = new Set<string>();
  for (const item of controlsNode.items) {
    const c = buildControl(item as Node, ranks);
    if (seen.has(c.id))
      refuse(child(item as YAMLMap<unknown, unknown>, 'id'), `duplicate control id ${c.id}`);
    seen.add(c.id);
    controls.push(c);
  }
  const exceptions: BaselineException[] = [];
  const excNode = child(top, 'exceptions');
  if (excNode !== undefined && !(isScalar(excNode) && excNode.value === null)) {
    if (!isSeq(excNode)) refuse(excNode, 'exceptions must be a list');
    for (const item of excNode.items) exceptions.push(buildException(item as Node, controls));
  }
  return Object.freeze({
    id,
    title,
    controls: Object.freeze(controls),
    exceptions: Object.freeze(exceptions),
    sha256: baselineSha256(text),
    text,
  });
}

function buildControl(node: Node, ranks: Ranks): Control {
  const m = mapOf(node, 'a control', CONTROL_KEYS);
  const id = requiredText(m, 'id', 'a control');
  const what = `control ${id}`;
  const fieldNode = child(m, 'field');
  const fieldName = plain(fieldNode);
  const field = typeof fieldName === 'string' ? fieldRef(fieldName) : undefined;
  if (field === undefined) {
    refuse(
      fieldNode ?? m,
      `${what}: unknown field ${JSON.stringify(fieldName ?? null)} (known: ${CONTROL_FIELDS.map((f) => f.column).join(', ')}, or extra_fields.<wireName>)`,
    );
  }
  const expectNode = child(m, 'expect');
  if (expectNode === undefined) refuse(m, `${what}: expect is required`);
  const expect = buildExpectation(expectNode, field, ranks, what);
  const sevNode = child(m, 'severity');
  const sev = plain(sevNode) ?? 'medium';
  if (!SEVERITIES.includes(sev as Severity))
    refuse(sevNode, `${what}: severity must be one of ${SEVERITIES.join(', ')}`);
  const frameworks: Record<string, readonly string[]> = {};
  const fwNode = child(m, 'frameworks');
  if (fwNode !== undefined) {
    if (!isMap(fwNode))
      refuse(fwNode, `${what}: frameworks must be a mapping of framework to a list of references`);
    for (const pair of fwNode.items) {
      const name = isScalar(pair.key) ? String(pair.key.value) : '';
      const refs = plain(pair.value as Node);
      const list = typeof refs === 'string' ? [refs] : refs;
      if (
        name === '' ||
        !Array.isArray(list) ||
        !list.every((r) => typeof r === 'string' || typeof r === 'number')
      ) {
        refuse(
          (pair.value as Node) ?? (pair.key as Node),
          `${what}: frameworks.${name}: a list of references is required`,
        );
      }
      frameworks[name] = Object.freeze(list.map(String));
    }
  }
  return Object.freeze({
    id,
    title: optionalText(m, 'title', what) ?? id,
    field,
    expect,
    expectText: JSON.stringify(plain(expectNode)),
    severity: sev as Severity,
    frameworks: Object.freeze(frameworks),
  });
}

/** The rank order of an enum field, when the rule pack ranks it. */
function orderOf(field: FieldRef, ranks: Ranks): readonly string[] | undefined {
  if (field.name === 'audit_verbosity') return ranks.auditVerbosity;
  if (field.name === 'default_tool_classification') return ranks.defaultToolClassification;
  return undefined;
}

function buildBound(node: Node, field: FieldRef, ranks: Ranks, what: string, key: string): Bound {
  const v = plain(node);
  if (field.kind === 'enum') {
    const order = orderOf(field, ranks);
    if (order === undefined)
      refuse(
        node,
        `${what}: ${key}: ${field.name} has no rank order (only audit_verbosity and default_tool_classification are ranked)`,
      );
    const index = typeof v === 'string' ? order.indexOf(v) : -1;
    if (index < 0)
      refuse(node, `${what}: ${key}: unranked value ${JSON.stringify(v)} (ranked: ${order.join(', ')})`);
    return { type: 'rank', order, index, text: v as string };
  }
  if (field.kind === 'duration' || (field.kind === 'extra' && typeof v === 'string')) {
    const seconds = typeof v === 'string' ? parseBaselineDuration(v) : undefined;
    if (seconds === undefined)
      refuse(
        node,
        `${what}: ${key}: a duration such as 365d, 12h or 30m is required, got ${JSON.stringify(v)}`,
      );
    return { type: 'duration', seconds, text: v as string };
  }
  if (field.kind === 'extra' && typeof v === 'number' && Number.isFinite(v))
    return { type: 'number', value: v };
  refuse(node, `${what}: ${key} does not apply to ${field.name} (${field.kind})`);
}

function checkValue(node: Node, field: FieldRef, ranks: Ranks, what: string, key: string): unknown {
  const v = plain(node);
  switch (field.kind) {
    case 'boolean':
      if (typeof v !== 'boolean')
        refuse(node, `${what}: ${key}: ${field.name} is true or false, got ${JSON.stringify(v)}`);
      return v;
    case 'enum':
      if (typeof v !== 'string' && v !== null)
        refuse(node, `${what}: ${key}: ${field.name} is an enum name, got ${JSON.stringify(v)}`);
      void ranks;
      return v;
    case 'enumList':
      if (!Array.isArray(v) || !v.every((x) => typeof x === 'string')) {
        refuse(node, `${what}: ${key}: ${field.name} is a list of names, got ${JSON.stringify(v)}`);
      }
      return v;
    case 'duration':
      if (v === null) return null;
      if (typeof v !== 'string' || parseBaselineDuration(v) === undefined) {
        refuse(node, `${what}: ${key}: a duration such as 365d is required, got ${JSON.stringify(v)}`);
      }
      return v;
    case 'extra':
      return v;
  }
}

function buildExpectation(node: Node, field: FieldRef, ranks: Ranks, what: string): Expectation {
  if (!isMap(node) || node.items.length !== 1) {
    refuse(node, `${what}: expect must be a mapping with exactly one of ${EXPECTATION_KEYS.join(', ')}`);
  }
  const pair = node.items[0] as { key: Node; value: Node | null };
  const key = isScalar(pair.key) ? String(pair.key.value) : '';
  const valueNode = (pair.value ?? pair.key) as Node;
  switch (key) {
    case 'equals':
      return { kind: 'equals', value: checkValue(valueNode, field, ranks, what, key) };
    case 'one_of': {
      if (!isSeq(pair.value) || pair.value.items.length === 0)
        refuse(valueNode, `${what}: one_of: a non-empty list is required`);
      return {
        kind: 'one_of',
        values: pair.value.items.map((n) => checkValue(n as Node, field, ranks, what, key)),
      };
    }
    case 'at_least':
    case 'at_most':
      return { kind: key, bound: buildBound(valueNode, field, ranks, what, key) };
    case 'subset_of': {
      if (field.kind !== 'enumList' && field.kind !== 'extra')
        refuse(valueNode, `${what}: subset_of applies to a list field, not ${field.name}`);
      const v = plain(valueNode);
      if (!Array.isArray(v) || v.length === 0 || !v.every((x) => typeof x === 'string')) {
        refuse(valueNode, `${what}: subset_of: a non-empty list of names is required`);
      }
      return { kind: 'subset_of', values: Object.freeze([...v]) };
    }
    case 'not_empty': {
      if (field.kind === 'boolean')
        refuse(pair.key, `${what}: not_empty does not apply to a boolean (use equals)`);
      const v = plain(pair.value ?? undefined);
      if (v !== true && v !== null && v !== undefined)
        refuse(valueNode, `${what}: not_empty takes true or nothing`);
      return { kind: 'not_empty' };
    }
    default:
      refuse(
        pair.key,
        `${what}: unknown expectation ${JSON.stringify(key)} (known: ${EXPECTATION_KEYS.join(', ')})`,
      );
  }
}

function timeKey(
  map: YAMLMap<unknown, unknown>,
  key: string,
  what: string,
  required: boolean,
): string | null {
  const n = child(map, key);
  if (n === undefined) {
    if (required) refuse(map, `${what}: ${key} is required (an RFC 3339 time such as 2027-03-31T00:00:00Z)`);
    return null;
  }
  const parsed = parseTimestamp(plain(n));
  if (parsed === undefined)
    refuse(n, `${what}: ${key} must be an RFC 3339 time such as 2027-03-31T00:00:00Z`);
  return parsed.key;
}

function buildException(node: Node, controls: readonly Control[]): BaselineException {
  const m = mapOf(node, 'an exception', EXCEPTION_KEYS);
  const controlNode = child(m, 'control');
  const controlId = plain(controlNode);
  const control = controls.find((c) => c.id === controlId);
  if (control === undefined)
    refuse(controlNode ?? m, `exception for unknown control ${JSON.stringify(controlId ?? null)}`);
  const what = `exception for ${control.id}`;
  const tenantsNode = child(m, 'tenants');
  const tenants = plain(tenantsNode);
  if (
    !Array.isArray(tenants) ||
    tenants.length === 0 ||
    !tenants.every((t) => typeof t === 'string' && t !== '')
  ) {
    refuse(tenantsNode ?? m, `${what}: tenants: a non-empty list of tenant names is required`);
  }
  const valueNode = child(m, 'value');
  if (valueNode === undefined) refuse(m, `${what}: value is required (the value accepted)`);
  const rationale = requiredText(m, 'rationale', what);
  const approvedBy = requiredText(m, 'approved_by', what);
  const approvedAt = timeKey(m, 'approved_at', what, false);
  const expires = timeKey(m, 'expires', what, true) as string;
  if (approvedAt !== null && approvedAt >= expires)
    refuse(child(m, 'expires'), `${what}: expires must be after approved_at`);
  return Object.freeze({
    control: control.id,
    tenants: Object.freeze([...(tenants as string[])]),
    value: checkValue(
      valueNode,
      control.field,
      { auditVerbosity: [], defaultToolClassification: [] },
      what,
      'value',
    ),
    rationale,
    approvedBy,
    approvedAt,
    ticket: optionalText(m, 'ticket', what),
    expires,
  });
}
