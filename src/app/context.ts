/**
 * What every command needs, built once: the parsed configuration, the root logger, and on demand
 * the migrated database. Commands receive it instead of reading the environment themselves.
 */
import { existsSync, mkdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { type Config, loadConfig, sinkSecrets } from '../config/settings.js';
import { configWarnings } from '../config/warnings.js';
import { ConfigError } from '../core/errors.js';
import { createLogger, type Logger, registerSecret } from '../runtime/logger.js';
import type { Database } from '../store/database.js';

export interface CommandContext {
  readonly config: Config;
  readonly logger: Logger;
  /**
   * Opens the configured database and brings its schema up to date. Unless `migrate` is false
   * (`govtrail migrate`, which runs as the owner), GOVTRAIL_REQUIRE_WRITER_ROLE is enforced first.
   * With `existing: true` (the commands that only read) a database that does not exist yet is a
   * configuration error naming where it was looked for, instead of an empty one created there.
   */
  openDatabase(options?: { migrate?: boolean; existing?: boolean; announce?: boolean }): Promise<Database>;
  /** The file the logs go to instead of stderr, when {@link ContextOptions.logFileOffTerminal} chose one. */
  readonly logFile: string | undefined;
  /** Standard output, for what the command reports (logs go to stderr). */
  readonly out: NodeJS.WritableStream & { isTTY?: boolean };
}

export interface ContextOptions {
  /**
   * When stderr is not a terminal, the logs go to this file in GOVTRAIL_DATA_DIR instead (the
   * demo: what it prints on stdout is a story, and piped with 2>&1, JSON lines would cut it up).
   */
  readonly logFileOffTerminal?: string;
}

export function createContext(
  env: NodeJS.ProcessEnv = process.env,
  contextOptions: ContextOptions = {},
): CommandContext {
  // The warnings come first: a misspelt variable (DATABSE_URL, a client secret with two letters swapped) usually
  // causes the failure that follows, so they are printed before it, even when loading fails.
  const warnings = configWarningsOrNone(env);
  let config: Config;
  try {
    config = loadConfig(env);
  } catch (err) {
    for (const warning of warnings) process.stderr.write(`govtrail: warning: ${warning}\n`);
    throw err;
  }
  for (const t of config.tenants) registerSecret(t.clientSecret);
  registerSecret(config.webhookSecret);
  // Sink secrets (PagerDuty routing keys, webhook secrets, URLs that carry a token) from start-up.
  for (const secret of sinkSecrets(config)) registerSecret(secret);
  const logFile =
    contextOptions.logFileOffTerminal !== undefined && process.stderr.isTTY !== true
      ? path.join(config.dataDir, contextOptions.logFileOffTerminal)
      : undefined;
  const logger = createLogger({
    level: config.logLevel,
    ...(logFile === undefined ? {} : { file: logFile }),
  });
  for (const warning of warnings) {
    logger.warn(warning);
    // Logs going to a file: a warning is still for the person at the command.
    if (logFile !== undefined) process.stderr.write(`govtrail: warning: ${warning}\n`);
  }
  return {
    config,
    logger,
    logFile,
    out: process.stdout,
    async openDatabase(options = {}) {
      if (config.databaseUrl === undefined) {
        if (options.existing === true) checkEmbeddedExists(config.dataDir);
        else checkDataDir(config.dataDir);
      }
      // The store (kysely, pg, PGlite) is loaded by the first command that opens it: a command that
      // needs only the configuration (verify-pack) never loads a database client.
      const { openDatabase } = await import('../store/database.js');
      const { migrate } = await import('../store/migrate.js');
      const database = await openDatabase({ url: config.databaseUrl, dataDir: config.dataDir });
      // Which database a command reads is not obvious (DATABASE_URL, .env, GOVTRAIL_DATA_DIR, the
      // working directory): on a terminal every command names it, password masked. Off a terminal
      // nothing is added, so that piped output stays what the command prints.
      if (options.announce !== false && process.stderr.isTTY === true)
        process.stderr.write(`govtrail: database: ${database.description}\n`);
      if (options.existing === true && config.databaseUrl !== undefined) {
        try {
          await checkSchemaExists(database);
        } catch (err) {
          await database.close();
          throw err;
        }
      }
      if (options.migrate !== false) {
        try {
          if (config.requireWriterRole) {
            // Before anything runs as this login: the worker, sync and reconcile alike (a CronJob too).
            const { requireWriterRole } = await import('../store/roles.js');
            await requireWriterRole(database.db, true);
          }
          await migrate(database, logger);
        } catch (err) {
          await database.close();
          throw err;
        }
      }
      return database;
    },
  };
}

/**
 * The embedded database's directory must be a directory (created when missing): a file there, or a
 * parent that cannot hold it, is a setting to fix (exit 2), not a stack trace from the store.
 * @throws ConfigError naming GOVTRAIL_DATA_DIR
 */
export function checkDataDir(dir: string): void {
  try {
    mkdirSync(dir, { recursive: true });
    if (statSync(dir).isDirectory()) return;
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    if (code !== 'EEXIST' && code !== 'ENOTDIR') {
      throw new ConfigError('GOVTRAIL_DATA_DIR', `cannot create ${dir}: ${(err as Error).message}`, {
        cause: err,
      });
    }
  }
  throw new ConfigError(
    'GOVTRAIL_DATA_DIR',
    `${dir} is not a directory (the embedded database needs a directory; or set DATABASE_URL)`,
  );
}

/** The configuration's warnings; none when they cannot be worked out (loadConfig then says why). */
function configWarningsOrNone(env: NodeJS.ProcessEnv): string[] {
  try {
    return configWarnings(env);
  } catch {
    return [];
  }
}

/**
 * A command that only reads must not create the embedded database: run from another directory,
 * it would otherwise make an empty `./.govtrail` and report "no history stored yet".
 * @throws ConfigError naming GOVTRAIL_DATA_DIR
 */
export function checkEmbeddedExists(dir: string): void {
  if (existsSync(path.join(dir, 'pgdata', 'PG_VERSION'))) return;
  // A file there is the same setting to fix as for a command that writes.
  if (existsSync(dir) && !statSync(dir).isDirectory()) checkDataDir(dir);
  throw new ConfigError(
    'GOVTRAIL_DATA_DIR',
    `no embedded database in ${dir}: run govtrail demo or govtrail sync first, run from the directory that holds .govtrail, or set DATABASE_URL`,
  );
}

/** A server database that govtrail never migrated holds nothing to read: say so instead of creating the schema. */
async function checkSchemaExists(database: Database): Promise<void> {
  const { hasGovtrailSchema } = await import('../store/migrate.js');
  if (await hasGovtrailSchema(database.db)) return;
  throw new ConfigError(
    'DATABASE_URL',
    `${database.description} holds no govtrail schema: run govtrail migrate, govtrail sync or govtrail demo against it first`,
  );
}
