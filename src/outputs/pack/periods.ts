/**
 * Setting periods: for each setting, the stretches of the export period during which its value
 * stayed the same, from the settings_timeline rows (oldest first). Pure and streaming: it holds one
 * open period per setting and hands each period over as soon as it ends, so a period with a
 * million changes needs no more memory than one with ten.
 *
 * Boundaries are compared in microseconds (PostgreSQL's resolution): two entries a fraction of a
 * millisecond apart are two periods, as `settings_as_of` sees them. A timeline row of zero length
 * (another entry at the very same instant follows it) was never in force and opens no period.
 */
import { canonicalJson } from '../../core/normalise/canonical.js';
import { SNAPSHOT_FIELDS } from '../../core/normalise/fields.js';
import type { TimelineEntry } from '../../store/read/settings-timeline.js';

/** The settings a period is kept for: the diffed snapshot columns, then each extra field. */
export function periodSettings(extraFieldNames: readonly string[]): string[] {
  return [
    ...SNAPSHOT_FIELDS.filter((f) => f.diffed).map((f) => f.column),
    ...extraFieldNames.map((n) => `extra_fields.${n}`),
  ];
}

/** One period of constant value of one setting, cut to the export period. */
export interface SettingPeriod {
  readonly setting: string;
  /** The value as stored (null: unset); undefined while the settings were deleted. */
  readonly value: unknown;
  readonly deleted: boolean;
  /** Start and end cut to the export period, exact text (the entry's createdAt, or the period's bound). */
  readonly startText: string;
  readonly endText: string;
  readonly startUs: number;
  readonly endUs: number;
  /** The value was already in force before the export period began. */
  readonly beganBefore: boolean;
  /** The value was still in force when the export period ended. */
  readonly continuesAfter: boolean;
  /** The entry whose change began the period (its createdAt may precede the export period). */
  readonly setAtText: string;
  readonly setByEntryId: string;
  readonly changeKind: string | null;
  readonly actorKind: string | null;
  readonly actorUserId: string | null;
  readonly tickets: readonly string[];
  /** Direction of that entry's change of this setting (field_change); empty when it did not change it. */
  readonly direction: string;
}

interface Open {
  key: string;
  value: unknown;
  deleted: boolean;
  startText: string;
  startUs: number;
  beganBefore: boolean;
  row: TimelineEntry;
}

/** The value of a setting in a timeline row; `extra_fields.<name>` reads the jsonb object. */
export function settingValue(row: TimelineEntry, setting: string): unknown {
  if (setting.startsWith('extra_fields.')) {
    const extra = row.settings['extra_fields'];
    if (extra === null || typeof extra !== 'object' || Array.isArray(extra)) return null;
    return (extra as Record<string, unknown>)[setting.slice('extra_fields.'.length)] ?? null;
  }
  return row.settings[setting] ?? null;
}

/** What a period compares: the value, or the deletion of the whole settings object. */
export function valueKey(row: TimelineEntry, setting: string): string {
  return row.isDeleted ? '\u0000deleted' : canonicalJson(settingValue(row, setting));
}

export class SettingPeriodBuilder {
  readonly #settings: readonly string[];
  readonly #fromUs: number;
  readonly #toUs: number;
  readonly #fromText: string;
  readonly #toText: string;
  readonly #open = new Map<string, Open>();
  readonly #origins: ReadonlyMap<string, TimelineEntry>;
  #lastEndUs: number | undefined;

  /**
   * @param origins for each setting, the row that set the value in force when the export period
   *   begins (it may lie far before the period; see {@link findValueOrigins}), so that a period cut
   *   at the start still says when and by whom its value was set
   */
  constructor(
    settings: readonly string[],
    period: { from: Date; to: Date },
    origins: ReadonlyMap<string, TimelineEntry> = new Map(),
  ) {
    this.#settings = settings;
    this.#origins = origins;
    this.#fromUs = period.from.getTime() * 1000;
    this.#toUs = period.to.getTime() * 1000;
    this.#fromText = period.from.toISOString();
    this.#toText = period.to.toISOString();
  }

  /** Takes the next timeline row; returns the periods it ended. */
  add(row: TimelineEntry): SettingPeriod[] {
    const beganBefore = row.validFromUs < this.#fromUs;
    const startUs = Math.max(row.validFromUs, this.#fromUs);
    const endUs = Math.min(row.validToUs ?? this.#toUs, this.#toUs);
    if (endUs <= startUs) return [];
    const startText = beganBefore ? this.#fromText : row.validFromText;
    const ended: SettingPeriod[] = [];
    for (const setting of this.#settings) {
      const value = row.isDeleted ? undefined : settingValue(row, setting);
      const key = valueKey(row, setting);
      const open = this.#open.get(setting);
      if (open !== undefined && open.key === key) continue;
      if (open !== undefined) ended.push(this.#period(setting, open, startText, startUs, false));
      const origin = (beganBefore ? this.#origins.get(setting) : undefined) ?? row;
      this.#open.set(setting, {
        key,
        value,
        deleted: row.isDeleted,
        startText,
        startUs,
        beganBefore,
        row: origin,
      });
    }
    this.#lastEndUs = endUs;
    return ended;
  }

  /** Ends every open period at the end of the last row (the export period's end); returns them in setting order. */
  finish(): SettingPeriod[] {
    const out: SettingPeriod[] = [];
    const endUs = this.#lastEndUs ?? this.#toUs;
    for (const setting of this.#settings) {
      const open = this.#open.get(setting);
      if (open === undefined) continue;
      out.push(
        this.#period(
          setting,
          open,
          endUs === this.#toUs ? this.#toText : new Date(endUs / 1000).toISOString(),
          endUs,
          true,
        ),
      );
    }
    this.#open.clear();
    return out;
  }

  #period(setting: string, open: Open, endText: string, endUs: number, last: boolean): SettingPeriod {
    const r = open.row;
    return {
      setting,
      value: open.deleted ? undefined : open.value,
      deleted: open.deleted,
      startText: open.startText,
      endText,
      startUs: open.startUs,
      endUs,
      beganBefore: open.beganBefore,
      continuesAfter: last && endUs === this.#toUs,
      setAtText: r.validFromText,
      setByEntryId: r.entryId,
      changeKind: r.changeKind,
      actorKind: r.actorKind,
      actorUserId: r.actorUserId,
      tickets: r.tickets,
      direction: r.directions[setting] ?? '',
    };
  }
}

/**
 * For each setting, the timeline row that set the value `first` (the row in force when the export
 * period begins) holds: walking back from `first` while the value stays the same, skipping rows of
 * zero length (never in force). `before` yields the rows before `first`, newest first; the walk
 * stops as soon as every setting has found where its value began.
 */
export async function findValueOrigins(
  first: TimelineEntry,
  settings: readonly string[],
  before: AsyncIterable<TimelineEntry>,
): Promise<Map<string, TimelineEntry>> {
  const origins = new Map(settings.map((s) => [s, first]));
  const target = new Map(settings.map((s) => [s, valueKey(first, s)]));
  const open = new Set(settings);
  if (open.size === 0) return origins;
  for await (const row of before) {
    if (row.validToUs !== null && row.validToUs <= row.validFromUs) continue;
    for (const s of open) {
      if (valueKey(row, s) === target.get(s)) origins.set(s, row);
      else open.delete(s);
    }
    if (open.size === 0) break;
  }
  return origins;
}
