import { Command, Option } from 'commander';
import { formatValue, settingInForce } from '../core/format.js';
import { SNAPSHOT_FIELDS } from '../core/normalise/fields.js';
import { terminalJson, terminalLine } from '../runtime/terminal.js';
import { timeArg } from './options.js';
import { formatTable } from './table.js';

export function settingsCommand(): Command {
  return new Command('settings')
    .description(
      'Show the governance settings in force now, or at a past time with --as-of (from the ' +
        'settings_timeline view: the newest snapshot at or before that time; a HARD_DELETE shows as deleted).',
    )
    .option(
      '--as-of <time>',
      'the settings in force at this time (RFC 3339, or a date = midnight UTC)',
      timeArg,
    )
    .option('-t, --tenant <name>', 'tenant (default: the only tenant stored)')
    .addOption(new Option('--format <format>', 'output format').choices(['table', 'json']).default('table'))
    .action(showSettings);
}

/** The action: the settings row in force at the time asked, printed as a table or JSON. */
async function showSettings(opts: { asOf?: Date; tenant?: string; format: string }): Promise<void> {
  const { createContext } = await import('../app/context.js');
  const { resolveTenant } = await import('../app/resolve-tenant.js');
  const { findSettingsAsOf } = await import('../store/read/views.js');
  const at = opts.asOf ?? 'now';
  const ctx = createContext();
  const database = await ctx.openDatabase({ existing: true });
  try {
    const tenantId = await resolveTenant(database.db, opts.tenant);
    const row = await findSettingsAsOf(database.db, tenantId, at);
    if (opts.format === 'json') {
      ctx.out.write(`${terminalJson(JSON.stringify(row ?? null, null, 2))}\n`);
      return;
    }
    const when = at === 'now' ? 'now' : at.toISOString();
    if (row === undefined) {
      ctx.out.write(`tenant ${tenantId}: no settings recorded at ${when} (before the first entry)\n`);
      return;
    }
    // Entry id and change kind come from the source: shown with control characters escaped.
    const since = terminalLine(
      `since ${row.validFrom.toISOString()} (entry ${row.entryId}, ${row.changeKind ?? 'unknown change'})`,
    );
    if (row.isDeleted) {
      ctx.out.write(`tenant ${tenantId}: settings DELETED at ${when}, ${since}\n`);
      return;
    }
    ctx.out.write(`tenant ${tenantId}: settings in force at ${when}, ${since}\n\n`);
    ctx.out.write(`${formatTable(['setting', 'value'], settingsTableRows(row.settings))}\n`);
  } finally {
    await database.close();
  }
}

/** One row per setting, in the order of the settings table (not jsonb's key order), then extra_fields. */
export function settingsTableRows(settings: Record<string, unknown>): string[][] {
  const rows = SNAPSHOT_FIELDS.map((f) => [
    f.column,
    formatValue(f.column, settingInForce(settings, f.column)),
  ]);
  for (const [k, v] of Object.entries((settings['extra_fields'] ?? {}) as Record<string, unknown>)) {
    rows.push([`extra_fields.${k}`, formatValue(k, v)]);
  }
  return rows;
}
