import { randomUUID } from 'node:crypto';
import { Command, Option } from 'commander';
import { type AlertMessage, SEVERITIES, type Sink } from '../core/alert.js';
import { GovtrailError } from '../core/errors.js';
import { terminalJson, terminalLine } from '../runtime/terminal.js';
import type { AlertSummary } from '../store/read/recent.js';
import { ExitCode } from './exit.js';
import { positiveIntegerArg, timeArg } from './options.js';
import { formatTable } from './table.js';

export function alertsCommand(): Command {
  const alerts = new Command('alerts').description(
    'Inspect alerts, retry pending deliveries, or send a test alert.',
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
    .addOption(new Option('--limit <n>', 'at most this many').default(50).argParser(positiveIntegerArg))
    .addOption(new Option('--format <format>', 'output format').choices(['table', 'json']).default('table'))
    .action(listAlerts);

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

interface ListOptions {
  readonly since?: Date;
  readonly severity?: string;
  readonly tenant?: string;
  readonly limit: number;
  readonly format: string;
}

/** `alerts list`: the stored alerts asked for, as a table or JSON. */
async function listAlerts(opts: ListOptions): Promise<void> {
  const since = opts.since;
  const severities = parseSeverities(opts.severity);
  const { createContext } = await import('../app/context.js');
  const { resolveTenant } = await import('../app/resolve-tenant.js');
  const { findRecentAlerts } = await import('../store/read/recent.js');
  const ctx = createContext();
  const database = await ctx.openDatabase({ existing: true });
  try {
    // A tenant named but never stored is a usage error (exit 2), as in every other command.
    if (opts.tenant !== undefined) await resolveTenant(database.db, opts.tenant);
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
