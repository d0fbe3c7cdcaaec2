/**
 * What every command needs, built once: the parsed configuration, the root logger, and on demand
 * the migrated database. Commands receive it instead of reading the environment themselves.
 */
import { type Config, loadConfig, sinkSecrets } from '../config.js';
import { createLogger, type Logger, registerSecret } from '../logger.js';
import { type Database, openDatabase } from '../store/database.js';
import { migrate } from '../store/migrate.js';

export interface CommandContext {
  readonly config: Config;
  readonly logger: Logger;
  /** Opens the configured database and brings its schema up to date. */
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
  return {
    config,
    logger,
    out: process.stdout,
    async openDatabase(options = {}) {
      const database = await openDatabase({ url: config.databaseUrl, dataDir: config.dataDir });
      if (options.migrate !== false) {
        try {
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
