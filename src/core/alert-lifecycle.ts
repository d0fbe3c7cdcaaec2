/**
 * The lifecycle of an alert as a pure state machine over its events (docs/design/alerts.md,
 * "Handling an alert"). The events are stored INSERT-only in `govtrail.alert_event`; the current
 * state is a fold of them, {@link replay}, and the view `govtrail.alert_state` computes the same
 * fold in SQL (a test compares the two on random event sequences). The commands validate a
 * transition with {@link refusal} against the replayed state before inserting its event.
 */

/** What can happen to an alert, in the order of the `alert_event.kind` check. */
export const ALERT_EVENT_KINDS = [
  'acknowledged',
  'assigned',
  'resolved',
  'snoozed',
  'reopened',
  'noted',
  'repeated',
] as const;
export type AlertEventKind = (typeof ALERT_EVENT_KINDS)[number];

/** The four states `alerts list --status` filters on. */
export const ALERT_STATES = ['open', 'acknowledged', 'snoozed', 'resolved'] as const;
export type AlertState = (typeof ALERT_STATES)[number];

/** One stored event of an alert, as the fold needs it. */
export interface LifecycleEvent {
  readonly kind: AlertEventKind;
  /** Who: the `--by` given, the OS user, or `govtrail` for an automatic event. */
  readonly actor: string;
  readonly at: Date;
  readonly note?: string | null | undefined;
  /** `assigned`: to whom. */
  readonly assignee?: string | null | undefined;
  /** `snoozed`: until when. */
  readonly until?: Date | null | undefined;
}

/** The fold of an alert's events, in event order. */
export interface LifecycleFold {
  readonly resolved: boolean;
  /** Acknowledged since it was last (re)opened. */
  readonly acknowledged: boolean;
  /** The until of the snooze in force (past or not); null when none is. */
  readonly snoozedUntil: Date | null;
  readonly assignee: string | null;
  readonly acknowledgedBy: string | null;
  readonly acknowledgedAt: Date | null;
  readonly resolvedBy: string | null;
  readonly resolvedAt: Date | null;
  readonly resolvedNote: string | null;
  /** Suppressed repeats folded into the alert (`repeated` events). */
  readonly repeats: number;
}

const INITIAL: LifecycleFold = {
  resolved: false,
  acknowledged: false,
  snoozedUntil: null,
  assignee: null,
  acknowledgedBy: null,
  acknowledgedAt: null,
  resolvedBy: null,
  resolvedAt: null,
  resolvedNote: null,
  repeats: 0,
};

/** One event applied to the fold. Every event is applied, refused or not: the store holds only accepted ones. */
export function applyEvent(f: LifecycleFold, e: LifecycleEvent): LifecycleFold {
  switch (e.kind) {
    case 'acknowledged':
      return { ...f, acknowledged: true, acknowledgedBy: e.actor, acknowledgedAt: e.at };
    case 'assigned':
      return { ...f, assignee: e.assignee ?? null };
    case 'resolved':
      return {
        ...f,
        resolved: true,
        snoozedUntil: null,
        resolvedBy: e.actor,
        resolvedAt: e.at,
        resolvedNote: e.note ?? null,
      };
    case 'snoozed':
      return { ...f, snoozedUntil: e.until ?? null };
    case 'reopened':
      // Back to open, whether it was resolved or snoozed (a snooze lifted early): whoever
      // acknowledged it before is asked to look again.
      return {
        ...f,
        resolved: false,
        acknowledged: false,
        snoozedUntil: null,
        resolvedBy: null,
        resolvedAt: null,
        resolvedNote: null,
      };
    case 'noted':
      return f;
    case 'repeated':
      return { ...f, repeats: f.repeats + 1 };
  }
}

/** The fold of events in their stored order. */
export function replay(events: readonly LifecycleEvent[]): LifecycleFold {
  return events.reduce(applyEvent, INITIAL);
}

/** The state shown to users at `now`: a snooze whose until has passed no longer counts. */
export function stateAt(f: LifecycleFold, now: Date): AlertState {
  if (f.resolved) return 'resolved';
  if (f.snoozedUntil !== null && f.snoozedUntil.getTime() > now.getTime()) return 'snoozed';
  return f.acknowledged ? 'acknowledged' : 'open';
}

/**
 * Why `event` makes no sense for an alert in `fold` at `now`, or undefined when it does. The
 * refusals: anything but a note or a reopen on a resolved alert; acknowledging an acknowledged
 * one; reopening one that is neither resolved nor snoozed; assigning to the current assignee;
 * snoozing until a time not after now; a note without text; a repeat of a resolved alert.
 */
export function refusal(fold: LifecycleFold, event: LifecycleEvent, now: Date): string | undefined {
  const state = stateAt(fold, now);
  if (state === 'resolved' && event.kind !== 'reopened' && event.kind !== 'noted') {
    return `is resolved (by ${fold.resolvedBy ?? '?'}); reopen it first`;
  }
  switch (event.kind) {
    case 'acknowledged':
      return fold.acknowledged ? `is already acknowledged by ${fold.acknowledgedBy ?? '?'}` : undefined;
    case 'assigned':
      if (event.assignee === undefined || event.assignee === null || event.assignee === '')
        return 'needs an assignee';
      return event.assignee === fold.assignee ? `is already assigned to ${event.assignee}` : undefined;
    case 'snoozed':
      if (event.until === undefined || event.until === null) return 'needs --until';
      return event.until.getTime() <= now.getTime()
        ? `cannot be snoozed until ${event.until.toISOString()}: that is not in the future`
        : undefined;
    case 'reopened':
      return state === 'resolved' || state === 'snoozed' ? undefined : `is ${state}, not resolved or snoozed`;
    case 'noted':
      return event.note === undefined || event.note === null || event.note.trim() === ''
        ? 'needs --note'
        : undefined;
    case 'resolved':
    case 'repeated':
      return undefined;
  }
}
