import { Command } from 'commander';
import { GovtrailError } from '../core/errors.js';
import { timeArg } from './options.js';

export function reportCommand(): Command {
  return new Command('report')
    .description(
      'Write a self-contained HTML report (no scripts, no network): posture timeline with loosened periods, ' +
        'changes per week by direction, alerts by severity, the changes with actors and ticket links, ' +
        'exporter health, and source integrity (the last reconcile: entries verified, coverage, discrepancies). ' +
        'Lists the alerts of the period, and what the rules find in history a backfill stored (the first run raises one digest instead of per-change alerts), marked as found by backfill. ' +
        'Opens offline and prints. Default period: from 90 days before the newest stored change (or before now, if sooner) up to now.',
    )
    .requiredOption('--out <file>', 'the HTML file to write')
    .option('--from <time>', 'start of the period (RFC 3339, or a date = midnight UTC)', timeArg)
    .option('--to <time>', 'end of the period, exclusive (default now)', timeArg)
    .option('-t, --tenant <name>', 'tenant (default: the only tenant stored)')
    .action(async (opts: { out: string; from?: Date; to?: Date; tenant?: string }) => {
      const { from, to } = opts;
      if (from !== undefined && to !== undefined && to <= from) {
        throw new GovtrailError('USAGE', '--to must be later than --from');
      }
      const { createContext } = await import('../app/context.js');
      const { writeReport } = await import('../app/report.js');
      const { resolveTenant } = await import('../app/resolve-tenant.js');
      const { loadRulePack } = await import('../config/rule-pack.js');
      const ctx = createContext();
      const database = await ctx.openDatabase({ existing: true });
      try {
        const tenantId = await resolveTenant(database.db, opts.tenant);
        const pack = loadRulePack(ctx.config.alertRulesPath);
        const out = await writeReport(database.db, { tenantId, out: opts.out, from, to, pack });
        ctx.out.write(`report of tenant ${tenantId} written to ${out}\n`);
      } finally {
        await database.close();
      }
    });
}
