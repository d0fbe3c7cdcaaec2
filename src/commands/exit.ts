/** Thrown by a command to end with an exit code after it has printed what it had to say. */
export class ExitCode extends Error {
  constructor(readonly code: number) {
    super(`exit ${code}`);
  }
}
