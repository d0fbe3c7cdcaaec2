/**
 * Pure mapping of a conformance report (docs/design/conformance.md) to an OSCAL 1.2.1
 * **assessment-results** document: one result per tenant, one observation per control judged,
 * one finding per control that failed (or was deleted) at any instant of the period, each with
 * the control's framework references. No I/O and no clock: the generation time is a parameter, and
 * every uuid is a name-based (version 5) uuid of the document's content, so the same input always
 * gives the same document.
 *
 * govtrail has no OSCAL assessment plan: the baseline file is the plan. It travels in the
 * document's back-matter (its text in base64, its sha256) and `import-ap` points at it.
 */
import { createHash } from 'node:crypto';

export const OSCAL_VERSION = '1.2.1';
/** The namespace of govtrail's own properties (OSCAL reserves un-namespaced names for itself). */
export const OSCAL_GOVTRAIL_NS = 'urn:govtrail:ns:oscal';

export type OscalStatus = 'pass' | 'fail' | 'excepted' | 'deleted' | 'unknown';
export const OSCAL_STATUSES: readonly OscalStatus[] = ['pass', 'fail', 'excepted', 'deleted', 'unknown'];

export interface OscalControlInput {
  readonly id: string;
  readonly title: string;
  readonly severity: string;
  readonly field: string;
  /** The expectation in words: `equals true`, `at_least AUDIT_VERBOSITY_STANDARD`. */
  readonly expect: string;
  readonly frameworks: Readonly<Record<string, readonly string[]>>;
}

/** Who opened or closed a period. */
export interface OscalPeriodEnd {
  readonly entryId: string | null;
  readonly actorKind: string | null;
  readonly actorUserId: string | null;
  readonly ticket: string | null;
}

/** A non-passing period within the report's period (clipped to it). */
export interface OscalPeriodInput {
  readonly status: OscalStatus;
  readonly from: string;
  /** null: still open at the end of the report's period. */
  readonly to: string | null;
  readonly openedBy: OscalPeriodEnd | null;
  readonly closedBy: OscalPeriodEnd | null;
}

export interface OscalControlResultInput {
  readonly control: OscalControlInput;
  /** Share of the period in each status (fractions, summing to 1). */
  readonly share: Readonly<Record<OscalStatus, number>>;
  /** The status at the end of the period. */
  readonly statusAtEnd: OscalStatus;
  /** The fail, deleted and excepted periods, oldest first. */
  readonly periods: readonly OscalPeriodInput[];
}

export interface OscalTenantInput {
  readonly tenant: string;
  readonly share: Readonly<Record<OscalStatus, number>>;
  readonly controls: readonly OscalControlResultInput[];
}

export interface OscalInput {
  readonly baseline: {
    readonly id: string;
    readonly title: string | null;
    readonly sha256: string;
    /** The exact text judged by; carried in back-matter when given. */
    readonly text: string | null;
  };
  /** RFC 3339: the period [from, to). */
  readonly from: string;
  readonly to: string;
  readonly tenants: readonly OscalTenantInput[];
  /** When the document is generated: `metadata.last-modified`, every observation's `collected`. */
  readonly generatedAt: Date;
  readonly productVersion: string;
}

interface Prop {
  readonly name: string;
  readonly value: string;
  readonly ns?: string;
  readonly class?: string;
}

/**
 * A name-based uuid of `name`: the SHA-1 of a govtrail prefix and the name, with the version (5)
 * and variant bits of RFC 4122, as OSCAL's uuid datatype asks of a non-random uuid.
 */
export function uuidV5(name: string): string {
  const bytes = createHash('sha1').update(`govtrail-oscal\u0000${name}`, 'utf8').digest().subarray(0, 16);
  bytes[6] = ((bytes[6] as number) & 0x0f) | 0x50;
  bytes[8] = ((bytes[8] as number) & 0x3f) | 0x80;
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** An OSCAL token (XML NCName): other characters become `-`, a bad first character gets `_`. */
export function oscalToken(text: string): string {
  const body = text.replace(/[^\p{L}\p{N}._-]/gu, '-');
  return /^(\p{L}|_)/u.test(body) ? body : `_${body}`;
}

/** A property value: OSCAL strings are non-empty and not padded. */
function text(value: string): string {
  const t = value.replace(/\s+/g, ' ').trim();
  return t === '' ? '-' : t;
}

function prop(name: string, value: string, cls?: string): Prop {
  return { name, ns: OSCAL_GOVTRAIL_NS, value: text(value), ...(cls !== undefined ? { class: cls } : {}) };
}

/** Percent with two decimals, `91.25 %`. */
function pct(share: number): string {
  return `${(share * 100).toFixed(2)} %`;
}

function frameworkProps(control: OscalControlInput): Prop[] {
  return Object.entries(control.frameworks).flatMap(([framework, refs]) =>
    refs.map((ref) => prop('framework-reference', ref, oscalToken(framework))),
  );
}

function shareProps(share: Readonly<Record<OscalStatus, number>>): Prop[] {
  return OSCAL_STATUSES.map((s) => prop(`share-${s}`, share[s].toFixed(6)));
}

function whoText(end: OscalPeriodEnd | null): string {
  if (end === null) return 'no entry (an exception boundary or the period edge)';
  const parts = [
    end.entryId !== null ? `entry ${end.entryId}` : 'an exception boundary',
    end.actorKind !== null && end.actorKind !== ''
      ? `actor ${end.actorKind}${end.actorUserId !== null && end.actorUserId !== '' ? ` user ${end.actorUserId}` : ''}`
      : null,
    end.ticket !== null && end.ticket !== '' ? `ticket ${end.ticket}` : 'no ticket',
  ];
  return parts.filter((p) => p !== null).join(', ');
}

function periodEvidence(p: OscalPeriodInput, periodEnd: string) {
  const until = p.to ?? periodEnd;
  const props: Prop[] = [
    prop('status', p.status),
    prop('from', p.from),
    prop('to', until),
    ...(p.to === null ? [prop('open-at-end', 'true')] : []),
    ...endProps('opened-by', p.openedBy),
    ...endProps('closed-by', p.closedBy),
  ];
  return {
    description: text(
      `${p.status} from ${p.from} to ${p.to ?? `${periodEnd} (still open)`}; opened by ${whoText(p.openedBy)}; ` +
        `closed by ${p.to === null ? 'nothing yet' : whoText(p.closedBy)}.`,
    ),
    props,
  };
}

function endProps(prefix: string, end: OscalPeriodEnd | null): Prop[] {
  if (end === null) return [];
  const out: Prop[] = [];
  if (end.entryId !== null && end.entryId !== '') out.push(prop(`${prefix}-entry`, end.entryId));
  if (end.actorKind !== null && end.actorKind !== '') out.push(prop(`${prefix}-actor-kind`, end.actorKind));
  if (end.actorUserId !== null && end.actorUserId !== '')
    out.push(prop(`${prefix}-actor-user`, end.actorUserId));
  if (end.ticket !== null && end.ticket !== '') out.push(prop(`${prefix}-ticket`, end.ticket));
  return out;
}

function failed(c: OscalControlResultInput): boolean {
  return c.share.fail > 0 || c.share.deleted > 0 || c.periods.some((p) => p.status !== 'excepted');
}

function observationOf(input: OscalInput, tenant: OscalTenantInput, c: OscalControlResultInput, key: string) {
  const { control } = c;
  const shares = OSCAL_STATUSES.filter((s) => c.share[s] > 0)
    .map((s) => `${s} ${pct(c.share[s])}`)
    .join(', ');
  const evidence = c.periods.map((p) => periodEvidence(p, input.to));
  return {
    uuid: uuidV5(`${key}/observation`),
    title: text(`${control.id} ${control.title}`),
    description: text(
      `Tenant ${tenant.tenant}, control ${control.id} (${control.field} ${control.expect}), judged at every ` +
        `instant of [${input.from}, ${input.to}) from the stored settings history: ${shares || 'no time'}. ` +
        `Status at the end of the period: ${c.statusAtEnd}.`,
    ),
    props: [
      prop('control-id', control.id),
      prop('severity', control.severity),
      prop('status-at-end', c.statusAtEnd),
      ...shareProps(c.share),
      ...frameworkProps(control),
    ],
    methods: ['TEST'],
    types: ['control-objective'],
    ...(evidence.length > 0 ? { 'relevant-evidence': evidence } : {}),
    collected: input.generatedAt.toISOString(),
  };
}

function findingOf(
  tenant: OscalTenantInput,
  c: OscalControlResultInput,
  key: string,
  observationUuid: string,
) {
  const { control } = c;
  const bad = c.periods.filter((p) => p.status !== 'excepted');
  const failingNow = c.statusAtEnd === 'fail' || c.statusAtEnd === 'deleted';
  return {
    uuid: uuidV5(`${key}/finding`),
    title: text(`${control.id} ${control.title}: not met at every instant`),
    description: text(
      `Tenant ${tenant.tenant} did not meet control ${control.id} (${control.field} ${control.expect}) for ` +
        `${pct(c.share.fail + c.share.deleted)} of the period, in ${bad.length} period(s)` +
        `${c.share.deleted > 0 ? ' (including time after a hard delete of the settings)' : ''}; ` +
        `${failingNow ? 'it still fails at the end of the period' : `at the end of the period it is ${c.statusAtEnd}`}.`,
    ),
    props: [
      prop('control-id', control.id),
      prop('severity', control.severity),
      prop('fail-periods', String(bad.length)),
      prop('status-at-end', c.statusAtEnd),
      ...frameworkProps(control),
    ],
    target: {
      type: 'objective-id',
      'target-id': oscalToken(control.id),
      title: text(control.title),
      status: { state: 'not-satisfied', reason: 'fail' },
    },
    'related-observations': [{ 'observation-uuid': observationUuid }],
  };
}

function resultOf(input: OscalInput, tenant: OscalTenantInput, docKey: string) {
  const observations = tenant.controls.map((c) =>
    observationOf(input, tenant, c, `${docKey}/${tenant.tenant}/${c.control.id}`),
  );
  const findings = tenant.controls.flatMap((c, i) =>
    failed(c)
      ? [findingOf(tenant, c, `${docKey}/${tenant.tenant}/${c.control.id}`, observations[i]?.uuid as string)]
      : [],
  );
  const compliant = tenant.share.pass + tenant.share.excepted;
  return {
    uuid: uuidV5(`${docKey}/${tenant.tenant}/result`),
    title: text(`Tenant ${tenant.tenant} against baseline ${input.baseline.id}`),
    description: text(
      `Every control of baseline ${input.baseline.id} (sha256 ${input.baseline.sha256}) judged at every instant ` +
        `of [${input.from}, ${input.to}) for tenant ${tenant.tenant}: compliant (pass or excepted) ${pct(compliant)} ` +
        `of the time over all controls, failing ${pct(tenant.share.fail + tenant.share.deleted)}, unknown ` +
        `(before the first stored snapshot) ${pct(tenant.share.unknown)}; ${findings.length} of ` +
        `${tenant.controls.length} controls failed at some instant.`,
    ),
    start: input.from,
    end: input.to,
    props: [prop('tenant', tenant.tenant), ...shareProps(tenant.share)],
    'reviewed-controls': {
      'control-selections': [
        tenant.controls.length > 0
          ? { 'include-controls': tenant.controls.map((c) => ({ 'control-id': oscalToken(c.control.id) })) }
          : { 'include-all': {} },
      ],
    },
    ...(observations.length > 0 ? { observations } : {}),
    ...(findings.length > 0 ? { findings } : {}),
  };
}

/** The OSCAL assessment-results document of a conformance report (of at least one tenant: OSCAL needs a result). */
export function conformanceToOscal(input: OscalInput) {
  const { baseline } = input;
  if (input.tenants.length === 0) throw new Error('an assessment-results document needs at least one tenant');
  const generated = input.generatedAt.toISOString();
  const docKey = `${baseline.id}/${baseline.sha256}/${input.from}/${input.to}/${generated}`;
  const baselineUuid = uuidV5(`${baseline.id}/${baseline.sha256}/baseline`);
  const title = baseline.title ?? baseline.id;
  return {
    'assessment-results': {
      uuid: uuidV5(`${docKey}/document`),
      metadata: {
        title: text(`Conformance to ${title}, ${input.from} to ${input.to}`),
        'last-modified': generated,
        version: text(`${baseline.id}@${baseline.sha256.slice(0, 12)}`),
        'oscal-version': OSCAL_VERSION,
        props: [
          prop('generator', `govtrail ${input.productVersion}`),
          prop('baseline-id', baseline.id),
          prop('baseline-sha256', baseline.sha256),
        ],
        remarks:
          'Generated by govtrail from its stored copy of each tenant settings change history: every control is ' +
          'judged at every instant of the period, not at sampled times.',
      },
      'import-ap': {
        href: `#${baselineUuid}`,
        remarks: 'govtrail has no assessment plan: the baseline file judged by is the plan, in back-matter.',
      },
      results: input.tenants.map((t) => resultOf(input, t, docKey)),
      'back-matter': {
        resources: [
          {
            uuid: baselineUuid,
            title: text(`Baseline ${baseline.id}`),
            description: text(`The baseline file the tenants were judged by (${title}).`),
            props: [prop('baseline-id', baseline.id)],
            rlinks: [
              {
                href: `urn:govtrail:baseline:${oscalToken(baseline.id)}`,
                'media-type': 'application/yaml',
                hashes: [{ algorithm: 'SHA-256', value: baseline.sha256 }],
              },
            ],
            ...(baseline.text !== null
              ? {
                  base64: {
                    filename: oscalToken(`${baseline.id}.yaml`),
                    'media-type': 'application/yaml',
                    value: Buffer.from(baseline.text, 'utf8').toString('base64'),
                  },
                }
              : {}),
          },
        ],
      },
    },
  };
}

/** Who opened or closed a period, as `baseline report --format json` words it. */
export interface ReportCauseLike {
  readonly entry_id: string | null;
  readonly actor_kind: string | null;
  readonly actor_user_id: string | null;
  readonly ticket: string | null;
}

/** A fail, deleted or excepted period, as `baseline report --format json` words it. */
export interface ReportPeriodLike {
  readonly from: string;
  readonly to: string;
  readonly status: string;
  readonly opened_by: ReportCauseLike;
  readonly closed_by: ReportCauseLike | null;
}

/** The part of `baseline report --format json` (docs/design/conformance.md) the document is built from. */
export interface ReportLike {
  readonly baseline: { readonly id: string; readonly sha256: string; readonly title: string };
  readonly from: string;
  readonly to: string;
  readonly tenants: readonly {
    readonly tenant: string;
    readonly share: Readonly<Record<OscalStatus, number>>;
    readonly controls: readonly {
      readonly id: string;
      readonly title: string;
      readonly field: string;
      readonly severity: string;
      readonly frameworks: Readonly<Record<string, readonly string[]>>;
      readonly share: Readonly<Record<OscalStatus, number>>;
      readonly fail_periods: readonly ReportPeriodLike[];
      readonly excepted_periods: readonly ReportPeriodLike[];
    }[];
  }[];
}

function causeOf(c: ReportCauseLike | null): OscalPeriodEnd | null {
  return c === null
    ? null
    : { entryId: c.entry_id, actorKind: c.actor_kind, actorUserId: c.actor_user_id, ticket: c.ticket };
}

function statusWord(s: string): OscalStatus {
  return (OSCAL_STATUSES as readonly string[]).includes(s) ? (s as OscalStatus) : 'unknown';
}

/**
 * The document's input from a `baseline report`: the periods of each control oldest first (a
 * period still open at the report's end has `to` null), with the baseline's text, each control's
 * expectation in words and its status at the end of the period.
 */
export function oscalInputOfReport(
  report: ReportLike,
  extra: {
    readonly text: string | null;
    readonly expectText: (controlId: string) => string;
    readonly statusAtEnd: (tenant: string, controlId: string) => OscalStatus;
    readonly generatedAt: Date;
    readonly productVersion: string;
  },
): OscalInput {
  return {
    baseline: {
      id: report.baseline.id,
      title: report.baseline.title,
      sha256: report.baseline.sha256,
      text: extra.text,
    },
    from: report.from,
    to: report.to,
    generatedAt: extra.generatedAt,
    productVersion: extra.productVersion,
    tenants: report.tenants.map((t) => ({
      tenant: t.tenant,
      share: t.share,
      controls: t.controls.map((c) => {
        const statusAtEnd = extra.statusAtEnd(t.tenant, c.id);
        const periods = [...c.fail_periods, ...c.excepted_periods]
          .sort((a, b) => (a.from < b.from ? -1 : a.from > b.from ? 1 : 0))
          .map((p) => ({
            status: statusWord(p.status),
            from: p.from,
            // Open at the end: it reached `to` and nothing closed it.
            to: p.closed_by === null && p.to === report.to && p.status === statusAtEnd ? null : p.to,
            openedBy: causeOf(p.opened_by),
            closedBy: causeOf(p.closed_by),
          }));
        return {
          control: {
            id: c.id,
            title: c.title,
            severity: c.severity,
            field: c.field,
            expect: extra.expectText(c.id),
            frameworks: c.frameworks,
          },
          share: c.share,
          statusAtEnd,
          periods,
        };
      }),
    })),
  };
}
