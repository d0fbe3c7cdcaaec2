/**
 * Ctrl-C (SIGINT) or SIGTERM during a one-shot command: the first signal aborts the work in flight
 * (each run rolls back its transaction and closes its ledger row as failed, ABORTED, at once), so
 * that the command can say what was kept and what was rolled back; a second signal ends the
 * process at once, as a signal would without this.
 */
export interface Interrupt {
  /** Aborted by the first signal. */
  readonly signal: AbortSignal;
  /** The signal received, if any. */
  readonly received: () => NodeJS.Signals | undefined;
  /** Removes the handlers (the default behaviour is back). */
  readonly dispose: () => void;
}

export function onInterrupt(): Interrupt {
  const controller = new AbortController();
  let received: NodeJS.Signals | undefined;
  let firstAt = 0;
  const handler = (signal: NodeJS.Signals): void => {
    // The same interruption delivered twice (process group and a forwarding parent) is one.
    if (received !== undefined && Date.now() - firstAt < 250) return;
    if (received !== undefined) {
      process.exit(signalExitCode(signal));
    }
    received = signal;
    firstAt = Date.now();
    process.stderr.write(
      `\n${signal}: stopping: the runs in flight roll back (a second ${signal} exits at once)\n`,
    );
    controller.abort();
  };
  process.on('SIGINT', handler);
  process.on('SIGTERM', handler);
  return {
    signal: controller.signal,
    received: () => received,
    dispose: () => {
      process.off('SIGINT', handler);
      process.off('SIGTERM', handler);
    },
  };
}

/** The exit code of a command stopped by `signal`: 128 + its number, as a shell reports it. */
export function signalExitCode(signal: NodeJS.Signals): number {
  return signal === 'SIGINT' ? 130 : 143;
}
