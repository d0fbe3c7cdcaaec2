/**
 * Run coverage of a period: was the copy brought up to date at least every two schedule
 * intervals? Pure and streaming over the ledger's runs in start order.
 *
 * The copy is up to date when a run (sync or reconcile) succeeds, so the clock is the finish time
 * of successful runs. A gap is a stretch longer than two intervals between one success and the
 * next — starting at the last success before the period (or at the period's start when there was
 * none), and the stretch from the last success to the end of the period (or to now, when the period
 * has not ended yet). Failed, skipped and unfinished runs do not stop a gap; they are listed in it.
 */

export interface CoverageGap {
  /** The last success before the gap (or the period's start, when none preceded it). */
  readonly from: Date;
  /** The success that ended it, or the period's end (or now) when none did. */
  readonly to: Date;
  readonly seconds: number;
  /** Why it starts where it does and ends where it does. */
  readonly note: string;
}

export interface CoverageRun {
  readonly runId: number;
  readonly status: string;
  readonly finishedAt: Date | null;
}

export interface CoverageSummary {
  readonly intervalSeconds: number;
  /** Gaps are flagged above this many seconds (two intervals). */
  readonly gapThresholdSeconds: number;
  readonly runs: number;
  readonly succeeded: number;
  readonly failed: number;
  readonly skipped: number;
  readonly unfinished: number;
  readonly gaps: number;
  readonly longestGapSeconds: number;
  readonly lastSuccessAt: string | null;
  /** Where the coverage was measured up to: the period's end, or now when that is earlier. */
  readonly measuredUntil: string;
}

export class CoverageTracker {
  readonly #from: Date;
  readonly #until: Date;
  readonly #thresholdMs: number;
  readonly #intervalMs: number;
  #last: Date | null;
  #runs = 0;
  #succeeded = 0;
  #failed = 0;
  #skipped = 0;
  #unfinished = 0;
  #gaps = 0;
  #longestMs = 0;

  /**
   * @param lastSuccessBefore finish time of the tenant's last successful run started before `from`
   * @param now the export's time: a period that has not ended is measured up to now
   */
  constructor(o: { from: Date; to: Date; now: Date; intervalMs: number; lastSuccessBefore: Date | null }) {
    this.#from = o.from;
    this.#until = new Date(Math.min(o.to.getTime(), o.now.getTime()));
    this.#intervalMs = o.intervalMs;
    this.#thresholdMs = 2 * o.intervalMs;
    this.#last = o.lastSuccessBefore;
  }

  /**
   * Takes the next run; returns the gap a success ends (to be listed before it) and, for a
   * success, the seconds since the previous one.
   */
  add(run: CoverageRun): { gap: CoverageGap | undefined; secondsSinceLastSuccess: number | null } {
    this.#runs++;
    if (run.status === 'failed') this.#failed++;
    else if (run.status === 'skipped') this.#skipped++;
    else if (run.status !== 'succeeded' || run.finishedAt === null) this.#unfinished++;
    if (run.status !== 'succeeded' || run.finishedAt === null)
      return { gap: undefined, secondsSinceLastSuccess: null };
    this.#succeeded++;
    const finished = run.finishedAt;
    const previous = this.#last;
    const start = previous ?? this.#from;
    let gap: CoverageGap | undefined;
    if (finished.getTime() - start.getTime() > this.#thresholdMs) {
      gap = this.#gap(
        start,
        finished,
        `${previous === null ? 'no successful run before the period; ' : ''}ended by run ${run.runId}`,
      );
    }
    if (previous === null || finished > previous) this.#last = finished;
    return {
      gap,
      secondsSinceLastSuccess: previous === null ? null : (finished.getTime() - previous.getTime()) / 1000,
    };
  }

  /** The gap from the last success to the end of the period (or now), if there is one. */
  finish(): CoverageGap | undefined {
    const start = this.#last ?? this.#from;
    if (this.#until.getTime() - start.getTime() <= this.#thresholdMs) return undefined;
    return this.#gap(
      start,
      this.#until,
      this.#last === null
        ? `no successful run at all, up to ${this.#until.toISOString()}`
        : `no successful run since, up to ${this.#until.toISOString()}`,
    );
  }

  summary(): CoverageSummary {
    return {
      intervalSeconds: this.#intervalMs / 1000,
      gapThresholdSeconds: this.#thresholdMs / 1000,
      runs: this.#runs,
      succeeded: this.#succeeded,
      failed: this.#failed,
      skipped: this.#skipped,
      unfinished: this.#unfinished,
      gaps: this.#gaps,
      longestGapSeconds: this.#longestMs / 1000,
      lastSuccessAt: this.#last?.toISOString() ?? null,
      measuredUntil: this.#until.toISOString(),
    };
  }

  #gap(from: Date, to: Date, note: string): CoverageGap {
    const ms = to.getTime() - from.getTime();
    this.#gaps++;
    this.#longestMs = Math.max(this.#longestMs, ms);
    return { from, to, seconds: ms / 1000, note };
  }
}
