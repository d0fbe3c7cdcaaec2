/**
 * `govtrail verify`: recomputes the tamper-evidence chain (row_hash in seq order) of every tenant,
 * or the one named, checks annotations, snapshots, typed columns, field changes and the run ledger
 * against the entries and, with `--anchors DIR --public-key FILE`, that the store still reproduces
 * every anchored chain head. Exit 0 when intact; 1 (TAMPERED) naming what fails; 2 on usage errors.
 */
import { readFileSync } from 'node:fs';
import { Command } from 'commander';
import { GovtrailError } from '../core/errors.js';
import type { TrustedAnchors } from '../outputs/anchor/check.js';

/** What a verify without anchors cannot prove, printed with its result. */
export const WITHOUT_ANCHORS_NOTE =
  'not proven without anchors: that no newest entries were deleted (the remaining prefix still verifies) and that ' +
  'nobody with write access edited an entry and recomputed the chain after it; run with --anchors DIR --public-key FILE';

/** Reads the public key file given to --public-key. */
async function readPublicKey(file: string) {
  const { parseVerificationKey } = await import('../outputs/pack/signing.js');
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new GovtrailError('USAGE', `--public-key: cannot read ${file}: ${(err as Error).message}`, {
      cause: err,
    });
  }
  return parseVerificationKey(text, '--public-key');
}

export function verifyCommand(): Command {
  return new Command('verify')
    .summary('check the stored history against its hash chain, its raw entries and signed anchors')
    .description(
      'Recompute each tenant’s row_hash chain in storage order (streamed in keyset pages); check every annotation, every typed column of history_entry and settings_snapshot against the stored raw, every field_change against a recomputed diff, and every run’s entry count against the ledger. With --anchors DIR --public-key FILE, also check that the store still reproduces each anchor’s chain head at its entry count (an edit, insertion or deletion before it, or a truncated tail, fails), trusting only that key. Exits 1 (TAMPERED) naming the first failing anchor or row; without anchors it says what it could not prove (docs/tamper-evidence.md).',
    )
    .option('-t, --tenant <name>', 'verify only this tenant')
    .option('--anchors <dir>', 'directory of anchors written by `govtrail anchor` or the worker')
    .option('--public-key <file>', 'the Ed25519 public key (PEM) the anchors must be signed with')
    .option('--json', 'print one JSON line instead of text')
    .action(async (opts: { tenant?: string; anchors?: string; publicKey?: string; json?: boolean }) => {
      if ((opts.anchors === undefined) !== (opts.publicKey === undefined))
        throw new GovtrailError('USAGE', '--anchors and --public-key go together');
      const { createContext } = await import('../app/context.js');
      const { loadRulePack } = await import('../config/rule-pack.js');
      const { readTrustedAnchors } = await import('../outputs/anchor/check.js');
      const { listTenants } = await import('../store/read/views.js');
      const { verifyStore } = await import('../store/verify/verify.js');
      const ctx = createContext();
      const key = opts.publicKey === undefined ? undefined : await readPublicKey(opts.publicKey);
      const ranks = loadRulePack(ctx.config.alertRulesPath).ranks;
      const database = await ctx.openDatabase({ existing: true });
      try {
        let anchors: TrustedAnchors | undefined;
        if (opts.anchors !== undefined && key !== undefined)
          anchors = await readTrustedAnchors(opts.anchors, key, opts.tenant);
        const tenant = opts.tenant;
        if (tenant !== undefined) {
          const stored = await database.withSession(listTenants);
          if (!stored.includes(tenant) && anchors?.heads.has(tenant) !== true)
            throw new GovtrailError(
              'USAGE',
              `--tenant: no entries stored for tenant ${JSON.stringify(tenant)}${stored.length > 0 ? ` (stored: ${stored.join(', ')})` : ''}`,
            );
        }
        const result = await database.withSession((s) =>
          verifyStore(s, {
            ranks,
            ...(tenant === undefined ? {} : { tenantId: tenant }),
            ...(anchors === undefined ? {} : { anchors: anchors.heads }),
          }),
        );
        const anchorFindings = (anchors?.problems ?? []).map((p) => ({
          tenantId: p.tenantId,
          kind: 'anchor_invalid' as const,
          seq: null,
          entryId: null,
          detail: `anchor ${p.file} ${p.detail}`,
        }));
        const findings = [...anchorFindings, ...result.findings];
        if (opts.json) {
          ctx.out.write(
            `${JSON.stringify({
              ok: findings.length === 0,
              ...result,
              anchorFiles: anchors?.files ?? 0,
              findings,
              ...(anchors === undefined ? { notProven: WITHOUT_ANCHORS_NOTE } : {}),
            })}\n`,
          );
        } else {
          ctx.out.write(
            `verified ${result.rowsVerified} rows and ${result.fieldChangesVerified} field changes of ${result.tenants} tenant(s)` +
              (anchors === undefined
                ? ''
                : ` against ${result.anchorsVerified} of ${anchors.files} anchor(s)`) +
              '\n',
          );
          for (const f of findings) {
            ctx.out.write(
              `TAMPERED tenant=${f.tenantId} seq=${f.seq ?? '-'} entry_id=${f.entryId ?? '-'} ${f.kind}: ${f.detail}\n`,
            );
          }
          if (findings.length === 0)
            ctx.out.write(
              anchors === undefined ? 'chain intact\n' : 'chain intact and every anchor reproduced\n',
            );
          if (anchors === undefined) ctx.out.write(`${WITHOUT_ANCHORS_NOTE}\n`);
        }
        if (findings.length > 0) {
          const first = findings[0];
          throw new GovtrailError(
            'TAMPERED',
            `the stored history does not verify: ${findings.length} finding(s), first ${first?.kind} at tenant ${first?.tenantId}: ${first?.detail}`,
            { details: { findings: findings.length } },
          );
        }
      } finally {
        await database.close();
      }
    });
}
