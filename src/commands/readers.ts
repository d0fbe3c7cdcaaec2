/**
 * `govtrail readers grant LOGIN (--tenant NAME… | --group G…) | revoke LOGIN [...] | list`: logins
 * that see only some tenants, enforced by PostgreSQL (sql/0030, docs/design/integrity.md "Readers
 * who see only their tenants"). Runs as the owner of schema govtrail (it grants a role).
 */
import { Command } from 'commander';
import { GovtrailError } from '../core/errors.js';
import type { ScopedReader } from '../store/write/reader-scope.js';
import { formatTable } from './table.js';
import { operatorName } from './tenants.js';

const HELP = `
A scoped login is granted govtrail_scoped_reader and sees, in every view, in settings_as_of and
setting_periods, and in the tables readers may read (tenant, source_discrepancy), only the rows of
its tenants: those named with --tenant and the members of the groups named with --group at the
moment each query runs (a tenant added to the group later is visible at once, one removed is
gone at once). PostgreSQL enforces it (view predicates and row-level security), not govtrail's
queries, so it holds in Grafana, psql or any BI tool. A login granted govtrail_reader instead
keeps seeing every tenant.

Create the login yourself first (create role acme_analyst login password '...'); grant refuses a
login that is a superuser, owns the schema, or is a member of govtrail_reader or govtrail_writer
(it could SET ROLE to see everything). Run as the owner of schema govtrail (govtrail migrate's
role), which may grant roles.

Exit codes: 0 done; 2 usage error or a refused login.`;

function collect(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}

function formatReaders(rows: readonly ScopedReader[]): string {
  return formatTable(
    ['login', 'tenants', 'groups', 'sees now', 'role'],
    rows.map((r) => [
      r.login,
      r.tenants.join(','),
      r.groups.join(','),
      r.visible.join(','),
      r.hasRole ? 'govtrail_scoped_reader' : 'revoked (sees nothing)',
    ]),
  );
}

interface ScopeOptions {
  tenant?: string[];
  group?: string[];
}

export function readersCommand(): Command {
  const readers = new Command('readers')
    .summary('logins that see only some tenants: grant, revoke, list')
    .description(
      'Scope database logins to tenants and groups of tenants: PostgreSQL then shows such a login only their rows, in every view, function and table a reader may read.',
    )
    .addHelpText('after', HELP);

  readers
    .command('grant')
    .argument('<login>', 'an existing PostgreSQL login role')
    .option('-t, --tenant <name>', 'a tenant it may see (repeatable)', collect)
    .option('-g, --group <name>', 'a group whose members, now and later, it may see (repeatable)', collect)
    .description(
      'Scope LOGIN to tenants and groups (added to any scope it has) and grant it govtrail_scoped_reader.',
    )
    .action(async (login: string, opts: ScopeOptions) => {
      const tenants = opts.tenant ?? [];
      const groups = opts.group ?? [];
      if (tenants.length === 0 && groups.length === 0)
        throw new GovtrailError(
          'USAGE',
          'name at least one --tenant or --group: a scoped login sees only those',
        );
      const { createContext } = await import('../app/context.js');
      const { grantReader } = await import('../store/write/reader-scope.js');
      const { tenantsOfGroup } = await import('../store/read/tenant-groups.js');
      const ctx = createContext();
      const database = await ctx.openDatabase();
      let line: string;
      try {
        const outcome = await grantReader(database.db, login, { tenants, groups, by: operatorName() });
        if (outcome.outcome === 'refused')
          throw new GovtrailError('USAGE', `readers grant: ${outcome.reason}`);
        const empty: string[] = [];
        for (const g of groups) if ((await tenantsOfGroup(database.db, g)).length === 0) empty.push(g);
        line =
          `${login}: ${outcome.added.length === 0 ? 'scope unchanged' : `added ${outcome.added.join(', ')}`}` +
          (empty.length > 0 ? ` (group ${empty.join(', ')} has no member yet)` : '');
      } finally {
        await database.close();
      }
      ctx.out.write(`${line}\n`);
    });

  readers
    .command('revoke')
    .argument('<login>', 'a scoped login')
    .option('-t, --tenant <name>', 'remove only this tenant from its scope (repeatable)', collect)
    .option('-g, --group <name>', 'remove only this group from its scope (repeatable)', collect)
    .description(
      'Remove tenants or groups from LOGIN’s scope, or all of it; with nothing left it loses govtrail_scoped_reader. Takes effect at its next statement.',
    )
    .action(async (login: string, opts: ScopeOptions) => {
      const { createContext } = await import('../app/context.js');
      const { revokeReader } = await import('../store/write/reader-scope.js');
      const ctx = createContext();
      const database = await ctx.openDatabase();
      let line: string;
      try {
        const r = await revokeReader(database.db, login, {
          tenants: opts.tenant ?? [],
          groups: opts.group ?? [],
        });
        line =
          `${login}: ${r.removed.length === 0 ? 'nothing removed' : `removed ${r.removed.join(', ')}`}` +
          (r.roleRevoked ? '; govtrail_scoped_reader revoked' : '');
      } finally {
        await database.close();
      }
      ctx.out.write(`${line}\n`);
    });

  readers
    .command('list')
    .description('Every scoped login of this database: its tenants, its groups, and the tenants it sees now.')
    .action(async () => {
      const { createContext } = await import('../app/context.js');
      const { listReaders } = await import('../store/write/reader-scope.js');
      const ctx = createContext();
      const database = await ctx.openDatabase();
      let rows: ScopedReader[];
      try {
        rows = await listReaders(database.db);
      } finally {
        await database.close();
      }
      ctx.out.write(`${rows.length === 0 ? 'no scoped readers' : formatReaders(rows)}\n`);
    });

  return readers;
}
