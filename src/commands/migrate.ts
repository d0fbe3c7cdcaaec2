import { Command } from 'commander';

export function migrateCommand(): Command {
  return new Command('migrate')
    .summary('apply the SQL migrations (idempotent)')
    .description(
      "Apply the numbered SQL migrations of sql/ to the database (DATABASE_URL, or the embedded one), and on a PostgreSQL server create or upgrade the job engine's schema (govtrail_boss) and its queues, usable by the govtrail_writer role. Idempotent; runs under an advisory lock so replicas starting together migrate once. Run it as the schema owner.",
    )
    .action(async () => {
      const { createContext } = await import('../app/context.js');
      const ctx = createContext();
      const database = await ctx.openDatabase({ migrate: false });
      try {
        const { migrate } = await import('../store/migrate.js');
        const result = await migrate(database, ctx.logger);
        // The job engine's schema too, created by the owner so that a writer-role worker needs no DDL.
        if (database.kind === 'postgres' && ctx.config.databaseUrl !== undefined) {
          const { installEngine } = await import('../worker/engine-setup.js');
          await installEngine(ctx.config.databaseUrl, 'govtrail_writer');
        }
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
