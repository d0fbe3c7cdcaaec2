import { Command, Option } from 'commander';
import { GovtrailError } from '../core/errors.js';
import type { RulePack } from '../core/rules/pack-schema.js';
import { terminalJson, terminalLine } from '../runtime/terminal.js';
import type { BacktestResult } from '../sync/backtest.js';
import { ExitCode } from './exit.js';
import { timeArg } from './options.js';
import { formatTable } from './table.js';

export function rulesCommand(): Command {
  const rules = new Command('rules').description(
    'Test the alert rules (each rule carries its own tests), or replay stored history through a candidate pack.',
  );
  rules
    .command('test')
    .description(
      "Run the tests of every rule: the built-in pack's, patched or replaced by --rules FILE (else " +
        'GOVTRAIL_ALERT_RULES). A test gives settings before and after (or a whole entry) and whether the ' +
        'rule must fire, and with which severity. Exit 1 when a test fails, naming it; exit 2 for an invalid file.',
    )
    .option('--rules <file>', 'a rule file in the pack format (default: GOVTRAIL_ALERT_RULES, if set)')
    .addOption(new Option('--format <format>', 'output format').choices(['table', 'junit']).default('table'))
    .action(testRules);
  rules
    .command('backtest')
    .description(
      'Replay the stored history of a period through a candidate pack (--rules FILE patching the built-in ' +
        'one, else the configured pack) without writing anything (one read-only transaction), and print per ' +
        'rule what it would raise against what was raised: new, gone, unchanged. Entries of a first run, ' +
        'which raised one digest instead of per-entry alerts, are counted apart (backfilled).',
    )
    .addOption(
      new Option('--from <time>', 'start of the period (RFC 3339, or a date)')
        .argParser(timeArg)
        .makeOptionMandatory(),
    )
    .addOption(new Option('--to <time>', 'end of the period, exclusive (default now)').argParser(timeArg))
    .option('-t, --tenant <name>', 'only this tenant (default: every stored tenant)')
    .option('--rules <file>', 'the candidate rule file (default: the configured pack)')
    .addOption(new Option('--format <format>', 'output format').choices(['table', 'json']).default('table'))
    .action(backtestRules);
  return rules;
}

/** The pack of --rules, else the configured one (GOVTRAIL_ALERT_RULES). */
async function candidatePack(file: string | undefined): Promise<RulePack> {
  const { loadRulePack } = await import('../config/rule-pack.js');
  if (file !== undefined) return loadRulePack(file);
  const { loadConfig } = await import('../config/settings.js');
  return loadRulePack(loadConfig(process.env).alertRulesPath);
}

/** `rules test`: every rule's tests; exit 1 on a failure. */
async function testRules(opts: { rules?: string; format: string }): Promise<void> {
  const { runRuleTests, junitXml } = await import('../core/rules/rule-tests.js');
  const pack = await candidatePack(opts.rules);
  const results = runRuleTests(pack);
  const failed = results.filter((r) => !r.passed);
  if (opts.format === 'junit') process.stdout.write(junitXml(results));
  else {
    process.stdout.write(
      `${formatTable(
        ['rule', 'test', 'result'],
        results.map((r) => [
          r.ruleId,
          terminalLine(r.test),
          r.passed ? 'ok' : terminalLine(`FAILED: ${r.failure}`),
        ]),
      )}\n${results.length - failed.length} passed, ${failed.length} failed (${pack.rules.length} rules)\n`,
    );
  }
  if (failed.length > 0) {
    for (const f of failed)
      process.stderr.write(`${terminalLine(`${f.ruleId} "${f.test}" failed: ${f.failure}`)}\n`);
    throw new ExitCode(1);
  }
}

interface BacktestOptions {
  readonly from: Date;
  readonly to?: Date;
  readonly tenant?: string;
  readonly rules?: string;
  readonly format: string;
}

/** `rules backtest`: the period replayed through the candidate pack, compared with what was raised. */
async function backtestRules(opts: BacktestOptions): Promise<void> {
  const to = opts.to ?? new Date();
  if (to <= opts.from) throw new GovtrailError('USAGE', '--to must be later than --from');
  const { createContext } = await import('../app/context.js');
  const { resolveTenant } = await import('../app/resolve-tenant.js');
  const { loadRulePack } = await import('../config/rule-pack.js');
  const { listTenants } = await import('../store/read/views.js');
  const { backtest } = await import('../sync/backtest.js');
  const ctx = createContext();
  const pack = loadRulePack(opts.rules ?? ctx.config.alertRulesPath);
  const database = await ctx.openDatabase();
  try {
    const tenants =
      opts.tenant !== undefined
        ? [await resolveTenant(database.db, opts.tenant)]
        : await listTenants(database.db);
    const result = await backtest(database.db, pack, { tenants, from: opts.from, to });
    ctx.out.write(
      opts.format === 'json'
        ? `${terminalJson(JSON.stringify({ from: opts.from, to, ...result }, null, 2))}\n`
        : formatBacktest(result, opts.from, to),
    );
  } finally {
    await database.close();
  }
}

function formatBacktest(r: BacktestResult, from: Date, to: Date): string {
  const head = `${r.entries} entries of ${r.tenants.length} tenant(s) from ${from.toISOString()} to ${to.toISOString()} replayed; nothing written\n`;
  const sum = (k: 'wouldRaise' | 'raised' | 'added' | 'gone' | 'unchanged' | 'backfilled') =>
    String(r.rows.reduce((n, x) => n + x[k], 0));
  return `${head}${formatTable(
    ['rule', 'would raise', 'raised', 'new', 'gone', 'unchanged', 'backfilled'],
    [
      ...r.rows.map((x) => [
        x.ruleId,
        String(x.wouldRaise),
        String(x.raised),
        String(x.added),
        String(x.gone),
        String(x.unchanged),
        String(x.backfilled),
      ]),
      [
        'total',
        sum('wouldRaise'),
        sum('raised'),
        sum('added'),
        sum('gone'),
        sum('unchanged'),
        sum('backfilled'),
      ],
    ],
  )}\n`;
}
