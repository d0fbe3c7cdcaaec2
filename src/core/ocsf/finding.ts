/**
 * An alert as an OCSF 1.8.0 **Detection Finding** (2004), for the export and the SIEM sinks; the
 * helpers it shares with the Entity Management mapping (product, identities, actors) are in
 * mapping.ts. Pure, as mapping.ts is.
 */
import type { AlertContext, AlertMessage } from '../alert.js';
import {
  ANALYTIC_RULE,
  DETECTION_FINDING,
  ENTITY_MANAGEMENT,
  FINDING_ACTIVITY,
  FINDING_STATUS_NEW,
  OCSF_FEATURE_ALERTS,
  OCSF_SCHEMA_VERSION,
  RESOURCE_ROLE_TARGET,
  SEVERITY_CAPTIONS,
  typeNameOf,
  typeUidOf,
} from './constants.js';
import {
  activityOfChangeKind,
  actorOf,
  alertChange,
  present,
  product,
  settingsIdentityCore,
  severityIdOf,
  userObservable,
} from './mapping.js';
import type {
  OcsfDetectionFinding,
  OcsfEvidence,
  OcsfFieldChange,
  OcsfMetadata,
  OcsfOptions,
  OcsfRelatedEvent,
} from './types.js';

/**
 * Maps one stored alert to an OCSF Detection Finding (2004) event, activity 1 Create.
 *
 * - `finding_info.uid` is the alert's dedupe key (the same for a later Update or Close of the
 *   alert); `metadata.uid` is `<dedupe key>:create`, unique per emitted event and stable across
 *   retries of the same delivery; `finding_info.analytic` names the rule (`type_id` 1 Rule, `uid`
 *   the rule id, `name`, `version`); `finding_info.related_events` links the history entry's
 *   Entity Management event (`uid` = the entry id) when the alert is about one entry — run-level
 *   alerts (backfill digest, sync failing) have none.
 * - `severity_id`: low 2, medium 3, high 4, critical 5; `status_id` 1 New; `is_alert` true;
 *   `time` the alert's creation time in epoch ms.
 * - `evidences[0]` carries the actor and `data` with the changes that made the rule fire (before,
 *   after, direction) and the rule's details (discrepancy, digest counts, …); `resources[0]` is the
 *   tenant's settings object (`role_id` 1 Target); `remediation.desc` the runbook line;
 *   `unmapped` the alert id, tickets, reasons and correlation ids.
 */
export function alertToDetectionFinding(alert: AlertMessage, options: OcsfOptions): OcsfDetectionFinding {
  // Stored contexts are jsonb: read them defensively, a part missing is left out of the event.
  const ctx: Partial<AlertContext> = alert.context ?? {};
  const created = Date.parse(alert.createdAt);
  const time = Number.isFinite(created) ? created : options.now.getTime();
  const severityId = severityIdOf(alert.severity);
  const changes = (ctx.changes ?? []).map(alertChange);
  const evidence = findingEvidence(alert, ctx, changes);
  const related = relatedEntryEvents(alert, ctx);
  const unmapped = findingUnmapped(alert, ctx, changes);
  const metadata = findingMetadata(alert, ctx, options);
  const observables = userObservable('evidences.actor.user.uid', ctx.actor?.userId ?? null);
  const runbook = ctx.runbook;

  return {
    class_uid: DETECTION_FINDING.classUid,
    class_name: DETECTION_FINDING.className,
    category_uid: DETECTION_FINDING.categoryUid,
    category_name: DETECTION_FINDING.categoryName,
    activity_id: FINDING_ACTIVITY.create.id,
    activity_name: FINDING_ACTIVITY.create.name,
    type_uid: typeUidOf(DETECTION_FINDING.classUid, FINDING_ACTIVITY.create.id),
    type_name: typeNameOf(DETECTION_FINDING.className, FINDING_ACTIVITY.create.name),
    severity_id: severityId,
    severity: severityId === 99 ? String(alert.severity) : (SEVERITY_CAPTIONS[severityId] as string),
    time,
    metadata,
    message: alert.title,
    status_id: FINDING_STATUS_NEW.id,
    status: FINDING_STATUS_NEW.name,
    is_alert: true,
    finding_info: {
      uid: alert.dedupeKey,
      title: alert.title,
      desc: alert.summary,
      analytic: {
        type_id: ANALYTIC_RULE.id,
        type: ANALYTIC_RULE.name,
        uid: alert.ruleId,
        ...present('name', ctx.ruleName ?? null),
        version: String(alert.ruleVersion),
      },
      created_time: time,
      ...(related.length > 0 ? { related_events: related } : {}),
    },
    evidences: [evidence],
    resources: [
      {
        ...settingsIdentityCore(alert.tenantId),
        role_id: RESOURCE_ROLE_TARGET.id,
        role: RESOURCE_ROLE_TARGET.name,
      },
    ],
    ...(typeof runbook === 'string' && runbook !== '' ? { remediation: { desc: runbook } } : {}),
    ...(observables !== undefined ? { observables } : {}),
    unmapped,
  };
}

/** The finding's evidence: the actor, and the changes and rule details that made the rule fire. */
function findingEvidence(
  alert: AlertMessage,
  ctx: Partial<AlertContext>,
  changes: readonly OcsfFieldChange[],
): OcsfEvidence {
  const actor = actorOf(ctx.actor?.kind ?? null, ctx.actor?.userId ?? null);
  const details = ctx.details ?? {};
  const evidenceData: Record<string, unknown> = {
    ...(alert.entryId !== null ? { entry_id: alert.entryId } : {}),
    ...present('changed_at', ctx.changedAt ?? null),
    ...present('change_kind', ctx.changeKind ?? null),
    changes,
    ...(Object.keys(details).length > 0 ? { details } : {}),
  };
  return { ...(actor !== undefined ? { actor } : {}), data: evidenceData };
}

/** The history entry's Entity Management event, when the alert is about one entry. */
function relatedEntryEvents(alert: AlertMessage, ctx: Partial<AlertContext>): OcsfRelatedEvent[] {
  const related: OcsfRelatedEvent[] = [];
  if (alert.entryId !== null) {
    const activity = activityOfChangeKind(ctx.changeKind ?? null);
    related.push({
      uid: alert.entryId,
      type_uid: typeUidOf(ENTITY_MANAGEMENT.classUid, activity.id),
      type_name: typeNameOf(ENTITY_MANAGEMENT.className, activity.caption),
    });
  }
  return related;
}

/** What OCSF has no place for: the alert id, tickets, reasons, correlation ids, every change. */
function findingUnmapped(
  alert: AlertMessage,
  ctx: Partial<AlertContext>,
  changes: readonly OcsfFieldChange[],
): Record<string, unknown> {
  const tickets = (ctx.tickets ?? []).map((t) => ({
    ...present('value', t.value),
    ...present('url', t.url),
  }));
  const allChanges = ctx.allChanges ?? [];
  return {
    alert_id: alert.alertId,
    ...(tickets.length > 0 ? { tickets } : {}),
    ...(ctx.reasons !== undefined && ctx.reasons.length > 0 ? { reasons: ctx.reasons } : {}),
    ...present('syslog_event_id', ctx.syslogEventId ?? null),
    ...present('trace_id', ctx.traceId ?? null),
    ...(allChanges.length > changes.length ? { all_changes: allChanges.map(alertChange) } : {}),
  };
}

function findingMetadata(
  alert: AlertMessage,
  ctx: Partial<AlertContext>,
  options: OcsfOptions,
): OcsfMetadata {
  return {
    version: OCSF_SCHEMA_VERSION,
    product: product(options, OCSF_FEATURE_ALERTS),
    uid: `${alert.dedupeKey}:create`,
    log_name: 'alerts',
    tenant_uid: alert.tenantId,
    ...present('correlation_uid', ctx.traceId ?? null),
    event_code: alert.ruleId,
    processed_time: options.now.getTime(),
  };
}
