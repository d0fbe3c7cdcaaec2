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
import type { TenantCoverage, VerifyResult } from '../store/verify/findings.js';

/** What a verify without anchors cannot prove, printed with its result. */
export const WITHOUT_ANCHORS_NOTE =
  'not proven without anchors: that no newest entries were deleted (the remaining prefix still verifies) and that ' +
  'nobody with write access edited an entry and recomputed the chain after it; run with --anchors DIR --public-key FILE';

/** What verify proved about one tenant with anchors, and what it could not. */
export interface TenantProof {
  readonly tenant: string;
  readonly entries: number;
  readonly anchors: number;
  readonly anchoredEntries: number;
  readonly proven: string;
  readonly notProven: string;
}

/** Says, for a tenant verified with --anchors, exactly what its anchors prove and what not. */
export function tenantProof(c: TenantCoverage, tampered = false): TenantProof {
  const base = {
    tenant: c.tenantId,
    entries: c.rows,
    anchors: c.anchors,
    anchoredEntries: c.anchoredEntries,
  };
  const name = JSON.stringify(c.tenantId);
  if (tampered)
    return {
      ...base,
      proven: `tenant ${name}: nothing: it does not verify (TAMPERED above)`,
      notProven: `tenant ${name}: its chain and anchors, which fail as the findings above say`,
    };
  if (c.anchors === 0)
    return {
      ...base,
      proven: `tenant ${name}: chain of ${c.rows} entries intact; no anchor of it was found`,
      notProven: `tenant ${name} has no anchor: not proven that no newest entries were deleted, nor that nobody with write access edited an entry and recomputed the chain`,
    };
  const newest = `the newest of ${c.anchors} anchor(s), ${c.anchoredEntries} entries at ${c.newestAnchorAt}`;
  if (c.rows > c.anchoredEntries)
    return {
      ...base,
      proven: `tenant ${name}: entries 1-${c.anchoredEntries} reproduce ${newest}`,
      notProven: `tenant ${name}: the ${c.rows - c.anchoredEntries} entries stored after its newest anchor are protected by the chain alone: not proven that they were not edited with the chain recomputed, nor that newer ones were not deleted`,
    };
  return {
    ...base,
    proven: `tenant ${name}: all ${c.rows} entries reproduce ${newest}`,
    notProven: `tenant ${name}: not proven that no anchor newer than its newest was deleted together with the entries it stated`,
  };
}

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
      'Recompute each tenant’s row_hash chain in storage order (streamed in keyset pages); check every annotation, every typed column of history_entry and settings_snapshot against the stored raw, the text of every number of raw (one spelling per value), every field_change against a recomputed diff, and every run’s entry count against the ledger. With --anchors DIR --public-key FILE, also check that the store still reproduces each anchor’s chain head at its entry count (an edit, insertion or deletion before it, or a truncated tail, fails), trusting only that key. Exits 1 (TAMPERED) naming the first failing anchor or row; without anchors it says what it could not prove (docs/tamper-evidence.md).',
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
        report(ctx.out, opts.json === true, result, anchors, findings);
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

type Finding =
  | VerifyResult['findings'][number]
  | {
      readonly tenantId: string;
      readonly kind: 'anchor_invalid';
      readonly seq: null;
      readonly entryId: null;
      readonly detail: string;
    };

/** Prints verify's result: text (a line per finding, then per tenant what is proven), or one JSON line. */
function report(
  out: NodeJS.WritableStream,
  json: boolean,
  result: VerifyResult,
  anchors: TrustedAnchors | undefined,
  findings: readonly Finding[],
): void {
  const tampered = new Set(findings.map((f) => f.tenantId));
  const proofs =
    anchors === undefined ? [] : result.coverage.map((c) => tenantProof(c, tampered.has(c.tenantId)));
  // Fully proven: every tenant anchored up to its newest entry (the newest anchors' own
  // deletion aside, which no anchor can show).
  const whole = anchors !== undefined && proofs.every((p) => p.anchors > 0 && p.entries <= p.anchoredEntries);
  if (json) {
    const { coverage: _coverage, ...counts } = result;
    out.write(
      `${JSON.stringify({
        ok: findings.length === 0,
        ...counts,
        anchorFiles: anchors?.files ?? 0,
        findings,
        ...(anchors === undefined
          ? { notProven: WITHOUT_ANCHORS_NOTE }
          : { tenantProofs: proofs, anchorNotes: anchors.notes, fullyAnchored: whole }),
      })}\n`,
    );
  } else {
    out.write(
      `verified ${result.rowsVerified} rows and ${result.fieldChangesVerified} field changes of ${result.tenants} tenant(s)` +
        (anchors === undefined ? '' : ` against ${result.anchorsVerified} of ${anchors.files} anchor(s)`) +
        '\n',
    );
    for (const note of anchors?.notes ?? []) out.write(`anchors: ${note}\n`);
    for (const f of findings) {
      out.write(
        `TAMPERED tenant=${f.tenantId} seq=${f.seq ?? '-'} entry_id=${f.entryId ?? '-'} ${f.kind}: ${f.detail}\n`,
      );
    }
    if (findings.length === 0)
      out.write(
        anchors === undefined
          ? 'chain intact\n'
          : whole
            ? 'chain intact and every anchor reproduced\n'
            : 'chain intact and every anchor reproduced; some entries are not covered by an anchor (below)\n',
      );
    for (const p of proofs) out.write(`proven: ${p.proven}\nnot proven: ${p.notProven}\n`);
    if (anchors === undefined) out.write(`${WITHOUT_ANCHORS_NOTE}\n`);
  }
}
