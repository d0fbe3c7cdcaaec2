import { Command, Option } from 'commander';
import { nameArg, parseTimeOption } from './options.js';

/**
 * `govtrail baseline check` and `govtrail baseline report` (docs/design/conformance.md): the
 * tenant's settings judged against a declared baseline, now and over a period.
 */
export function baselineCommand(): Command {
  const cmd = new Command('baseline')
    .summary('judge tenants against a declared baseline: check (now) and report (a period)')
    .description(
      "Judge tenants against a declared baseline (GOVTRAIL_BASELINE, a tenant's baseline: in " +
        'GOVTRAIL_CONFIG, or --baseline FILE): the status of every control now (check), or the share of a ' +
        'period each control passed, failed, was excepted or deleted (report).',
    );
  cmd
    .command('check')
    .description(
      'The status of every control now, per tenant (pass, fail, excepted, deleted, unknown), and what ' +
        'changed since the previous check (new_fail, fixed, still_failing, new_exception, exception_expired, ' +
        'exception_expiring). Exit 1 when any control fails or the settings are deleted, 2 on a usage or ' +
        'baseline-file error.',
    )
    .option(
      '-g, --group <name>',
      'the tenants of this group (their membership now) instead of every one',
      nameArg('group'),
    )
    .option('-t, --tenant <name>', 'one tenant (default: every stored tenant a baseline judges)')
    .option('--baseline <file>', 'judge by this baseline file instead of the configured one')
    .addOption(
      new Option('--format <format>', 'output format (junit: JUnit XML for CI)')
        .choices(['table', 'json', 'junit'])
        .default('table'),
    )
    .action(check);
  cmd
    .command('report')
    .description(
      'Per tenant and control over [--from, --to): the share of the time in each status, the number of ' +
        'fail periods and the longest, and for each fail period the entry, actor and ticket that opened and closed it.',
    )
    .requiredOption('--from <time>', 'start of the period (RFC 3339, or a date = midnight UTC)')
    .requiredOption('--to <time>', 'end of the period, exclusive')
    .option(
      '-g, --group <name>',
      'the tenants of this group (their membership now) instead of every one',
      nameArg('group'),
    )
    .option('-t, --tenant <name>', 'one tenant (default: every stored tenant a baseline judges)')
    .option('--baseline <file>', 'judge by this baseline file instead of the configured one')
    .addOption(
      new Option('--format <format>', 'output format').choices(['table', 'json', 'csv']).default('table'),
    )
    .action(report);
  return cmd;
}

interface CommonOptions {
  tenant?: string;
  group?: string;
  baseline?: string;
  format: string;
}

async function check(opts: CommonOptions): Promise<void> {
  const path = await import('node:path');
  const { createContext } = await import('../app/context.js');
  const { BaselineCache, judgedTenants, runCheck } = await import('../app/conformance.js');
  const { checkFails } = await import('../core/conformance/report.js');
  const { CHECK_HEADERS, checkJunit, checkRows } = await import('../core/conformance/format.js');
  const { dateKey } = await import('../core/normalise/time.js');
  const { formatTable } = await import('./table.js');
  const { ExitCode } = await import('./exit.js');
  const ctx = createContext();
  const cache = new BaselineCache(ctx.config);
  const override = opts.baseline === undefined ? undefined : path.resolve(opts.baseline);
  if (override !== undefined) cache.load(override);
  const database = await ctx.openDatabase();
  let failing = false;
  try {
    const tenants = await judgedTenants(database.db, cache, {
      tenant: opts.tenant,
      group: opts.group,
      baseline: override,
    });
    const now = new Date();
    const checks = await database.db
      .transaction()
      .execute((trx) => runCheck(trx, tenants, dateKey(now), now.getTime()));
    failing = checks.some(checkFails);
    if (opts.format === 'json') {
      const doc = checks.length === 1 ? checks[0] : checks;
      ctx.out.write(`${JSON.stringify(doc, null, 2)}\n`);
    } else if (opts.format === 'junit') {
      ctx.out.write(checkJunit(checks));
    } else {
      for (const c of checks)
        ctx.out.write(`baseline ${c.baseline.id} (sha256 ${c.baseline.sha256.slice(0, 12)}…) at ${c.at}\n`);
      ctx.out.write(`${formatTable(CHECK_HEADERS, checkRows(checks))}\n`);
    }
  } finally {
    await database.close();
  }
  if (failing) throw new ExitCode(1);
}

async function report(opts: CommonOptions & { from: string; to: string }): Promise<void> {
  const path = await import('node:path');
  const { createContext } = await import('../app/context.js');
  const { BaselineCache, judgedTenants, runReport } = await import('../app/conformance.js');
  const { REPORT_HEADERS, reportRows } = await import('../core/conformance/format.js');
  const { GovtrailError } = await import('../core/errors.js');
  const { parseTimestamp } = await import('../core/normalise/time.js');
  const { formatTable } = await import('./table.js');
  // Nanosecond keys of the bounds: a plain date is midnight UTC.
  const keyOf = (option: string, text: string): string => {
    parseTimeOption(option, text);
    const parsed = parseTimestamp(/^\d{4}-\d{2}-\d{2}$/.test(text) ? `${text}T00:00:00Z` : text);
    return (parsed as { key: string }).key;
  };
  const fromKey = keyOf('--from', opts.from);
  const toKey = keyOf('--to', opts.to);
  if (toKey <= fromKey) throw new GovtrailError('USAGE', '--to: must be after --from');
  const ctx = createContext();
  const cache = new BaselineCache(ctx.config);
  const override = opts.baseline === undefined ? undefined : path.resolve(opts.baseline);
  if (override !== undefined) cache.load(override);
  const database = await ctx.openDatabase();
  try {
    const tenants = await judgedTenants(database.db, cache, {
      tenant: opts.tenant,
      group: opts.group,
      baseline: override,
    });
    const reports = await database.db.transaction().execute((trx) => runReport(trx, tenants, fromKey, toKey));
    if (opts.format === 'json') {
      const doc = reports.length === 1 ? reports[0] : reports;
      ctx.out.write(`${JSON.stringify(doc, null, 2)}\n`);
    } else if (opts.format === 'csv') {
      const { csvRow } = await import('../outputs/evidence/csv.js');
      ctx.out.write(csvRow(REPORT_HEADERS));
      for (const row of reportRows(reports)) ctx.out.write(csvRow(row));
    } else {
      for (const r of reports)
        ctx.out.write(
          `baseline ${r.baseline.id} (sha256 ${r.baseline.sha256.slice(0, 12)}…) over [${r.from}, ${r.to})\n`,
        );
      ctx.out.write(`${formatTable(REPORT_HEADERS, reportRows(reports))}\n`);
    }
  } finally {
    await database.close();
  }
}
