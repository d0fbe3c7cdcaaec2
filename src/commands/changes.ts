import { Command, Option } from 'commander';
import { GovtrailError } from '../core/errors.js';
import { formatValue, shortEnum } from '../core/format.js';
import { SNAPSHOT_FIELDS } from '../core/normalise/fields.js';
import { terminalJson } from '../runtime/terminal.js';
import { parseTimeOption } from './options.js';
import { formatTable } from './table.js';

export function changesCommand(): Command {
  return new Command('changes')
    .description(
      'List field changes, oldest first, with direction (loosened / tightened / changed), actor and tickets ' +
        '(the change_log view). --until is exclusive.',
    )
    .option('--since <time>', 'changes at or after this time (RFC 3339, or a date = midnight UTC)')
    .option('--until <time>', 'changes before this time')
    .option(
      '--field <name>',
      'only this field (a settings column, e.g. require_tool_approval, or extra_fields.<name>)',
    )
    .option('-t, --tenant <name>', 'tenant (default: the only tenant stored)')
    .addOption(
      new Option('--format <format>', 'output format').choices(['table', 'json', 'csv']).default('table'),
    )
    .action(listChanges);
}

interface ChangesOptions {
  readonly since?: string;
  readonly until?: string;
  readonly field?: string;
  readonly tenant?: string;
  readonly format: string;
}

/** The action: the field changes asked for, as a table, JSON or the evidence CSV. */
async function listChanges(opts: ChangesOptions): Promise<void> {
  const since = opts.since === undefined ? undefined : parseTimeOption('--since', opts.since);
  const until = opts.until === undefined ? undefined : parseTimeOption('--until', opts.until);
  if (since !== undefined && until !== undefined && until <= since) {
    throw new GovtrailError('USAGE', '--until must be later than --since');
  }
  const field = opts.field;
  if (
    field !== undefined &&
    !field.startsWith('extra_fields.') &&
    !SNAPSHOT_FIELDS.some((f) => f.diffed && f.column === field)
  ) {
    throw new GovtrailError(
      'USAGE',
      `--field: unknown field ${JSON.stringify(field)} (one of ${SNAPSHOT_FIELDS.filter((f) => f.diffed)
        .map((f) => f.column)
        .join(', ')}, or extra_fields.<name>)`,
    );
  }
  const { createContext } = await import('../app/context.js');
  const { resolveTenant } = await import('../app/resolve-tenant.js');
  const { iterateChanges } = await import('../store/read/views.js');
  const ctx = createContext();
  const database = await ctx.openDatabase({ existing: true });
  try {
    const tenantId = await resolveTenant(database.db, opts.tenant);
    const changes = iterateChanges(database.db, { tenantId, since, until, field });
    if (opts.format === 'csv') {
      const { csvRow } = await import('../outputs/evidence/csv.js');
      const { EVIDENCE_HEADER, evidenceCells } = await import('../outputs/evidence/evidence.js');
      ctx.out.write(csvRow(EVIDENCE_HEADER));
      for await (const c of changes) ctx.out.write(csvRow(evidenceCells(c)));
      return;
    }
    if (opts.format === 'json') {
      // JSON lines would stream; an array keeps `| jq` simple and matches the other commands.
      const all = [];
      for await (const c of changes) all.push(c);
      ctx.out.write(`${terminalJson(JSON.stringify(all, null, 2))}\n`);
      return;
    }
    const rows: string[][] = [];
    for await (const c of changes) {
      rows.push([
        c.changedAt.toISOString().slice(0, 19).replace('T', ' '),
        c.field,
        `${formatValue(c.field, c.oldValue)} → ${formatValue(c.field, c.newValue)}`,
        c.direction,
        [c.actorKind === null ? '?' : shortEnum(c.actorKind), c.actorUserId].filter(Boolean).join(' '),
        c.tickets.join(', ') || '(none)',
      ]);
    }
    if (rows.length === 0) {
      ctx.out.write('no changes\n');
      return;
    }
    ctx.out.write(
      `${formatTable(['changed at (UTC)', 'field', 'before → after', 'direction', 'actor', 'tickets'], rows)}\n`,
    );
  } finally {
    await database.close();
  }
}
