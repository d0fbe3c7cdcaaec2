import { Command, Option } from 'commander';
import { sql } from 'kysely';
import { formatValue } from '../alerts/format.js';
import { createAlerting } from '../alerts/setup.js';
import type { TenantConfig } from '../config.js';
import { MAPPED_TOP_LEVEL_KEYS, readWireField, SNAPSHOT_FIELDS } from '../normalise/fields.js';
import { startSandbox } from '../sandbox/index.js';
import { countEntries } from '../store/history.js';
import { findCurrentSettings, findRecentAlerts, findRecentChanges } from '../store/read.js';
import { syncTenant } from '../sync/service.js';
import { createContext } from './context.js';
import { ExitCode } from './exit.js';
import { progressReporter } from './progress.js';
import { formatSummaries } from './sync.js';
import { formatTable } from './table.js';

/** The demo tenant's name in the database. */
export const DEMO_TENANT = 'sandbox';

export function demoCommand(): Command {
  return new Command('demo')
    .summary('run the whole pipeline on a sandbox tenant and the embedded database')
    .description(
      'Run the whole pipeline on embedded parts: a sandbox tenant (in-process, seeded with a realistic history) and the embedded database in GOVTRAIL_DATA_DIR (./.govtrail), or DATABASE_URL when set. Migrates, syncs, then prints what was stored, the latest changes and the alerts raised, and how to query them. Running it again stores nothing new: the sandbox history is deterministic.',
    )
    .addOption(
      new Option('--entries <n>', 'length of the sandbox history').default(400).argParser(positiveInt),
    )
    .addOption(new Option('--seed <n>', 'seed of the sandbox history').default(7).argParser(positiveInt))
    .action(async (opts: { entries: number; seed: number }) => {
      const ctx = createContext();
      const { config, out } = ctx;
      const sandbox = await startSandbox({ entries: opts.entries, seed: opts.seed, scenarios: true });
      const database = await ctx.openDatabase();
      try {
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
        const progress = progressReporter(tenant.name, ctx.logger);
        const summary = await syncTenant({
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
        out.write(`\n${formatSummaries([summary])}\n\n`);
        if (summary.status !== 'succeeded') throw new ExitCode(1);

        const db = database.db;
        const stored = await countEntries(db, DEMO_TENANT);
        out.write(
          `Stored ${stored.toLocaleString('en')} history entries of tenant "${DEMO_TENANT}" ` +
            `(${summary.counters.entriesInserted.toLocaleString('en')} new in this run) in ${database.description}.\n\n`,
        );

        const current = await findCurrentSettings(db, DEMO_TENANT);
        if (current !== undefined) {
          out.write(
            `Current settings (entry ${current.entryId}, ${current.changeKind ?? 'unknown change'} at ${current.changedAt}):\n`,
          );
          const rows = settingsRows(current.wire);
          out.write(`${indent(formatTable(['setting', 'value'], rows))}\n\n`);
        }

        const changes = await findRecentChanges(db, DEMO_TENANT, 12);
        if (changes.length > 0) {
          out.write('Latest field changes:\n');
          out.write(
            `${indent(
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
            )}\n\n`,
          );
        }

        const alerts = await findRecentAlerts(db, DEMO_TENANT, 15);
        if (alerts.length > 0) {
          out.write('Alerts raised (newest first):\n');
          out.write(
            `${indent(
              formatTable(
                ['severity', 'rule', 'title', 'entry', 'delivered to'],
                alerts.map((a) => [
                  a.severity,
                  a.ruleId,
                  a.title,
                  a.entryId ?? '—',
                  a.deliveredTo.join(', '),
                ]),
              ),
            )}\n\n`,
          );
        }

        const { rows } = await sql<{
          n: number;
        }>`select count(*)::int as n from govtrail.alert where tenant_id = ${DEMO_TENANT}`.execute(db);
        out.write(`${rows[0]?.n ?? 0} alerts stored in all.\n\n`);
        out.write(howToQuery(database.kind === 'embedded', config.databaseUrl));
      } finally {
        await database.close();
        await sandbox.close();
      }
    });
}

/** One row per governance setting, in wire names and human units, then the unmapped fields. */
export function settingsRows(wire: Record<string, unknown> | null): string[][] {
  if (wire === null) return [['(no settings)', 'the newest entry has no snapshot (hard delete)']];
  const rows = SNAPSHOT_FIELDS.filter((f) => f.diffed).map((f) => {
    const v = readWireField(wire, f);
    const shown = v === undefined || v === null ? defaultShown(f.kind) : formatValue(f.column, v);
    return [f.path.join('.'), shown];
  });
  for (const [k, v] of Object.entries(wire)) {
    if (!MAPPED_TOP_LEVEL_KEYS.has(k)) rows.push([k, JSON.stringify(v)]);
  }
  return rows;
}

function defaultShown(kind: string): string {
  // proto3 JSON omits default values: absent is the default, not "unknown".
  if (kind === 'boolean') return 'false (absent)';
  if (kind === 'enumList') return 'all types (absent)';
  return 'unset';
}

function indent(text: string): string {
  return text
    .split('\n')
    .map((l) => `  ${l}`)
    .join('\n');
}

function positiveInt(v: string): number {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0) throw new Error(`expected a whole number, got ${v}`);
  return n;
}

function howToQuery(embedded: boolean, url: string | undefined): string {
  const q = [
    `select e.created_at, f.field, f.old_value, f.new_value, f.direction from govtrail.field_change f join govtrail.history_entry e using (tenant_id, entry_id) order by e.created_at desc limit 20;`,
    `select entry_id, created_at, change_kind, actor_kind from govtrail.history_entry order by created_at desc limit 20;`,
    `select severity, rule_id, title from govtrail.alert order by created_at desc;`,
  ];
  if (embedded) {
    return (
      'How to query it: the embedded database lives in GOVTRAIL_DATA_DIR (./.govtrail) and is opened by govtrail itself, one process at a time. To use psql or a BI tool, point govtrail at a PostgreSQL server instead:   DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres npx govtrail demo\n' +
      `  psql "$DATABASE_URL" -c "${q[0]}"\n`
    );
  }
  return `How to query it with psql:\n${q.map((x) => `  psql "${url ?? '$DATABASE_URL'}" -c "${x}"`).join('\n')}\n`;
}
