import path from 'node:path';
import { Command, Option } from 'commander';
import type { Alerting } from '../app/alerting.js';
import type { CommandContext } from '../app/context.js';
import type { Config, TenantConfig } from '../config/settings.js';
import { formatValue } from '../core/format.js';
import { packagePath } from '../runtime/paths.js';
import type { Sandbox } from '../sandbox/index.js';
import type { Database } from '../store/database.js';
import type { RunSummary } from '../sync/run-types.js';
import { demoBaselineConfig, writeComplianceSummary } from './demo-compliance.js';
import { ExitCode } from './exit.js';
import { formatReconcile } from './format-reconcile.js';
import { formatSummaries } from './format-sync.js';
import { integerArg, positiveIntegerArg } from './options.js';
import { progressReporter } from './progress.js';
import { settingsTableRows } from './settings.js';
import { formatTable } from './table.js';

/** The demo tenant's name in the database. */
export const DEMO_TENANT = 'sandbox';

export function demoCommand(): Command {
  return new Command('demo')
    .summary('run the whole pipeline on a sandbox tenant and the embedded database')
    .description(
      'Run the whole pipeline on embedded parts: a sandbox tenant (in-process, seeded with a realistic history) and the embedded database in GOVTRAIL_DATA_DIR (./.govtrail), or DATABASE_URL when set. Migrates, syncs, then makes the sandbox rewrite and drop an entry of its history and runs a reconcile that finds both; prints what was stored, the latest changes, the alerts raised, and how to query them. Running it again stores nothing new: the sandbox history is deterministic.',
    )
    .addOption(
      new Option('--entries <n>', 'length of the sandbox history').default(400).argParser(positiveIntegerArg),
    )
    .addOption(new Option('--seed <n>', 'seed of the sandbox history').default(7).argParser(integerArg(0)))
    .action(runDemo);
}

/** The configuration of the demo's runs: the recommended baseline judges the sandbox tenant. */
function demoBaseline(config: Config): Config {
  return demoBaselineConfig(config, DEMO_TENANT);
}

/** One sync or reconcile of the demo tenant, then alert delivery. */
type DemoRun = (kind?: 'sync' | 'reconcile') => Promise<RunSummary>;

/** The action: sandbox, database and sinks opened, the story run and told, everything closed. */
async function runDemo(opts: { entries: number; seed: number }): Promise<void> {
  const { createAlerting } = await import('../app/alerting.js');
  const { createContext } = await import('../app/context.js');
  const { startSandbox } = await import('../sandbox/index.js');
  const ctx = createContext(process.env, { logFileOffTerminal: 'demo.log' });
  const { config, out } = ctx;
  out.write(`govtrail demo on Node.js ${process.version}\n`);
  if (ctx.logFile !== undefined) out.write(`Logs (stderr is not a terminal): ${ctx.logFile}\n`);
  const sandbox = await startSandbox({ entries: opts.entries, seed: opts.seed });
  // Everything opened here is closed in the finally, so that a failure (a DATABASE_URL naming a
  // missing database, a sink that cannot be built) ends the process instead of leaving the
  // sandbox's server, or a sink's connection, holding it open.
  const opened: Array<{ close(): Promise<void> }> = [sandbox];
  try {
    const database = await ctx.openDatabase({ announce: false });
    opened.push(database);
    out.write(`Database: ${database.description}\n`);
    // What this demo raises is told apart from what earlier demos stored.
    const alertsBefore = (await newestAlertId(database)) ?? 0;
    // The key-secret form, so the demo also exercises the EdDSA client assertion.
    const tenant: TenantConfig = {
      name: DEMO_TENANT,
      baseUrl: sandbox.baseUrl,
      clientId: sandbox.credentials.key.clientId,
      clientSecret: sandbox.credentials.key.clientSecret,
      pageSize: config.pageSize,
      lookbackMs: config.lookbackMs,
    };
    const alerting = createAlerting(config, ctx.logger, database);
    opened.push(alerting);
    const run = await demoRunner(ctx, database, tenant, alerting);
    const summaries = await syncTwice(ctx, sandbox, run);
    await reconcileRewrite(ctx, sandbox, database, run);
    await tellStory(ctx, database, summaries, alertsBefore);
  } finally {
    // Last opened, first closed: the sinks, the database, then the sandbox.
    for (const thing of opened.reverse()) await thing.close();
  }
}

async function demoRunner(
  ctx: CommandContext,
  database: Database,
  tenant: TenantConfig,
  alerting: Alerting,
): Promise<DemoRun> {
  const { reconcileTenant, syncTenant } = await import('../app/tenant-run.js');
  // Judged by the shipped recommended baseline unless one is configured (the compliance summary).
  const config = demoBaseline(ctx.config);
  return async (kind = 'sync') => {
    const progress = progressReporter(tenant.name, ctx.logger);
    const summary = await (kind === 'sync' ? syncTenant : reconcileTenant)({
      database,
      config,
      logger: ctx.logger,
      tenant,
      trigger: 'demo',
      alerting,
      onProgress: progress.update,
    });
    progress.done();
    await alerting.deliver();
    return summary;
  };
}

/**
 * First the history as it stands (a first run is a backfill: one digest alert), then the tenant
 * "lives on": a scripted tail of notable changes arrives and the next run alerts on it. Exit 1
 * when a run failed.
 */
async function syncTwice(ctx: CommandContext, sandbox: Sandbox, run: DemoRun): Promise<RunSummary[]> {
  const first = await run();
  sandbox.appendScenarios();
  const second = first.status === 'succeeded' ? await run() : undefined;
  const summaries = second === undefined ? [first] : [first, second];
  // Let the log lines of the runs (the log sink's alerts among them) reach the terminal
  // before the story is told, so that the story is what the terminal ends with.
  await new Promise<void>((resolve) => ctx.logger.flush(() => resolve()));
  ctx.out.write(`\n${formatSummaries(summaries)}\n\n`);
  if (summaries.some((s) => s.status !== 'succeeded')) throw new ExitCode(1);
  return summaries;
}

/**
 * Then the source is caught rewriting its own history: one stored entry comes back changed,
 * another is gone. No incremental run looks that far back; a reconcile compares everything.
 */
async function reconcileRewrite(
  ctx: CommandContext,
  sandbox: Sandbox,
  database: Database,
  run: DemoRun,
): Promise<void> {
  const { listDiscrepancies } = await import('../store/read/discrepancies.js');
  const { out } = ctx;
  const served = sandbox.history.entries() as Array<{ metadata?: { id?: string; createdAt?: string } }>;
  const rewritten = served[Math.floor(served.length / 3)]?.metadata;
  const removed = served[Math.floor(served.length / 2)]?.metadata;
  if (rewritten?.id === undefined || removed?.id === undefined) return;
  sandbox.history.rewrite(rewritten.id);
  sandbox.history.remove(removed.id);
  out.write(
    `The sandbox now rewrites entry ${rewritten.id} (${rewritten.createdAt}) and drops entry ${removed.id} (${removed.createdAt}) from its history. govtrail reconcile pages the whole history and compares it with the store, entry by entry:\n\n`,
  );
  const check = await run('reconcile');
  await new Promise<void>((resolve) => ctx.logger.flush(() => resolve()));
  out.write(`${indent(formatReconcile([check]))}\n\n`);
  const found = await listDiscrepancies(database.db, { tenantId: DEMO_TENANT, runId: check.runId });
  for (const d of found)
    out.write(
      `  ${d.kind.padEnd(18)} ${d.entryId}${d.kind === 'changed_at_source' ? '  (stored original kept; served version in source_raw)' : ''}\n`,
    );
  if (found.length > 0) out.write('\n');
}

/** What was stored: the count, the settings now, the latest changes, the alerts, how to query, the report. */
async function tellStory(
  ctx: CommandContext,
  database: Database,
  summaries: readonly RunSummary[],
  alertsBefore: number,
): Promise<void> {
  const { writeReport } = await import('../app/report.js');
  const { countAlerts } = await import('../store/read/recent.js');
  const { findEntryRange, findSettingsAsOf } = await import('../store/read/views.js');
  const { countEntries } = await import('../store/read/stored-entries.js');
  const { config, out } = ctx;
  const inserted = summaries.reduce((n, s) => n + s.counters.entriesInserted, 0);
  const db = database.db;
  const stored = await countEntries(db, DEMO_TENANT);
  out.write(
    `Stored ${stored.toLocaleString('en')} history entries of tenant "${DEMO_TENANT}" ` +
      `(${inserted.toLocaleString('en')} new in this run) in ${database.description}.\n\n`,
  );

  // The settings as `govtrail settings` shows them: its column names, its values.
  const current = await findSettingsAsOf(db, DEMO_TENANT, 'now');
  if (current !== undefined) {
    out.write(
      `Current settings (govtrail settings; since ${current.validFrom.toISOString()}, entry ${current.entryId}, ${current.changeKind ?? 'unknown change'}):\n`,
    );
    out.write(`${indent(formatTable(['setting', 'value'], settingsTableRows(current.settings)))}\n\n`);
  }
  out.write(await latestChanges(database));
  out.write(await alertsRaised(database, alertsBefore));
  out.write(`${await countAlerts(db, DEMO_TENANT)} alerts stored in all (govtrail alerts list).\n\n`);
  out.write(howToQuery(database.kind === 'embedded', config.databaseUrl));
  // What the recommended baseline says of the tenant, before the last line (the report).
  await writeComplianceSummary(ctx, database, DEMO_TENANT, demoBaseline(ctx.config).baselinePath);
  // The whole stored history: the sandbox's ends in 2026-02, and the story covers all of it.
  const range = await findEntryRange(db, DEMO_TENANT);
  const report = await writeReport(db, {
    tenantId: DEMO_TENANT,
    out: path.join(config.dataDir, 'report.html'),
    ...(range === undefined ? {} : { from: range.first }),
  });
  // Log lines still buffered are written before the last line, which is where the report is.
  await new Promise<void>((resolve) => ctx.logger.flush(() => resolve()));
  const period = range === undefined ? '' : ` of ${range.first.toISOString().slice(0, 10)} to now`;
  out.write(`\nHTML report${period} (open it in a browser, works offline):\n${path.resolve(report)}\n`);
}

/** The id of the newest alert stored, if any. */
async function newestAlertId(database: Database): Promise<number | undefined> {
  const { findRecentAlerts } = await import('../store/read/recent.js');
  return (await findRecentAlerts(database.db, undefined, 1))[0]?.alertId;
}

async function latestChanges(database: Database): Promise<string> {
  const { findRecentChanges } = await import('../store/read/recent.js');
  const changes = await findRecentChanges(database.db, DEMO_TENANT, 12);
  if (changes.length === 0) return '';
  return `Latest field changes:\n${indent(
    formatTable(
      ['changed at', 'field', 'before → after', 'direction', 'actor', 'ticket'],
      changes.map((c) => [
        c.changedAt.slice(0, 19).replace('T', ' '),
        c.field,
        `${formatValue(c.field, c.oldValue)} → ${formatValue(c.field, c.newValue)}`,
        c.direction,
        [c.actorKind?.replace('ACTOR_KIND_', '') ?? '?', c.actorUserId].filter(Boolean).join(' '),
        c.tickets.join(', ') || '(none)',
      ]),
    ),
  )}\n\n`;
}

/** The alerts this demo raised (ids above `before`), oldest first. */
async function alertsRaised(database: Database, before: number): Promise<string> {
  const { findRecentAlerts } = await import('../store/read/recent.js');
  const alerts = (await findRecentAlerts(database.db, DEMO_TENANT, 40)).filter((a) => a.alertId > before);
  if (alerts.length === 0) {
    return 'Alerts raised by this run: none (the history was already stored).\n';
  }
  // Oldest first, as the story unfolded; each with its summary (before → after, actor, ticket).
  const lines = [`Alerts raised by this run (${alerts.length}):\n`];
  for (const a of [...alerts].reverse()) {
    lines.push(
      `  [${a.severity.toUpperCase()}] ${a.ruleId} ${a.title}  (delivered to ${a.deliveredTo.join(', ') || 'nothing yet'})\n`,
    );
    lines.push(`      ${a.summary.replace(/\s+/g, ' ')}\n`);
  }
  return `${lines.join('')}\n`;
}

function indent(text: string): string {
  return text
    .split('\n')
    .map((l) => `  ${l}`)
    .join('\n');
}

/** The ./govtrail entry point of this checkout, as the user can type it from here. */
function entryPoint(): string {
  const script = packagePath('govtrail');
  const relative = path.relative(process.cwd(), script);
  return relative.startsWith('..') || path.isAbsolute(relative) ? script : `./${relative}`;
}

export function howToQuery(embedded: boolean, url: string | undefined): string {
  const q = [
    `select changed_at, field, old_value, new_value, direction, tickets from govtrail.change_log order by changed_at desc limit 20;`,
    `select * from govtrail.settings_as_of('${DEMO_TENANT}', '2025-06-01T00:00:00Z');`,
    `select severity, rule_id, title, delivery_status from govtrail.alert_log order by created_at desc;`,
  ];
  const gt = entryPoint();
  const commands = [
    `  ${gt} changes --since 2026-01-01`,
    `  ${gt} settings --as-of 2025-06-01`,
    `  ${gt} export evidence --from 2025-01-01 --to 2027-01-01 --out evidence.csv`,
    `  ${gt} export evidence-pack --from 2025-01-01 --to 2026-01-01 --out audit-2025   # the auditor's binder`,
    `  ${gt} alerts list`,
  ].join('\n');
  if (embedded) {
    return (
      `How to query it: the embedded database in GOVTRAIL_DATA_DIR (./.govtrail) is opened by govtrail itself,\n` +
      `one process at a time:\n${commands}\n` +
      `For psql or a BI tool, point govtrail at a database of its own on a PostgreSQL server and query the views:\n` +
      `  createdb -h 127.0.0.1 -U postgres govtrail\n` +
      `  export DATABASE_URL=postgres://postgres@127.0.0.1:5432/govtrail && ${gt} demo\n` +
      q.map((x) => `  psql "$DATABASE_URL" -c "${x}"`).join('\n') +
      '\n'
    );
  }
  const shown = url === undefined ? { url: '$DATABASE_URL', hidden: false } : withoutPassword(url);
  const note = shown.hidden ? '(the password is left out: psql asks for it, or set PGPASSWORD)\n' : '';
  return `How to query it with psql:\n${q.map((x) => `  psql "${shown.url}" -c "${x}"`).join('\n')}\n${note}or with govtrail:\n${commands}\n`;
}

/** The URL without its password (never printed), and whether it had one. */
export function withoutPassword(url: string): { url: string; hidden: boolean } {
  try {
    const u = new URL(url);
    if (u.password === '') return { url, hidden: false };
    u.password = '';
    return { url: u.toString(), hidden: true };
  } catch {
    return { url: '$DATABASE_URL', hidden: false };
  }
}
