import { randomUUID } from 'node:crypto';
import { userInfo } from 'node:os';
import { Command, InvalidArgumentError, Option } from 'commander';
import { type AlertMessage, SEVERITIES, type Sink } from '../core/alert.js';
import { ALERT_STATES, type AlertState } from '../core/alert-lifecycle.js';
import { GovtrailError } from '../core/errors.js';
import { terminalJson, terminalLine } from '../runtime/terminal.js';
import type { AlertStateRow } from '../store/read/alert-states.js';
import type { AlertSummary } from '../store/read/recent.js';
import type { EventRequest, StoredAlertEvent } from '../store/write/alert-events.js';
import { ExitCode } from './exit.js';
import { positiveIntegerArg, timeArg } from './options.js';
import { formatTable } from './table.js';

export function alertsCommand(): Command {
  const alerts = new Command('alerts').description(
    'Inspect and handle alerts (acknowledge, assign, snooze, resolve, reopen, note), retry pending deliveries, or send a test alert.',
  );

  alerts
    .command('list')
    .description('List stored alerts, newest first, with where each was delivered.')
    .addOption(
      new Option(
        '--since <time>',
        'only alerts raised at or after this time (RFC 3339, or a date)',
      ).argParser(timeArg),
    )
    .addOption(
      new Option('--severity <levels>', 'only these severities, comma-separated (low,medium,high,critical)'),
    )
    .option('-t, --tenant <name>', 'only this tenant')
    .addOption(
      new Option(
        '--status <states>',
        'only alerts in these handling states, comma-separated (open,acknowledged,snoozed,resolved); ' +
          'shows who acknowledged and resolved each, and when',
      ),
    )
    .option('--assignee <name>', 'only alerts assigned to this person (shows the handling columns)')
    .addOption(new Option('--limit <n>', 'at most this many').default(50).argParser(positiveIntegerArg))
    .addOption(new Option('--format <format>', 'output format').choices(['table', 'json']).default('table'))
    .action(listAlerts);

  for (const [name, kind, what] of LIFECYCLE_COMMANDS) {
    const sub = alerts
      .command(`${name} <id...>`)
      .description(
        `${what} Each event is recorded with who (--by, else your user name) and when (the database's clock), ` +
          'then sent as a follow-up to the sinks the alert went to. Exit 2 naming the alert when one does not ' +
          'exist or the change makes no sense for it (nothing is recorded then).',
      )
      .option('--by <name>', 'who is doing this (default: the operating-system user)')
      .option('--note <text>', kind === 'noted' ? 'the note (required)' : 'a note to keep with the event');
    if (kind === 'assigned') sub.requiredOption('--to <name>', 'whom to assign the alert to');
    if (kind === 'snoozed') {
      sub.requiredOption(
        '--until <time>',
        'until when: a time (RFC 3339, or a date) or a duration from now (30m, 2h, 1d)',
      );
    }
    sub
      .option('--no-deliver', 'record only; the worker or `alerts deliver` sends the follow-ups later')
      .action((ids: string[], opts: LifecycleOptions) => changeAlerts(kind, ids, opts));
  }

  alerts
    .command('deliver')
    .description(
      'Attempt every pending delivery now, without waiting out its backoff (the worker retries due ones on every tick).',
    )
    .action(deliverNow);

  alerts
    .command('test')
    .description(
      'Send one test alert (severity low) through every configured sink, or the one named, whatever its ' +
        'route, and print one line per sink: delivered, or why not. Nothing is stored. Exit 1 if any failed.',
    )
    .option('--sink <name>', 'only this sink (a name from the configuration)')
    .action(testSinks);
  return alerts;
}

/** The lifecycle subcommands: name, the event each records, and what it does. */
const LIFECYCLE_COMMANDS: ReadonlyArray<readonly [string, EventRequest['kind'], string]> = [
  ['ack', 'acknowledged', 'Acknowledge alerts: someone is on it (PagerDuty: acknowledge).'],
  ['assign', 'assigned', 'Assign alerts to someone (--to).'],
  ['resolve', 'resolved', 'Resolve alerts, with a --note saying why (PagerDuty: resolve).'],
  ['snooze', 'snoozed', 'Snooze alerts until a time (--until); a more severe repeat lifts the snooze early.'],
  ['reopen', 'reopened', 'Reopen resolved or snoozed alerts.'],
  ['note', 'noted', 'Add a note (--note) to alerts.'],
];

interface LifecycleOptions {
  readonly by?: string;
  readonly note?: string;
  readonly to?: string;
  readonly until?: string;
  readonly deliver: boolean;
}

/** Alert ids as given on the command line; a USAGE error names one that is not an id. */
function parseAlertIds(ids: readonly string[]): number[] {
  return ids.map((id) => {
    if (!/^[1-9]\d{0,17}$/.test(id)) {
      throw new GovtrailError(
        'USAGE',
        `not an alert id: ${JSON.stringify(id)} (ids are the numbers alerts list shows)`,
      );
    }
    return Number(id);
  });
}

/** --until as a time, or a duration from the database's now. */
async function parseUntil(text: string): Promise<{ until: Date } | { forSeconds: number }> {
  const { parseWindowSeconds } = await import('../core/rules/pack-schema.js');
  const seconds = parseWindowSeconds(text.trim());
  if (seconds !== undefined) return { forSeconds: seconds };
  try {
    return { until: timeArg(text) };
  } catch (err) {
    if (err instanceof InvalidArgumentError) {
      throw new GovtrailError(
        'USAGE',
        `--until: ${err.message.replace(/^not a time/, 'not a time or a duration')}`,
      );
    }
    throw err;
  }
}

/** Who is acting: --by, else the operating-system user. */
function actorOf(by: string | undefined): string {
  if (by !== undefined) {
    if (by.trim() === '') throw new GovtrailError('USAGE', '--by: must not be empty');
    return by.trim();
  }
  try {
    return userInfo().username;
  } catch {
    return process.env['USER'] ?? 'unknown';
  }
}

/** `alerts ack|assign|resolve|snooze|reopen|note`: one event on each alert named, all or none. */
async function changeAlerts(
  kind: EventRequest['kind'],
  ids: readonly string[],
  opts: LifecycleOptions,
): Promise<void> {
  const alertIds = parseAlertIds(ids);
  const request: EventRequest = {
    kind,
    actor: actorOf(opts.by),
    ...(opts.note !== undefined ? { note: opts.note } : {}),
    ...(opts.to !== undefined ? { assignee: opts.to.trim() } : {}),
    ...(opts.until !== undefined ? await parseUntil(opts.until) : {}),
  };
  const { createContext } = await import('../app/context.js');
  const { recordAlertEvents } = await import('../store/write/alert-events.js');
  const ctx = createContext();
  const database = await ctx.openDatabase();
  try {
    const events = await recordAlertEvents(database.db, alertIds, request);
    for (const e of events) ctx.out.write(`${terminalLine(describeEvent(e))}\n`);
    if (opts.deliver) {
      const { withAlerting } = await import('../app/alerting.js');
      const d = await withAlerting(ctx.config, ctx.logger, database, (alerting) => alerting.deliver());
      if (d.delivered + d.retried + d.failed > 0) {
        ctx.out.write(
          `follow-ups: ${d.delivered} delivered, ${d.retried} to retry later, ${d.failed} given up\n`,
        );
      }
    }
  } finally {
    await database.close();
  }
}

/** One line per recorded event: `alert 12 acknowledged by alice at 2026-…`. */
function describeEvent(e: StoredAlertEvent): string {
  const extra = [
    e.assignee ? `to ${e.assignee}` : '',
    e.until ? `until ${e.until.toISOString()}` : '',
    e.note ? `(${e.note})` : '',
  ].filter((x) => x !== '');
  return `alert ${e.alertId} ${e.kind} by ${e.actor} at ${e.at.toISOString()}${extra.length > 0 ? ` ${extra.join(' ')}` : ''}`;
}

/** --status as a list of known states; a USAGE error names one that is not. */
function parseStates(text: string | undefined): AlertState[] | undefined {
  const states = text?.split(',').map((s) => s.trim().toLowerCase());
  for (const s of states ?? []) {
    if (!(ALERT_STATES as readonly string[]).includes(s)) {
      throw new GovtrailError(
        'USAGE',
        `--status: unknown state ${JSON.stringify(s)} (${ALERT_STATES.join(', ')})`,
      );
    }
  }
  return states as AlertState[] | undefined;
}

interface ListOptions {
  readonly since?: Date;
  readonly severity?: string;
  readonly tenant?: string;
  readonly status?: string;
  readonly assignee?: string;
  readonly limit: number;
  readonly format: string;
}

/** `alerts list`: the stored alerts asked for, as a table or JSON. */
async function listAlerts(opts: ListOptions): Promise<void> {
  const since = opts.since;
  const severities = parseSeverities(opts.severity);
  const states = parseStates(opts.status);
  const { createContext } = await import('../app/context.js');
  const { resolveTenant } = await import('../app/resolve-tenant.js');
  const { findRecentAlerts } = await import('../store/read/recent.js');
  const ctx = createContext();
  const database = await ctx.openDatabase({ existing: true });
  try {
    // A tenant named but never stored is a usage error (exit 2), as in every other command.
    if (opts.tenant !== undefined) await resolveTenant(database.db, opts.tenant);
    if (states !== undefined || opts.assignee !== undefined) {
      const { findAlertStates } = await import('../store/read/alert-states.js');
      const rows = await findAlertStates(database.db, {
        states,
        assignee: opts.assignee,
        tenantId: opts.tenant,
        limit: opts.limit,
      });
      ctx.out.write(
        opts.format === 'json' ? `${terminalJson(JSON.stringify(rows, null, 2))}\n` : formatStates(rows),
      );
      return;
    }
    const rows = await findRecentAlerts(database.db, opts.tenant, opts.limit, {
      ...(since !== undefined ? { since } : {}),
      ...(severities !== undefined ? { severities } : {}),
    });
    ctx.out.write(
      opts.format === 'json' ? `${terminalJson(JSON.stringify(rows, null, 2))}\n` : formatAlerts(rows),
    );
  } finally {
    await database.close();
  }
}

/** --severity as a list of known severities; a USAGE error names one that is not. */
function parseSeverities(text: string | undefined): string[] | undefined {
  const severities = text?.split(',').map((s) => s.trim().toLowerCase());
  for (const s of severities ?? []) {
    if (!(SEVERITIES as readonly string[]).includes(s)) {
      throw new GovtrailError(
        'USAGE',
        `--severity: unknown severity ${JSON.stringify(s)} (low, medium, high, critical)`,
      );
    }
  }
  return severities;
}

function formatAlerts(rows: readonly AlertSummary[]): string {
  if (rows.length === 0) return 'no alerts\n';
  return `${formatTable(
    ['id', 'raised at', 'tenant', 'severity', 'rule', 'title', 'delivered', 'pending', 'failed'],
    rows.map((a) => [
      String(a.alertId),
      a.createdAt.toISOString().slice(0, 19).replace('T', ' '),
      a.tenantId,
      a.severity,
      a.ruleId,
      a.title,
      a.deliveredTo.join(',') || '—',
      a.pendingTo.join(',') || '—',
      a.failedTo.join(',') || '—',
    ]),
  )}\n`;
}

const at = (d: Date | null) => (d === null ? '' : d.toISOString().slice(0, 19).replace('T', ' '));

function formatStates(rows: readonly AlertStateRow[]): string {
  if (rows.length === 0) return 'no alerts\n';
  return `${formatTable(
    [
      'id',
      'raised at',
      'tenant',
      'severity',
      'rule',
      'state',
      'assignee',
      'acknowledged',
      'resolved',
      'note',
    ],
    rows.map((a) => [
      a.alertId,
      at(a.createdAt),
      a.tenantId,
      a.severity,
      a.ruleId,
      a.state === 'snoozed' ? `snoozed until ${at(a.snoozedUntil)}` : a.state,
      a.assignee ?? '—',
      a.acknowledgedBy === null ? '—' : `${a.acknowledgedBy} ${at(a.acknowledgedAt)}`,
      a.resolvedBy === null ? '—' : `${a.resolvedBy} ${at(a.resolvedAt)}`,
      a.resolvedNote ?? '—',
    ]),
  )}\n`;
}

/** `alerts deliver`: every pending delivery attempted now; exit 1 when any is left or given up. */
async function deliverNow(): Promise<void> {
  const { withAlerting } = await import('../app/alerting.js');
  const { createContext } = await import('../app/context.js');
  const { makePendingDeliveriesDue } = await import('../store/write/outbox.js');
  const ctx = createContext();
  const database = await ctx.openDatabase();
  try {
    // Asked by hand: retry every pending delivery now rather than at its backoff time.
    const d = await withAlerting(ctx.config, ctx.logger, database, async (alerting) => {
      await makePendingDeliveriesDue(database.db);
      return alerting.deliver();
    });
    const perSink = Object.entries(d.bySink).map(
      ([sink, t]) => `${sink}: ${t.delivered} delivered, ${t.retried} to retry, ${t.failed} given up`,
    );
    ctx.out.write(
      `${d.delivered} delivered, ${d.retried} to retry later, ${d.failed} given up\n${perSink.map((l) => `  ${l}\n`).join('')}`,
    );
    if (d.retried + d.failed > 0) throw new ExitCode(1);
  } finally {
    await database.close();
  }
}

/** `alerts test`: one test alert through each sink asked for, one line each; exit 1 if any failed. */
async function testSinks(opts: { sink?: string }): Promise<void> {
  const { withAlerting } = await import('../app/alerting.js');
  const { createContext } = await import('../app/context.js');
  const ctx = createContext();
  const names = ctx.config.sinks.map((s) => s.name);
  if (opts.sink !== undefined && !names.includes(opts.sink)) {
    throw new GovtrailError(
      'USAGE',
      `--sink: no sink named ${JSON.stringify(opts.sink)} (configured: ${names.join(', ')})`,
    );
  }
  const database = await ctx.openDatabase();
  try {
    const results = await withAlerting(ctx.config, ctx.logger, database, (alerting) =>
      sendTestAlert(
        alerting.sinks.filter((s) => opts.sink === undefined || s.name === opts.sink),
        testAlert(),
      ),
    );
    const width = Math.max(...results.map((r) => r.sink.length));
    // A receiver's answer is in the outcome: shown with control characters escaped.
    for (const r of results) ctx.out.write(`${r.sink.padEnd(width)}  ${terminalLine(r.outcome)}\n`);
    if (results.some((r) => !r.delivered)) throw new ExitCode(1);
  } finally {
    await database.close();
  }
}

/** One sink's answer to the test alert. */
export interface TestResult {
  readonly sink: string;
  readonly delivered: boolean;
  /** `delivered`, or `failed (permanent|retryable): <reason>`. */
  readonly outcome: string;
}

/** Sends `alert` through each sink, one after the other, and reports each outcome. */
export async function sendTestAlert(sinks: readonly Sink[], alert: AlertMessage): Promise<TestResult[]> {
  const { deliveryIdFor } = await import('../alerts/deliver.js');
  const { isPermanentFailure } = await import('../alerts/sinks/delivery-failure.js');
  const { scrubSecrets } = await import('../runtime/logger.js');
  const results: TestResult[] = [];
  for (const sink of sinks) {
    try {
      await sink.deliver(alert, { deliveryId: deliveryIdFor(alert, sink.name), attempt: 1 });
      results.push({ sink: sink.name, delivered: true, outcome: 'delivered' });
    } catch (err) {
      const kind = isPermanentFailure(err) ? 'permanent' : 'retryable';
      const message = scrubSecrets(err instanceof Error ? err.message : String(err));
      // DeliveryError messages start with the sink's name, which the line already shows.
      const reason = message.startsWith(`${sink.name}: `) ? message.slice(sink.name.length + 2) : message;
      results.push({ sink: sink.name, delivered: false, outcome: `failed (${kind}): ${reason}` });
    }
  }
  return results;
}

/** The alert `alerts test` sends: low, so a pager routed to high alerts is not woken by it. */
export function testAlert(now: Date = new Date()): AlertMessage {
  const at = now.toISOString();
  return {
    alertId: `test-${randomUUID()}`,
    tenantId: 'govtrail-test',
    entryId: null,
    ruleId: 'TEST',
    ruleVersion: 1,
    severity: 'low',
    title: 'govtrail test alert',
    summary: 'A test alert sent by `govtrail alerts test`: if you can read this, the sink works.',
    dedupeKey: `TEST:govtrail-test:${at}`,
    createdAt: at,
    context: {
      tenantId: 'govtrail-test',
      entryId: null,
      changedAt: null,
      changeKind: null,
      actor: { kind: null, userId: null },
      tickets: [],
      reasons: [],
      changes: [],
      allChanges: [],
      syslogEventId: null,
      traceId: null,
      runbook: 'Nothing to do: this is a test.',
      ruleName: 'test',
      details: {},
    },
  };
}
