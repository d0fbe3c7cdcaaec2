/**
 * Pure mapping of a control's status change (a conformance period opening, docs/design/conformance.md)
 * to an OCSF 1.8.0 **Compliance Finding** (class_uid 2003). No I/O and no clock: the time of
 * processing and govtrail's version are parameters.
 *
 * One event per status change of one control of one tenant: the finding (`finding_info.uid`) is
 * the tenant × baseline × control, the same for every change of that control, so a SIEM can follow
 * it from New (fail) to Resolved (pass). `compliance` carries the control id, its title, the
 * frameworks of its references (`standards`), the references themselves (`requirements`) and the
 * status (Pass / Fail / Other "Excepted" / Unknown).
 */
import type { Baseline } from '../conformance/baseline.js';
import { approvedAtKey, type ControlPeriod } from '../conformance/judge.js';
import {
  COMPLIANCE_ACTIVITY,
  COMPLIANCE_FINDING,
  COMPLIANCE_STATUS,
  FINDING_STATUS,
  OCSF_FEATURE_CONFORMANCE,
  OCSF_PRODUCT_NAME,
  OCSF_SCHEMA_VERSION,
  OCSF_VENDOR_NAME,
  RESOURCE_ROLE_TARGET,
  SETTINGS_ENTITY_NAME,
  SETTINGS_ENTITY_TYPE,
  SEVERITY_CAPTIONS,
  typeNameOf,
  typeUidOf,
} from './constants.js';
import type {
  OcsfActor,
  OcsfEvidence,
  OcsfKeyValue,
  OcsfMetadata,
  OcsfOptions,
  OcsfResource,
} from './types.js';

/** A control's status at an instant (docs/design/conformance.md). */
export type ComplianceStatus = 'pass' | 'fail' | 'excepted' | 'deleted' | 'unknown';

/**
 * The status changes of a tenant's controls that happen in [fromKey, toKey): one per stored period
 * opening in it, with the status before (null for a control's first period). `periods` are the
 * tenant's stored periods in control then time order, from the first on (the period before the
 * range tells the previous status); `loadedAtKey` is when the baseline text was first loaded (the
 * approval of an exception that gives none), to name the exception of an excepted period.
 */
export function complianceChangesOf(
  tenantId: string,
  baseline: Pick<Baseline, 'id' | 'sha256' | 'controls' | 'exceptions'>,
  loadedAtKey: string,
  periods: readonly ControlPeriod[],
  fromKey: string,
  toKey: string,
): ComplianceChangeInput[] {
  const out: ComplianceChangeInput[] = [];
  const controls = new Map(baseline.controls.map((c) => [c.id, c]));
  let previous: ControlPeriod | undefined;
  for (const p of periods) {
    const before = previous?.controlId === p.controlId ? previous : undefined;
    previous = p;
    const control = controls.get(p.controlId);
    if (control === undefined || p.fromKey < fromKey || p.fromKey >= toKey) continue;
    const exception =
      p.status === 'excepted'
        ? baseline.exceptions.find(
            (x) =>
              x.control === p.controlId &&
              x.tenants.includes(tenantId) &&
              approvedAtKey(x, { loadedAtKey }) <= p.fromKey &&
              p.fromKey < x.expires,
          )
        : undefined;
    out.push({
      tenantId,
      baseline: { id: baseline.id, sha256: baseline.sha256 },
      control: {
        id: control.id,
        title: control.title,
        severity: control.severity,
        field: control.field.name,
        expect: control.expectText,
        frameworks: control.frameworks,
      },
      status: p.status,
      previousStatus: before?.status ?? null,
      at: p.fromKey,
      entryId: p.entryId,
      actorKind: p.actorKind,
      actorUserId: p.actorUserId,
      ticket: p.ticket,
      exceptionRationale: exception?.rationale ?? null,
    });
  }
  // Oldest first across controls, as the other classes are exported.
  return out.sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : a.control.id < b.control.id ? -1 : 1));
}

/** What the event says about the control judged. */
export interface ComplianceControlFacts {
  readonly id: string;
  readonly title: string;
  readonly severity: string;
  /** The settings_snapshot column (or extra_fields.<wireName>) the control reads. */
  readonly field: string;
  /** The expectation in words, e.g. `equals true`, `at_least AUDIT_VERBOSITY_STANDARD`. */
  readonly expect: string;
  /** Framework name → its control references (`NIST-SP-800-53r5: [AC-6]`). */
  readonly frameworks: Readonly<Record<string, readonly string[]>>;
}

/** One status change: the opening of a conformance period. */
export interface ComplianceChangeInput {
  readonly tenantId: string;
  readonly baseline: { readonly id: string; readonly sha256: string };
  readonly control: ComplianceControlFacts;
  readonly status: ComplianceStatus;
  /** The status before this change; null for the control's first period. */
  readonly previousStatus: ComplianceStatus | null;
  /** The instant of the change as stored (RFC 3339, up to nanoseconds). */
  readonly at: string;
  /** The entry that made the change; null when an exception's expiry or approval did. */
  readonly entryId: string | null;
  readonly actorKind: string | null;
  readonly actorUserId: string | null;
  readonly ticket: string | null;
  /** The exception's rationale, for an `excepted` period. */
  readonly exceptionRationale?: string | null | undefined;
}

/** `compliance`: the control, its standards and its status. */
export interface OcsfCompliance {
  readonly control: string;
  readonly desc: string;
  readonly standards: readonly string[];
  readonly requirements?: readonly string[];
  readonly control_parameters: readonly OcsfKeyValue[];
  readonly status_id: number;
  readonly status: string;
  readonly status_details?: readonly string[];
}

/** Compliance Finding (2003): one status change of one control. */
export interface OcsfComplianceFinding {
  readonly class_uid: 2003;
  readonly class_name: string;
  readonly category_uid: 2;
  readonly category_name: string;
  readonly activity_id: number;
  readonly activity_name: string;
  readonly type_uid: number;
  readonly type_name: string;
  readonly severity_id: number;
  readonly severity: string;
  readonly time: number;
  readonly metadata: OcsfMetadata;
  readonly message: string;
  readonly status_id: number;
  readonly status: string;
  readonly compliance: OcsfCompliance;
  readonly finding_info: {
    readonly uid: string;
    readonly title: string;
    readonly desc: string;
    readonly created_time?: number;
  };
  readonly evidences: readonly OcsfEvidence[];
  readonly resources: readonly OcsfResource[];
  readonly unmapped: Readonly<Record<string, unknown>>;
}

/** `compliance.status_id` of a status: pass 1 Pass, fail and deleted 3 Fail, excepted 99 Other, unknown 0. */
export function complianceStatusOf(status: ComplianceStatus): { id: number; name: string } {
  switch (status) {
    case 'pass':
      return COMPLIANCE_STATUS.pass;
    case 'fail':
    case 'deleted':
      return COMPLIANCE_STATUS.fail;
    case 'excepted':
      return { id: COMPLIANCE_STATUS.other.id, name: 'Excepted' };
    default:
      return COMPLIANCE_STATUS.unknown;
  }
}

/**
 * The finding's own status: a failing control is New, an excepted one Suppressed (accepted by an
 * exception), a passing one Resolved, an unknown one Unknown.
 */
export function findingStatusOf(status: ComplianceStatus): { id: number; name: string } {
  switch (status) {
    case 'fail':
    case 'deleted':
      return FINDING_STATUS.new;
    case 'excepted':
      return FINDING_STATUS.suppressed;
    case 'pass':
      return FINDING_STATUS.resolved;
    default:
      return FINDING_STATUS.unknown;
  }
}

/** The finding's uid: the same for every status change of one control of one tenant under one baseline. */
export function complianceFindingUid(tenantId: string, baselineId: string, controlId: string): string {
  return `${tenantId}/${baselineId}/${controlId}`;
}

/** RFC 3339 text (up to nanoseconds) to epoch ms; the fraction beyond ms is dropped. */
function epochMs(text: string): number {
  const ms = Date.parse(text);
  if (!Number.isFinite(ms)) throw new Error(`not an RFC 3339 time: ${JSON.stringify(text)}`);
  return ms;
}

/**
 * Maps one status change to a Compliance Finding (2003).
 *
 * - `activity_id` 1 Create for the control's first period, 2 Update for every later change;
 * - `time` the instant of the change (epoch ms), `metadata.original_time` the stored text;
 * - `severity_id` the control's severity (low 2, medium 3, high 4, critical 5) while it fails,
 *   1 Informational otherwise;
 * - `status_id` (the finding): fail/deleted 1 New, excepted 3 Suppressed, pass 4 Resolved;
 * - `compliance`: `control` the id, `desc` the title, `standards` the framework names,
 *   `requirements` "framework reference" pairs, `control_parameters` the field and expectation,
 *   `status_id` / `status` as {@link complianceStatusOf}, `status_details` for deleted or excepted;
 * - `evidences[0]`: the actor and the entry, ticket and previous status.
 */
export function complianceChangeToFinding(
  input: ComplianceChangeInput,
  options: OcsfOptions,
): OcsfComplianceFinding {
  const { control } = input;
  const time = epochMs(input.at);
  const activity = input.previousStatus === null ? COMPLIANCE_ACTIVITY.create : COMPLIANCE_ACTIVITY.update;
  const failing = input.status === 'fail' || input.status === 'deleted';
  const severityId = failing ? severityIdOfControl(control.severity) : 1;
  const fStatus = findingStatusOf(input.status);
  const findingUid = complianceFindingUid(input.tenantId, input.baseline.id, control.id);
  const actor = actorOf(input.actorKind, input.actorUserId);
  const cause = input.entryId !== null ? `entry ${input.entryId}` : 'exception boundary';
  const metadata: OcsfMetadata = {
    version: OCSF_SCHEMA_VERSION,
    product: {
      name: OCSF_PRODUCT_NAME,
      vendor_name: OCSF_VENDOR_NAME,
      version: options.productVersion,
      feature: { name: OCSF_FEATURE_CONFORMANCE },
    },
    uid: `${findingUid}@${input.at}`,
    log_name: 'conformance',
    tenant_uid: input.tenantId,
    event_code: control.id,
    original_time: input.at,
    ...(nonEmpty(input.ticket) ? { tags: [{ name: 'ticket', value: input.ticket }] } : {}),
    processed_time: options.now.getTime(),
  };
  return {
    class_uid: COMPLIANCE_FINDING.classUid,
    class_name: COMPLIANCE_FINDING.className,
    category_uid: COMPLIANCE_FINDING.categoryUid,
    category_name: COMPLIANCE_FINDING.categoryName,
    activity_id: activity.id,
    activity_name: activity.name,
    type_uid: typeUidOf(COMPLIANCE_FINDING.classUid, activity.id),
    type_name: typeNameOf(COMPLIANCE_FINDING.className, activity.name),
    severity_id: severityId,
    severity: SEVERITY_CAPTIONS[severityId] as string,
    time,
    metadata,
    message: `Control ${control.id} (${control.title}) of tenant ${input.tenantId} is ${input.status}${
      input.previousStatus !== null ? ` (was ${input.previousStatus})` : ''
    } since ${input.at}, by ${cause}`,
    status_id: fStatus.id,
    status: fStatus.name,
    compliance: complianceOf(input),
    finding_info: {
      uid: findingUid,
      title: `${control.id} ${control.title}`,
      desc: `${control.field} ${control.expect}`,
      created_time: time,
    },
    evidences: [
      {
        ...(actor !== undefined ? { actor } : {}),
        data: {
          status: input.status,
          previous_status: input.previousStatus,
          ...(input.entryId !== null ? { entry_id: input.entryId } : {}),
          ...(nonEmpty(input.ticket) ? { ticket: input.ticket } : {}),
          changed_at: input.at,
        },
      },
    ],
    resources: [
      {
        uid: `${input.tenantId}/ai-governance-settings`,
        name: SETTINGS_ENTITY_NAME,
        type: SETTINGS_ENTITY_TYPE,
        role_id: RESOURCE_ROLE_TARGET.id,
        role: RESOURCE_ROLE_TARGET.name,
      },
    ],
    unmapped: {
      baseline_id: input.baseline.id,
      baseline_sha256: input.baseline.sha256,
      conformance_status: input.status,
      ...(input.previousStatus !== null ? { previous_status: input.previousStatus } : {}),
      frameworks: control.frameworks,
    },
  };
}

/** The `compliance` object: the control, its standards and references, its status. */
function complianceOf(input: ComplianceChangeInput): OcsfCompliance {
  const { control } = input;
  const status = complianceStatusOf(input.status);
  const standards = Object.keys(control.frameworks).filter((k) => (control.frameworks[k] ?? []).length > 0);
  const requirements = standards.flatMap((s) => (control.frameworks[s] ?? []).map((r) => `${s} ${r}`));
  const detail =
    input.status === 'deleted'
      ? 'the settings were hard-deleted'
      : input.status === 'excepted'
        ? `accepted by an exception${nonEmpty(input.exceptionRationale) ? `: ${input.exceptionRationale}` : ''}`
        : undefined;
  return {
    control: control.id,
    desc: control.title,
    standards,
    ...(requirements.length > 0 ? { requirements } : {}),
    control_parameters: [
      { name: 'field', value: control.field },
      { name: 'expect', value: control.expect },
      { name: 'baseline', value: input.baseline.id },
      { name: 'baseline_sha256', value: input.baseline.sha256 },
    ],
    status_id: status.id,
    status: status.name,
    ...(detail !== undefined ? { status_details: [detail] } : {}),
  };
}

function severityIdOfControl(severity: string): number {
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
      return 3;
  }
}

function actorOf(kind: string | null, userId: string | null): OcsfActor | undefined {
  const hasKind = nonEmpty(kind);
  const hasUser = nonEmpty(userId);
  if (!hasKind && !hasUser) return undefined;
  return { ...(hasKind ? { app_name: kind } : {}), ...(hasUser ? { user: { uid: userId } } : {}) };
}

function nonEmpty(v: string | null | undefined): v is string {
  return typeof v === 'string' && v !== '';
}
