/** The tenant and period the evidence pack's queries read (store/read/settings-timeline.ts and beside it). */
export interface PeriodFilter {
  readonly tenantId: string;
  /** First instant included. */
  readonly from: Date;
  /** First instant excluded. */
  readonly to: Date;
}
