import { Command } from 'commander';
import { createContext } from './context.js';

export function migrateCommand(): Command {
  return new Command('migrate')
    .summary('apply the SQL migrations (idempotent)')
    .description(
      'Apply the numbered SQL migrations of sql/ to the database (DATABASE_URL, or the embedded one). Idempotent; runs under an advisory lock so replicas starting together migrate once.',
    )
    .action(async () => {
      const ctx = createContext();
      const database = await ctx.openDatabase({ migrate: false });
      try {
        const { migrate } = await import('../store/migrate.js');
        const result = await migrate(database, ctx.logger);
        ctx.out.write(
          result.applied.length === 0
            ? `schema up to date (version ${result.current}) on ${database.description}\n`
            : `applied ${result.applied.join(', ')} on ${database.description}\n`,
        );
      } finally {
        await database.close();
      }
    });
}
