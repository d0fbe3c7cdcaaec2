/**
 * What every command needs, built once: the parsed configuration, the root logger, and on demand
 * the migrated database. Commands receive it instead of reading the environment themselves.
 */
import { mkdirSync, statSync } from 'node:fs';
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
   */
  openDatabase(options?: { migrate?: boolean }): Promise<Database>;
  /** Standard output, for what the command reports (logs go to stderr). */
  readonly out: NodeJS.WritableStream & { isTTY?: boolean };
}

export function createContext(env: NodeJS.ProcessEnv = process.env): CommandContext {
  const config = loadConfig(env);
  for (const t of config.tenants) registerSecret(t.clientSecret);
  registerSecret(config.webhookSecret);
  // Sink secrets (PagerDuty routing keys, webhook secrets, URLs that carry a token) from start-up.
  for (const secret of sinkSecrets(config)) registerSecret(secret);
  const logger = createLogger({ level: config.logLevel });
  for (const warning of configWarnings(env)) logger.warn(warning);
  return {
    config,
    logger,
    out: process.stdout,
    async openDatabase(options = {}) {
      if (config.databaseUrl === undefined) checkDataDir(config.dataDir);
      // The store (kysely, pg, PGlite) is loaded by the first command that opens it: a command that
      // needs only the configuration (verify-pack) never loads a database client.
      const { openDatabase } = await import('../store/database.js');
      const { migrate } = await import('../store/migrate.js');
      const database = await openDatabase({ url: config.databaseUrl, dataDir: config.dataDir });
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
