/**
 * What `govtrail verify` is asked (VerifyOptions, the trusted anchors) and what it answers: the
 * kinds of tamper finding and the result (verify.ts does the checking).
 */
import type { Ranks } from '../../core/diff.js';

/** A trusted anchor: what the store must reproduce at `entries` rows of the tenant. */
export interface AnchorHead {
  /** The statement file, to name it in findings. */
  readonly file: string;
  readonly entries: number;
  readonly anchoredAt: string;
  /** Head entry id and row_hash (hex); null for an empty chain. */
  readonly head: { readonly entryId: string; readonly rowHash: string } | null;
}

export type TamperKind =
  | 'hash_mismatch'
  | 'missing_predecessor'
  | 'annotation_mismatch'
  | 'snapshot_mismatch'
  | 'run_count_mismatch'
  /** content_sha256 (0004) does not match raw: reconcile would report a rewrite that is not one. */
  | 'content_hash_mismatch'
  /** A number of raw is stored in a text govtrail never writes for its value (a respelled number). */
  | 'number_text_mismatch'
  /** A typed column of history_entry or settings_snapshot does not say what raw says. */
  | 'column_mismatch'
  /** A field_change row is not what the diff of the stored snapshots gives (or is missing). */
  | 'field_change_mismatch'
  /** The store no longer reproduces an anchored head (edit, insertion, deletion, truncation). */
  | 'anchor_mismatch';

export interface TamperFinding {
  readonly tenantId: string;
  readonly kind: TamperKind;
  readonly seq: number | null;
  readonly entryId: string | null;
  readonly detail: string;
}

export interface VerifyResult {
  readonly tenants: number;
  readonly rowsVerified: number;
  /** field_change rows compared with the recomputed diff. */
  readonly fieldChangesVerified: number;
  /** Anchors the store was checked against. */
  readonly anchorsVerified: number;
  /** Per tenant, the first broken link of the chain; then child-row and ledger findings. */
  readonly findings: readonly TamperFinding[];
  /** Per tenant, how far the anchors reach: what verify could prove and what not. */
  readonly coverage: readonly TenantCoverage[];
}

/** How much of a tenant's stored chain its anchors cover. */
export interface TenantCoverage {
  readonly tenantId: string;
  /** Entries stored (rows of the chain). */
  readonly rows: number;
  /** Trusted anchors checked. */
  readonly anchors: number;
  /** Entries the newest anchor states (0 without anchors). */
  readonly anchoredEntries: number;
  /** anchored_at of the anchor with the most entries; null without anchors. */
  readonly newestAnchorAt: string | null;
}

export interface VerifyOptions {
  readonly tenantId?: string;
  readonly pageSize?: number;
  /** Child-row findings kept per tenant (the chain reports only its first break). */
  readonly maxFindingsPerTenant?: number;
  /**
   * Ranks of the rule pack, for the recomputed field_change directions (default: docs/design/alerts.md's).
   */
  readonly ranks?: Ranks;
  /** Trusted anchors per tenant, oldest first: the store must reproduce each. */
  readonly anchors?: ReadonlyMap<string, readonly AnchorHead[]>;
}
