/**
 * Rows produced by the normaliser, one interface per table (docs/design/data-model.md). camelCase here,
 * snake_case in SQL; the store maps one to the other.
 */
import type { WireSettings } from '../wire.js';

export interface EntryRow {
  readonly tenantId: string;
  readonly entryId: string;
  /** `metadata.createdAt` as received (keeps nanoseconds); null when absent. */
  readonly createdAtText: string | null;
  /** The same instant, normalised to UTC with nine fractional digits: sortable as text. */
  readonly createdAtKey: string;
  /** Millisecond precision only: use createdAtKey to compare. */
  readonly createdAt: Date;
  readonly changeKind: string | null;
  readonly actorKind: string | null;
  readonly actorUserId: string | null;
  readonly syslogEventId: string | null;
  readonly traceId: string | null;
  /** The whole entry exactly as received. */
  readonly raw: unknown;
  /**
   * sha256 of the entry's bytes as served, in hex (docs/design/integrity.md, "The served digest"); null
   * when it was not served as bytes (a page left to the parser, a fake source). Absent: null.
   */
  readonly servedDigest?: string | null;
}

export interface AnnotationRow {
  readonly tenantId: string;
  readonly entryId: string;
  readonly ordinal: number;
  readonly key: string | null;
  readonly kind: string | null;
  readonly rawValue: string | null;
  readonly displayValue: string | null;
  readonly displayLabel: string | null;
  readonly displayUrl: string | null;
}

export interface SnapshotRow {
  readonly tenantId: string;
  readonly entryId: string;
  readonly allowedClientTypes: string[] | null;
  readonly allowsAllClientTypes: boolean;
  readonly auditVerbosity: string | null;
  readonly autoDiscoveryEnabled: boolean | null;
  readonly defaultToolClassification: string | null;
  /** PostgreSQL interval literals such as `'3600 seconds'`; null when absent or unparseable. */
  readonly discoveryInterval: string | null;
  readonly inactivityCloseAfter: string | null;
  readonly inactivityHideAfter: string | null;
  readonly retentionDeleteAfter: string | null;
  readonly enabled: boolean | null;
  readonly preferCodeModeOverDirectTools: boolean | null;
  readonly requireToolApproval: boolean | null;
  readonly surfaceRequestableTools: boolean | null;
  readonly settingsCreatedAt: string | null;
  readonly settingsUpdatedAt: string | null;
  /** Every snapshot field this version does not map, by wire name. */
  readonly extraFields: Record<string, unknown>;
}

/** One entry ready to store. */
export interface NormalisedEntry {
  readonly entry: EntryRow;
  readonly annotations: readonly AnnotationRow[];
  /** Null when the entry's snapshot is null or absent. */
  readonly snapshot: SnapshotRow | null;
  /** The wire snapshot, for the diff (null when absent). */
  readonly snapshotWire: WireSettings | null;
  /** Things worth a warning that did not stop the entry from being stored. */
  readonly warnings: readonly string[];
}

export type NormaliseResult =
  | { readonly ok: true; readonly value: NormalisedEntry }
  | { readonly ok: false; readonly reason: string; readonly raw: unknown };
