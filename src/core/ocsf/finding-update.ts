/**
 * The Detection Finding (2004) of a lifecycle event of an alert (docs/siem.md): the alert's
 * finding with activity Update (Close for a resolve), the `status_id` of the alert's new state,
 * `finding_info.uid` still the dedupe key (so a SIEM joins it to the Create), `metadata.uid`
 * unique per event, and who, when and the note in `unmapped.lifecycle`.
 */
import type { AlertFollowUp } from '../alert.js';
import type { AlertEventKind } from '../alert-lifecycle.js';
import { FINDING_ACTIVITY, typeNameOf, typeUidOf } from './constants.js';
import type { OcsfDetectionFinding } from './types.js';

/** OCSF Detection Finding `status_id` of the state each event leaves the alert in. */
export const FINDING_STATUS_OF: Readonly<
  Record<Exclude<AlertEventKind, 'repeated'>, { readonly id: number; readonly name: string }>
> = {
  acknowledged: { id: 2, name: 'In Progress' },
  assigned: { id: 2, name: 'In Progress' },
  noted: { id: 2, name: 'In Progress' },
  // OCSF has no "snoozed": Other, with govtrail's word in `status`.
  snoozed: { id: 99, name: 'Snoozed' },
  resolved: { id: 4, name: 'Resolved' },
  reopened: { id: 1, name: 'New' },
};

/** The update of `finding` (the alert's Create, as alertToDetectionFinding built it) for `event`. */
export function findingUpdate(finding: OcsfDetectionFinding, event: AlertFollowUp): OcsfDetectionFinding {
  const kind = event.kind === 'repeated' ? 'noted' : event.kind;
  const activity = kind === 'resolved' ? FINDING_ACTIVITY.close : FINDING_ACTIVITY.update;
  const status = FINDING_STATUS_OF[kind];
  const time = event.at.getTime();
  return {
    ...finding,
    activity_id: activity.id,
    activity_name: activity.name,
    type_uid: typeUidOf(finding.class_uid, activity.id),
    type_name: typeNameOf(finding.class_name, activity.name),
    time,
    status_id: status.id,
    status: status.name,
    metadata: { ...finding.metadata, uid: `${finding.finding_info.uid}:event-${event.eventId}` },
    finding_info: { ...finding.finding_info, modified_time: time },
    unmapped: {
      ...finding.unmapped,
      lifecycle: {
        event: event.kind,
        event_id: event.eventId,
        actor: event.actor,
        at: event.at.toISOString(),
        automatic: event.automatic,
        ...(event.note ? { note: event.note } : {}),
        ...(event.assignee ? { assignee: event.assignee } : {}),
        ...(event.until ? { until: event.until.toISOString() } : {}),
      },
    },
  };
}
