import { Command } from 'commander';
import { GovtrailError } from '../errors.js';
import { writeEvidenceCsv } from '../export/evidence.js';
import { parseTimeOption } from './alerts.js';
import { createContext } from './context.js';
import { resolveTenant } from './settings.js';

export function exportCommand(): Command {
  const exp = new Command('export').description('Export stored history for auditors.');
  exp
    .command('evidence')
    .description(
      'Write one CSV row per field change in [--from, --to): tenant, time, actor, change kind, field, ' +
        'before, after, direction, tickets with URLs, reasons, entry id, syslogEventId, traceId. ' +
        "RFC 4180 (CRLF), cells that a spreadsheet would run as a formula are prefixed with ', " +
        'and FILE.sha256 holds the checksum in sha256sum format (check with `sha256sum -c`).',
    )
    .requiredOption('--from <time>', 'first instant included (RFC 3339, or a date = midnight UTC)')
    .requiredOption('--to <time>', 'first instant excluded')
    .requiredOption('--out <file>', 'the CSV file to write (FILE.sha256 is written next to it)')
    .option('-t, --tenant <name>', 'tenant (default: the only tenant stored)')
    .action(async (opts: { from: string; to: string; out: string; tenant?: string }) => {
      const from = parseTimeOption('--from', opts.from);
      const to = parseTimeOption('--to', opts.to);
      if (to <= from) throw new GovtrailError('USAGE', '--to must be later than --from');
      if (opts.out.trim() === '') throw new GovtrailError('USAGE', '--out: a file name is required');
      const ctx = createContext();
      const database = await ctx.openDatabase();
      try {
        const tenantId = await resolveTenant(database.db, opts.tenant);
        const result = await writeEvidenceCsv(database.db, { tenantId, from, to, out: opts.out });
        ctx.out.write(
          `${result.rows.toLocaleString('en')} field changes of tenant ${tenantId} written\n` +
            `  ${result.csvPath}\n  ${result.sha256Path}\n`,
        );
      } finally {
        await database.close();
      }
    });
  return exp;
}
