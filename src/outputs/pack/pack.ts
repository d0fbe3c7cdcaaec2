/**
 * `govtrail export evidence-pack`: the auditor's binder for one tenant and period, as a directory
 * (and a .tar.gz of it). Every file is read inside one read-only REPEATABLE READ transaction, so all
 * of them describe the same state of the database even while a worker keeps syncing; every list is
 * streamed in keyset pages to its file with backpressure, so memory does not grow with the period.
 *
 * The pack is written to DIR.partial and renamed to DIR only when complete (manifest, signature and
 * archive included): a crash leaves no half pack under the final name.
 */
import type { KeyObject } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import { create as createTar } from 'tar';
import { GovtrailError } from '../../core/errors.js';
import { formatValue, humanSeconds, shortEnum } from '../../core/format.js';
import type { RulePack } from '../../core/rules/rules.js';
import type { Database, Session } from '../../store/database.js';
import {
  countDiscrepancies,
  findEntryTimes,
  findLastSuccessBefore,
  findSettingsInForce,
  iterateAlerts,
  iterateChangesWithoutTicket,
  iterateDiscrepancies,
  iterateRuns,
  iterateTimeline,
  iterateTimelineBefore,
  type LedgerRun,
  listExtraFieldNames,
  type PeriodFilter,
  type TimelineEntry,
} from '../../store/read/evidence-pack.js';
import { findSourceIntegrity } from '../../store/read/integrity.js';
import { iterateChanges } from '../../store/read/views.js';
import { verifyStore } from '../../store/verify/verify.js';
import { csvRow } from '../evidence/csv.js';
import { EVIDENCE_HEADER, evidenceCells } from '../evidence/evidence.js';
import { renderReport } from '../report/html.js';
import { type CoverageGap, type CoverageSummary, CoverageTracker } from './coverage.js';
import { ANCHOR_FILES, CHECKSUMS_FILE, LISTED_FILES, MANIFEST_FILE, SIGNATURE_FILE } from './files.js';
import { checksumsText, type Manifest, PACK_FORMAT, serialiseManifest } from './manifest.js';
import { findValueOrigins, periodSettings, type SettingPeriod, SettingPeriodBuilder } from './periods.js';
import { type PackSummary, readmeText } from './readme.js';
import { loadPackReportData, TimelineSampler } from './report-html.js';
import { keyThumbprint, signDetached } from './signing.js';
import {
  cellTime,
  cellValue,
  PackCsvWriter,
  PackFileWriter,
  sha256File,
  type WrittenFile,
  writeWholeFile,
} from './writer.js';

export const UNTICKETED_HEADER = [
  'tenant',
  'changed_at',
  'actor_kind',
  'actor_user_id',
  'change_kind',
  'fields',
  'reasons',
  'entry_id',
  'syslog_event_id',
  'trace_id',
] as const;

export const PERIODS_HEADER = [
  'tenant',
  'setting',
  'value',
  'value_display',
  'deleted',
  'period_start',
  'period_end',
  'duration_seconds',
  'began_before_period',
  'continues_after_period',
  'set_at',
  'set_by_entry_id',
  'change_kind',
  'actor_kind',
  'actor_user_id',
  'tickets',
  'direction',
] as const;

export const ALERTS_HEADER = [
  'alert_id',
  'raised_at',
  'changed_at',
  'tenant',
  'entry_id',
  'rule_id',
  'rule_version',
  'severity',
  'title',
  'summary',
  'delivery_status',
  'delivered_to',
  'pending_to',
  'failed_to',
  'last_delivered_at',
] as const;

export const RUNS_HEADER = [
  'record',
  'run_id',
  'kind',
  'trigger',
  'status',
  'started_at',
  'finished_at',
  'seconds_since_last_success',
  'pages_fetched',
  'entries_fetched',
  'entries_inserted',
  'entries_rejected',
  'warnings',
  'http_retries',
  'stop_reason',
  'error_code',
  'error_message',
  'covered_from',
  'covered_to',
  'note',
] as const;

/** What the pack is doing, for a progress line. */
export interface PackProgress {
  readonly step: string;
  /** Rows written by the step so far. */
  readonly rows: number;
}

export interface EvidencePackOptions {
  readonly tenantId: string;
  readonly from: Date;
  readonly to: Date;
  /** The pack directory to create. */
  readonly out: string;
  /** The export's time (generatedAt, and the end of coverage for a period that has not ended). */
  readonly now: Date;
  /** The schedule interval of the gap rule, and where it came from (for README.txt). */
  readonly interval: { readonly ms: number; readonly source: string };
  /** Signs the manifest when given (Ed25519). */
  readonly signingKey?: KeyObject | undefined;
  /** govtrail's version, for the manifest. */
  readonly version: string;
  readonly onProgress?: ((p: PackProgress) => void) | undefined;
  /** Rows per database page (tests use small pages). */
  readonly pageSize?: number | undefined;
  /** The newest anchor of the tenant's chain, copied into the pack (ANCHOR_FILES). */
  readonly anchor?: PackAnchor | undefined;
  /** The rule pack the backfill findings are evaluated with (default: the built-in one). */
  readonly rulePack?: RulePack | undefined;
}

/** An anchor statement file, its detached JWS and, when known, the public key that checks it. */
export interface PackAnchor {
  readonly statement: Buffer;
  readonly jws: string;
  readonly publicKeyPem?: string | undefined;
}

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

type Progress = (step: string, rows: number) => void;

/** What every step that writes a data file works with. */
interface PackWriting {
  readonly db: Session;
  readonly dir: string;
  readonly o: EvidencePackOptions;
  readonly period: PeriodFilter;
  readonly progress: Progress;
}

/** Every data file of the pack, inside the snapshot transaction. */
async function writeData(
  db: Session,
  dir: string,
  o: EvidencePackOptions,
): Promise<{ files: WrittenFile[]; summary: DataSummary }> {
  const period: PeriodFilter = { tenantId: o.tenantId, from: o.from, to: o.to };
  const progress: Progress = (step, rows) => o.onProgress?.({ step, rows });
  const w: PackWriting = { db, dir, o, period, progress };
  const files: WrittenFile[] = [];

  // changes.csv: the evidence export's rows and cells, to the letter.
  progress('changes.csv', 0);
  files.push(await writeChangesCsv(w));
  files.push(await writeUnticketedCsv(w));

  const sampler = new TimelineSampler(o.tenantId, o);
  files.push(await writeSettingPeriods(db, dir, period, sampler, o.pageSize, progress));
  files.push(...(await writeSettingsAtBounds(w)));
  files.push(await writeAlertsCsv(w));

  const coverage = new CoverageTracker({
    from: o.from,
    to: o.to,
    now: o.now,
    intervalMs: o.interval.ms,
    lastSuccessBefore: await findLastSuccessBefore(db, o.tenantId, o.from),
  });
  files.push(await writeRunsCsv(w, coverage));

  progress('integrity.json (verifying the tamper-evidence chain)', 0);
  const integrity = await writeIntegrity(db, dir, o, coverage.summary());
  files.push(integrity.file);

  progress('report.html', 0);
  const reportData = await loadPackReportData(db, { ...period, now: o.now, sampler, pack: o.rulePack });
  files.push(await writeWholeFile(dir, 'report.html', renderReport(reportData), null));

  const count = (name: string) => files.find((f) => f.name === name)?.rows ?? 0;
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
      coverage: coverage.summary(),
      intervalSource: o.interval.source,
      verify: integrity.verify,
      reconcile: integrity.reconcile,
      discrepancies: integrity.discrepancies,
      reportThinned: sampler.thinned,
      backfill: reportData.backfill,
    },
  };
}

/** changes.csv: the evidence export's rows and cells, to the letter. */
function writeChangesCsv({ db, dir, o, progress }: PackWriting): Promise<WrittenFile> {
  return writeCsv(
    dir,
    'changes.csv',
    EVIDENCE_HEADER,
    async (row) => {
      for await (const c of iterateChanges(
        db,
        { tenantId: o.tenantId, since: o.from, until: o.to },
        o.pageSize,
      )) {
        await row(evidenceCells(c));
      }
    },
    progress,
  );
}

function writeUnticketedCsv({ db, dir, o, period, progress }: PackWriting): Promise<WrittenFile> {
  return writeCsv(
    dir,
    'changes-without-ticket.csv',
    UNTICKETED_HEADER,
    async (row) => {
      for await (const e of iterateChangesWithoutTicket(db, period, o.pageSize)) {
        await row([
          o.tenantId,
          e.changedAtText,
          e.actorKind === null ? '' : shortEnum(e.actorKind),
          e.actorUserId ?? '',
          e.changeKind === null ? '' : shortEnum(e.changeKind),
          e.fields.join('; '),
          e.reasons.join('; '),
          e.entryId,
          e.syslogEventId ?? '',
          e.traceId ?? '',
        ]);
      }
    },
    progress,
  );
}

/** settings-at-start.json and settings-at-end.json: the settings in force at each end of the period. */
async function writeSettingsAtBounds({ db, dir, o }: PackWriting): Promise<WrittenFile[]> {
  const files: WrittenFile[] = [];
  for (const [name, at, justBefore, meaning] of [
    [
      'settings-at-start.json',
      o.from,
      false,
      'the settings in force at the first instant of the period: govtrail.settings_as_of(tenant, from)',
    ],
    [
      'settings-at-end.json',
      o.to,
      true,
      'the settings in force at the last instant of the period: govtrail.settings_as_of(tenant, to - 1 microsecond)',
    ],
  ] as const) {
    const row = await findSettingsInForce(db, o.tenantId, at, justBefore);
    files.push(
      await writeWholeFile(dir, name, settingsJson(o.tenantId, at, meaning, row), settingsCount(row)),
    );
  }
  return files;
}

function writeAlertsCsv({ db, dir, o, period, progress }: PackWriting): Promise<WrittenFile> {
  return writeCsv(
    dir,
    'alerts.csv',
    ALERTS_HEADER,
    async (row) => {
      for await (const a of iterateAlerts(db, period, o.pageSize)) {
        await row([
          String(a.alertId),
          cellTime(a.createdAt),
          cellTime(a.changedAt),
          o.tenantId,
          a.entryId ?? '',
          a.ruleId,
          String(a.ruleVersion),
          a.severity,
          a.title,
          a.summary,
          a.deliveryStatus,
          a.deliveredSinks.join('; '),
          a.pendingSinks.join('; '),
          a.failedSinks.join('; '),
          cellTime(a.lastDeliveredAt),
        ]);
      }
    },
    progress,
  );
}

/**
 * runs.csv: every run of the period, with a `gap` row wherever no run succeeded for longer than
 * two schedule intervals; `coverage` follows the runs and keeps the summary integrity.json uses.
 */
function writeRunsCsv(
  { db, dir, o, period, progress }: PackWriting,
  coverage: CoverageTracker,
): Promise<WrittenFile> {
  return writeCsv(
    dir,
    'runs.csv',
    RUNS_HEADER,
    async (row) => {
      const gapRow = (g: CoverageGap) => row(gapCells(g, o.interval.ms));
      for await (const r of iterateRuns(db, period, o.pageSize)) {
        const c = coverage.add(r);
        if (c.gap !== undefined) await gapRow(c.gap);
        await row(runCells(r, c.secondsSinceLastSuccess));
      }
      const trailing = coverage.finish();
      if (trailing !== undefined) await gapRow(trailing);
    },
    progress,
  );
}

function gapCells(g: CoverageGap, intervalMs: number): string[] {
  return [
    'gap',
    '',
    '',
    '',
    '',
    cellTime(g.from),
    cellTime(g.to),
    String(g.seconds),
    ...new Array<string>(11).fill(''),
    `no successful run for longer than ${humanSeconds((2 * intervalMs) / 1000)} (two schedule intervals): ${g.note}`,
  ];
}

function runCells(r: LedgerRun, secondsSinceLastSuccess: number | null): string[] {
  return [
    'run',
    String(r.runId),
    r.kind,
    r.trigger,
    r.status,
    cellTime(r.startedAt),
    cellTime(r.finishedAt),
    secondsSinceLastSuccess === null ? '' : String(secondsSinceLastSuccess),
    String(r.pagesFetched),
    String(r.entriesFetched),
    String(r.entriesInserted),
    String(r.entriesRejected),
    String(r.warnings),
    String(r.httpRetries),
    r.stopReason ?? '',
    r.errorCode ?? '',
    r.errorMessage ?? '',
    r.coveredFromText ?? '',
    r.coveredToText ?? '',
    '',
  ];
}

/** A CSV file from a producer of rows, reporting progress every 1 000 rows. */
async function writeCsv(
  dir: string,
  name: string,
  header: readonly string[],
  produce: (row: (cells: readonly string[]) => Promise<void>) => Promise<void>,
  progress: (step: string, rows: number) => void,
): Promise<WrittenFile> {
  const csv = await PackCsvWriter.open(dir, name, header);
  try {
    progress(name, 0);
    await produce(async (cells) => {
      await csv.row(cells);
      if (csv.rows % 1000 === 0) progress(name, csv.rows);
    });
    return await csv.close();
  } catch (err) {
    csv.destroy();
    throw err;
  }
}

/**
 * setting-periods.csv from one pass over the timeline, which also feeds the report's sampler.
 * Periods end in time order across settings, but the file is grouped by setting: each setting's
 * periods go to a scratch file of their own as they end (in order within the setting), and the
 * scratch files are concatenated, so memory holds one open period per setting.
 */
async function writeSettingPeriods(
  db: Session,
  dir: string,
  period: PeriodFilter,
  sampler: TimelineSampler,
  pageSize: number | undefined,
  progress: (step: string, rows: number) => void,
): Promise<WrittenFile> {
  const name = 'setting-periods.csv';
  progress(name, 0);
  const settings = periodSettings(await listExtraFieldNames(db, period));
  // The row in force at the start (when it began earlier) comes first; the values it holds were set
  // by some earlier entry, found by walking back from it.
  const rows = iterateTimeline(db, period, pageSize)[Symbol.asyncIterator]();
  const head = await rows.next();
  const origins =
    head.done === true || head.value.validFromUs >= period.from.getTime() * 1000
      ? new Map<string, TimelineEntry>()
      : await findValueOrigins(
          head.value,
          settings,
          iterateTimelineBefore(db, period.tenantId, head.value, pageSize),
        );
  const builder = new SettingPeriodBuilder(settings, period, origins);
  const scratch = settings.map((_, i) => new PackFileWriter(dir, `.setting-periods.${i}.tmp`));
  const counts = settings.map(() => 0);
  let total = 0;
  const emit = async (periods: readonly SettingPeriod[]) => {
    for (const p of periods) {
      const i = settings.indexOf(p.setting);
      await scratch[i]?.write(csvRow(periodCells(period.tenantId, p)));
      counts[i] = (counts[i] ?? 0) + 1;
      total++;
      if (total % 1000 === 0) progress(name, total);
    }
  };
  let csv: PackCsvWriter | undefined;
  try {
    for (let next = head; next.done !== true; next = await rows.next()) {
      sampler.add(next.value);
      await emit(builder.add(next.value));
    }
    await emit(builder.finish());
    const parts = await Promise.all(scratch.map((s) => s.close(null)));
    csv = await PackCsvWriter.open(dir, name, PERIODS_HEADER);
    for (const [i, part] of parts.entries()) {
      const file = path.join(dir, part.name);
      await csv.appendRows(file, counts[i] ?? 0);
      rmSync(file);
    }
    return await csv.close();
  } catch (err) {
    for (const s of scratch) s.destroy();
    csv?.destroy();
    throw err;
  }
}

function periodCells(tenantId: string, p: SettingPeriod): string[] {
  return [
    tenantId,
    p.setting,
    p.deleted ? '' : cellValue(p.value),
    p.deleted ? 'settings deleted' : formatPeriodValue(p.setting, p.value),
    String(p.deleted),
    p.startText,
    p.endText,
    String((p.endUs - p.startUs) / 1e6),
    String(p.beganBefore),
    String(p.continuesAfter),
    p.setAtText,
    p.setByEntryId,
    p.changeKind === null ? '' : shortEnum(p.changeKind),
    p.actorKind === null ? '' : shortEnum(p.actorKind),
    p.actorUserId ?? '',
    p.tickets.join('; '),
    p.direction,
  ];
}

/** The human rendering of `govtrail settings`, for the column next to the exact value. */
function formatPeriodValue(setting: string, value: unknown): string {
  return formatValue(
    setting.startsWith('extra_fields.') ? setting.slice('extra_fields.'.length) : setting,
    value,
  );
}

function settingsCount(row: TimelineEntry | undefined): number {
  return row === undefined || row.isDeleted ? 0 : Object.keys(row.settings).length;
}

function settingsJson(tenantId: string, at: Date, meaning: string, row: TimelineEntry | undefined): string {
  return `${JSON.stringify(
    {
      tenant: tenantId,
      at: at.toISOString(),
      meaning,
      inForce:
        row === undefined
          ? null
          : {
              entryId: row.entryId,
              since: row.validFromText,
              changeKind: row.changeKind,
              actorKind: row.actorKind,
              actorUserId: row.actorUserId,
              tickets: row.tickets,
              reasons: row.reasons,
              deleted: row.isDeleted,
            },
      settings: row === undefined || row.isDeleted ? null : row.settings,
      note:
        row === undefined
          ? 'no settings recorded at this time (before the tenant’s first snapshot)'
          : row.isDeleted
            ? 'the settings were deleted (HARD_DELETE) at this time'
            : undefined,
    },
    null,
    2,
  )}\n`;
}

/**
 * integrity.json: `govtrail verify` of the tenant's chain, the last reconcile (coverage record and
 * open discrepancies), the run coverage, and every discrepancy recorded for an entry of the period
 * (streamed, one a line).
 */
async function writeIntegrity(
  db: Session,
  dir: string,
  o: EvidencePackOptions,
  coverage: CoverageSummary,
): Promise<{
  file: WrittenFile;
  verify: PackSummary['verify'];
  reconcile: PackSummary['reconcile'];
  discrepancies: number;
}> {
  const period: PeriodFilter = { tenantId: o.tenantId, from: o.from, to: o.to };
  const verified = await verifyStore(db, { tenantId: o.tenantId });
  const times = await findEntryTimes(
    db,
    o.tenantId,
    verified.findings.flatMap((f) => (f.entryId === null ? [] : [f.entryId])),
  );
  const inPeriod = (entryId: string | null) => {
    const t = entryId === null ? undefined : times.get(entryId);
    return t !== undefined && t >= o.from && t < o.to;
  };
  const source = await findSourceIntegrity(db, o.tenantId);
  const v = source.verified;
  const head = {
    tenant: o.tenantId,
    from: o.from.toISOString(),
    to: o.to.toISOString(),
    generatedAt: o.now.toISOString(),
    verify: {
      ok: verified.findings.length === 0,
      scope:
        'the tenant’s whole row_hash chain, from its first stored entry: a hash chain can only be checked from its start, and it covers every entry of the period',
      rowsVerified: verified.rowsVerified,
      findings: verified.findings.map((f) => ({ ...f, inPeriod: inPeriod(f.entryId) })),
      findingsInPeriod: verified.findings.filter((f) => inPeriod(f.entryId)).length,
    },
    reconcile: {
      lastReconcileAt: source.lastReconcileAt?.toISOString() ?? null,
      lastReconcileStatus: source.lastReconcileStatus,
      lastReconcileRunId: source.lastReconcileRunId,
      lastVerified:
        v === undefined
          ? null
          : {
              runId: v.runId,
              finishedAt: v.finishedAt.toISOString(),
              entriesServed: v.entriesServed,
              entriesMatched: v.entriesMatched,
              coveredFrom: v.coveredFromText ?? v.coveredFrom?.toISOString() ?? null,
              coveredTo: v.coveredToText ?? v.coveredTo?.toISOString() ?? null,
              ranAfterPeriodEnd: v.finishedAt >= o.to,
              statement: `on ${v.finishedAt.toISOString()}, every one of ${v.entriesServed} entries the source served${v.coveredFrom !== null && v.coveredTo !== null ? ` (created from ${v.coveredFromText ?? v.coveredFrom.toISOString()} to ${v.coveredToText ?? v.coveredTo.toISOString()})` : ''} was compared with the store by content hash: ${v.entriesMatched} matched`,
            },
      openDiscrepancies: source.open,
    },
    coverage: { ...coverage, intervalSource: o.interval.source },
  };
  const file = new PackFileWriter(dir, 'integrity.json');
  let listed = 0;
  try {
    const text = JSON.stringify(head, null, 2);
    await file.write(`${text.slice(0, text.lastIndexOf('}')).trimEnd()},\n  "discrepancies": {\n`);
    await file.write(
      `    "selection": ${JSON.stringify('every discrepancy recorded for an entry created in the period, whenever it was found, in the order found (table source_discrepancy)')},\n`,
    );
    await file.write(`    "recordedForTenant": ${await countDiscrepancies(db, o.tenantId)},\n    "list": [`);
    for await (const d of iterateDiscrepancies(db, period, o.pageSize)) {
      await file.write(
        `${listed === 0 ? '' : ','}\n      ${JSON.stringify({
          ...d,
          detectedAt: d.detectedAt.toISOString(),
          entryCreatedAt: d.entryCreatedAt?.toISOString() ?? null,
        })}`,
      );
      listed++;
    }
    await file.write(`${listed === 0 ? '' : '\n    '}]\n  }\n}\n`);
    return {
      file: await file.close(listed + verified.findings.length),
      verify: {
        ok: verified.findings.length === 0,
        rowsVerified: verified.rowsVerified,
        findings: verified.findings.length,
      },
      reconcile: v === undefined ? undefined : { finishedAt: v.finishedAt, entriesMatched: v.entriesMatched },
      discrepancies: listed,
    };
  } catch (err) {
    file.destroy();
    throw err;
  }
}
