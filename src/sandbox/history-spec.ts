/**
 * Entries made at run time: built by hand from an {@link EntrySpec}, or generated to continue
 * the settings' evolution. Both come out as wire objects; the store keeps them as the JSON text
 * they are served as.
 */
import { CHANGE_KINDS, CREATE, PUT } from './history-seeded.js';
import { ksuidAt } from './ksuid.js';
import { annotation, annotationOfKind, generateMetadata, type Users } from './metadata.js';
import type { Random } from './random.js';
import {
  applyChangeToWire,
  chooseChange,
  createModel,
  mergeSettings,
  modelToWire,
  wireToModel,
} from './settings.js';
import {
  formatTimestamp,
  type Instant,
  omitDefaults,
  type SandboxActor,
  type SandboxAnnotation,
  type SandboxEntry,
  type SandboxMetadata,
} from './wire.js';

/** An annotation in an {@link EntrySpec}; missing parts are filled in from the kind. */
export interface AnnotationSpec {
  key?: string;
  kind?: string;
  rawValue?: string;
  displayValue?: string;
  displayLabel?: string;
  displayUrl?: string;
}

/** How to build one entry by hand; every part is optional and defaults realistically. */
export interface EntrySpec {
  /** createdAt: RFC 3339 with up to 9 fractional digits; served in protojson form (UTC, 0/3/6/9 digits). */
  at?: string;
  /** Default CHANGE_KIND_PUT, or CHANGE_KIND_CREATE when the settings object does not exist. */
  changeKind?: string;
  /** Default an API user. userId defaults to a seeded user for ACTOR_KIND_API and ACTOR_KIND_SUPPORT only. */
  actor?: { kind?: string; userId?: string };
  /** Default one ticket annotation; `[]` for a change without any. */
  annotations?: AnnotationSpec[];
  /** Wire-named snapshot fields merged over the current settings (objects one level deep); false, 0, "" and null clear a field. */
  set?: Record<string, unknown>;
  /** Replaces the whole snapshot, served verbatim; null serves the entry without a snapshot. */
  snapshot?: object | null;
  /** Extra metadata fields, merged last (they may override generated ones). */
  extraMetadata?: Record<string, unknown>;
}

/** Random streams of one generated entry: its change and id, its burst's metadata, its own metadata. */
export interface GeneratedStreams {
  readonly change: Random;
  readonly group: Random;
  readonly entry: Random;
}

const ACTOR_KINDS_WITH_USER = new Set(['ACTOR_KIND_API', 'ACTOR_KIND_SUPPORT']);
const ACTOR_KINDS_WITHOUT_SYSLOG = new Set(['ACTOR_KIND_WORKFLOW', 'ACTOR_KIND_INTERNAL']);

const KIND_DEFAULTS: Readonly<Record<string, { key: string; label: string }>> = {
  ANNOTATION_KIND_TICKET: { key: 'ticket_id', label: 'Ticket' },
  ANNOTATION_KIND_REASON: { key: 'reason', label: 'Reason' },
  ANNOTATION_KIND_WORKFLOW: { key: 'workflow_run_id', label: 'Workflow run' },
  ANNOTATION_KIND_BATCH: { key: 'batch_id', label: 'Batch' },
  ANNOTATION_KIND_CORRELATION: { key: 'correlation_id', label: 'Correlation' },
  ANNOTATION_KIND_AUTOMATION: { key: 'automation', label: 'Automation' },
};

/**
 * A generated change at `time` after settings `current`: a PUT, or a CREATE when the object is
 * deleted (never a HARD_DELETE, so that tests stay predictable). Returns its id (a KSUID, also its
 * sort key) and its snapshot apart too.
 */
export function generatedEntry(
  time: Instant,
  current: Record<string, unknown> | null,
  streams: GeneratedStreams,
  users: Users,
): { id: string; entry: SandboxEntry; snapshot: Record<string, unknown> } {
  const rng = streams.change;
  const createdAt = formatTimestamp(time.seconds, time.nanos);
  let changeKind: number;
  let snapshot: Record<string, unknown>;
  if (current === null) {
    changeKind = CREATE;
    snapshot = modelToWire(createModel(rng), createdAt, createdAt);
  } else {
    changeKind = PUT;
    const changes = chooseChange(wireToModel(current), rng, 1);
    snapshot = applyChangeToWire({ ...current, updatedAt: createdAt }, changes);
  }
  const id = ksuidAt(time.seconds, rng.bytes(16));
  const generated = generateMetadata({
    group: streams.group,
    entry: streams.entry,
    seconds: time.seconds,
    inBurst: false,
    users,
  });
  const entry = {
    metadata: { id, createdAt, changeKind: CHANGE_KINDS[changeKind]!, ...generated },
    snapshot,
  };
  return { id, entry, snapshot };
}

/**
 * An entry built from a spec at `time` with id `id`, its snapshot starting from `base` (the
 * settings it changes; null when there are none). Returns the snapshot apart too: undefined when
 * the entry has none.
 */
export function buildEntry(
  spec: EntrySpec,
  time: Instant,
  base: Record<string, unknown> | null,
  rng: Random,
  id: string,
  users: Users,
): { entry: SandboxEntry; snapshot: Record<string, unknown> | undefined } {
  const createdAt = formatTimestamp(time.seconds, time.nanos);
  const changeKind = spec.changeKind ?? (base === null ? 'CHANGE_KIND_CREATE' : 'CHANGE_KIND_PUT');
  const metadata = specMetadata(spec, time, rng, id, users, changeKind);
  const entry: SandboxEntry = { metadata };
  let snapshot: Record<string, unknown> | undefined;
  if (spec.snapshot !== undefined) {
    if (spec.snapshot !== null) snapshot = spec.snapshot as Record<string, unknown>;
  } else if (changeKind !== 'CHANGE_KIND_HARD_DELETE') {
    const fresh = changeKind === 'CHANGE_KIND_CREATE' || base === null;
    const start = fresh
      ? modelToWire(createModel(rng), createdAt, createdAt)
      : { ...base, updatedAt: createdAt };
    snapshot = omitDefaults(mergeSettings(start, spec.set ?? {}));
  }
  if (snapshot !== undefined) entry.snapshot = snapshot;
  return { entry, snapshot };
}

/** The metadata of an entry built from a spec: actor, annotations, System Log and trace ids, extras. */
function specMetadata(
  spec: EntrySpec,
  time: Instant,
  rng: Random,
  id: string,
  users: Users,
  changeKind: string,
): SandboxMetadata {
  const createdAt = formatTimestamp(time.seconds, time.nanos);
  const actorKind = spec.actor?.kind ?? 'ACTOR_KIND_API';
  const actor: SandboxActor = {};
  if (actorKind !== '' && actorKind !== 'ACTOR_KIND_UNSPECIFIED') actor.kind = actorKind;
  const userId =
    spec.actor?.userId ??
    (actorKind === 'ACTOR_KIND_SUPPORT'
      ? rng.pick(users.support)
      : ACTOR_KINDS_WITH_USER.has(actorKind)
        ? rng.pick(users.api)
        : undefined);
  if (userId !== undefined && userId !== '') actor.userId = userId;

  const annotations = (spec.annotations ?? [{ kind: 'ANNOTATION_KIND_TICKET' }]).map((a) =>
    completeAnnotation(a, rng, time.seconds),
  );
  const metadata: SandboxMetadata = { id, createdAt, changeKind, actor };
  if (annotations.length > 0) metadata.annotations = annotations;
  if (!ACTOR_KINDS_WITHOUT_SYSLOG.has(actorKind))
    metadata.syslogEventId = ksuidAt(time.seconds, rng.bytes(16));
  metadata.traceId = rng.hex(32);
  Object.assign(metadata, spec.extraMetadata ?? {});
  return metadata;
}

/** Fills in what an annotation spec leaves out, from its kind; empty strings stay out (protojson). */
function completeAnnotation(spec: AnnotationSpec, rng: Random, seconds: number): SandboxAnnotation {
  const kind = spec.kind ?? 'ANNOTATION_KIND_GENERIC';
  const generated = spec.rawValue === undefined ? annotationOfKind(kind, rng, seconds) : undefined;
  const defaults = KIND_DEFAULTS[kind];
  const key = spec.key ?? generated?.key ?? defaults?.key ?? 'note';
  const rawValue = spec.rawValue ?? generated?.rawValue ?? '';
  const displayValue = spec.displayValue ?? generated?.displayValue ?? rawValue;
  const displayLabel = spec.displayLabel ?? generated?.displayLabel ?? defaults?.label ?? '';
  let displayUrl = spec.displayUrl ?? generated?.displayUrl ?? '';
  if (spec.displayUrl === undefined && generated === undefined && kind === 'ANNOTATION_KIND_TICKET') {
    displayUrl = `https://acme.atlassian.net/browse/${encodeURIComponent(rawValue.trim())}`;
  }
  return annotation(
    key,
    kind === 'ANNOTATION_KIND_UNSPECIFIED' ? '' : kind,
    rawValue,
    displayValue,
    displayLabel,
    displayUrl,
  );
}
