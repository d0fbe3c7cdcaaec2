import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { Command } from 'commander';
import type { TenantSelection } from '../app/select-tenants.js';
import { GovtrailError } from '../core/errors.js';
import { OCSF_SCHEMA_VERSION } from '../core/ocsf/constants.js';
import type { OcsfExportKind } from '../outputs/ocsf/jsonl.js';
import { govtrailVersion } from '../runtime/paths.js';
import { evidencePackCommand } from './evidence-pack.js';
import { checkOutputFile, nameArg, tenantSelection, timeArg } from './options.js';

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
    .action(async (opts: { from: Date; to: Date; out: string; tenant?: string; group?: string }) => {
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
  exp.addCommand(oscalCommand());
  exp.addCommand(evidencePackCommand());
  return exp;
}

function ocsfCommand(): Command {
  const command = new Command('ocsf')
    .description(
      `Write the period's history and alerts as OCSF ${OCSF_SCHEMA_VERSION} events, one JSON object a line ` +
        '(JSON Lines), for a SIEM: one Entity Management event (class_uid 3004) per history entry with ' +
        'created_at in [--from, --to), with its field changes, and one Detection Finding (class_uid 2004) ' +
        'per alert raised in [--from, --to), and one Compliance Finding (class_uid 2003) per status change ' +
        "of a control of the tenant's baseline in [--from, --to) (when a baseline judges the tenant). " +
        'Entries come first, then alerts, then compliance findings, each oldest first. The file ' +
        'is written as FILE.partial and renamed when complete. docs/siem.md tells how to load it into ' +
        'Splunk, Elastic, Microsoft Sentinel and Amazon Security Lake.',
    )
    .requiredOption('--from <time>', 'first instant included (RFC 3339, or a date = midnight UTC)', timeArg)
    .requiredOption('--to <time>', 'first instant excluded', timeArg)
    .requiredOption(
      '--out <file>',
      'the JSON Lines file to write (replaced when it exists); with --group, the directory of one TENANT.jsonl per member',
    )
    .option(
      '--kind <kind>',
      'what to export: changes (Entity Management), alerts (Detection Finding), compliance (Compliance Finding) or all',
      'all',
    )
    .addHelpText(
      'after',
      '\nExit codes: 0 written; 1 the export failed; 2 a usage error (bad time, --from not before --to, ' +
        'unknown --kind, missing directory of --out, unknown tenant or group).',
    );
  return tenantSelection(command, 'export', 'default: the only tenant stored').action(
    async (opts: { from: Date; to: Date; out: string; kind: string } & TenantSelection) => {
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
      if (opts.group === undefined) checkOutputFile('--out', opts.out);
      else {
        if (opts.out.trim() === '') throw new GovtrailError('USAGE', '--out: a directory name is required');
        mkdirSync(opts.out, { recursive: true });
        checkOutputFile('--out', path.join(opts.out, 'group.jsonl'));
      }
      const { createContext } = await import('../app/context.js');
      const { loadRulePack } = await import('../config/rule-pack.js');
      const { findJudgingBaseline } = await import('../store/read/conformance-baseline.js');
      const { storedTenants } = await import('../app/select-tenants.js');
      const ctx = createContext();
      const database = await ctx.openDatabase({ existing: true });
      try {
        const ranks = loadRulePack(ctx.config.alertRulesPath).ranks;
        for (const tenantId of await storedTenants(database.db, opts)) {
          if (kind === 'compliance' && (await findJudgingBaseline(database.db, tenantId)) === undefined)
            throw new GovtrailError(
              'USAGE',
              `--kind compliance: no baseline has judged tenant ${tenantId} (set GOVTRAIL_BASELINE or baseline: in GOVTRAIL_CONFIG, then sync)`,
            );
          const out = opts.group === undefined ? opts.out : path.join(opts.out, `${tenantId}.jsonl`);
          const result = await writeOcsfJsonl(database.db, {
            ranks,
            tenantId,
            from,
            to,
            kind: kind as OcsfExportKind,
            out,
            now: new Date(),
            productVersion: govtrailVersion(),
          });
          ctx.out.write(ocsfSummary(tenantId, opts.group, from, to, kind, result));
        }
      } finally {
        await database.close();
      }
    },
  );
}

/** What `export ocsf` prints of one tenant's file: the events written per class, and the file. */
function ocsfSummary(
  tenantId: string,
  group: string | undefined,
  from: Date,
  to: Date,
  kind: string,
  result: {
    entityManagement: number;
    detectionFinding: number;
    complianceFinding: number;
    judged: boolean;
    path: string;
    bytes: number;
  },
): string {
  return (
    `OCSF ${OCSF_SCHEMA_VERSION} events of tenant ${tenantId}${group === undefined ? '' : ` (group ${group})`} from ${from.toISOString()} to ${to.toISOString()}\n` +
    (kind === 'changes' || kind === 'all'
      ? `  Entity Management (3004)   ${result.entityManagement.toLocaleString('en')}  history entries\n`
      : '') +
    (kind === 'alerts' || kind === 'all'
      ? `  Detection Finding (2004)   ${result.detectionFinding.toLocaleString('en')}  alerts\n`
      : '') +
    (kind === 'compliance' || (kind === 'all' && result.judged)
      ? `  Compliance Finding (2003)  ${result.complianceFinding.toLocaleString('en')}  control status changes\n`
      : '') +
    `  ${result.path} (${result.bytes.toLocaleString('en')} bytes)\n`
  );
}

function oscalCommand(): Command {
  return new Command('oscal')
    .description(
      'Write the conformance of the period as an OSCAL 1.2.1 assessment-results document (JSON): one result ' +
        'per tenant judged by a baseline, one observation per control with the share of [--from, --to) it ' +
        'spent in each status and every fail, deleted and excepted period (entry, actor, ticket), one ' +
        'finding per control that failed at any instant, each with the framework references of the ' +
        'baseline; the baseline text and its sha256 in back-matter. All judged tenants (one baseline), or ' +
        'the one --tenant names. The file is written as FILE.partial and renamed when complete.',
    )
    .requiredOption('--from <time>', 'first instant included (RFC 3339, or a date = midnight UTC)', timeArg)
    .requiredOption('--to <time>', 'first instant excluded', timeArg)
    .requiredOption('--out <file>', 'the JSON file to write (replaced when it exists)')
    .option('-t, --tenant <name>', 'tenant (default: every tenant a baseline has judged)')
    .option('-g, --group <name>', 'the tenants of this group (their membership now)', nameArg('group'))
    .addHelpText(
      'after',
      '\nExit codes: 0 written; 1 the export failed; 2 a usage error (bad time, --from not before --to, ' +
        'missing directory of --out, unknown tenant, a tenant no baseline has judged, tenants judged by ' +
        'different baselines).',
    )
    .action(async (opts: { from: Date; to: Date; out: string; tenant?: string; group?: string }) => {
      const { from, to } = opts;
      if (to <= from) throw new GovtrailError('USAGE', '--to must be later than --from');
      checkOutputFile('--out', opts.out);
      const { createContext } = await import('../app/context.js');
      const { loadRulePack } = await import('../config/rule-pack.js');
      const { listJudgedTenants } = await import('../store/read/conformance-baseline.js');
      const { storedTenants } = await import('../app/select-tenants.js');
      const { writeOscal } = await import('../outputs/conformance/oscal.js');
      const ctx = createContext();
      const database = await ctx.openDatabase();
      try {
        const tenantIds =
          opts.tenant !== undefined || opts.group !== undefined
            ? await storedTenants(database.db, opts)
            : await listJudgedTenants(database.db);
        if (tenantIds.length === 0)
          throw new GovtrailError(
            'USAGE',
            'no tenant has been judged by a baseline (set GOVTRAIL_BASELINE or baseline: in GOVTRAIL_CONFIG, then sync)',
          );
        const r = await writeOscal(database.db, {
          tenantIds,
          from,
          to,
          out: opts.out,
          now: new Date(),
          productVersion: govtrailVersion(),
          ranks: loadRulePack(ctx.config.alertRulesPath).ranks,
        });
        ctx.out.write(
          `OSCAL 1.2.1 assessment-results of ${tenantIds.join(', ')} from ${from.toISOString()} to ${to.toISOString()}, ` +
            `baseline ${r.baseline.id} (sha256 ${r.baseline.sha256.slice(0, 12)}…)\n` +
            `  ${r.results} result${r.results === 1 ? '' : 's'}, ${r.observations} observations (controls), ` +
            `${r.findings} findings (controls that failed at some instant)\n` +
            `  ${r.path} (${r.bytes.toLocaleString('en')} bytes)\n`,
        );
      } finally {
        await database.close();
      }
    });
}
