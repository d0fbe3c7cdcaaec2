export interface Checkpoint {
  readonly entryId: string;
  readonly createdAt: Date;
  /** UTC, nine fractional digits. */
  readonly createdAtKey: string;
  readonly runId: number;
}
