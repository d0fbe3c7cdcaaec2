/**
 * The command layer: parses arguments with commander and hands each command to its module under
 * src/commands/. Exit codes: 0 success, 1 the work failed, 2 a usage or configuration error.
 *
 * Commands are loaded lazily from COMMANDS: `govtrail --help` lists them from the table alone, and
 * `govtrail <cmd> …` (or `govtrail help <cmd>`) loads that command's module and no other. A command
 * module itself loads only commander and its parsers; what the command does (database, HTTP
 * client, sinks) is imported when its action runs, so `--help` of any command stays offline and
 * quick (test/unit/cli-startup.test.ts).
 */
import { Command, CommanderError, Help } from 'commander';
import { ExitCode } from './commands/exit.js';
import { formatCommanderError } from './commands/options.js';
import { exitCodeFor, GovtrailError } from './core/errors.js';
import { govtrailVersion } from './runtime/paths.js';
import { terminalText } from './runtime/terminal.js';

/** One command of the CLI, as `govtrail --help` lists it, and how to load it. */
export interface CommandEntry {
  readonly name: string;
  /** What follows the name in the list of commands: `[options]`, `[options] <dir>`, or nothing. */
  readonly usage: string;
  /** The line of `govtrail --help` (the command's summary, else its description). */
  readonly summary: string;
  /** Imports the command's module and builds the command. */
  readonly load: () => Promise<Command>;
}

/** Every command, in the order `govtrail --help` lists them (test/unit/cli-table.test.ts checks each against its module). */
export const COMMANDS: readonly CommandEntry[] = [
  {
    name: 'demo',
    usage: '[options]',
    summary: 'run the whole pipeline on a sandbox tenant and the embedded database',
    load: async () => (await import('./commands/demo.js')).demoCommand(),
  },
  {
    name: 'migrate',
    usage: '',
    summary: 'apply the SQL migrations (idempotent)',
    load: async () => (await import('./commands/migrate.js')).migrateCommand(),
  },
  {
    name: 'sync',
    usage: '[options]',
    summary: 'one checkpointed sync per configured tenant, then alert delivery',
    load: async () => (await import('./commands/sync.js')).syncCommand(),
  },
  {
    name: 'reconcile',
    usage: '[options]',
    summary: 'compare the whole source history with the store (exit 1 when they differ)',
    load: async () => (await import('./commands/reconcile.js')).reconcileCommand(),
  },
  {
    name: 'alerts',
    usage: '',
    summary:
      'Inspect and handle alerts (acknowledge, assign, snooze, resolve, reopen, note), retry pending deliveries, or send a test alert.',
    load: async () => (await import('./commands/alerts.js')).alertsCommand(),
  },
  {
    name: 'rules',
    usage: '',
    summary:
      'Test the alert rules (each rule carries its own tests), or replay stored history through a candidate pack.',
    load: async () => (await import('./commands/rules.js')).rulesCommand(),
  },
  {
    name: 'sandbox',
    usage: '[options]',
    summary:
      'Run the sandbox tenant: an HTTP server that implements the tenant API (token endpoint, ' +
      'AI governance settings history with paging, DeleteEntitlementOwner) over a seeded, realistic ' +
      'history, with optional fault injection. Prints the base URL and credentials, then serves ' +
      'until interrupted (Ctrl+C or SIGTERM).',
    load: async () => (await import('./commands/sandbox.js')).sandboxCommand(),
  },
  {
    name: 'worker',
    usage: '[options]',
    summary: 'scheduled sync of every configured tenant, with /healthz and /metrics',
    load: async () => (await import('./commands/worker.js')).workerCommand(),
  },
  {
    name: 'owners',
    usage: '',
    summary: 'Remediation on app resource owners.',
    load: async () => (await import('./commands/owners.js')).ownersCommand(),
  },
  {
    name: 'settings',
    usage: '[options]',
    summary:
      'Show the governance settings in force now, or at a past time with --as-of (from the ' +
      'settings_timeline view: the newest snapshot at or before that time; a HARD_DELETE shows as deleted).',
    load: async () => (await import('./commands/settings.js')).settingsCommand(),
  },
  {
    name: 'changes',
    usage: '[options]',
    summary:
      'List field changes, oldest first, with direction (loosened / tightened / changed), actor and ' +
      'tickets (the change_log view). --until is exclusive.',
    load: async () => (await import('./commands/changes.js')).changesCommand(),
  },
  {
    name: 'export',
    usage: '',
    summary: 'Export stored history for auditors.',
    load: async () => (await import('./commands/export.js')).exportCommand(),
  },
  {
    name: 'report',
    usage: '[options]',
    summary:
      'Write a self-contained HTML report (no scripts, no network): posture timeline with loosened ' +
      'periods, changes per week by direction, alerts by severity, the changes with actors and ticket ' +
      'links, exporter health, and source integrity (the last reconcile: entries verified, coverage, ' +
      'discrepancies). Lists the alerts of the period, and what the rules find in history a backfill ' +
      'stored (the first run raises one digest instead of per-change alerts), marked as found by ' +
      'backfill. Opens offline and prints. Default period: from 90 days before the newest stored change (or before now, if sooner) up to now.',
    load: async () => (await import('./commands/report.js')).reportCommand(),
  },
  {
    name: 'baseline',
    usage: '',
    summary: 'judge tenants against a declared baseline: check (now) and report (a period)',
    load: async () => (await import('./commands/baseline.js')).baselineCommand(),
  },
  {
    name: 'verify',
    usage: '[options]',
    summary: 'check the stored history against its hash chain, its raw entries and signed anchors',
    load: async () => (await import('./commands/verify.js')).verifyCommand(),
  },
  {
    name: 'anchor',
    usage: '[options]',
    summary: 'sign the state of each tenant’s hash chain into a directory outside the database',
    load: async () => (await import('./commands/anchor.js')).anchorCommand(),
  },
  {
    name: 'verify-pack',
    usage: '[options] <dir>',
    summary: 'check an evidence pack: file hashes, no file added or removed, the signature',
    load: async () => (await import('./commands/verify-pack.js')).verifyPackCommand(),
  },
  {
    name: 'tenants',
    usage: '',
    summary: 'the tenant registry: list, disable, enable, retire, sync, group, label',
    load: async () => (await import('./commands/tenants.js')).tenantsCommand(),
  },
  {
    name: 'readers',
    usage: '',
    summary: 'logins that see only some tenants: grant, revoke, list',
    load: async () => (await import('./commands/readers.js')).readersCommand(),
  },
];

/** The command the arguments name (`govtrail <cmd> …` or `govtrail help <cmd>`), if it is one of COMMANDS. */
export function namedCommand(args: readonly string[]): CommandEntry | undefined {
  // The root's own options (--help, --version) take no value: the first operand names the command.
  const operands = args.filter((a) => !a.startsWith('-'));
  const name = operands[0] === 'help' ? operands[1] : operands[0];
  return COMMANDS.find((c) => c.name === name);
}

/**
 * The program with `loaded` (commands built from their modules) and, for every other entry of
 * COMMANDS, a stand-in that carries only its name and summary: enough for the root's help and
 * for commander's "unknown command" suggestions, and it loads nothing.
 */
export function buildProgram(loaded: readonly Command[] = []): Command {
  const program = new Command('govtrail')
    .description(
      'Keeps an audit-grade PostgreSQL copy of a tenant’s AI governance settings change history, ' +
        'and raises alerts when a change weakens governance.\n\n' +
        'Configuration comes from the environment (and a .env file); the README lists every variable. ' +
        'With nothing configured, `govtrail demo` runs the whole pipeline on a sandbox tenant and an ' +
        'embedded database.',
    )
    .version(govtrailVersion())
    .showHelpAfterError('(run with --help for usage)')
    .configureOutput({ outputError: (str, write) => write(formatCommanderError(str)) })
    .configureHelp({
      // A stand-in has no options or arguments of its own: its entry says what the command has.
      subcommandTerm(cmd) {
        const entry = COMMANDS.find((c) => c.name === cmd.name());
        if (entry === undefined || loaded.includes(cmd)) return new Help().subcommandTerm(cmd);
        return entry.usage === '' ? entry.name : `${entry.name} ${entry.usage}`;
      },
    });
  for (const entry of COMMANDS) {
    const command = loaded.find((c) => c.name() === entry.name);
    program.addCommand(command ?? new Command(entry.name).description(entry.summary));
  }
  return program;
}

/** Runs the CLI and returns the exit code. */
export async function runCli(argv: readonly string[]): Promise<number> {
  try {
    const entry = namedCommand(argv.slice(2));
    const program = buildProgram(entry === undefined ? [] : [await entry.load()]);
    const override = (c: Command): void => {
      c.exitOverride();
      // Subcommands built on their own do not inherit the program's output settings.
      c.configureOutput({ outputError: (str, write) => write(formatCommanderError(str)) });
      for (const sub of c.commands) override(sub);
    };
    override(program);
    await program.parseAsync([...argv]);
    return 0;
  } catch (err) {
    return await exitCodeOf(err);
  }
}

/**
 * The message of an error from the PostgreSQL client that reached the top (a SQLSTATE, or a
 * connection the server ended), undefined for anything else.
 */
function databaseFailure(err: unknown): string | undefined {
  if (!(err instanceof Error)) return undefined;
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code)) {
    const hint =
      code === '42501' ? ' (the login lacks a grant: grant govtrail_writer to it, docs/deploy.md)' : '';
    return `database error ${code}: ${err.message}${hint}`;
  }
  if (/Connection terminated|not queryable|ECONNREFUSED|ECONNRESET/.test(err.message))
    return `database connection lost: ${err.message}`;
  return undefined;
}

/** The exit code of what a command threw, after saying why on stderr (CommanderError has said it). */
async function exitCodeOf(err: unknown): Promise<number> {
  if (err instanceof ExitCode) return err.code;
  if (err instanceof CommanderError) {
    // --help and --version end with exit code 0; argument errors with 2.
    if (
      err.code === 'commander.helpDisplayed' ||
      err.code === 'commander.version' ||
      err.code === 'commander.help'
    ) {
      return 0;
    }
    return 2;
  }
  // The logger (pino) is loaded only on this path: it is not needed to start.
  const { scrubSecrets } = await import('./runtime/logger.js');
  if (err instanceof GovtrailError) {
    process.stderr.write(
      `govtrail: ${terminalText(scrubSecrets(err.message))}${err.code === 'CONFIG' || err.code === 'USAGE' ? '' : ` [${err.code}]`}\n`,
    );
    return exitCodeFor(err);
  }
  const database = databaseFailure(err);
  if (database !== undefined) {
    // The server refused or dropped the connection: one line, as for any DATABASE error.
    process.stderr.write(`govtrail: ${terminalText(scrubSecrets(database))} [DATABASE]\n`);
    return 1;
  }
  process.stderr.write(`govtrail: unexpected error: ${scrubSecrets((err as Error)?.stack ?? String(err))}\n`);
  return 1;
}
