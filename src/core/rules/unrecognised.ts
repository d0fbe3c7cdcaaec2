/**
 * Values this version of govtrail does not know (the KNOWN_* lists of wire.ts): what the
 * `unrecognised_values` condition looks for, and what its alert lists.
 */
import type { AnnotationRow, EntryRow } from '../normalise/types.js';
import {
  KNOWN_ACTOR_KINDS,
  KNOWN_ANNOTATION_KINDS,
  KNOWN_AUDIT_VERBOSITIES,
  KNOWN_CHANGE_KINDS,
  KNOWN_CLIENT_TYPES,
  KNOWN_TOOL_CLASSIFICATIONS,
  type WireSettings,
} from '../wire.js';

/** What of a stored entry the scan looks at. */
export interface EntryFacts {
  readonly entry: EntryRow;
  readonly annotations: readonly AnnotationRow[];
  /** The new snapshot (null for a hard delete). */
  readonly snapshot: WireSettings | null;
}

/** A value this version does not know, and where it was seen. */
export interface UnrecognisedValue {
  /** `changeKind`, `actor.kind`, `annotations[2].kind`, `snapshot.auditVerbosity`, … */
  readonly where: string;
  readonly value: unknown;
}

/** Values in the entry that are not in this version's KNOWN_* lists (null and absent are not unknown). */
export function unrecognisedValues(ctx: EntryFacts): UnrecognisedValue[] {
  const out: UnrecognisedValue[] = [];
  scanUnrecognised(ctx, out);
  return out;
}

/**
 * Finds the values unrecognisedValues lists: into `out`, or, without it, only whether there is
 * one (a first run asks that of every entry: no list, and no `where` text for known values).
 */
export function scanUnrecognised(ctx: EntryFacts, out?: UnrecognisedValue[]): boolean {
  let found = false;
  // `where` is an annotation's ordinal for its kind: the text is written only for a value found.
  const check = (where: string | number, value: unknown, known: ReadonlySet<string>): void => {
    if (value === null || value === undefined) return;
    if (typeof value === 'string' && known.has(value)) return;
    found = true;
    out?.push({ where: typeof where === 'number' ? `annotations[${where}].kind` : where, value });
  };
  check('changeKind', ctx.entry.changeKind, KNOWN.changeKinds);
  check('actor.kind', ctx.entry.actorKind, KNOWN.actorKinds);
  for (const a of ctx.annotations) check(a.ordinal, a.kind, KNOWN.annotationKinds);
  const s = ctx.snapshot;
  if (s !== null && typeof s === 'object') {
    if (Array.isArray(s.allowedClientTypes)) {
      for (const item of s.allowedClientTypes) check('snapshot.allowedClientTypes', item, KNOWN.clientTypes);
    }
    check('snapshot.auditVerbosity', s.auditVerbosity, KNOWN.auditVerbosities);
    check('snapshot.defaultToolClassification', s.defaultToolClassification, KNOWN.toolClassifications);
  }
  return found;
}

/** This version's KNOWN_* lists as sets: looked up for every entry a first run walks. */
const KNOWN = {
  changeKinds: new Set<string>(KNOWN_CHANGE_KINDS),
  actorKinds: new Set<string>(KNOWN_ACTOR_KINDS),
  annotationKinds: new Set<string>(KNOWN_ANNOTATION_KINDS),
  clientTypes: new Set<string>(KNOWN_CLIENT_TYPES),
  auditVerbosities: new Set<string>(KNOWN_AUDIT_VERBOSITIES),
  toolClassifications: new Set<string>(KNOWN_TOOL_CLASSIFICATIONS),
};
