import { Command } from 'commander';
import type { TenantSelection } from '../app/select-tenants.js';
import { GovtrailError } from '../core/errors.js';
import { tenantSelection, timeArg } from './options.js';

export function reportCommand(): Command {
  const command = new Command('report')
    .description(
      'Write a self-contained HTML report (no scripts, no network): posture timeline with loosened periods, ' +
        'changes per week by direction, alerts by severity, the changes with actors and ticket links, ' +
        'exporter health, and source integrity (the last reconcile: entries verified, coverage, discrepancies). ' +
        'Lists the alerts of the period, and what the rules find in history a backfill stored (the first run raises one digest instead of per-change alerts), marked as found by backfill. ' +
        'Opens offline and prints. Default period: from 90 days before the newest stored change (or before now, if sooner) up to now.',
    )
    .requiredOption('--out <file>', 'the HTML file to write (with --group: the directory of the reports)')
    .option('--from <time>', 'start of the period (RFC 3339, or a date = midnight UTC)', timeArg)
    .option('--to <time>', 'end of the period, exclusive (default now)', timeArg)
    .addHelpText(
      'after',
      '\nWith --group G, --out names a directory: one TENANT.html per member tenant of the group now, and index.html naming the group and its members.',
    );
  return tenantSelection(command, 'report on', 'default: the only tenant stored').action(
    async (opts: { out: string; from?: Date; to?: Date } & TenantSelection) => {
      const { from, to } = opts;
      if (from !== undefined && to !== undefined && to <= from) {
        throw new GovtrailError('USAGE', '--to must be later than --from');
      }
      const { createContext } = await import('../app/context.js');
      const { writeGroupReports, writeReport } = await import('../app/report.js');
      const { storedTenants } = await import('../app/select-tenants.js');
      const { loadRulePack } = await import('../config/rule-pack.js');
      const ctx = createContext();
      const database = await ctx.openDatabase({ existing: true });
      try {
        const tenants = await storedTenants(database.db, opts);
        const pack = loadRulePack(ctx.config.alertRulesPath);
        if (opts.group !== undefined) {
          const files = await writeGroupReports(database.db, {
            group: opts.group,
            tenants,
            outDir: opts.out,
            from,
            to,
            pack,
          });
          ctx.out.write(`reports of group ${opts.group} (${tenants.join(', ')}) written to ${files[0]}\n`);
        } else {
          const tenantId = tenants[0] as string;
          const out = await writeReport(database.db, { tenantId, out: opts.out, from, to, pack });
          ctx.out.write(`report of tenant ${tenantId} written to ${out}\n`);
        }
      } finally {
        await database.close();
      }
    },
  );
}
