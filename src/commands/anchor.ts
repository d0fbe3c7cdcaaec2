/**
 * `govtrail anchor [--tenant NAME] --out DIR`: signs one anchor per tenant (the chain's state now)
 * with GOVTRAIL_ANCHOR_SIGNING_KEY and writes it into DIR, never overwriting an older one.
 * `govtrail anchor keygen --out DIR` makes an Ed25519 key pair for it (docs/tamper-evidence.md).
 */
import { generateKeyPairSync } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Command } from 'commander';
import { ConfigError, GovtrailError } from '../core/errors.js';

function keygenCommand(): Command {
  return new Command('keygen')
    .description(
      'Write a new Ed25519 key pair into DIR: anchor-signing.pem (PKCS#8, for GOVTRAIL_ANCHOR_SIGNING_KEY_FILE; keep it secret) and anchor-public.pem (for verify --public-key; give it to the auditors). Refuses to overwrite either file.',
    )
    .option('--out <dir>', 'directory for the two files (required)')
    .action(async (opts: { out?: string }, cmd: Command) => {
      // `anchor` has an --out of its own, which commander fills when it comes after `keygen`.
      const out = opts.out ?? (cmd.parent?.opts() as { out?: string } | undefined)?.out;
      if (out === undefined) throw new GovtrailError('USAGE', 'anchor keygen: --out DIR is required');
      const { privateKey, publicKey } = generateKeyPairSync('ed25519');
      await mkdir(out, { recursive: true });
      const priv = path.join(out, 'anchor-signing.pem');
      const pub = path.join(out, 'anchor-public.pem');
      try {
        await writeFile(priv, privateKey.export({ type: 'pkcs8', format: 'pem' }), {
          flag: 'wx',
          mode: 0o600,
        });
        await writeFile(pub, publicKey.export({ type: 'spki', format: 'pem' }), { flag: 'wx' });
      } catch (err) {
        throw new GovtrailError(
          'USAGE',
          `--out: ${(err as Error).message} (key files are never overwritten)`,
          {
            cause: err,
          },
        );
      }
      process.stdout.write(`wrote ${priv} (secret) and ${pub}\n`);
    });
}

export function anchorCommand(): Command {
  return new Command('anchor')
    .summary('sign the state of each tenant’s hash chain into a directory outside the database')
    .description(
      'Sign (Ed25519, detached JWS, GOVTRAIL_ANCHOR_SIGNING_KEY or …_FILE) one statement per tenant of its hash chain now — entries stored, the head entry and its row_hash, the time, and the digest of the tenant’s previous anchor in DIR — and write it into DIR/<tenant>/ without overwriting any older anchor. Keep DIR on write-once storage; `govtrail verify --anchors DIR --public-key FILE` checks the store against it (docs/tamper-evidence.md).',
    )
    .option('-t, --tenant <name>', 'anchor only this tenant')
    .option('--out <dir>', 'directory of anchors (default GOVTRAIL_ANCHOR_DIR)')
    .addCommand(keygenCommand())
    .action(async (opts: { tenant?: string; out?: string }) => {
      const { createContext } = await import('../app/context.js');
      const { ANCHOR_KEY_SETTING, anchorSigningKey } = await import('../outputs/anchor/after-run.js');
      const { writeAnchor } = await import('../outputs/anchor/anchor.js');
      const { registerSecret } = await import('../runtime/logger.js');
      const { listTenants } = await import('../store/read/views.js');
      const ctx = createContext();
      const out = opts.out ?? ctx.config.anchorDir;
      if (out === undefined)
        throw new GovtrailError('USAGE', '--out DIR is required (or set GOVTRAIL_ANCHOR_DIR)');
      if (ctx.config.anchorSigningKey === undefined)
        throw new ConfigError(
          ANCHOR_KEY_SETTING,
          'is required to sign anchors (or …_FILE); see `govtrail anchor keygen`',
        );
      registerSecret(ctx.config.anchorSigningKey);
      const key = anchorSigningKey(ctx.config.anchorSigningKey);
      const database = await ctx.openDatabase({ existing: true });
      try {
        const stored = await database.withSession(listTenants);
        if (opts.tenant !== undefined && !stored.includes(opts.tenant))
          throw new GovtrailError(
            'USAGE',
            `--tenant: no entries stored for tenant ${JSON.stringify(opts.tenant)}${stored.length > 0 ? ` (stored: ${stored.join(', ')})` : ''}`,
          );
        const tenants = opts.tenant === undefined ? stored : [opts.tenant];
        if (tenants.length === 0)
          throw new GovtrailError(
            'USAGE',
            'no history stored yet: run `govtrail sync` (or `govtrail demo`) first',
          );
        for (const tenantId of tenants) {
          const a = await database.withSession((s) => writeAnchor(s, { dir: out, tenantId, key }));
          ctx.out.write(
            `anchored ${tenantId}: ${a.statement.entries} entries, head ${a.statement.head?.entry_id ?? '-'} → ${a.file}\n`,
          );
        }
      } finally {
        await database.close();
      }
    });
}
