/**
 * The evidence pack of a group of tenants (`govtrail export evidence-pack --group G`): a directory
 * holding one complete tenant pack per member (each verifiable on its own, its README naming the
 * group and its members) with its archive, and group.json binding them: the group, its members at
 * the time, the period, and the sha256 of every member's manifest and archive and of README.txt.
 * group.json is signed (group.json.jws) when the member packs are. `govtrail verify-pack DIR`
 * recognises group.json and checks every member pack, every recorded hash, that no member is
 * missing or added, and the signature.
 */
import { existsSync, readdirSync, readFileSync, renameSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { GovtrailError } from '../../core/errors.js';
import { wrap } from './readme.js';
import { claimedKeyId, signDetached, verifyDetached } from './signing.js';
import type { PackVerification, VerifyPackOptions } from './verify-pack.js';
import { verifyPack } from './verify-pack.js';
import { sha256File, writeWholeFile } from './writer.js';

export const GROUP_FILE = 'group.json';
export const GROUP_SIGNATURE_FILE = 'group.json.jws';
export const GROUP_README = 'README.txt';
export const GROUP_FORMAT = 'govtrail-evidence-pack-group/1';

const memberSchema = z.object({
  tenant: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/),
  manifestSha256: z.string().regex(/^[0-9a-f]{64}$/),
  archive: z.string(),
  archiveSha256: z.string().regex(/^[0-9a-f]{64}$/),
});

const groupSchema = z.object({
  format: z.literal(GROUP_FORMAT),
  group: z.string(),
  from: z.string(),
  to: z.string(),
  generatedAt: z.string(),
  readmeSha256: z.string().regex(/^[0-9a-f]{64}$/),
  members: z.array(memberSchema).min(1),
  signed: z.boolean(),
});

export type GroupManifest = z.infer<typeof groupSchema>;

/** What a member pack left: its directory name (the tenant), manifest and archive hashes. */
export interface MemberPack {
  readonly tenant: string;
  readonly manifestSha256: string;
  readonly archive: string;
  readonly archiveSha256: string;
}

/** README.txt of a group pack: the group, its members at the time, and how to check it. */
export function groupReadme(g: {
  group: string;
  members: readonly string[];
  from: Date;
  to: Date;
  generatedAt: Date;
  version: string;
  signed: boolean;
}): string {
  return `govtrail evidence pack of a group of tenants
============================================

Group:      ${g.group}
Members:    ${g.members.join(', ')}
            (the tenants of the group when the pack was made: govtrail.tenant_group)
Period:     ${g.from.toISOString()} (included) to ${g.to.toISOString()} (excluded), UTC
Generated:  ${g.generatedAt.toISOString()} by govtrail ${g.version}
Signed:     ${g.signed ? `yes: ${GROUP_FILE} is signed (${GROUP_SIGNATURE_FILE}) with the key that signs each member pack` : 'no (GOVTRAIL_EVIDENCE_SIGNING_KEY was not set)'}

Contents
--------
${g.members.map((m) => `${m}/  the evidence pack of tenant ${m} (and ${m}.tar.gz, the same as an archive)`).join('\n')}
${GROUP_FILE}
${wrap('binds the member packs: the group, its members, the period, and the sha256 of each member pack\u2019s manifest.json and archive and of this README.', '    ')}

How to check this pack
----------------------
govtrail verify-pack <this directory> [--public-key <signer's public key>] checks every member pack
(its files, that none was added or removed, its signature), that each member's manifest and archive
have the hash ${GROUP_FILE} records, that no member is missing or added, and ${GROUP_FILE}'s
signature. Each member directory is also a pack of its own: see its README.txt.
`;
}

/**
 * Writes README.txt, group.json (and its signature) into `partial`, which already holds the member
 * packs, and renames it to `dir`. Returns group.json's sha256.
 */
export async function sealGroupPack(options: {
  readonly partial: string;
  readonly dir: string;
  readonly group: string;
  readonly members: readonly MemberPack[];
  readonly from: Date;
  readonly to: Date;
  readonly now: Date;
  readonly version: string;
  readonly signingKey?: import('node:crypto').KeyObject | undefined;
}): Promise<string> {
  const readme = await writeWholeFile(
    options.partial,
    GROUP_README,
    groupReadme({
      group: options.group,
      members: options.members.map((m) => m.tenant),
      from: options.from,
      to: options.to,
      generatedAt: options.now,
      version: options.version,
      signed: options.signingKey !== undefined,
    }),
    null,
  );
  const manifest: GroupManifest = {
    format: GROUP_FORMAT,
    group: options.group,
    from: options.from.toISOString(),
    to: options.to.toISOString(),
    generatedAt: options.now.toISOString(),
    readmeSha256: readme.sha256,
    members: options.members.map((m) => ({ ...m })),
    signed: options.signingKey !== undefined,
  };
  const bytes = Buffer.from(`${JSON.stringify(manifest, null, 2)}\n`, 'utf8');
  const written = await writeWholeFile(options.partial, GROUP_FILE, bytes, null);
  if (options.signingKey !== undefined) {
    await writeWholeFile(
      options.partial,
      GROUP_SIGNATURE_FILE,
      `${await signDetached(bytes, options.signingKey)}\n`,
      null,
    );
  }
  renameSync(options.partial, options.dir);
  return written.sha256;
}

/** Checks the group pack target: DIR must not exist (or be empty), its parent must. */
export function checkGroupTarget(out: string): { dir: string; partial: string } {
  if (out.trim() === '') throw new GovtrailError('USAGE', '--out: a directory name is required');
  const dir = path.resolve(out);
  const parent = path.dirname(dir);
  if (!existsSync(parent) || !statSync(parent).isDirectory())
    throw new GovtrailError('USAGE', `--out: directory ${JSON.stringify(parent)} does not exist`);
  if (existsSync(dir) && (!statSync(dir).isDirectory() || readdirSync(dir).length > 0))
    throw new GovtrailError(
      'USAGE',
      `--out: ${JSON.stringify(dir)} exists and is not an empty directory; a pack is never written over other files`,
    );
  rmSync(`${dir}.partial`, { recursive: true, force: true });
  if (existsSync(dir)) rmSync(dir, { recursive: true });
  return { dir, partial: `${dir}.partial` };
}

/** True when DIR is a group pack (holds group.json). */
export function isGroupPack(dir: string): boolean {
  return existsSync(path.join(dir, GROUP_FILE));
}

/** The outcome of verifying a group pack: the group's own problems and each member's verification. */
export interface GroupVerification {
  readonly ok: boolean;
  readonly manifest: GroupManifest | undefined;
  readonly problems: readonly { readonly file: string | undefined; readonly detail: string }[];
  readonly members: readonly { readonly tenant: string; readonly verification: PackVerification }[];
  readonly signature: 'valid' | 'invalid' | 'unsigned' | 'unchecked' | 'skipped';
}

/** Verifies a group pack (see the module comment). */
export async function verifyGroupPack(
  dir: string,
  options: VerifyPackOptions = {},
): Promise<GroupVerification> {
  const problems: { file: string | undefined; detail: string }[] = [];
  const bytes = readFileSync(path.join(dir, GROUP_FILE));
  let manifest: GroupManifest | undefined;
  try {
    const parsed = groupSchema.safeParse(JSON.parse(bytes.toString('utf8')));
    if (parsed.success) manifest = parsed.data;
    else
      problems.push({ file: GROUP_FILE, detail: `not a group manifest: ${parsed.error.issues[0]?.message}` });
  } catch (err) {
    problems.push({ file: GROUP_FILE, detail: `not JSON: ${(err as Error).message}` });
  }
  if (manifest === undefined) return { ok: false, manifest, problems, members: [], signature: 'skipped' };
  const expected = new Set<string>([GROUP_FILE, GROUP_README]);
  if (manifest.signed) expected.add(GROUP_SIGNATURE_FILE);
  const readme = path.join(dir, GROUP_README);
  if (!existsSync(readme)) problems.push({ file: GROUP_README, detail: 'missing' });
  else if ((await sha256File(readme)).sha256 !== manifest.readmeSha256)
    problems.push({
      file: GROUP_README,
      detail: `modified: its sha256 is not the one ${GROUP_FILE} records`,
    });
  const members: { tenant: string; verification: PackVerification }[] = [];
  for (const m of manifest.members) {
    expected.add(m.tenant);
    expected.add(m.archive);
    const memberDir = path.join(dir, m.tenant);
    if (!existsSync(memberDir)) {
      problems.push({ file: m.tenant, detail: `the pack of member ${m.tenant} is missing` });
      continue;
    }
    const verification = await verifyPack(memberDir, options);
    members.push({ tenant: m.tenant, verification });
    if (!verification.ok)
      problems.push({ file: m.tenant, detail: `the pack of member ${m.tenant} does not verify` });
    const manifestFile = path.join(memberDir, 'manifest.json');
    if (existsSync(manifestFile) && (await sha256File(manifestFile)).sha256 !== m.manifestSha256)
      problems.push({ file: `${m.tenant}/manifest.json`, detail: `not the manifest ${GROUP_FILE} records` });
    const archive = path.join(dir, m.archive);
    if (!existsSync(archive)) problems.push({ file: m.archive, detail: 'missing' });
    else if ((await sha256File(archive)).sha256 !== m.archiveSha256)
      problems.push({ file: m.archive, detail: `modified: its sha256 is not the one ${GROUP_FILE} records` });
  }
  for (const name of readdirSync(dir).sort())
    if (!expected.has(name))
      problems.push({
        file: name,
        detail: `not part of the group pack (${GROUP_FILE} does not list it): added afterwards`,
      });
  let signature: GroupVerification['signature'] = 'skipped';
  if (!options.hashesOnly) {
    const sigFile = path.join(dir, GROUP_SIGNATURE_FILE);
    if (!manifest.signed) {
      signature = 'unsigned';
      if (options.trustedKey !== undefined)
        problems.push({ file: GROUP_FILE, detail: 'not signed, but a trusted key was given' });
    } else if (!existsSync(sigFile)) {
      signature = 'invalid';
      problems.push({ file: GROUP_SIGNATURE_FILE, detail: 'missing' });
    } else if (options.trustedKey === undefined) {
      signature = 'unchecked';
      problems.push({
        file: GROUP_SIGNATURE_FILE,
        detail: `signed (key ${claimedKeyId(readFileSync(sigFile, 'utf8').trim()) ?? '?'}) but no trusted key was given: --public-key`,
      });
    } else {
      const v = await verifyDetached(readFileSync(sigFile, 'utf8').trim(), bytes, options.trustedKey.key);
      signature = v.ok ? 'valid' : 'invalid';
      if (!v.ok) problems.push({ file: GROUP_SIGNATURE_FILE, detail: v.reason });
    }
  }
  return { ok: problems.length === 0, manifest, problems, members, signature };
}
