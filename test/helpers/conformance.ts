/**
 * Conformance test helpers: a brute-force judge written apart from src/core/conformance/judge.ts
 * (it looks up the settings in force at every candidate instant on its own, then merges equal
 * neighbours), and small builders of histories and baselines.
 */
import type { Baseline } from '../../src/core/conformance/baseline.js';
import { effectiveValue, meets, valueKey } from '../../src/core/conformance/expect.js';
import type { ControlPeriod, JudgedEntry, Status } from '../../src/core/conformance/judge.js';

/** A period as the brute force sees it: status and bounds only (openers are checked separately). */
export interface BrutePeriod {
  readonly controlId: string;
  readonly status: Exclude<Status, 'unknown'>;
  readonly fromKey: string;
  readonly toKey: string | null;
  readonly entryId: string | null;
}

/** The status of one control at instant `at`, found by scanning the whole history. */
export function bruteStatusAt(
  entries: readonly JudgedEntry[],
  baseline: Baseline,
  tenant: string,
  loadedAtKey: string,
  controlId: string,
  at: string,
): Status {
  let inForce: JudgedEntry | undefined;
  for (const e of entries) {
    if (e.key > at) continue;
    if (
      inForce === undefined ||
      e.key > inForce.key ||
      (e.key === inForce.key && e.entryId > inForce.entryId)
    ) {
      inForce = e;
    }
  }
  if (inForce === undefined) return 'unknown';
  if (inForce.snapshot === null) return 'deleted';
  const control = baseline.controls.find((c) => c.id === controlId);
  if (control === undefined) throw new Error(controlId);
  const v = effectiveValue(control.field, inForce.snapshot);
  if (meets(control.field, v, control.expect)) return 'pass';
  const accepted = baseline.exceptions.some(
    (x) =>
      x.control === controlId &&
      x.tenants.includes(tenant) &&
      (x.approvedAt ?? loadedAtKey) <= at &&
      at < x.expires &&
      valueKey(control.field, x.value) === valueKey(control.field, v),
  );
  return accepted ? 'excepted' : 'fail';
}

/** Brute-force periods: the status at every instant where anything could change, merged. */
export function brutePeriods(
  entries: readonly JudgedEntry[],
  baseline: Baseline,
  tenant: string,
  loadedAtKey: string,
): BrutePeriod[] {
  const instants = new Set<string>(entries.map((e) => e.key));
  for (const x of baseline.exceptions) {
    if (!x.tenants.includes(tenant)) continue;
    instants.add(x.approvedAt ?? loadedAtKey);
    instants.add(x.expires);
  }
  const sorted = [...instants].sort();
  const out: BrutePeriod[] = [];
  for (const c of baseline.controls) {
    let open: BrutePeriod | undefined;
    const mine: BrutePeriod[] = [];
    for (const at of sorted) {
      const s = bruteStatusAt(entries, baseline, tenant, loadedAtKey, c.id, at);
      if (s === 'unknown') continue;
      if (open !== undefined && open.status === s) continue;
      if (open !== undefined) mine[mine.length - 1] = { ...open, toKey: at };
      const last = lastEntryAt(entries, at);
      open = { controlId: c.id, status: s, fromKey: at, toKey: null, entryId: last?.entryId ?? null };
      mine.push(open);
    }
    out.push(...mine);
  }
  return out;
}

function lastEntryAt(entries: readonly JudgedEntry[], at: string): JudgedEntry | undefined {
  let found: JudgedEntry | undefined;
  for (const e of entries) if (e.key === at && (found === undefined || e.entryId > found.entryId)) found = e;
  return found;
}

/** The fields the brute force compares. */
export function shape(p: ControlPeriod | BrutePeriod): BrutePeriod {
  return { controlId: p.controlId, status: p.status, fromKey: p.fromKey, toKey: p.toKey, entryId: p.entryId };
}

/** A nanosecond key at `base` plus whole seconds and extra nanoseconds. */
export function keyAt(baseMs: number, seconds: number, nanos = 0): string {
  const d = new Date(baseMs + seconds * 1000);
  return `${d.toISOString().slice(0, 19)}.${String(nanos).padStart(9, '0')}Z`;
}

/** settings_snapshot rows for the snapshots of run `runId`, as the normaliser would map them (the fields used here). */
export const SNAPSHOT_ROWS_OF_RUN = `
  insert into govtrail.settings_snapshot
    (tenant_id, entry_id, allowed_client_types, allows_all_client_types, audit_verbosity, auto_discovery_enabled,
     default_tool_classification, retention_delete_after, require_tool_approval)
  select e.tenant_id, e.entry_id,
         case when e.raw->'snapshot' ? 'allowedClientTypes'
              then array(select jsonb_array_elements_text(e.raw->'snapshot'->'allowedClientTypes')) end,
         coalesce(jsonb_array_length(e.raw->'snapshot'->'allowedClientTypes'), 0) = 0,
         e.raw->'snapshot'->>'auditVerbosity',
         (e.raw->'snapshot'->>'autoDiscoveryEnabled')::boolean,
         e.raw->'snapshot'->>'defaultToolClassification',
         rtrim(e.raw->'snapshot'->'defaultClientLifecycle'->>'retentionDeleteAfter', 's')::numeric * interval '1 second',
         (e.raw->'snapshot'->>'requireToolApproval')::boolean
  from govtrail.history_entry e
  where e.run_id = $1 and jsonb_typeof(e.raw->'snapshot') = 'object'`;
