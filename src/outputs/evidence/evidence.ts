/**
 * The evidence export: one CSV row per field change, written page by page to a file, with a
 * `sha256sum`-format sidecar so the recipient can check the file arrived intact.
 */
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { createWriteStream, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { shortEnum } from '../../core/format.js';
import type { Session } from '../../store/database.js';
import { type ChangeLogRow, iterateChanges } from '../../store/read/views.js';
import { csvRow } from './csv.js';

export const EVIDENCE_HEADER = [
  'tenant',
  'changed_at',
  'actor_kind',
  'actor_user_id',
  'change_kind',
  'field',
  'before',
  'after',
  'direction',
  'tickets',
  'ticket_urls',
  'reasons',
  'entry_id',
  'syslog_event_id',
  'trace_id',
] as const;

/**
 * The cells of one change. Before/after are exact (a string as stored, anything else as JSON; empty
 * when unset), never shortened: this is evidence. Lists are joined by "; ".
 */
export function evidenceCells(c: ChangeLogRow): string[] {
  return [
    c.tenantId,
    c.changedAtText,
    c.actorKind === null ? '' : shortEnum(c.actorKind),
    c.actorUserId ?? '',
    c.changeKind === null ? '' : shortEnum(c.changeKind),
    c.field,
    exactValue(c.oldValue),
    exactValue(c.newValue),
    c.direction,
    c.tickets.join('; '),
    c.ticketUrls.map((u) => u ?? '').join('; '),
    c.reasons.join('; '),
    c.entryId,
    c.syslogEventId ?? '',
    c.traceId ?? '',
  ];
}

function exactValue(v: unknown): string {
  if (v === null || v === undefined) return '';
  return typeof v === 'string' ? v : JSON.stringify(v);
}

export interface EvidenceExport {
  readonly rows: number;
  readonly csvPath: string;
  readonly sha256Path: string;
  readonly sha256: string;
}

/**
 * Writes the changes of [from, to) to `out` and its `.sha256` sidecar. The CSV is written as
 * `out.partial` and renamed when complete, then the sidecar is written: an interrupted export
 * leaves no file under the final name that could pass for a whole one.
 */
export async function writeEvidenceCsv(
  db: Session,
  options: { tenantId: string; from: Date; to: Date; out: string },
): Promise<EvidenceExport> {
  const hash = createHash('sha256');
  const partial = `${options.out}.partial`;
  const file = createWriteStream(partial, { flags: 'w' });
  const failed = new Promise<never>((_, reject) => file.once('error', reject));
  failed.catch(() => {});
  // Honour backpressure so a slow disk never lets pages pile up in memory.
  const write = async (text: string): Promise<void> => {
    hash.update(text, 'utf8');
    if (!file.write(text, 'utf8')) await Promise.race([once(file, 'drain'), failed]);
  };
  const sha256Path = `${options.out}.sha256`;
  let sha256 = '';
  let rows = 0;
  let complete = false;
  try {
    await write(csvRow(EVIDENCE_HEADER));
    for await (const c of iterateChanges(db, {
      tenantId: options.tenantId,
      since: options.from,
      until: options.to,
    })) {
      await write(csvRow(evidenceCells(c)));
      rows++;
    }
    file.end();
    await Promise.race([once(file, 'finish'), failed]);
    // The sidecar first, the CSV's rename last: whatever an interrupt leaves, a file under the
    // final name either checks against its sidecar or visibly does not.
    sha256 = hash.digest('hex');
    writeFileSync(sha256Path, `${sha256}  ${path.basename(options.out)}\n`);
    renameSync(partial, options.out);
    complete = true;
  } finally {
    if (!complete) {
      // The stream opens its file asynchronously: wait for it to close, or the open could create
      // the .partial again after it was removed.
      file.destroy();
      if (!file.closed) await once(file, 'close');
      rmSync(partial, { force: true });
    }
  }
  return { rows, csvPath: options.out, sha256Path, sha256 };
}
