/**
 * The mapping between the wire `snapshot` (AIGovernanceSettings) and settings_snapshot columns.
 * One table so that the normaliser, the diff and the views agree on names. Pure data.
 */

export type FieldKind = 'enumList' | 'enum' | 'boolean' | 'duration' | 'timestamp';

export interface SnapshotField {
  /** settings_snapshot column, also the `field` of field_change. */
  readonly column: string;
  /** Path in the wire snapshot. */
  readonly path: readonly [string] | readonly [string, string];
  readonly kind: FieldKind;
  /** Whether a change of this field is recorded in field_change (timestamps move with every write). */
  readonly diffed: boolean;
}

export const SNAPSHOT_FIELDS: readonly SnapshotField[] = [
  { column: 'allowed_client_types', path: ['allowedClientTypes'], kind: 'enumList', diffed: true },
  { column: 'audit_verbosity', path: ['auditVerbosity'], kind: 'enum', diffed: true },
  { column: 'auto_discovery_enabled', path: ['autoDiscoveryEnabled'], kind: 'boolean', diffed: true },
  { column: 'default_tool_classification', path: ['defaultToolClassification'], kind: 'enum', diffed: true },
  { column: 'discovery_interval', path: ['discoveryInterval'], kind: 'duration', diffed: true },
  {
    column: 'inactivity_close_after',
    path: ['defaultClientLifecycle', 'inactivityCloseAfter'],
    kind: 'duration',
    diffed: true,
  },
  {
    column: 'inactivity_hide_after',
    path: ['defaultClientLifecycle', 'inactivityHideAfter'],
    kind: 'duration',
    diffed: true,
  },
  {
    column: 'retention_delete_after',
    path: ['defaultClientLifecycle', 'retentionDeleteAfter'],
    kind: 'duration',
    diffed: true,
  },
  { column: 'enabled', path: ['enabled'], kind: 'boolean', diffed: true },
  {
    column: 'prefer_code_mode_over_direct_tools',
    path: ['preferCodeModeOverDirectTools'],
    kind: 'boolean',
    diffed: true,
  },
  { column: 'require_tool_approval', path: ['requireToolApproval'], kind: 'boolean', diffed: true },
  { column: 'surface_requestable_tools', path: ['surfaceRequestableTools'], kind: 'boolean', diffed: true },
  { column: 'settings_created_at', path: ['createdAt'], kind: 'timestamp', diffed: false },
  { column: 'settings_updated_at', path: ['updatedAt'], kind: 'timestamp', diffed: false },
];

/** Top-level snapshot keys that map to columns; every other key goes to extra_fields. */
export const MAPPED_TOP_LEVEL_KEYS: ReadonlySet<string> = new Set([...SNAPSHOT_FIELDS.map((f) => f.path[0])]);

/** Lifecycle keys that map to columns; any other key under defaultClientLifecycle goes to extra_fields as `defaultClientLifecycle.<key>`. */
export const MAPPED_LIFECYCLE_KEYS: ReadonlySet<string> = new Set(
  SNAPSHOT_FIELDS.filter((f) => f.path.length === 2).map((f) => f.path[1] as string),
);

/** Reads a field's wire value from a snapshot object (undefined when absent). */
export function readWireField(
  snapshot: Record<string, unknown> | null | undefined,
  field: SnapshotField,
): unknown {
  if (snapshot === null || snapshot === undefined || typeof snapshot !== 'object') return undefined;
  const first = snapshot[field.path[0]];
  if (field.path.length === 1) return first;
  if (first === null || first === undefined || typeof first !== 'object' || Array.isArray(first))
    return undefined;
  return (first as Record<string, unknown>)[field.path[1] as string];
}
