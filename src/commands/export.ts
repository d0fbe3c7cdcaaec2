import { readFileSync } from 'node:fs';
import { Command } from 'commander';
import { GovtrailError } from '../core/errors.js';
import { OCSF_SCHEMA_VERSION } from '../core/ocsf/constants.js';
import type { OcsfExportKind } from '../outputs/ocsf/jsonl.js';
import { packagePath } from '../runtime/paths.js';
import { evidencePackCommand } from './evidence-pack.js';
import { checkOutputFile, timeArg } from './options.js';

export function exportCommand(): Command {
  const exp = new Command('export').description('Export stored history for auditors.');
  exp
    .command('evidence')
    .description(
      'Write one CSV row per field change in [--from, --to): tenant, time, actor, change kind, field, ' +
        'before, after, direction, tickets with URLs, reasons, entry id, syslogEventId, traceId. ' +
        "RFC 4180 (CRLF), cells that a spreadsheet would run as a formula are prefixed with ', " +
        'and FILE.sha256 holds the checksum in sha256sum format (check with `sha256sum -c`). The file is ' +
        'written as FILE.partial and renamed when complete, then FILE.sha256 is written.',
    )
    .requiredOption('--from <time>', 'first instant included (RFC 3339, or a date = midnight UTC)', timeArg)
    .requiredOption('--to <time>', 'first instant excluded', timeArg)
    .requiredOption('--out <file>', 'the CSV file to write (FILE.sha256 is written next to it)')
    .option('-t, --tenant <name>', 'tenant (default: the only tenant stored)')
    .addHelpText(
      'after',
      '\nExit codes: 0 written; 1 the export failed; 2 a usage error (bad time, --from not before --to, ' +
        'missing directory of --out or --out a directory, unknown tenant).',
    )
    .action(async (opts: { from: Date; to: Date; out: string; tenant?: string }) => {
      const { from, to } = opts;
      if (to <= from) throw new GovtrailError('USAGE', '--to must be later than --from');
      checkOutputFile('--out', opts.out);
      const { createContext } = await import('../app/context.js');
      const { resolveTenant } = await import('../app/resolve-tenant.js');
      const { writeEvidenceCsv } = await import('../outputs/evidence/evidence.js');
      const ctx = createContext();
      const database = await ctx.openDatabase({ existing: true });
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
  exp.addCommand(ocsfCommand());
  exp.addCommand(evidencePackCommand());
  return exp;
}

function ocsfCommand(): Command {
  return new Command('ocsf')
    .description(
      `Write the period's history and alerts as OCSF ${OCSF_SCHEMA_VERSION} events, one JSON object a line ` +
        '(JSON Lines), for a SIEM: one Entity Management event (class_uid 3004) per history entry with ' +
        'created_at in [--from, --to), with its field changes, and one Detection Finding (class_uid 2004) ' +
        'per alert raised in [--from, --to). Entries come first, then alerts, each oldest first. The file ' +
        'is written as FILE.partial and renamed when complete. docs/siem.md tells how to load it into ' +
        'Splunk, Elastic, Microsoft Sentinel and Amazon Security Lake.',
    )
    .requiredOption('--from <time>', 'first instant included (RFC 3339, or a date = midnight UTC)', timeArg)
    .requiredOption('--to <time>', 'first instant excluded', timeArg)
    .requiredOption('--out <file>', 'the JSON Lines file to write (replaced when it exists)')
    .option(
      '--kind <kind>',
      'what to export: changes (Entity Management), alerts (Detection Finding) or all',
      'all',
    )
    .option('-t, --tenant <name>', 'tenant (default: the only tenant stored)')
    .addHelpText(
      'after',
      '\nExit codes: 0 written; 1 the export failed; 2 a usage error (bad time, --from not before --to, ' +
        'unknown --kind, missing directory of --out, unknown tenant).',
    )
    .action(async (opts: { from: Date; to: Date; out: string; kind: string; tenant?: string }) => {
      const { from, to } = opts;
      if (to <= from) throw new GovtrailError('USAGE', '--to must be later than --from');
      const { OCSF_EXPORT_KINDS, writeOcsfJsonl } = await import('../outputs/ocsf/jsonl.js');
      const kind = opts.kind.trim().toLowerCase();
      if (!(OCSF_EXPORT_KINDS as readonly string[]).includes(kind)) {
        throw new GovtrailError(
          'USAGE',
          `--kind: unknown kind ${JSON.stringify(opts.kind)} (${OCSF_EXPORT_KINDS.join(', ')})`,
        );
      }
      checkOutputFile('--out', opts.out);
      const { createContext } = await import('../app/context.js');
      const { resolveTenant } = await import('../app/resolve-tenant.js');
      const ctx = createContext();
      const database = await ctx.openDatabase({ existing: true });
      try {
        const tenantId = await resolveTenant(database.db, opts.tenant);
        const result = await writeOcsfJsonl(database.db, {
          tenantId,
          from,
          to,
          kind: kind as OcsfExportKind,
          out: opts.out,
          now: new Date(),
          productVersion: productVersion(),
        });
        ctx.out.write(
          `OCSF ${OCSF_SCHEMA_VERSION} events of tenant ${tenantId} from ${from.toISOString()} to ${to.toISOString()}\n` +
            (kind === 'alerts'
              ? ''
              : `  Entity Management (3004)  ${result.entityManagement.toLocaleString('en')}  history entries\n`) +
            (kind === 'changes'
              ? ''
              : `  Detection Finding (2004)  ${result.detectionFinding.toLocaleString('en')}  alerts\n`) +
            `  ${result.path} (${result.bytes.toLocaleString('en')} bytes)\n`,
        );
      } finally {
        await database.close();
      }
    });
}

/** govtrail's version for `metadata.product.version`. */
function productVersion(): string {
  try {
    return (JSON.parse(readFileSync(packagePath('package.json'), 'utf8')) as { version: string }).version;
  } catch {
    return 'unknown';
  }
}
