/**
 * Wire types of the tenant API, as docs/design/tenant-api.md describes them. Every
 * field is optional and may be null; unknown fields are kept (the live API already sends more than
 * docs/design/tenant-api.md lists), so each object type carries an index signature and nothing is stripped.
 *
 * They live here, beside the client rather than inside it, because the client (tenant-api/), the
 * normaliser, the diff, the rules and the store all read them and none of those should depend on
 * another for them. The sandbox keeps its own on purpose (it is the client's adversary).
 */

import type { ServedEntry } from './served-entry.js';

export interface WireAnnotation {
  key?: string | null;
  kind?: string | null;
  rawValue?: string | null;
  displayValue?: string | null;
  displayLabel?: string | null;
  displayUrl?: string | null;
  [field: string]: unknown;
}

export interface WireActor {
  kind?: string | null;
  userId?: string | null;
  [field: string]: unknown;
}

export interface WireMetadata {
  id?: string | null;
  createdAt?: string | null;
  changeKind?: string | null;
  actor?: WireActor | null;
  annotations?: WireAnnotation[] | null;
  syslogEventId?: string | null;
  traceId?: string | null;
  [field: string]: unknown;
}

export interface WireClientLifecycle {
  inactivityCloseAfter?: string | null;
  inactivityHideAfter?: string | null;
  retentionDeleteAfter?: string | null;
  [field: string]: unknown;
}

export interface WireSettings {
  allowedClientTypes?: string[] | null;
  auditVerbosity?: string | null;
  autoDiscoveryEnabled?: boolean | null;
  createdAt?: string | null;
  updatedAt?: string | null;
  defaultClientLifecycle?: WireClientLifecycle | null;
  defaultToolClassification?: string | null;
  discoveryInterval?: string | null;
  enabled?: boolean | null;
  preferCodeModeOverDirectTools?: boolean | null;
  requireToolApproval?: boolean | null;
  surfaceRequestableTools?: boolean | null;
  [field: string]: unknown;
}

export interface WireHistoryEntry {
  metadata?: WireMetadata | null;
  snapshot?: WireSettings | null;
  [field: string]: unknown;
}

/** One page of the history listing after validation: `list: null` or absent becomes []. */
export interface HistoryPage {
  /** Entries as received, newest first. Elements are not validated: the normaliser is tolerant. */
  readonly entries: readonly unknown[];
  /** Empty string at the end of the history. */
  readonly nextPageToken: string;
  /** 0-based index of the page within this listing. */
  readonly index: number;
  /**
   * The entries as served, in the order of `entries`, when the page's body was scanned
   * (served-entry.ts): their bytes and served digests; `entries` then parses only when read.
   */
  readonly served?: readonly ServedEntry[];
}

/**
 * Values docs/design/tenant-api.md lists for each enum; anything else is "unrecognised" (kept, and alerted
 * on).
 */
export const KNOWN_CHANGE_KINDS = [
  'CHANGE_KIND_UNSPECIFIED',
  'CHANGE_KIND_CREATE',
  'CHANGE_KIND_PUT',
  'CHANGE_KIND_HARD_DELETE',
] as const;
export const KNOWN_ACTOR_KINDS = [
  'ACTOR_KIND_UNSPECIFIED',
  'ACTOR_KIND_API',
  'ACTOR_KIND_SLACK',
  'ACTOR_KIND_MSTEAMS',
  'ACTOR_KIND_JIRA_CLOUD',
  'ACTOR_KIND_INTERNAL',
  'ACTOR_KIND_SUPPORT',
  'ACTOR_KIND_WORKFLOW',
] as const;
export const KNOWN_ANNOTATION_KINDS = [
  'ANNOTATION_KIND_UNSPECIFIED',
  'ANNOTATION_KIND_GENERIC',
  'ANNOTATION_KIND_TICKET',
  'ANNOTATION_KIND_REASON',
  'ANNOTATION_KIND_WORKFLOW',
  'ANNOTATION_KIND_BATCH',
  'ANNOTATION_KIND_CORRELATION',
  'ANNOTATION_KIND_AUTOMATION',
] as const;
export const KNOWN_CLIENT_TYPES = [
  'MCP_CLIENT_TYPE_UNSPECIFIED',
  'MCP_CLIENT_TYPE_PERSONAL',
  'MCP_CLIENT_TYPE_SHARED',
  'MCP_CLIENT_TYPE_SERVICE',
  'MCP_CLIENT_TYPE_EPHEMERAL',
] as const;
export const KNOWN_AUDIT_VERBOSITIES = [
  'AUDIT_VERBOSITY_UNSPECIFIED',
  'AUDIT_VERBOSITY_MINIMAL',
  'AUDIT_VERBOSITY_STANDARD',
  'AUDIT_VERBOSITY_FULL',
] as const;
export const KNOWN_TOOL_CLASSIFICATIONS = [
  'TOOL_CLASSIFICATION_UNSPECIFIED',
  'TOOL_CLASSIFICATION_READ',
  'TOOL_CLASSIFICATION_WRITE',
  'TOOL_CLASSIFICATION_DESTRUCTIVE',
  'TOOL_CLASSIFICATION_SENSITIVE',
  'TOOL_CLASSIFICATION_DANGEROUS',
] as const;
