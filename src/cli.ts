import { readFileSync } from 'node:fs';
/**
 * The command layer: parses arguments with commander and hands each command to its module under
 * src/commands/. Exit codes: 0 success, 1 the work failed, 2 a usage or configuration error.
 */
import { Command, CommanderError } from 'commander';
import { alertsCommand } from './commands/alerts.js';
import { anchorCommand } from './commands/anchor.js';
import { changesCommand } from './commands/changes.js';
import { demoCommand } from './commands/demo.js';
import { ExitCode } from './commands/exit.js';
import { exportCommand } from './commands/export.js';
import { migrateCommand } from './commands/migrate.js';
import { formatCommanderError } from './commands/options.js';
import { ownersCommand } from './commands/owners.js';
import { reconcileCommand } from './commands/reconcile.js';
import { reportCommand } from './commands/report.js';
import { sandboxCommand } from './commands/sandbox.js';
import { settingsCommand } from './commands/settings.js';
import { syncCommand } from './commands/sync.js';
import { tenantsCommand } from './commands/tenants.js';
import { verifyCommand } from './commands/verify.js';
import { verifyPackCommand } from './commands/verify-pack.js';
import { workerCommand } from './commands/worker.js';
import { exitCodeFor, GovtrailError } from './core/errors.js';
import { scrubSecrets } from './runtime/logger.js';
import { packagePath } from './runtime/paths.js';
import { terminalText } from './runtime/terminal.js';

function packageVersion(): string {
  try {
    return (JSON.parse(readFileSync(packagePath('package.json'), 'utf8')) as { version: string }).version;
  } catch {
    return 'unknown';
  }
}

export function buildProgram(): Command {
  const program = new Command('govtrail')
    .description(
      'Keeps an audit-grade PostgreSQL copy of a tenant’s AI governance settings change history, ' +
        'and raises alerts when a change weakens governance.\n\n' +
        'Configuration comes from the environment (and a .env file); the README lists every variable. ' +
        'With nothing configured, `govtrail demo` runs the whole pipeline on a sandbox tenant and an ' +
        'embedded database.',
    )
    .version(packageVersion())
    .showHelpAfterError('(run with --help for usage)')
    .configureOutput({ outputError: (str, write) => write(formatCommanderError(str)) });
  program.addCommand(demoCommand());
  program.addCommand(migrateCommand());
  program.addCommand(syncCommand());
  program.addCommand(reconcileCommand());
  program.addCommand(alertsCommand());
  program.addCommand(sandboxCommand());
  program.addCommand(workerCommand());
  program.addCommand(ownersCommand());
  program.addCommand(settingsCommand());
  program.addCommand(changesCommand());
  program.addCommand(exportCommand());
  program.addCommand(reportCommand());
  program.addCommand(verifyCommand());
  program.addCommand(anchorCommand());
  program.addCommand(verifyPackCommand());
  program.addCommand(tenantsCommand());
  return program;
}

/** Runs the CLI and returns the exit code. */
export async function runCli(argv: readonly string[]): Promise<number> {
  const program = buildProgram();
  const override = (c: Command): void => {
    c.exitOverride();
    // Subcommands built on their own do not inherit the program's output settings.
    c.configureOutput({ outputError: (str, write) => write(formatCommanderError(str)) });
    for (const sub of c.commands) override(sub);
  };
  override(program);
  try {
    await program.parseAsync([...argv]);
    return 0;
  } catch (err) {
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
    if (err instanceof GovtrailError) {
      process.stderr.write(
        `govtrail: ${terminalText(scrubSecrets(err.message))}${err.code === 'CONFIG' || err.code === 'USAGE' ? '' : ` [${err.code}]`}\n`,
      );
      return exitCodeFor(err);
    }
    process.stderr.write(
      `govtrail: unexpected error: ${scrubSecrets((err as Error)?.stack ?? String(err))}\n`,
    );
    return 1;
  }
}
