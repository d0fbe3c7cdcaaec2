/**
 * The lazy command table of src/cli.ts says of each command what its module says: the name, what
 * follows it in `govtrail --help`, and its line there. So the help printed from the table alone is
 * the help commander prints with every command loaded.
 */
import { Help } from 'commander';
import { describe, expect, it } from 'vitest';
import { buildProgram, COMMANDS, namedCommand } from '../../src/cli.js';

describe('the command table of src/cli.ts', () => {
  it.each(COMMANDS.map((c) => [c.name, c] as const))('%s: its entry matches its module', async (_, entry) => {
    const command = await entry.load();
    const help = new Help();
    expect(command.name()).toBe(entry.name);
    expect(help.subcommandTerm(command)).toBe(
      entry.usage === '' ? entry.name : `${entry.name} ${entry.usage}`,
    );
    expect(help.subcommandDescription(command)).toBe(entry.summary);
  });

  it('govtrail --help from the table is the help of the program with every command loaded', async () => {
    const loaded = await Promise.all(COMMANDS.map((c) => c.load()));
    expect(buildProgram().helpInformation()).toBe(buildProgram(loaded).helpInformation());
  });

  it('names the command to load from the arguments', () => {
    expect(namedCommand(['sync', '--tenant', 'acme'])?.name).toBe('sync');
    expect(namedCommand(['--help', 'verify-pack'])?.name).toBe('verify-pack');
    expect(namedCommand(['help', 'export'])?.name).toBe('export');
    expect(namedCommand(['--help'])).toBeUndefined();
    expect(namedCommand(['nope'])).toBeUndefined();
  });
});
