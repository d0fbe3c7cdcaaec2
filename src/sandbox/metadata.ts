/**
 * Who changed the settings and the notes they left: actors and annotations as the history
 * service renders them. Generation is split between a "group" generator, shared by the entries
 * of one burst (one batch job or one admin session writing several changes in one second), and
 * a per-entry generator for what differs per write (trace id, System Log event).
 */
import { ksuidAt } from './ksuid.js';
import { Random, WeightedTable } from './random.js';
import type { SandboxActor, SandboxAnnotation, SandboxMetadata } from './wire.js';

/** The users behind API and SUPPORT actors: a handful of admins and support engineers. */
export interface Users {
  readonly api: readonly string[];
  readonly support: readonly string[];
}

/** Seeded user ids, minted in 2023–2024 like real accounts that predate the history. */
export function makeUsers(seed: number): Users {
  const rng = new Random(seed, 0x05e45);
  const mint = (): string => ksuidAt(1_672_531_200 + rng.int(0, 63_000_000), rng.bytes(16));
  return { api: Array.from({ length: 6 }, mint), support: Array.from({ length: 2 }, mint) };
}

/** Inputs of one entry's metadata. */
export interface MetadataContext {
  /** Shared by every entry of one burst. */
  readonly group: Random;
  /** This entry alone. */
  readonly entry: Random;
  /** Unix second of createdAt (the System Log event is minted in the same second). */
  readonly seconds: number;
  /** Part of several writes in one second. */
  readonly inBurst: boolean;
  readonly users: Users;
}

const TENANT_URL = 'https://acme.conductor.one';
const JIRA_URL = 'https://acme.atlassian.net/browse/';
const SERVICENOW_URL = 'https://acme.service-now.com/change_request.do?sysparm_query=number%3D';
const TICKET_PROJECTS = ['SEC', 'SEC', 'GOV', 'ITOPS', 'AIGOV'] as const;

/**
 * Reasons people type. A few are hostile on purpose — spreadsheet formulas, markup, line
 * breaks, non-ASCII, a value near the 512-byte cap — because the evidence export, the HTML
 * report and the database must all carry them safely.
 */
const REASONS = [
  'Quarterly access review follow-up',
  'Tighten tool approvals after pen-test finding PT-2025-07',
  'Rollback: discovery was flooding the audit log',
  'Enable code mode for the data-platform pilot',
  'Requested by Jürgen Müller (SecOps), see thread',
  'Auditor request: keep MCP client records for one year',
  'Temporary: allow ephemeral clients for the hackathon, revert Friday',
  '日本チームのパイロット対応 (Tokyo pilot)',
  'Reverting "Allow all client types": change was not approved',
  'Align with policy AI-GOV-004 §3.2',
  'Incident INC-4471 remediation',
  'Per CISO: destructive tools need approval',
] as const;
const HOSTILE_REASONS = [
  '=HYPERLINK("https://example.invalid/x","open")',
  '+SUM(A1:A9)',
  '@cmd',
  '<script>alert("settings")</script> cleanup',
  'Multi-line reason:\n1) tighten approvals\n2) shorten retention',
  `${'Change approved in CAB 2025-W14 after review by the governance board (Müller, Tanaka, 日本 office). '.repeat(5)}`,
] as const;

const AUTOMATIONS = [
  'terraform/ai-governance',
  'settings-reconciler',
  'policy-as-code@v2.3.1',
  'nightly-drift-fix',
];
/** Generic notes; a missing value is a fresh git ref. */
const GENERIC_NOTES: ReadonlyArray<readonly [string, string | undefined]> = [
  ['change.source', 'terraform-provider-conductorone/1.4.2'],
  ['env', 'prod'],
  ['ref', undefined],
  ['cab.meeting', '2025-W14'],
];

/** Cuts a string to at most `bytes` UTF-8 bytes without splitting a character. */
function capBytes(text: string, bytes: number): string {
  if (Buffer.byteLength(text) <= bytes) return text;
  let out = '';
  let used = 0;
  for (const ch of text) {
    const size = Buffer.byteLength(ch);
    if (used + size > bytes) break;
    out += ch;
    used += size;
  }
  return out;
}

/** The display rendering of a free-text value: one line, at most 120 characters. */
function displayText(raw: string): string {
  const line = raw.replace(/\s*\n\s*/g, ' ');
  const chars = Array.from(line);
  return chars.length > 120 ? `${chars.slice(0, 119).join('')}…` : line;
}

const TICKET_STYLES = new WeightedTable([
  ['jira', 80],
  ['servicenow', 10],
  ['unlinked', 6],
  ['messy', 4],
] as const);

function ticket(rng: Random): SandboxAnnotation {
  const style = TICKET_STYLES.pick(rng);
  if (style === 'servicenow') {
    const id = `CHG${String(rng.int(1, 9_999_999)).padStart(7, '0')}`;
    return annotation('ticket_id', 'ANNOTATION_KIND_TICKET', id, id, 'Ticket', SERVICENOW_URL + id);
  }
  const id = `${rng.pick(TICKET_PROJECTS)}-${rng.int(10, 9999)}`;
  if (style === 'unlinked') return annotation('ticket_id', 'ANNOTATION_KIND_TICKET', id, id, 'Ticket', '');
  // Typed by hand: the service reshapes it for display.
  const raw = style === 'messy' ? ` ${id.toLowerCase()} ` : id;
  return annotation('ticket_id', 'ANNOTATION_KIND_TICKET', raw, id, 'Ticket', JIRA_URL + id);
}

/** Reason annotations are built once per text and shared (frozen): serving renders thousands a second. */
const reasonAnnotation = (text: string): SandboxAnnotation => {
  const raw = capBytes(text, 512);
  return Object.freeze(annotation('reason', 'ANNOTATION_KIND_REASON', raw, displayText(raw), 'Reason', ''));
};
const REASON_NOTES = REASONS.map(reasonAnnotation);
const HOSTILE_REASON_NOTES = HOSTILE_REASONS.map(reasonAnnotation);

function reason(rng: Random): SandboxAnnotation {
  return rng.chance(0.06) ? rng.pick(HOSTILE_REASON_NOTES) : rng.pick(REASON_NOTES);
}

function ksuidNote(
  rng: Random,
  seconds: number,
  key: string,
  kind: string,
  label: string,
  url?: string,
): SandboxAnnotation {
  const id = ksuidAt(seconds - rng.int(0, 600), rng.bytes(16));
  return annotation(key, kind, id, id, label, url === undefined ? '' : url + id);
}

/** Builds an annotation, leaving out what protojson leaves out (empty strings). */
export function annotation(
  key: string,
  kind: string,
  rawValue: string,
  displayValue: string,
  displayLabel: string,
  displayUrl: string,
): SandboxAnnotation {
  const a: SandboxAnnotation = {};
  if (key !== '') a.key = key;
  if (kind !== '') a.kind = kind;
  if (rawValue !== '') a.rawValue = rawValue;
  if (displayValue !== '') a.displayValue = displayValue;
  if (displayLabel !== '') a.displayLabel = displayLabel;
  if (displayUrl !== '') a.displayUrl = displayUrl;
  return a;
}

/** A default annotation of the given kind (used by generation and to complete EntrySpecs). */
export function annotationOfKind(kind: string, rng: Random, seconds: number): SandboxAnnotation {
  switch (kind) {
    case 'ANNOTATION_KIND_TICKET':
      return ticket(rng);
    case 'ANNOTATION_KIND_REASON':
      return reason(rng);
    case 'ANNOTATION_KIND_WORKFLOW':
      return ksuidNote(
        rng,
        seconds,
        'workflow_run_id',
        kind,
        'Workflow run',
        `${TENANT_URL}/workflows/runs/`,
      );
    case 'ANNOTATION_KIND_BATCH': {
      if (rng.chance(0.7)) return ksuidNote(rng, seconds, 'batch_id', kind, 'Batch');
      const raw = `bulk-import-${rng.hex(6)}`;
      return annotation('batch_id', kind, raw, raw, 'Batch', '');
    }
    case 'ANNOTATION_KIND_CORRELATION': {
      const raw = rng.chance(0.5)
        ? `${rng.hex(8)}-${rng.hex(4)}-4${rng.hex(3)}-a${rng.hex(3)}-${rng.hex(12)}`
        : `C0${rng.hex(9).toUpperCase()}/${seconds}.${String(rng.int(0, 999_999)).padStart(6, '0')}`;
      return annotation('correlation_id', kind, raw, raw, 'Correlation', '');
    }
    case 'ANNOTATION_KIND_AUTOMATION': {
      const raw = rng.pick(AUTOMATIONS);
      return annotation('automation', kind, raw, raw, 'Automation', '');
    }
    case 'ANNOTATION_KIND_GENERIC': {
      const [key, value] = rng.pick(GENERIC_NOTES);
      const raw = value ?? `git:${rng.hex(7)}`;
      // Keys the tenant has no label for are rendered without one.
      return annotation(key, kind, raw, raw, '', '');
    }
    case 'ANNOTATION_KIND_APPROVAL':
      return ksuidNote(rng, seconds, 'approval_id', kind, 'Approval', `${TENANT_URL}/requests/`);
    default:
      // ANNOTATION_KIND_UNSPECIFIED is enum value 0: protojson leaves `kind` out.
      return annotation(
        'note',
        '',
        'imported from legacy audit log',
        'imported from legacy audit log',
        '',
        '',
      );
  }
}

const ACTORS = new WeightedTable([
  ['ACTOR_KIND_API', 44],
  ['ACTOR_KIND_SLACK', 7],
  ['ACTOR_KIND_MSTEAMS', 5],
  ['ACTOR_KIND_JIRA_CLOUD', 7],
  ['ACTOR_KIND_INTERNAL', 9],
  ['ACTOR_KIND_SUPPORT', 4],
  ['ACTOR_KIND_WORKFLOW', 20],
  ['ACTOR_KIND_UNSPECIFIED', 1.5],
  ['ACTOR_KIND_SCIM', 1.5],
] as const);
/** Bursts (several writes in one second) come mostly from automation. */
const BURST_ACTORS = new WeightedTable([
  ['ACTOR_KIND_WORKFLOW', 35],
  ['ACTOR_KIND_INTERNAL', 25],
  ['ACTOR_KIND_API', 30],
  ['ACTOR_KIND_SCIM', 5],
  ['ACTOR_KIND_SUPPORT', 5],
] as const);

const TICKET = 'ANNOTATION_KIND_TICKET';
const REASON = 'ANNOTATION_KIND_REASON';
const WORKFLOW = 'ANNOTATION_KIND_WORKFLOW';
const CORRELATION = 'ANNOTATION_KIND_CORRELATION';
const AUTOMATION = 'ANNOTATION_KIND_AUTOMATION';
const GENERIC = 'ANNOTATION_KIND_GENERIC';

/** Per actor kind: the annotations its writes carry, each with its probability, in display order. */
const ANNOTATION_PLAN: Readonly<Record<string, ReadonlyArray<readonly [number, string]>>> = {
  ACTOR_KIND_API: [
    [0.75, TICKET],
    [0.45, REASON],
    [0.08, CORRELATION],
    [0.08, GENERIC],
  ],
  ACTOR_KIND_SUPPORT: [
    [0.9, TICKET],
    [0.8, REASON],
  ],
  ACTOR_KIND_WORKFLOW: [
    [1, WORKFLOW],
    [0.3, TICKET],
    [0.1, AUTOMATION],
  ],
  ACTOR_KIND_INTERNAL: [
    [0.8, AUTOMATION],
    [0.2, CORRELATION],
    [0.1, GENERIC],
  ],
  ACTOR_KIND_SLACK: [
    [0.2, TICKET],
    [0.6, REASON],
    [0.4, CORRELATION],
  ],
  ACTOR_KIND_MSTEAMS: [
    [0.2, TICKET],
    [0.6, REASON],
    [0.4, CORRELATION],
  ],
  ACTOR_KIND_JIRA_CLOUD: [
    [1, TICKET],
    [0.2, REASON],
  ],
  ACTOR_KIND_SCIM: [[0.5, AUTOMATION]],
};

/** The actor and annotations of a group of writes, and the per-write ids. */
export function generateMetadata(ctx: MetadataContext): SandboxMetadata {
  const { group, entry } = ctx;
  const kind = (ctx.inBurst ? BURST_ACTORS : ACTORS).pick(group);
  const actor: SandboxActor = {};
  // ACTOR_KIND_UNSPECIFIED is enum value 0: protojson writes the actor as {}.
  if (kind !== 'ACTOR_KIND_UNSPECIFIED') actor.kind = kind;
  if (kind === 'ACTOR_KIND_API') actor.userId = group.pick(ctx.users.api);
  if (kind === 'ACTOR_KIND_SUPPORT') actor.userId = group.pick(ctx.users.support);

  const kinds: string[] = [];
  for (const [p, k] of ANNOTATION_PLAN[kind] ?? []) if (group.chance(p)) kinds.push(k);
  if (ctx.inBurst) kinds.push('ANNOTATION_KIND_BATCH');
  if (group.chance(0.01)) kinds.push('ANNOTATION_KIND_APPROVAL');
  if (group.chance(0.006)) kinds.push('ANNOTATION_KIND_UNSPECIFIED');
  const annotations: SandboxAnnotation[] = [];
  for (let i = 0; i < kinds.length && i < 4; i++)
    annotations.push(annotationOfKind(kinds[i]!, group, ctx.seconds));

  const metadata: SandboxMetadata = { actor };
  if (annotations.length > 0) metadata.annotations = annotations;
  // System Log events are recorded for RPC writes only; workflows and internal jobs have none.
  if (kind !== 'ACTOR_KIND_WORKFLOW' && kind !== 'ACTOR_KIND_INTERNAL') {
    metadata.syslogEventId = ksuidAt(ctx.seconds, entry.bytes(16));
  }
  if (entry.chance(kind === 'ACTOR_KIND_INTERNAL' ? 0.5 : 0.9)) metadata.traceId = entry.hex(32);
  return metadata;
}
