/**
 * `govtrail verify`: recomputes the tamper-evidence chain (row_hash in seq order) of every tenant,
 * or the one named, and checks annotations, snapshots and the run ledger against the entries.
 * Exit 0 when intact; 1 (TAMPERED) with the first broken row of each tenant otherwise.
 */
import { Command } from 'commander';
import { GovtrailError } from '../errors.js';
import { verifyStore } from '../store/verify.js';
import { createContext } from './context.js';

export function verifyCommand(): Command {
  return new Command('verify')
    .summary('check the tamper-evidence chain and the child rows of the stored history')
    .description(
      'Recompute each tenant’s row_hash chain in storage order (streamed in keyset pages), and check every annotation and snapshot against its entry’s raw and every run’s entry count against the ledger. Prints how many rows were verified; exits 1 (TAMPERED) naming the first broken row when anything does not verify.',
    )
    .option('-t, --tenant <name>', 'verify only this tenant')
    .option('--json', 'print one JSON line instead of text')
    .action(async (opts: { tenant?: string; json?: boolean }) => {
      const ctx = createContext();
      const database = await ctx.openDatabase();
      try {
        const result = await database.withSession((s) =>
          verifyStore(s, opts.tenant === undefined ? {} : { tenantId: opts.tenant }),
        );
        if (opts.json) {
          ctx.out.write(`${JSON.stringify({ ok: result.findings.length === 0, ...result })}\n`);
        } else {
          ctx.out.write(`verified ${result.rowsVerified} rows of ${result.tenants} tenant(s)\n`);
          for (const f of result.findings) {
            ctx.out.write(
              `TAMPERED tenant=${f.tenantId} seq=${f.seq ?? '-'} entry_id=${f.entryId ?? '-'} ${f.kind}: ${f.detail}\n`,
            );
          }
          if (result.findings.length === 0) ctx.out.write('chain intact\n');
        }
        if (result.findings.length > 0) {
          const first = result.findings[0];
          throw new GovtrailError(
            'TAMPERED',
            `the stored history does not verify: ${result.findings.length} finding(s), first ${first?.kind} at tenant ${first?.tenantId} seq ${first?.seq ?? '-'} entry ${first?.entryId ?? '-'}`,
            { details: { findings: result.findings.length } },
          );
        }
      } finally {
        await database.close();
      }
    });
}
