/**
 * `govtrail verify-pack DIR`: is this directory the pack govtrail wrote, unchanged? Checks that
 * manifest.json is a manifest, that every file it lists is present with its sha256 and size, that
 * nothing else is in the directory, and the signature of the manifest with a key the caller trusts.
 *
 * What it trusts: only a public key it is given (`--public-key`, or the one derived from the
 * verifier's own GOVTRAIL_EVIDENCE_SIGNING_KEY). Never a key carried by the pack: whoever can edit
 * the files can also re-sign them with a key of their own. Without a trusted key the hashes prove
 * only that the files match the manifest next to them.
 */
import type { KeyObject } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { MANIFEST_FILE, SIGNATURE_FILE } from './files.js';
import { type Manifest, parseManifest } from './manifest.js';
import { claimedKeyId, keyThumbprint, verifyDetached } from './signing.js';
import { sha256File } from './writer.js';

export type PackProblemKind =
  | 'manifest'
  | 'missing'
  | 'modified'
  | 'unexpected'
  | 'signature_missing'
  | 'signature_invalid'
  | 'signature_unchecked';

export interface PackProblem {
  readonly kind: PackProblemKind;
  /** The file concerned, when one is. */
  readonly file: string | undefined;
  readonly detail: string;
}

export interface CheckedFile {
  readonly name: string;
  readonly ok: boolean;
  readonly rows: number | null;
}

export interface TrustedKey {
  readonly key: KeyObject;
  /** Where it came from, for the report: `--public-key signer.pem`. */
  readonly source: string;
}

export type SignatureStatus =
  /** Checked with a trusted key and valid. */
  | 'valid'
  | 'invalid'
  /** The pack is not signed. */
  | 'unsigned'
  /** Signed, but no trusted key was given (and --hashes-only was not asked for). */
  | 'unchecked'
  /** Not looked at (--hashes-only). */
  | 'skipped';

export interface PackVerification {
  readonly ok: boolean;
  readonly manifest: Manifest | undefined;
  readonly files: readonly CheckedFile[];
  readonly problems: readonly PackProblem[];
  readonly signature: {
    readonly status: SignatureStatus;
    /** The key the JWS names (kid), when signed. */
    readonly claimedKey: string | undefined;
    /** The trusted key's thumbprint and source, when one was given. */
    readonly trustedKey: { readonly thumbprint: string; readonly source: string } | undefined;
  };
}

export interface VerifyPackOptions {
  readonly trustedKey?: TrustedKey | undefined;
  /** Check the files against the manifest only, and say nothing about the signature. */
  readonly hashesOnly?: boolean | undefined;
}

/** The trusted key as the report names it. */
type TrustedKeyNames = PackVerification['signature']['trustedKey'];

export async function verifyPack(dir: string, options: VerifyPackOptions = {}): Promise<PackVerification> {
  const problems: PackProblem[] = [];
  const trusted =
    options.trustedKey === undefined
      ? undefined
      : { thumbprint: await keyThumbprint(options.trustedKey.key), source: options.trustedKey.source };
  const result = (
    manifest: Manifest | undefined,
    files: readonly CheckedFile[],
    status: SignatureStatus,
    claimedKey?: string,
  ): PackVerification => ({
    ok: problems.length === 0,
    manifest,
    files,
    problems,
    signature: { status, claimedKey, trustedKey: trusted },
  });

  const read = readManifest(dir, problems);
  if (read === undefined) return result(undefined, [], 'skipped');
  const { manifest, bytes } = read;
  const { files, listed } = await checkListedFiles(dir, manifest, problems);
  findUnexpectedFiles(dir, manifest, listed, problems);
  if (options.hashesOnly) return result(manifest, files, 'skipped');
  const signature = await checkSignature(dir, manifest, bytes, options.trustedKey, trusted, problems);
  return result(manifest, files, signature.status, signature.claimedKey);
}

/** manifest.json, parsed, and its bytes (what the signature signs); undefined, with a problem, when it is not one. */
function readManifest(
  dir: string,
  problems: PackProblem[],
): { manifest: Manifest; bytes: Buffer } | undefined {
  const manifestPath = path.join(dir, MANIFEST_FILE);
  if (!existsSync(manifestPath)) {
    problems.push({ kind: 'manifest', file: MANIFEST_FILE, detail: `${MANIFEST_FILE} is missing` });
    return undefined;
  }
  const bytes = readFileSync(manifestPath);
  const parsed = parseManifest(bytes);
  if (!parsed.ok) {
    problems.push({ kind: 'manifest', file: MANIFEST_FILE, detail: `not a pack manifest: ${parsed.reason}` });
    return undefined;
  }
  return { manifest: parsed.manifest, bytes };
}

/** Every listed file, hashed as a stream, against its sha256 and size in the manifest. */
async function checkListedFiles(
  dir: string,
  manifest: Manifest,
  problems: PackProblem[],
): Promise<{ files: CheckedFile[]; listed: Set<string> }> {
  const files: CheckedFile[] = [];
  const listed = new Set<string>();
  for (const f of manifest.files) {
    listed.add(f.name);
    const file = path.join(dir, f.name);
    if (f.name === MANIFEST_FILE || f.name === SIGNATURE_FILE) {
      problems.push({
        kind: 'manifest',
        file: f.name,
        detail: `the manifest lists ${f.name} among its files`,
      });
      files.push({ name: f.name, ok: false, rows: f.rows });
      continue;
    }
    if (!existsSync(file) || !statSync(file).isFile()) {
      problems.push({ kind: 'missing', file: f.name, detail: 'listed in the manifest, not in the pack' });
      files.push({ name: f.name, ok: false, rows: f.rows });
      continue;
    }
    const actual = await sha256File(file);
    if (actual.sha256 !== f.sha256 || actual.bytes !== f.bytes) {
      problems.push({
        kind: 'modified',
        file: f.name,
        detail: `sha256 ${actual.sha256} (${actual.bytes} bytes), the manifest says ${f.sha256} (${f.bytes} bytes)`,
      });
      files.push({ name: f.name, ok: false, rows: f.rows });
      continue;
    }
    files.push({ name: f.name, ok: true, rows: f.rows });
  }
  return { files, listed };
}

/**
 * The entries of the pack directory, by their manifest names: those at the top and, one level down,
 * those inside a folder (`conformance/…`, anything in a folder of a folder by its folder's name); an
 * empty folder by its own name.
 */
function packEntries(dir: string): string[] {
  const out: string[] = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    if (!e.isDirectory()) {
      out.push(e.name);
      continue;
    }
    const inside = readdirSync(path.join(dir, e.name), { withFileTypes: true });
    if (inside.length === 0) out.push(e.name);
    for (const f of inside) out.push(`${e.name}/${f.name}`);
  }
  return out.sort();
}

/** Nothing else: a file that is not in the manifest could pass for evidence it is not. */
function findUnexpectedFiles(
  dir: string,
  manifest: Manifest,
  listed: Set<string>,
  problems: PackProblem[],
): void {
  const signatureExpected = manifest.signature !== null;
  const signatureFile = manifest.signature?.file ?? SIGNATURE_FILE;
  for (const name of packEntries(dir)) {
    if (listed.has(name) || name === MANIFEST_FILE) continue;
    if (signatureExpected && name === signatureFile) continue;
    problems.push({
      kind: 'unexpected',
      file: name,
      detail:
        name === SIGNATURE_FILE
          ? 'a signature the manifest does not announce (the manifest says the pack is unsigned)'
          : 'not listed in the manifest: it was added after the pack was written',
    });
  }
}

/**
 * The manifest's signature, checked only with the trusted key: the key the JWS names must be the
 * one the manifest names, and a pack signed without a trusted key to check it is `unchecked`.
 */
async function checkSignature(
  dir: string,
  manifest: Manifest,
  manifestBytes: Buffer,
  trustedKey: TrustedKey | undefined,
  trusted: TrustedKeyNames,
  problems: PackProblem[],
): Promise<{ status: SignatureStatus; claimedKey?: string | undefined }> {
  if (manifest.signature === null) {
    if (trusted !== undefined) {
      problems.push({
        kind: 'signature_missing',
        file: SIGNATURE_FILE,
        detail: `the pack is not signed, but a signature by ${trusted.source} was expected`,
      });
    }
    return { status: 'unsigned' };
  }
  const signatureFile = manifest.signature.file ?? SIGNATURE_FILE;
  const jwsPath = path.join(dir, signatureFile);
  if (!existsSync(jwsPath)) {
    problems.push({
      kind: 'signature_missing',
      file: signatureFile,
      detail: 'the manifest says the pack is signed, but the signature file is missing',
    });
    return { status: 'invalid' };
  }
  const jws = readFileSync(jwsPath, 'utf8').trim();
  const claimed = claimedKeyId(jws);
  const kidMismatch = claimed !== manifest.signature.keyThumbprint;
  if (kidMismatch) {
    problems.push({
      kind: 'signature_invalid',
      file: signatureFile,
      detail: `the signature names key ${claimed ?? '(none)'}, the manifest key ${manifest.signature.keyThumbprint}`,
    });
  }
  if (trustedKey === undefined || trusted === undefined) {
    problems.push({
      kind: 'signature_unchecked',
      file: signatureFile,
      detail: `signed by key ${claimed ?? '(unnamed)'}, but no public key to check it with: pass --public-key FILE (or set GOVTRAIL_EVIDENCE_SIGNING_KEY), or --hashes-only to check the files alone`,
    });
    return { status: 'unchecked', claimedKey: claimed };
  }
  const checked = await verifyDetached(jws, manifestBytes, trustedKey.key);
  if (!checked.ok) {
    problems.push({
      kind: 'signature_invalid',
      file: signatureFile,
      detail:
        claimed !== undefined && claimed !== trusted.thumbprint
          ? `signed by key ${claimed}, not by the trusted key ${trusted.thumbprint} (${trusted.source})`
          : `the signature does not verify with ${trusted.source}: ${checked.reason}`,
    });
    return { status: 'invalid', claimedKey: claimed };
  }
  return { status: kidMismatch ? 'invalid' : 'valid', claimedKey: claimed };
}
