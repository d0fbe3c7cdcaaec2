/**
 * The OCSF Detection Finding of an alert, as the SIEM sinks (Splunk HEC, syslog, webhook with
 * `format: ocsf`) send it: {@link alertToDetectionFinding} of an alert whose long values were cut
 * to fit a size budget, so that the JSON stays whole and valid rather than being cut mid-way.
 */
import type { AlertFollowUp, AlertMessage } from '../../core/alert.js';
import { alertToDetectionFinding, findingUpdate } from '../../core/ocsf/index.js';
import type { OcsfDetectionFinding } from '../../core/ocsf/types.js';
import { govtrailVersion } from '../../runtime/paths.js';
import {
  clipList,
  clipText,
  clipValue,
  DETAIL_LEVELS,
  type Detail,
  fitToBudget,
  jsonBytes,
} from './payload-budget.js';

/** The alert with its free text, lists and details cut to one level of detail. */
export function clipAlert(alert: AlertMessage, detail: Detail): AlertMessage {
  const c = alert.context;
  const clipChanges = (list: AlertMessage['context']['changes']) =>
    clipList(list ?? [], detail).kept.map((ch) => ({
      ...ch,
      oldValue: clipValue(ch.oldValue, detail),
      newValue: clipValue(ch.newValue, detail),
    }));
  return {
    ...alert,
    title: clipText(alert.title, detail),
    summary: clipText(alert.summary, detail),
    context: {
      ...c,
      tickets: clipList(c.tickets ?? [], detail).kept.map((t) => ({
        value: t.value === null ? null : clipText(t.value, detail),
        url: t.url,
      })),
      reasons: clipList(c.reasons ?? [], detail).kept.map((r) => clipText(r, detail)),
      changes: clipChanges(c.changes),
      allChanges: clipChanges(c.allChanges),
      runbook: clipText(c.runbook ?? '', detail),
      details: clipValue(c.details ?? {}, detail) as Record<string, unknown>,
    },
  };
}

export interface OcsfEventOptions {
  /** Bytes of the event's JSON (UTF-8) it should fit in. */
  readonly budgetBytes: number;
  readonly now?: Date | undefined;
  readonly productVersion?: string | undefined;
}

/**
 * The Detection Finding of `alert`, at the most detailed level whose JSON fits
 * `o.budgetBytes` (values cut, lists shortened; the last level is used even if it does not fit).
 */
export function ocsfAlertEvent(alert: AlertMessage, o: OcsfEventOptions): OcsfDetectionFinding {
  const options = { now: o.now ?? new Date(), productVersion: o.productVersion ?? govtrailVersion() };
  const fitted = fitToBudget(o.budgetBytes, (detail) =>
    alertToDetectionFinding(Number.isFinite(detail.text) ? clipAlert(alert, detail) : alert, options),
  ).value;
  if (jsonBytes(fitted) <= o.budgetBytes) return fitted;
  // Last resort for small budgets: the finding without the entry's details (changes, tickets,
  // reasons, rule details, runbook); the ids that find the rest in govtrail stay.
  const bare = clipAlert(alert, DETAIL_LEVELS[DETAIL_LEVELS.length - 1] as Detail);
  return alertToDetectionFinding(
    {
      ...bare,
      context: {
        ...bare.context,
        tickets: [],
        reasons: [],
        changes: [],
        allChanges: [],
        details: {},
        runbook: '',
      },
    },
    options,
  );
}

/**
 * The Detection Finding update of a lifecycle event (core/ocsf/finding-update.ts) around the
 * alert's finding cut to `o.budgetBytes` less room for the lifecycle part.
 */
export function ocsfFollowUpEvent(
  alert: AlertMessage,
  event: AlertFollowUp,
  o: OcsfEventOptions,
): OcsfDetectionFinding {
  return findingUpdate(
    ocsfAlertEvent(alert, { ...o, budgetBytes: Math.max(1024, o.budgetBytes - 4096) }),
    event,
  );
}
