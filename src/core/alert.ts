/**
 * Shapes shared by rule evaluation, the outbox and the sinks. An alert is created as an
 * {@link AlertDraft} by the pure rule evaluation, stored by the sync transaction (which gives it an
 * id and a creation time), and handed to sinks as an {@link AlertMessage}.
 */
import type { AlertEventKind } from './alert-lifecycle.js';
import type { Direction } from './diff.js';

export type Severity = 'low' | 'medium' | 'high' | 'critical';

/** Severities, lowest first. */
export const SEVERITIES: readonly Severity[] = ['low', 'medium', 'high', 'critical'];

/** One field change as an alert carries it (`field` is the field_change name). */
export interface AlertChange {
  readonly field: string;
  /** The wire name, for humans: `requireToolApproval`. */
  readonly label: string;
  readonly oldValue: unknown;
  readonly newValue: unknown;
  readonly direction: Direction;
}

export interface AlertTicket {
  /** Display value of the TICKET annotation (raw value when there is none). */
  readonly value: string | null;
  /** Resolved URL; null when the tenant has none configured. */
  readonly url: string | null;
}

/** What docs/design/alerts.md "What an alert carries" lists, stored as the alert's `context` jsonb. */
export interface AlertContext {
  readonly tenantId: string;
  /** Null for run-level alerts (backfill digest, sync failing). */
  readonly entryId: string | null;
  /** `metadata.createdAt` verbatim; null for run-level alerts. */
  readonly changedAt: string | null;
  readonly changeKind: string | null;
  readonly actor: { readonly kind: string | null; readonly userId: string | null };
  readonly tickets: readonly AlertTicket[];
  /** Display values of REASON annotations. */
  readonly reasons: readonly string[];
  /** The changes that made this rule fire (all of them when the rule is not about a field). */
  readonly changes: readonly AlertChange[];
  /** Every field change of the entry. */
  readonly allChanges: readonly AlertChange[];
  readonly syslogEventId: string | null;
  readonly traceId: string | null;
  /** One line telling on-call what to do. */
  readonly runbook: string;
  readonly ruleName: string;
  /** Rule-specific facts: burst count, unrecognised values, digest counts, failing-run details. */
  readonly details: Readonly<Record<string, unknown>>;
}

/** An alert as rule evaluation produces it, before it is stored. */
export interface AlertDraft {
  readonly ruleId: string;
  readonly ruleVersion: number;
  readonly severity: Severity;
  readonly title: string;
  readonly summary: string;
  readonly entryId: string | null;
  /** Unique per alert: `rule_id:tenant_id:entry_id` (run-level rules use `run-<id>` instead of the entry). */
  readonly dedupeKey: string;
  readonly context: AlertContext;
}

/** A stored alert, as the sinks receive it. */
export interface AlertMessage {
  readonly alertId: string;
  readonly tenantId: string;
  readonly entryId: string | null;
  readonly ruleId: string;
  readonly ruleVersion: number;
  readonly severity: Severity;
  readonly title: string;
  readonly summary: string;
  readonly context: AlertContext;
  readonly dedupeKey: string;
  /** ISO 8601 time the alert was stored. */
  readonly createdAt: string;
}

/** Identifies one delivery attempt of one alert to one sink. */
export interface DeliveryAttempt {
  /** Stable across retries of the same (alert, sink), so receivers can drop repeats. */
  readonly deliveryId: string;
  /** 1 for the first attempt. */
  readonly attempt: number;
}

/** One alert of a batch delivery, with its own (alert, sink) delivery id and attempt. */
export interface BatchItem {
  readonly alert: AlertMessage;
  readonly delivery: DeliveryAttempt;
}

/**
 * Where alerts go. A sink type is a factory `(settings, deps) => Sink` (src/alerts/sinks/registry.ts).
 * `deliver` resolves when the receiver accepted the alert, which for most destinations means
 * queued, not seen: the same (alert, sink) may be delivered again, so every delivery carries
 * `delivery.deliveryId` and the alert's `dedupeKey` for the receiver to drop repeats.
 */
export interface Sink {
  /** The configured name: the `sink` column of alert_delivery. */
  readonly name: string;
  /**
   * Delivers one alert.
   * @throws DeliveryError (alerts/sinks/delivery-failure.ts): `retryable` true sends the row back to the outbox for a
   *   retry with backoff (after `retryAfterMs` when the receiver asked for it); false marks it
   *   `failed` at once with the message as the reason. Any other error is retried.
   */
  deliver(alert: AlertMessage, delivery: DeliveryAttempt): Promise<void>;
  /**
   * Delivers every alert due for this sink in one delivery pass as one message (the email
   * digest). When present, the delivery loop calls it instead of {@link deliver}, once per pass;
   * the outcome, and a thrown DeliveryError's classification, applies to every alert in it.
   */
  deliverBatch?(items: readonly BatchItem[]): Promise<void>;
  /**
   * Delivers a follow-up of an alert already delivered to this sink: it was acknowledged,
   * resolved, snoozed… (docs/design/alerts.md, "Sinks follow the lifecycle"). A sink sends only the
   * kinds it has a use for and returns at once for the others; a sink without this method sends no
   * follow-ups. Failures are classified as for {@link deliver}.
   */
  deliverEvent?(alert: AlertMessage, event: AlertFollowUp, delivery: DeliveryAttempt): Promise<void>;
  /** Releases connections or pools the sink holds (SMTP, syslog over TCP); called at shutdown. */
  close?(): Promise<void>;
}

/** Builds the sink-facing message from a draft once the outbox has given it an id and a time. */
export function alertMessageFromDraft(
  draft: AlertDraft,
  alertId: string,
  createdAt: Date | string,
): AlertMessage {
  return {
    alertId,
    tenantId: draft.context.tenantId,
    entryId: draft.entryId,
    ruleId: draft.ruleId,
    ruleVersion: draft.ruleVersion,
    severity: draft.severity,
    title: draft.title,
    summary: draft.summary,
    context: draft.context,
    dedupeKey: draft.dedupeKey,
    createdAt: typeof createdAt === 'string' ? createdAt : createdAt.toISOString(),
  };
}

/** One lifecycle event of an alert (`alert_event`), as the sinks receive it. */
export interface AlertFollowUp {
  readonly eventId: string;
  readonly kind: AlertEventKind;
  /** Who: an operator's name, or `govtrail` for an automatic event. */
  readonly actor: string;
  readonly at: Date;
  readonly note?: string | null | undefined;
  readonly assignee?: string | null | undefined;
  readonly until?: Date | null | undefined;
  readonly automatic: boolean;
  /** `repeated`: how many repeats the alert has folded in. */
  readonly repeatCount: number | null;
  /** `repeated`: the suppressed repeat (entry id, dedupe key, severity, title). */
  readonly details: Readonly<Record<string, unknown>> | null;
}

/** One due (alert, sink) row of `alert_delivery`, or (with `event`) of `alert_event_delivery`. */
export interface DueDelivery {
  readonly alert: AlertMessage;
  /** Set on a follow-up row: the event to deliver; the store's mark* methods then take its event id. */
  readonly event?: AlertFollowUp | undefined;
  readonly sink: string;
  /** Attempts made so far. */
  readonly attempts: number;
  /**
   * When the first attempt was made; null before it. alert_delivery has no column for it, so a
   * store may answer with the alert's created_at (the first attempt follows the commit).
   */
  readonly firstAttemptAt: Date | null;
}

/**
 * What the delivery loop needs from the database; store/write/outbox.ts implements it over
 * alert_delivery, store/write/alert-events.ts over alert_event_delivery (where the id the mark*
 * methods take is the event id).
 */
export interface DeliveryStore {
  /** Rows with status `pending` and next_attempt_at ≤ now (or null), oldest first, at most `limit`. */
  dueDeliveries(now: Date, limit: number): Promise<DueDelivery[]>;
  /** status `delivered`, attempts, delivered_at = at. */
  markDelivered(alertId: string, sink: string, attempts: number, at: Date): Promise<void>;
  /** Stays `pending`: attempts, next_attempt_at, last_error. */
  markRetry(
    alertId: string,
    sink: string,
    attempts: number,
    nextAttemptAt: Date,
    error: string,
  ): Promise<void>;
  /** status `failed`, attempts, last_error: no more automatic attempts. */
  markFailed(alertId: string, sink: string, attempts: number, error: string): Promise<void>;
}
