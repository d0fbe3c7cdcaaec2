/**
 * manifest.json: which files make up a pack, each with its sha256, size and row count. The
 * signature (manifest.jws) covers its exact bytes, so the manifest binds every file.
 */
import { z } from 'zod';
import type { WrittenFile } from './writer.js';

export const PACK_FORMAT = 'govtrail-evidence-pack/1';

/**
 * A file name a manifest may list: one plain name inside the pack directory, or inside its one
 * folder `conformance/`; never any other path.
 */
export const SAFE_FILE_NAME = /^(?:conformance\/)?[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

export interface Manifest {
  readonly format: typeof PACK_FORMAT;
  readonly tenant: string;
  /** The period, [from, to), ISO 8601 UTC. */
  readonly from: string;
  readonly to: string;
  readonly generatedAt: string;
  readonly generator: { readonly name: 'govtrail'; readonly version: string };
  readonly files: readonly WrittenFile[];
  /** Present when the pack is signed: where the signature is and which key made it. */
  readonly signature: {
    readonly file: string;
    readonly alg: 'EdDSA';
    /** RFC 7638 thumbprint of the signing key's public JWK. */
    readonly keyThumbprint: string;
  } | null;
}

const manifestSchema = z.object({
  format: z.literal(PACK_FORMAT),
  tenant: z.string(),
  from: z.string(),
  to: z.string(),
  generatedAt: z.string(),
  generator: z.object({ name: z.literal('govtrail'), version: z.string() }),
  files: z.array(
    z.object({
      name: z.string().regex(SAFE_FILE_NAME),
      sha256: z.string().regex(/^[0-9a-f]{64}$/),
      bytes: z.number().int().nonnegative(),
      rows: z.number().int().nonnegative().nullable(),
    }),
  ),
  signature: z
    .object({
      file: z.string().regex(SAFE_FILE_NAME),
      alg: z.literal('EdDSA'),
      keyThumbprint: z.string(),
    })
    .nullable(),
});

/** The manifest's bytes: pretty JSON, one trailing newline. */
export function serialiseManifest(m: Manifest): Buffer {
  return Buffer.from(`${JSON.stringify(m, null, 2)}\n`, 'utf8');
}

/** Parses and checks a manifest; the reason when it is not one. */
export function parseManifest(
  bytes: Buffer,
): { ok: true; manifest: Manifest } | { ok: false; reason: string } {
  let doc: unknown;
  try {
    doc = JSON.parse(bytes.toString('utf8'));
  } catch (err) {
    return { ok: false, reason: `not JSON: ${(err as Error).message}` };
  }
  const parsed = manifestSchema.safeParse(doc);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return { ok: false, reason: `${issue?.path.join('.') || '(top level)'}: ${issue?.message ?? 'invalid'}` };
  }
  const names = new Set<string>();
  for (const f of parsed.data.files) {
    if (names.has(f.name)) return { ok: false, reason: `files: ${f.name} is listed twice` };
    names.add(f.name);
  }
  return { ok: true, manifest: parsed.data as Manifest };
}

/** SHA256SUMS: `sha256sum` format, one line per file. */
export function checksumsText(files: readonly WrittenFile[]): string {
  return files.map((f) => `${f.sha256}  ${f.name}\n`).join('');
}
