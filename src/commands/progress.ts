/**
 * Progress of a long sync: a line rewritten in place on a TTY, a log line every 10 s otherwise.
 */
import type { Logger } from '../logger.js';
import type { SyncProgress } from '../sync/run.js';

export function progressReporter(
  tenant: string,
  logger: Logger,
  stream: NodeJS.WriteStream = process.stderr,
) {
  const started = Date.now();
  let lastDraw = 0;
  let drawn = false;
  const tty = stream.isTTY === true;
  const line = (p: SyncProgress) => {
    const secs = Math.max(0.001, (Date.now() - started) / 1000);
    return `${tenant}: ${p.pages.toLocaleString('en')} pages, ${p.entries.toLocaleString('en')} entries fetched, ${p.inserted.toLocaleString('en')} new, ${Math.round(p.entries / secs).toLocaleString('en')}/s`;
  };
  return {
    update(p: SyncProgress) {
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
