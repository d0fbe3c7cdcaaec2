/**
 * Progress of a long sync: a line rewritten in place on a TTY, a log line every 10 s otherwise; for
 * several tenants at once (`fleetProgress`), also a line per finished tenant on a TTY.
 */
import type { Logger } from '../runtime/logger.js';
import type { RunProgress, RunSummary } from '../sync/run-types.js';

export function progressReporter(
  tenant: string,
  logger: Logger,
  stream: NodeJS.WriteStream = process.stderr,
) {
  const started = Date.now();
  let lastDraw = 0;
  let drawn = false;
  const tty = stream.isTTY === true;
  const line = (p: RunProgress) => {
    const secs = Math.max(0.001, (Date.now() - started) / 1000);
    return `${tenant}: ${p.pages.toLocaleString('en')} pages, ${p.entries.toLocaleString('en')} entries fetched, ${p.inserted.toLocaleString('en')} new, ${Math.round(p.entries / secs).toLocaleString('en')}/s`;
  };
  return {
    update(p: RunProgress) {
      const now = Date.now();
      if (tty) {
        if (now - lastDraw < 100) return;
        lastDraw = now;
        drawn = true;
        stream.write(`\r\x1b[2K${line(p)}`);
      } else if (now - lastDraw >= 10_000) {
        if (lastDraw !== 0 || now - started >= 10_000) logger.info({ tenant, ...p }, 'sync progress');
        if (lastDraw === 0) lastDraw = started;
        else lastDraw = now;
      }
    },
    done() {
      if (tty && drawn) stream.write('\r\x1b[2K');
    },
  };
}

/** One tenant's part of a fleet's progress. */
export interface TenantProgress {
  update(p: RunProgress): void;
  /** The run ended: on a TTY, one line saying how. */
  finished(summary: RunSummary): void;
}

/** Progress of a sync over several tenants run at once (`govtrail sync`). */
export interface FleetProgress {
  tenant(name: string): TenantProgress;
  /** Clears the line being rewritten, if any. */
  close(): void;
}

/**
 * On a TTY: one line per finished tenant (`[3/500] name: succeeded, 60 new, 0.1 s`), and below it
 * a line rewritten in place with the latest progress of a tenant in flight. Elsewhere nothing
 * beyond what `progressReporter` logs for a long run: piped output stays as it was.
 */
export function fleetProgress(
  total: number,
  logger: Logger,
  stream: NodeJS.WriteStream = process.stderr,
): FleetProgress {
  const tty = stream.isTTY === true;
  const width = String(total).length;
  let finished = 0;
  let running = 0;
  let lastDraw = 0;
  let drawn = false;
  const clear = () => {
    if (drawn) stream.write('\r\x1b[2K');
    drawn = false;
  };
  return {
    tenant(name) {
      if (!tty) {
        const log = progressReporter(name, logger, stream);
        return { update: log.update, finished: () => log.done() };
      }
      const started = Date.now();
      running++;
      return {
        update(p) {
          const now = Date.now();
          if (now - lastDraw < 100) return;
          lastDraw = now;
          drawn = true;
          const secs = Math.max(0.001, (now - started) / 1000);
          stream.write(
            `\r\x1b[2K[${finished}/${total} done, ${running} running] ${name}: ${p.pages.toLocaleString('en')} pages, ${p.entries.toLocaleString('en')} entries fetched, ${p.inserted.toLocaleString('en')} new, ${Math.round(p.entries / secs).toLocaleString('en')}/s`,
          );
        },
        finished(summary) {
          finished++;
          running--;
          clear();
          stream.write(`[${String(finished).padStart(width)}/${total}] ${finishedLine(name, summary)}\n`);
        },
      };
    },
    close: clear,
  };
}

/** How one tenant's run ended, in one line. */
export function finishedLine(name: string, s: RunSummary): string {
  const time = `${(s.durationMs / 1000).toFixed(1)} s`;
  if (s.status === 'failed')
    return `${name}: failed, ${s.error?.code ?? 'INTERNAL'}: ${s.error?.message ?? ''} (${time})`;
  if (s.status === 'skipped') return `${name}: skipped, another process is syncing it`;
  const backfill = s.isBackfill ? ' (backfill)' : '';
  return `${name}: succeeded${backfill}, ${s.counters.entriesInserted.toLocaleString('en')} new, ${s.alerts} alert(s), ${time}`;
}
