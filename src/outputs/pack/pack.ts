/**
 * `govtrail export evidence-pack`: the auditor's binder for one tenant and period, as a directory
 * (and a .tar.gz of it). Every file is read inside one read-only REPEATABLE READ transaction, so all
 * of them describe the same state of the database even while a worker keeps syncing; every list is
 * streamed in keyset pages to its file with backpressure, so memory does not grow with the period.
 *
 * The pack is written to DIR.partial and renamed to DIR only when complete (manifest, signature and
 * archive included): a crash leaves no half pack under the final name.
 */
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import { create as createTar } from 'tar';
import { GovtrailError } from '../../core/errors.js';
import type { Database, Session } from '../../store/database.js';
import type { PeriodFilter } from '../../store/read/period.js';
import { DATA_FILES } from './files/index.js';
import type { PackFindings, PackWriting, Progress } from './files/pack-file.js';
import { ANCHOR_FILES, CHECKSUMS_FILE, LISTED_FILES, MANIFEST_FILE, SIGNATURE_FILE } from './files.js';
import { checksumsText, type Manifest, PACK_FORMAT, serialiseManifest } from './manifest.js';
import type { EvidencePackOptions } from './pack-options.js';
import { type PackSummary, readmeText } from './readme.js';
import { keyThumbprint, signDetached } from './signing.js';
import { TimelineSampler } from './timeline-sampler.js';
import { sha256File, type WrittenFile, writeWholeFile } from './writer.js';

/** Position of a file in the manifest: the listed order, anchor files just before SHA256SUMS. */
function fileOrder(name: string): number {
  const i = LISTED_FILES.indexOf(name);
  return i !== -1
    ? i
    : LISTED_FILES.indexOf(CHECKSUMS_FILE) - 1 + ANCHOR_FILES.findIndex((f) => f.name === name) / 10;
}

export interface EvidencePackResult {
  readonly dir: string;
  readonly archive: string;
  readonly archiveSha256: string;
  readonly archiveBytes: number;
  /** Every file of the directory, the manifest and signature last. */
  readonly files: readonly WrittenFile[];
  readonly manifestSha256: string;
  readonly summary: PackSummary;
}

export interface PackTarget {
  readonly dir: string;
  readonly partial: string;
  readonly archive: string;
}

/**
 * Where a pack for `out` goes, after checking it may: DIR must not exist or be an empty directory,
 * DIR.tar.gz must not exist, and DIR's parent must exist. A usage error (exit 2) otherwise.
 */
export function checkPackTarget(out: string): PackTarget {
  if (out.trim() === '') throw new GovtrailError('USAGE', '--out: a directory name is required');
  const dir = path.resolve(out);
  const parent = path.dirname(dir);
  if (!existsSync(parent) || !statSync(parent).isDirectory()) {
    throw new GovtrailError('USAGE', `--out: directory ${JSON.stringify(parent)} does not exist`);
  }
  if (existsSync(dir)) {
    if (!statSync(dir).isDirectory()) {
      throw new GovtrailError('USAGE', `--out: ${JSON.stringify(dir)} exists and is not a directory`);
    }
    if (readdirSync(dir).length > 0) {
      throw new GovtrailError(
        'USAGE',
        `--out: ${JSON.stringify(dir)} exists and is not empty; a pack is never written over other files: choose a new directory`,
      );
    }
  }
  const archive = `${dir}.tar.gz`;
  if (existsSync(archive)) {
    throw new GovtrailError(
      'USAGE',
      `--out: ${JSON.stringify(archive)} already exists; remove it or choose another --out`,
    );
  }
  return { dir, partial: `${dir}.partial`, archive };
}

/** Writes the pack; see the module comment. */
export async function writeEvidencePack(
  database: Database,
  options: EvidencePackOptions,
): Promise<EvidencePackResult> {
  const target = checkPackTarget(options.out);
  const archivePartial = `${target.archive}.partial`;
  // Left by a run that crashed: ours by name, never a finished pack.
  rmSync(target.partial, { recursive: true, force: true });
  rmSync(archivePartial, { force: true });
  mkdirSync(target.partial);
  let complete = false;
  try {
    const data = await database.withSession((session) =>
      session
        .transaction()
        .setIsolationLevel('repeatable read')
        .setAccessMode('read only')
        .execute((trx) => writeData(trx, target.partial, options)),
    );
    const signedBy = options.signingKey === undefined ? undefined : await keyThumbprint(options.signingKey);
    const files = [...data.files];
    const anchor = options.anchor;
    if (anchor !== undefined) {
      files.push(await writeWholeFile(target.partial, 'anchor.json', anchor.statement, null));
      files.push(await writeWholeFile(target.partial, 'anchor.json.jws', `${anchor.jws.trim()}\n`, null));
      if (anchor.publicKeyPem !== undefined)
        files.push(await writeWholeFile(target.partial, 'anchor-public.pem', anchor.publicKeyPem, null));
    }
    const anchorFiles = files.filter((f) => ANCHOR_FILES.some((a) => a.name === f.name)).map((f) => f.name);
    const summary: PackSummary = {
      ...data.summary,
      signedBy,
      ...(anchor === undefined ? {} : { anchorFiles }),
    };
    files.push(await writeWholeFile(target.partial, 'README.txt', readmeText(summary), null));
    files.sort((a, b) => fileOrder(a.name) - fileOrder(b.name));
    files.push(await writeWholeFile(target.partial, CHECKSUMS_FILE, checksumsText(files), files.length));

    const manifest: Manifest = {
      format: PACK_FORMAT,
      tenant: options.tenantId,
      from: options.from.toISOString(),
      to: options.to.toISOString(),
      generatedAt: options.now.toISOString(),
      generator: { name: 'govtrail', version: options.version },
      files,
      signature:
        signedBy === undefined ? null : { file: SIGNATURE_FILE, alg: 'EdDSA', keyThumbprint: signedBy },
    };
    const manifestBytes = serialiseManifest(manifest);
    const written = [...files, await writeWholeFile(target.partial, MANIFEST_FILE, manifestBytes, null)];
    if (options.signingKey !== undefined) {
      const jws = await signDetached(manifestBytes, options.signingKey);
      written.push(await writeWholeFile(target.partial, SIGNATURE_FILE, `${jws}\n`, null));
    }

    options.onProgress?.({ step: 'archive', rows: 0 });
    // Entries are named DIR/<file> and dated at generation, so the same pack gives the same listing.
    await createTar(
      {
        gzip: true,
        file: archivePartial,
        cwd: target.partial,
        portable: true,
        mtime: options.now,
        prefix: path.basename(target.dir),
      },
      written.map((f) => f.name),
    );
    const archive = await sha256File(archivePartial);
    renameSync(target.partial, target.dir);
    renameSync(archivePartial, target.archive);
    complete = true;
    return {
      dir: target.dir,
      archive: target.archive,
      archiveSha256: archive.sha256,
      archiveBytes: archive.bytes,
      files: written,
      manifestSha256: written.find((f) => f.name === MANIFEST_FILE)?.sha256 ?? '',
      summary,
    };
  } finally {
    if (!complete) {
      rmSync(target.partial, { recursive: true, force: true });
      rmSync(archivePartial, { force: true });
    }
  }
}

type DataSummary = Omit<PackSummary, 'signedBy'>;

/** Every data file of the pack (files/index.ts, in order), inside the snapshot transaction. */
async function writeData(
  db: Session,
  dir: string,
  o: EvidencePackOptions,
): Promise<{ files: WrittenFile[]; summary: DataSummary }> {
  const period: PeriodFilter = { tenantId: o.tenantId, from: o.from, to: o.to };
  const progress: Progress = (step, rows) => o.onProgress?.({ step, rows });
  const sampler = new TimelineSampler(o.tenantId, o);
  const found: PackFindings = {};
  const w: PackWriting = { db, dir, o, period, progress, sampler, found };
  const files: WrittenFile[] = [];
  for (const file of DATA_FILES) files.push(await file.write(w));

  const count = (name: string) => files.find((f) => f.name === name)?.rows ?? 0;
  const integrity = found.integrity as NonNullable<PackFindings['integrity']>;
  return {
    files,
    summary: {
      tenantId: o.tenantId,
      from: o.from,
      to: o.to,
      generatedAt: o.now,
      version: o.version,
      changes: count('changes.csv'),
      changesWithoutTicket: count('changes-without-ticket.csv'),
      settingPeriods: count('setting-periods.csv'),
      alerts: count('alerts.csv'),
      coverage: (found.coverage as NonNullable<PackFindings['coverage']>).summary(),
      intervalSource: o.interval.source,
      verify: integrity.verify,
      reconcile: integrity.reconcile,
      discrepancies: integrity.discrepancies,
      reportThinned: sampler.thinned,
      backfill: found.backfill as PackSummary['backfill'],
    },
  };
}
