/**
 * The posture timeline of the pack's report.html (files/report.ts), within a fixed number of rows:
 * `govtrail report` (src/outputs/report/) loads the period's settings_timeline rows as a list,
 * which for a period of a million entries is a million rows. The pack feeds the chart from the
 * timeline stream it reads anyway (for setting-periods.csv) and keeps every row up to
 * {@link REPORT_TIMELINE_ROWS}; past that it keeps, for each of {@link REPORT_TIMELINE_BUCKETS}
 * equal slices of the period, the row in force at the slice's end, drawn from the slice's start. A
 * slice is under a pixel of the 860-pixel-wide chart, so nothing visible is lost;
 * setting-periods.csv has every period exactly.
 */
import type { TimelineEntry } from '../../store/read/settings-timeline.js';
import type { TimelineRow } from '../../store/read/views.js';

/** Rows kept as they are; a longer timeline is thinned. */
export const REPORT_TIMELINE_ROWS = 4000;
/** Slices of the period a thinned timeline keeps one row for. */
export const REPORT_TIMELINE_BUCKETS = 2000;

interface Bucket {
  start: Date;
  row: TimelineEntry;
}

/** Collects the chart's timeline from the stream, within a fixed number of rows. */
export class TimelineSampler {
  readonly #tenantId: string;
  readonly #from: number;
  readonly #width: number;
  readonly #limit: number;
  readonly #buckets: number;
  #rows: TimelineEntry[] | undefined = [];
  #slices: (Bucket | undefined)[] = [];
  #seen = 0;

  constructor(
    tenantId: string,
    period: { from: Date; to: Date },
    limits: { rows?: number; buckets?: number } = {},
  ) {
    this.#tenantId = tenantId;
    this.#from = period.from.getTime();
    this.#limit = limits.rows ?? REPORT_TIMELINE_ROWS;
    this.#buckets = limits.buckets ?? REPORT_TIMELINE_BUCKETS;
    this.#width = Math.max(1, (period.to.getTime() - this.#from) / this.#buckets);
  }

  add(row: TimelineEntry): void {
    this.#seen++;
    if (this.#rows !== undefined) {
      this.#rows.push(row);
      if (this.#rows.length <= this.#limit) return;
      const kept = this.#rows;
      this.#rows = undefined;
      this.#slices = new Array(this.#buckets);
      for (const r of kept) this.#bucket(r);
      return;
    }
    this.#bucket(row);
  }

  #bucket(row: TimelineEntry): void {
    const start = Math.max(row.validFrom.getTime(), this.#from);
    const i = Math.min(this.#buckets - 1, Math.floor((start - this.#from) / this.#width));
    const b = this.#slices[i];
    if (b === undefined) this.#slices[i] = { start: new Date(start), row };
    else b.row = row;
  }

  /** Whether rows were merged (the timeline had more than the limit). */
  get thinned(): boolean {
    return this.#rows === undefined;
  }

  get seen(): number {
    return this.#seen;
  }

  /** The rows for the chart, oldest first, and the direction of each one's changes. */
  result(): { timeline: TimelineRow[]; directions: Map<string, string> } {
    const directions = new Map<string, string>();
    const timeline: TimelineRow[] = [];
    const push = (r: TimelineEntry, validFrom: Date) => {
      timeline.push({
        tenantId: this.#tenantId,
        entryId: r.entryId,
        validFrom,
        validTo: r.validTo,
        isDeleted: r.isDeleted,
        changeKind: r.changeKind,
        actorKind: r.actorKind,
        actorUserId: r.actorUserId,
        tickets: r.tickets,
        settings: r.settings,
      });
      for (const [field, direction] of Object.entries(r.directions))
        directions.set(`${r.entryId}|${field}`, direction);
    };
    if (this.#rows !== undefined) for (const r of this.#rows) push(r, r.validFrom);
    else for (const b of this.#slices) if (b !== undefined) push(b.row, b.start);
    return { timeline, directions };
  }
}
