/**
 * setting-periods.csv from one pass over the timeline, which also feeds the report's sampler.
 * Periods end in time order across settings, but the file is grouped by setting: each setting's
 * periods go to a scratch file of their own as they end (in order within the setting), and the
 * scratch files are concatenated, so memory holds one open period per setting.
 */
import { rmSync } from 'node:fs';
import path from 'node:path';
import { formatValue, shortEnum } from '../../../core/format.js';
import type { Session } from '../../../store/database.js';
import type { PeriodFilter } from '../../../store/read/period.js';
import {
  iterateTimeline,
  iterateTimelineBefore,
  listExtraFieldNames,
  type TimelineEntry,
} from '../../../store/read/settings-timeline.js';
import { csvRow } from '../../evidence/csv.js';
import { findValueOrigins, periodSettings, type SettingPeriod, SettingPeriodBuilder } from '../periods.js';
import type { TimelineSampler } from '../timeline-sampler.js';
import { cellValue, PackCsvWriter, PackFileWriter, type WrittenFile } from '../writer.js';
import type { PackDataFile } from './pack-file.js';

const HEADER = [
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

export const SETTING_PERIODS: PackDataFile = {
  name: 'setting-periods.csv',
  header: HEADER,
  write: ({ db, dir, o, period, sampler, progress }) =>
    writeSettingPeriods(db, dir, period, sampler, o.pageSize, progress),
};

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
    csv = await PackCsvWriter.open(dir, name, HEADER);
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
