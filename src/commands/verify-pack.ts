/**
 * `govtrail verify-pack DIR`: checks an evidence pack's files against its manifest and the
 * manifest's signature (src/outputs/pack/verify-pack.ts). Needs no database.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { Command } from 'commander';
import type { Config } from '../config/settings.js';
import { GovtrailError } from '../core/errors.js';
import type { GroupVerification } from '../outputs/pack/group.js';
import type { PackVerification, TrustedKey } from '../outputs/pack/verify-pack.js';
import { ExitCode } from './exit.js';

/** The setting holding the pack signing key (outputs/pack/signing.ts names it the same). */
const SIGNING_KEY_SETTING = 'GOVTRAIL_EVIDENCE_SIGNING_KEY';

const HELP = `
What it checks:
  - manifest.json is a pack manifest;
  - every file it lists is present, with the sha256 and size it records;
  - nothing else is in the directory: a file the manifest does not list was added afterwards,
    and could pass for evidence it is not (a pack is a closed set; add notes beside it, not in it);
  - the signature (manifest.jws) of manifest.json, when the pack is signed.

What it trusts: only the public key you give it with --public-key (PEM or JWK; a private key's
public half is taken), or else the public half of ${SIGNING_KEY_SETTING} when that is set
(the signer checking its own packs). Never a key found in the pack: whoever can edit the files
can re-sign them with a key of their own. Get the signer's public key from them by another
channel (e.g. \`openssl pkey -in signing.pem -pubout\`) and compare its thumbprint, printed here,
with the one they publish.

A signed pack with no trusted key fails (the signature would prove nothing); --hashes-only
checks the files alone. With a trusted key, an unsigned pack fails.

Exit codes: 0 the pack verifies; 1 it does not (each problem is listed); 2 usage error
(DIR not a directory, unreadable or invalid --public-key).`;

export function verifyPackCommand(): Command {
  return new Command('verify-pack')
    .summary('check an evidence pack: file hashes, no file added or removed, the signature')
    .description(
      'Check an evidence pack written by `govtrail export evidence-pack`: every file against the sha256 in ' +
        'manifest.json, that no file is missing or added, and the Ed25519 signature of the manifest ' +
        '(manifest.jws) with a public key you trust.',
    )
    .argument('<dir>', 'the pack directory (extract a .tar.gz first: tar xzf PACK.tar.gz)')
    .option('--public-key <file>', 'the signer’s Ed25519 public key (PEM or JWK) to check the signature with')
    .option('--hashes-only', 'check the files against the manifest only, not the signature')
    .option('--json', 'print one JSON object instead of text')
    .addHelpText('after', HELP)
    .action(checkPack);
}

interface VerifyPackOptions {
  readonly publicKey?: string;
  readonly hashesOnly?: boolean;
  readonly json?: boolean;
}

/** The action: verifies the pack with the key trusted, prints the outcome; exit 1 when it fails. */
async function checkPack(dir: string, opts: VerifyPackOptions): Promise<void> {
  if (!existsSync(dir) || !statSync(dir).isDirectory()) {
    throw new GovtrailError('USAGE', `${JSON.stringify(dir)} is not a directory`);
  }
  const { createContext } = await import('../app/context.js');
  const { verifyPack } = await import('../outputs/pack/verify-pack.js');
  const ctx = createContext();
  const trustedKey = await trustedKeyOf(opts, ctx.config);
  const { isGroupPack, verifyGroupPack } = await import('../outputs/pack/group.js');
  if (isGroupPack(dir)) {
    const g = await verifyGroupPack(dir, { trustedKey, hashesOnly: opts.hashesOnly === true });
    ctx.out.write(opts.json ? `${JSON.stringify({ dir, ...g })}\n` : `${formatGroupVerification(dir, g)}\n`);
    if (!g.ok) throw new ExitCode(1);
    return;
  }
  const r = await verifyPack(dir, { trustedKey, hashesOnly: opts.hashesOnly === true });
  ctx.out.write(opts.json ? `${JSON.stringify({ dir, ...r })}\n` : `${formatVerification(dir, r)}\n`);
  if (!r.ok) throw new ExitCode(1);
}

/** The key the signature is checked with: --public-key, else the public half of the signing key. */
async function trustedKeyOf(opts: VerifyPackOptions, config: Config): Promise<TrustedKey | undefined> {
  const { parseSigningKey, parseVerificationKey, publicKeyOf } = await import('../outputs/pack/signing.js');
  if (opts.publicKey !== undefined) {
    let text: string;
    try {
      text = readFileSync(opts.publicKey, 'utf8');
    } catch (err) {
      throw new GovtrailError(
        'USAGE',
        `--public-key: cannot read ${opts.publicKey}: ${(err as Error).message}`,
      );
    }
    return { key: parseVerificationKey(text, '--public-key'), source: `--public-key ${opts.publicKey}` };
  }
  if (opts.hashesOnly || config.evidenceSigningKey === undefined) return undefined;
  const { registerSecret } = await import('../runtime/logger.js');
  registerSecret(config.evidenceSigningKey);
  return {
    key: publicKeyOf(parseSigningKey(config.evidenceSigningKey)),
    source: `the public half of ${SIGNING_KEY_SETTING}`,
  };
}

/** The text report: one line per file, the signature, each problem, the verdict. */
function formatVerification(dir: string, r: PackVerification): string {
  const m = r.manifest;
  const lines: string[] = [];
  lines.push(
    m === undefined
      ? `pack ${dir}`
      : `pack ${dir}: tenant ${m.tenant}, ${m.from} to ${m.to}, generated ${m.generatedAt} by govtrail ${m.generator.version}`,
  );
  const width = Math.max(0, ...r.files.map((f) => f.name.length));
  for (const f of r.files) {
    lines.push(
      `  ${f.ok ? 'ok      ' : 'FAILED  '}${f.name.padEnd(width)}${f.rows === null ? '' : `  ${f.rows.toLocaleString('en')} rows`}`.trimEnd(),
    );
  }
  const s = r.signature;
  const trust =
    s.trustedKey === undefined
      ? ''
      : ` (trusted key ${s.trustedKey.thumbprint}, from ${s.trustedKey.source})`;
  const status: Record<typeof s.status, string> = {
    valid: `valid: manifest.json signed by Ed25519 key ${s.claimedKey}${trust}`,
    invalid: `INVALID${trust}`,
    unsigned: 'none: the pack is not signed (the hashes show the files match the manifest, not who wrote it)',
    unchecked: `not checked: signed by key ${s.claimedKey ?? '(unnamed)'}, and no trusted public key was given`,
    skipped: 'not checked (--hashes-only, or no manifest)',
  };
  lines.push(`signature: ${status[s.status]}`);
  for (const p of r.problems)
    lines.push(`  ${p.kind.toUpperCase()}${p.file ? ` ${p.file}` : ''}: ${p.detail}`);
  lines.push(
    r.ok
      ? 'pack verified'
      : `pack does NOT verify: ${r.problems.length} problem${r.problems.length === 1 ? '' : 's'}`,
  );
  return lines.join('\n');
}

/** The text report of a group pack: each member's report, then the group's own checks and verdict. */
function formatGroupVerification(dir: string, g: GroupVerification): string {
  const m = g.manifest;
  const lines: string[] = [
    m === undefined
      ? `group pack ${dir}`
      : `group pack ${dir}: group ${m.group}, members ${m.members.map((x) => x.tenant).join(', ')}, ${m.from} to ${m.to}, generated ${m.generatedAt}`,
  ];
  for (const member of g.members)
    lines.push('', formatVerification(`${dir}/${member.tenant}`, member.verification));
  lines.push('', `group.json signature: ${g.signature}`);
  for (const p of g.problems) lines.push(`  ${p.file ?? ''}: ${p.detail}`);
  lines.push(
    g.ok
      ? 'group pack verified'
      : `group pack does NOT verify: ${g.problems.length} problem${g.problems.length === 1 ? '' : 's'}`,
  );
  return lines.join('\n');
}
