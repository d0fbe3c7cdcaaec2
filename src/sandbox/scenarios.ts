/**
 * A curated tail of notable changes, appended after the seeded history when the `scenarios`
 * option is on (the demo uses it). Every rule of the default alert pack (docs/design/alerts.md) has at least
 * one entry that triggers it, in a plausible story: a baseline, a series of weakening changes
 * made through different channels, a vendor-support change, a burst, a value this version of
 * govtrail does not know, a hard delete and a re-creation.
 *
 * Deterministic: times follow the newest seeded entry, everything else comes from the seed.
 */
import type { EntrySpec, HistoryStore } from './history.js';
import { formatTimestamp } from './wire.js';

const HOUR = 3600;
const DAY = 86_400;

interface Step {
  /** Seconds after the previous step. */
  readonly after: number;
  readonly spec: EntrySpec;
}

const ticket = (id: string) => ({ kind: 'ANNOTATION_KIND_TICKET', rawValue: id });
const reason = (text: string) => ({ kind: 'ANNOTATION_KIND_REASON', rawValue: text });

function steps(apiUser: string, supportUser: string): Step[] {
  const api = { kind: 'ACTOR_KIND_API', userId: apiUser };
  return [...baselineAndWeakening(api, supportUser), ...burstToRecreation(api)];
}

/** The API actor of the story: one seeded API user. */
interface ApiActor {
  readonly kind: string;
  readonly userId: string;
}

/** A baseline, then weakening changes made through different channels (vendor support last). */
function baselineAndWeakening(api: ApiActor, supportUser: string): Step[] {
  return [
    {
      after: DAY,
      spec: {
        actor: api,
        annotations: [ticket('SEC-4100'), reason('Baseline before the AI assistant pilot')],
        set: {
          allowedClientTypes: ['MCP_CLIENT_TYPE_PERSONAL'],
          auditVerbosity: 'AUDIT_VERBOSITY_FULL',
          autoDiscoveryEnabled: false,
          defaultToolClassification: 'TOOL_CLASSIFICATION_WRITE',
          enabled: true,
          preferCodeModeOverDirectTools: false,
          requireToolApproval: true,
          surfaceRequestableTools: false,
          defaultClientLifecycle: {
            inactivityHideAfter: '604800s',
            inactivityCloseAfter: '2592000s',
            retentionDeleteAfter: '31536000s',
          },
        },
      },
    },
    // A loosening made through the change process: tool approval off, with its ticket.
    {
      after: 3 * HOUR,
      spec: {
        actor: api,
        annotations: [ticket('SEC-4105'), reason('Approvals block the AI assistant pilot')],
        set: { requireToolApproval: false },
      },
    },
    {
      after: 5 * HOUR,
      spec: {
        actor: api,
        annotations: [ticket('SEC-4107')],
        set: { auditVerbosity: 'AUDIT_VERBOSITY_MINIMAL' },
      },
    },
    {
      after: DAY,
      spec: {
        // Made from Slack with no annotation at all (proto3 then omits the list): no ticket either.
        actor: { kind: 'ACTOR_KIND_SLACK' },
        annotations: [],
        set: { allowedClientTypes: [] },
      },
    },
    {
      after: 2 * HOUR,
      spec: {
        actor: { kind: 'ACTOR_KIND_WORKFLOW' },
        annotations: [{ kind: 'ANNOTATION_KIND_WORKFLOW' }],
        set: { defaultToolClassification: 'TOOL_CLASSIFICATION_READ' },
      },
    },
    {
      after: DAY,
      spec: {
        actor: { kind: 'ACTOR_KIND_SUPPORT', userId: supportUser },
        annotations: [ticket('SUP-2291'), reason('Customer asked support to turn discovery on')],
        set: { autoDiscoveryEnabled: true },
      },
    },
  ];
}

/** A burst, later changes, values this version does not know, a hard delete and a re-creation. */
function burstToRecreation(api: ApiActor): Step[] {
  return [
    // A burst: three changes within the hour.
    {
      after: 2 * DAY,
      spec: { actor: api, annotations: [ticket('AIGOV-88')], set: { surfaceRequestableTools: true } },
    },
    {
      after: 900,
      spec: { actor: api, annotations: [ticket('AIGOV-88')], set: { preferCodeModeOverDirectTools: true } },
    },
    {
      after: 1200,
      spec: {
        actor: api,
        annotations: [ticket('AIGOV-88')],
        set: { defaultClientLifecycle: { inactivityCloseAfter: '0s' } },
      },
    },
    {
      after: DAY,
      spec: {
        actor: api,
        annotations: [ticket('SEC-4120'), reason('Storage cost review')],
        set: { defaultClientLifecycle: { retentionDeleteAfter: '2592000s' } },
      },
    },
    {
      after: 6 * HOUR,
      spec: {
        actor: { kind: 'ACTOR_KIND_INTERNAL' },
        annotations: [{ kind: 'ANNOTATION_KIND_AUTOMATION', rawValue: 'traffic-shutoff-migration' }],
        set: { enabled: false },
      },
    },
    // Values the documented API (docs/design/tenant-api.md) does not list.
    {
      after: DAY,
      spec: {
        actor: { kind: 'ACTOR_KIND_SCIM' },
        annotations: [{ kind: 'ANNOTATION_KIND_APPROVAL', key: 'approval_id' }],
        set: { auditVerbosity: 'AUDIT_VERBOSITY_DEBUG' },
      },
    },
    {
      after: 2 * DAY,
      spec: {
        actor: api,
        changeKind: 'CHANGE_KIND_HARD_DELETE',
        annotations: [ticket('SEC-4133'), reason('Reset to recreate from the new policy baseline')],
      },
    },
    {
      after: 20 * 60,
      spec: {
        actor: api,
        changeKind: 'CHANGE_KIND_CREATE',
        annotations: [ticket('SEC-4133')],
        set: { requireToolApproval: true, auditVerbosity: 'AUDIT_VERBOSITY_STANDARD' },
      },
    },
  ];
}

/** Appends the curated tail to a history; returns how many entries it added. */
export function appendScenarios(history: HistoryStore): number {
  const users = history.seededUsers;
  const list = steps(users.api[0]!, users.support[0]!);
  let seconds = history.newestInstant?.seconds ?? Date.parse('2025-01-06T09:00:00Z') / 1000;
  let n = 0;
  for (const { after, spec } of list) {
    seconds += after;
    // A fixed, realistic sub-second part per step keeps the tail deterministic.
    const nanos = ((n * 7919 + 104_729) * 7_654_321) % 1_000_000_000;
    history.appendEntry({ ...spec, at: formatTimestamp(seconds, nanos) });
    n++;
  }
  return n;
}
