/**
 * The deliberate bugs of `npm run mutate:invariants` (scripts/mutate-invariants.ts): each breaks one
 * invariant of the design — cited by its name (S1–S13 of docs/design/sync.md) or by its document and
 * section (`docs/design/scaling.md "The tenant registry"`), never by a tracker's issue number — and
 * names the tests that must catch it. Kept
 * apart from the runner so that a unit test can check, on every CI run, that each one still applies to the
 * source.
 *
 * A new invariant or rule comes with a line here (docs/testing.md).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

export interface Patch {
  readonly file: string;
  readonly find: string;
  readonly replace: string;
  /** Replace every occurrence (default: the text must occur exactly once). */
  readonly all?: boolean;
}

export interface Mutation {
  readonly name: string;
  /** The invariant it breaks, in words. */
  readonly breaks: string;
  readonly patches: readonly Patch[];
  /** Test files that guard it (run against the mutant). */
  readonly tests: readonly string[];
}

const SYNC = 'test/integration/sync-invariants.test.ts';
const RECONCILE = 'test/integration/reconcile.test.ts';
const REGISTRY = 'test/integration/tenant-registry.test.ts';
const CONFORMANCE_JUDGE = 'test/property/conformance-judge.test.ts';
const CONFORMANCE_STORE = 'test/integration/conformance-store.test.ts';
const CONFORMANCE_SYNC = 'test/integration/conformance-sync.test.ts';
const CONFORMANCE_CLI = 'test/integration/conformance-cli.test.ts';
const READER_SCOPE = 'test/integration/reader-scope.test.ts';
const CHILD_ROWS = 'test/integration/child-rows-have-entry.test.ts';
const SERVED_DIGEST = 'test/integration/served-digest.test.ts';

export const MUTATIONS: readonly Mutation[] = [
  {
    name: 'lookback-ignored',
    breaks: 'S5: the stop rule stops at the checkpoint itself, not checkpoint − lookback',
    patches: [
      {
        file: 'src/core/stop-rule.ts',
        find: 'const threshold = lookbackBound(checkpoint, lookbackMs);',
        replace: 'const threshold = checkpoint.createdAtKey;',
      },
    ],
    tests: [SYNC],
  },
  {
    name: 'checkpoint-last-seen',
    breaks: 'S6 step 6: the checkpoint is the last entry stored, not the newest by (created_at, entry_id)',
    patches: [
      {
        file: 'src/store/read/stored-entries.ts',
        find: `    .orderBy('created_at', 'desc')
    .orderBy('entry_id', 'desc')`,
        replace: `    .orderBy('seq', 'desc')`,
      },
    ],
    tests: [SYNC],
  },
  {
    name: 'duplicates-kept',
    breaks: 'S2: an entry served twice in one batch is not removed before COPY',
    patches: [
      {
        file: 'src/sync/served.ts',
        find: 'if (original === undefined) {',
        replace: 'if (original === undefined || first.size >= 0) {',
      },
      {
        file: 'src/sync/served.ts',
        find: 'first.set(id, e);',
        // biome-ignore lint/suspicious/noTemplateCurlyInString: source text to patch, not a template
        replace: 'first.set(first.has(id) ? `${id}#${first.size}` : id, e);',
      },
    ],
    tests: [SYNC],
  },
  {
    name: 'no-advisory-lock',
    breaks: 'S8: the tenant lock is not taken; two runs of one tenant overlap',
    patches: [
      {
        file: 'sql/0041_served_digest.sql',
        find: 'locked := pg_try_advisory_lock(p_lock_key);',
        replace: 'locked := pg_try_advisory_lock(p_lock_key) or true;',
      },
    ],
    tests: [SYNC, RECONCILE],
  },
  {
    name: 'checkpoint-outside-transaction',
    breaks: 'S3: the checkpoint is written on another connection, outside the data transaction',
    patches: [
      {
        file: 'src/sync/execute-run.ts',
        find: 'const checkpointAfter = (await advanceCheckpoint(trx, tenantId, runId)) ?? checkpointBefore;',
        replace:
          'const checkpointAfter = (await advanceCheckpoint(trx, tenantId, runId, options.database.db)) ?? checkpointBefore;',
      },
      {
        file: 'src/sync/execute-run.ts',
        find: 'async function advanceCheckpoint(trx: Session, tenantId: string, runId: number): Promise<string | undefined> {',
        replace:
          'async function advanceCheckpoint(trx: Session, tenantId: string, runId: number, out: Session = trx): Promise<string | undefined> {',
      },
      {
        file: 'src/sync/execute-run.ts',
        find: 'await writeCheckpoint(trx, tenantId, {',
        replace: 'await writeCheckpoint(out, tenantId, {',
      },
    ],
    tests: [SYNC],
  },
  {
    name: 'alerts-after-commit',
    breaks:
      'S3 / outbox: field changes and alerts are written after the data commits, in a transaction of their own',
    patches: [
      {
        file: 'src/sync/execute-run.ts',
        find: '  const after = await changeStep(trx, options, run, writer, tracker, logger);',
        replace: `  run.afterCommit = (db: Session) => changeStep(db, options, run, writer, tracker, logger);
  const after = { alerts: 0, fieldChanges: 0 };`,
      },
      {
        file: 'src/sync/close-failed-run.ts',
        find: 'export interface RunState {',
        replace: `export interface RunState {
  afterCommit?: (db: Session) => Promise<{ alerts: number; fieldChanges: number }>;`,
      },
      {
        file: 'src/sync/execute-run.ts',
        find: `      logger.info(
        { ...run.counters, stopReason: result.stopReason, alerts: result.alerts, ms: Date.now() - started },`,
        replace: `      const deferred = run.afterCommit;
      if (deferred !== undefined) await session.transaction().execute((t) => deferred(t));
      logger.info(
        { ...run.counters, stopReason: result.stopReason, alerts: result.alerts, ms: Date.now() - started },`,
      },
    ],
    tests: [SYNC],
  },
  {
    name: 'repeated-token-undetected',
    breaks: 'S7: a page token already used is followed again',
    patches: [
      {
        file: 'src/source/pager.ts',
        find: "if (next !== '' && used.has(next)) {",
        replace: "if (next !== '' && used.has(next) && index < 0) {",
      },
    ],
    tests: [SYNC],
  },
  {
    name: '401-not-refreshed',
    breaks: 'docs/design/tenant-api.md "Authentication": a 401 does not fetch a new token and retry once',
    patches: [
      {
        file: 'src/source/client.ts',
        find: 'if (first.response.status !== 401) return first.response;',
        replace: 'if (first.response.status !== 401 || first.token !== undefined) return first.response;',
      },
    ],
    tests: [SYNC, 'test/integration/source-retries.test.ts'],
  },
  {
    name: 'delete-recreate-blind',
    breaks: 'docs/design/integrity.md: a CREATE after a HARD_DELETE is diffed against nothing',
    patches: [
      {
        file: 'src/core/diff.ts',
        find: `export function isDiffBase(snapshot: unknown): boolean {
  return typeof snapshot === 'object' && snapshot !== null;`,
        replace: `export function isDiffBase(snapshot: unknown, changeKind?: string | null): boolean {
  return (typeof snapshot === 'object' && snapshot !== null) || changeKind === 'CHANGE_KIND_HARD_DELETE';`,
      },
      {
        file: 'src/sync/backfill-walk.ts',
        find: 'isDiffBase(snapshot);',
        replace: 'isDiffBase(snapshot, n.entry.changeKind);',
      },
      {
        file: 'src/sync/change-step.ts',
        find: 'isDiffBase(base.snapshot)',
        replace: 'isDiffBase(base.snapshot, base.changeKind)',
        all: true,
      },
      {
        file: 'src/sync/change-step.ts',
        find: 'isDiffBase(e.snapshot)',
        replace: 'isDiffBase(e.snapshot, e.changeKind)',
      },
    ],
    tests: ['test/integration/sync-changes-delete-recreate.test.ts'],
  },
  {
    name: 'backfill-walk-ends-before-window',
    breaks:
      "S9: the backfill walk finishes an entry before the history its burst rule looks back on has arrived, so the first run's digest counts differ from the stored walk's",
    patches: [
      {
        file: 'src/sync/backfill-walk.ts',
        find: 'this.lookBackMs = Math.min(WALK_WINDOW_MS, longestWindowSeconds(pack) * 1000);',
        replace: 'this.lookBackMs = 0;',
      },
    ],
    tests: ['test/integration/sync-changes-backfill-walk.test.ts', 'test/unit/backfill-walk.test.ts'],
  },
  {
    name: 'reserved-content-not-compared',
    breaks: 'S12: a re-served stored entry is taken as matching without comparing its content hash',
    patches: [
      {
        file: 'src/sync/classify-served.ts',
        find: 'if (!same) {',
        replace: 'if (!same && held.contentHash.length === 0) {',
      },
    ],
    tests: [RECONCILE],
  },
  {
    name: 'backdated-taken-as-new',
    breaks:
      'docs/design/integrity.md: a served-not-stored entry behind checkpoint − lookback is stored without a finding',
    patches: [
      {
        file: 'src/sync/entry-writer.ts',
        find: 'fresh.filter((e) => e.entry.createdAtKey < before)',
        replace: 'fresh.filter((e) => e.entry.createdAtKey < before && before === "")',
      },
    ],
    tests: [RECONCILE, 'test/integration/found-by-any-run.test.ts'],
  },
  {
    name: 'hole-taken-as-expired',
    breaks:
      'docs/design/integrity.md: a stored entry missing from the middle of the history is filed as expired (no alert)',
    patches: [
      {
        file: 'src/store/write/served-ids.ts',
        // biome-ignore lint/suspicious/noTemplateCurlyInString: source text to patch, not a template
        find: 'coalesce(e.created_at < ${oldestServedKey ?? null}::timestamptz, false)',
        // biome-ignore lint/suspicious/noTemplateCurlyInString: source text to patch, not a template
        replace: 'coalesce(e.created_at < ${oldestServedKey ?? null}::timestamptz or true, false)',
      },
    ],
    tests: [RECONCILE],
  },
  {
    name: 'delivery-id-per-process',
    breaks:
      'docs/design/alerts.md, at least once: a delivery repeated after the sender was killed between send and record carries a new id, so the receiver cannot drop it',
    patches: [
      {
        file: 'src/alerts/deliver.ts',
        // biome-ignore lint/suspicious/noTemplateCurlyInString: the patch is source text holding a template
        find: 'update(`${alert.dedupeKey}\\u0000${sink}`)',
        // biome-ignore lint/suspicious/noTemplateCurlyInString: the patch is source text holding a template
        replace: 'update(`${alert.dedupeKey}\\u0000${sink}${process.pid}`)',
      },
    ],
    tests: ['test/integration/alerts-kill-delivery.test.ts'],
  },
  {
    name: 'retired-tenant-in-health',
    breaks:
      'docs/design/scaling.md "The tenant registry": a retired tenant stays in exporter_health and the dashboard tenant list',
    patches: [
      {
        file: 'sql/0007_tenant_registry.sql',
        find: "rt.status = 'retired');",
        replace: "rt.status = 'retired' and false);",
      },
      // 0010 rebuilds the view with the same rule: the view in force is its definition.
      {
        file: 'sql/0010_conflicting_ids.sql',
        find: "rt.status = 'retired');",
        replace: "rt.status = 'retired' and false);",
      },
    ],
    tests: [REGISTRY],
  },
  {
    name: 'inactive-tenant-synced',
    breaks:
      'docs/design/scaling.md "The tenant registry": a disabled or retired tenant is still scheduled and synced',
    patches: [
      {
        file: 'src/store/write/tenant-registry.ts',
        find: "const s = status.get(t.name) ?? 'active';",
        replace: "const s: TenantStatus = 'active';",
      },
    ],
    tests: [REGISTRY],
  },
  {
    name: 'registers-failed-first-run',
    breaks:
      'docs/design/scaling.md, tenant registry (Loading): sync registers a configured tenant before its first run succeeded, so a mistyped base URL leaves an active tenant',
    patches: [
      {
        file: 'src/app/select-tenants.ts',
        find: 'selectSchedulable(db, configured, { register: false })',
        replace: 'selectSchedulable(db, configured)',
      },
    ],
    tests: [REGISTRY],
  },
  {
    name: 'interrupted-sync-left-running',
    breaks:
      'docs/design/sync.md step 2 (Close orphans): Ctrl-C during govtrail sync does not abort its runs, which finish (or stay running) instead of rolling back and closing as ABORTED',
    patches: [
      {
        file: 'src/commands/sync.ts',
        find: `            onProgress,
            signal: interrupt.signal,`,
        replace: `            onProgress,`,
      },
    ],
    tests: ['test/integration/sync-interrupt.test.ts'],
  },
  {
    name: 'reload-reenables-tenant',
    breaks:
      'docs/design/scaling.md "The tenant registry": a configuration reload re-enables a tenant an operator disabled',
    patches: [
      {
        file: 'src/store/write/tenant-registry.ts',
        find: `          lookback: lookbackInterval(t.lookbackMs),
        })`,
        replace: `          lookback: lookbackInterval(t.lookbackMs),
          status: 'active',
        })`,
      },
    ],
    tests: [REGISTRY],
  },
  {
    name: 'secret-in-registry',
    breaks: 'docs/design/scaling.md "The tenant registry": a client secret is written into govtrail.tenant',
    patches: [
      {
        file: 'src/store/write/tenant-registry.ts',
        find: `          client_id: t.clientId,
          page_size: t.pageSize,
          lookback: lookbackInterval(t.lookbackMs),
          last_loaded_at`,
        replace: `          client_id: t.clientSecret,
          page_size: t.pageSize,
          lookback: lookbackInterval(t.lookbackMs),
          last_loaded_at`,
      },
    ],
    tests: [REGISTRY],
  },
  {
    name: 'retired-tenant-enabled-without-force',
    breaks:
      'docs/design/scaling.md "The tenant registry": govtrail tenants enable brings a retired tenant back without --force',
    patches: [
      {
        file: 'src/store/write/tenant-registry.ts',
        find: "if (from === 'retired' && options.force !== true)",
        replace: 'if (false)',
      },
    ],
    tests: [REGISTRY],
  },
  {
    name: 'anchor-truncation-ignored',
    breaks:
      'docs/design/integrity.md, anchors: verify with anchors does not notice that the newest anchored entries were deleted',
    patches: [
      {
        file: 'src/store/verify/verify.ts',
        find: '  for (const a of pendingAnchors)\n    checkAnchor(',
        replace: '  for (const a of pendingAnchors.slice(pendingAnchors.length))\n    checkAnchor(',
      },
    ],
    tests: ['test/integration/tamper-anchors.test.ts'],
  },
  {
    name: 'anchor-head-not-compared',
    breaks:
      'docs/design/integrity.md, anchors: verify with anchors accepts a chain recomputed after an edit (the anchored head hash is not compared)',
    patches: [
      {
        file: 'src/store/verify/verify.ts',
        find: "if (at.recomputed.toString('hex') !== anchor.head.rowHash)",
        replace: "if (at.recomputed.toString('hex') !== anchor.head.rowHash && at.entryId === '')",
      },
    ],
    tests: ['test/integration/tamper-anchors.test.ts'],
  },
  {
    name: 'anchor-signature-unchecked',
    breaks: 'docs/design/integrity.md, anchors: verify trusts an altered anchor or one signed by another key',
    patches: [
      {
        file: 'src/outputs/anchor/check.ts',
        find: '  if (!verdict.ok) {',
        replace: "  if (!verdict.ok && jws === '') {",
      },
    ],
    tests: ['test/integration/tamper-anchors.test.ts'],
  },
  {
    name: 'typed-columns-unchecked',
    breaks: 'docs/design/integrity.md: verify does not compare the typed columns of history_entry with raw',
    patches: [
      {
        file: 'src/store/verify/verify.ts',
        find: '    ...(await findEntryColumnMismatches(db, tenantId, normalised)),',
        replace: '    ...(await findEntryColumnMismatches(db, tenantId, [])),',
      },
    ],
    tests: ['test/integration/tamper-anchors.test.ts', 'test/integration/tamper-verify.test.ts'],
  },
  {
    name: 'snapshot-columns-unchecked',
    breaks: 'docs/design/integrity.md: verify does not compare the columns of settings_snapshot with raw',
    patches: [
      {
        file: 'src/store/verify/verify.ts',
        find: '      normalised.filter((n) => snapByEntry.has(n.entry.entryId)),',
        replace: '      normalised.filter((n) => snapByEntry.has(n.entry.entryId) && n.snapshot === null),',
      },
    ],
    tests: ['test/integration/tamper-anchors.test.ts'],
  },
  {
    name: 'field-change-direction-unchecked',
    breaks:
      'docs/design/integrity.md: verify does not compare field_change directions with a recomputed diff',
    patches: [
      {
        file: 'src/store/verify/field-changes.ts',
        find: 'if (g.old !== w.old || g.new !== w.new || g.direction !== w.direction)',
        replace: 'if (g.old !== w.old || g.new !== w.new)',
      },
    ],
    tests: ['test/integration/tamper-anchors.test.ts'],
  },
  {
    name: 'field-change-not-append-only',
    breaks:
      'docs/design/data-model.md: field_change accepts UPDATE (its append-only trigger fires on DELETE only)',
    patches: [
      {
        file: 'sql/0009_tamper_roles.sql',
        find: 'create trigger field_change_append_only before update or delete on govtrail.field_change',
        replace: 'create trigger field_change_append_only before delete on govtrail.field_change',
      },
    ],
    tests: ['test/integration/tamper-roles.test.ts'],
  },
  {
    name: 'child-row-without-entry-accepted',
    breaks:
      'docs/design/data-model.md "Child rows and their entry": the per-statement check finds a row without its entry and lets it in',
    patches: [
      {
        file: 'sql/0035_child_rows_checked_per_statement.sql',
        find: '  if found then',
        replace: '  if found and false then',
      },
    ],
    tests: [CHILD_ROWS],
  },
  {
    name: 'field-change-without-entry-unchecked',
    breaks:
      'docs/design/data-model.md "Child rows and their entry": field_change rows are inserted without the check (its trigger fires on UPDATE only)',
    patches: [
      {
        file: 'sql/0035_child_rows_checked_per_statement.sql',
        find: 'create trigger field_change_has_entry after insert on govtrail.field_change',
        replace: 'create trigger field_change_has_entry after update on govtrail.field_change',
      },
    ],
    tests: [CHILD_ROWS],
  },
  {
    name: 'field-change-delete-unguarded',
    breaks:
      'docs/design/data-model.md: field_change rows may be deleted outside the recompute of a late arrival',
    patches: [
      {
        file: 'sql/0009_tamper_roles.sql',
        find: "  if tg_op = 'DELETE' and exists (",
        replace: "  if tg_op = 'DELETE' or exists (",
      },
    ],
    tests: ['test/integration/tamper-roles.test.ts'],
  },
  {
    name: 'writer-migrates-at-start',
    breaks:
      'docs/design/integrity.md "The layers" (the writer role): start-up runs DDL although the schema is up to date, so the writer role cannot start',
    patches: [
      {
        file: 'src/store/migrate.ts',
        find: '      if (upToDate !== undefined) return upToDate;',
        replace: '      if (upToDate !== undefined && upToDate.current < 0) return upToDate;',
      },
    ],
    tests: ['test/integration/tamper-roles.test.ts'],
  },
  {
    name: 'worker-anchor-skipped',
    breaks: 'docs/design/integrity.md, anchors: the worker writes no anchor after a run that stored entries',
    patches: [
      {
        file: 'src/outputs/anchor/after-run.ts',
        find: 'summary.counters.entriesInserted === 0) return;',
        replace: 'summary.counters.entriesInserted >= 0) return;',
      },
    ],
    tests: ['test/integration/tamper-anchors.test.ts'],
  },
  {
    name: 'backdated-only-by-reconcile',
    breaks:
      'S12: a sync stores an entry dated behind checkpoint − lookback (read on a page it fetched anyway) without recording it as backdated',
    patches: [
      {
        file: 'src/sync/execute-run.ts',
        find: 'checkpoint === undefined ? undefined : lookbackBound(checkpoint, options.lookbackMs),',
        replace:
          "run.kind !== 'reconcile' || checkpoint === undefined ? undefined : lookbackBound(checkpoint, options.lookbackMs),",
      },
    ],
    tests: ['test/integration/found-by-any-run.test.ts'],
  },
  {
    name: 'conflicting-version-dropped',
    breaks: 'S12: a second content served under one id in a listing is dropped as a duplicate',
    patches: [
      {
        file: 'src/sync/served.ts',
        find: 'if (seen.has(hex)) continue;',
        replace: 'if (seen.has(hex) || hex.length > 0) continue;',
      },
    ],
    tests: ['test/integration/found-by-any-run.test.ts'],
  },
  {
    name: 'conflicting-across-batches-as-rewrite',
    breaks:
      'S12: an id served twice in one listing, its copies in different write batches (or beside the stored version), is filed as changed_at_source, not conflicting_ids',
    patches: [
      {
        file: 'src/sync/classify-served.ts',
        find: 'if (held.runId === runId || heldServed) conflict(',
        replace: 'if (held.runId === -1) conflict(',
      },
    ],
    tests: ['test/integration/found-by-any-run.test.ts'],
  },
  {
    name: 'pipelined-lookup-misses-previous-batch',
    breaks:
      'S12 / S5: the writer looks a batch up before the previous batch is written; without that batch in memory a copy served one batch later is inserted twice (the run fails) or its other version goes unrecorded',
    patches: [
      {
        file: 'src/sync/entry-writer.ts',
        find: 'const written = before?.fresh.get(id);',
        replace: 'const written = undefined as NormalisedEntry | undefined;',
      },
    ],
    tests: ['test/integration/found-by-any-run.test.ts'],
  },
  {
    name: 'early-batch-missing-from-next-lookup',
    breaks:
      'S12 / S5: a backfill batch encoded as its pages came keeps only the content hashes of its entries; without them the next batch, looked up before it is written, inserts a copy served one batch later twice (the run fails) or leaves its other version unrecorded',
    patches: [
      {
        file: 'src/sync/entry-writer.ts',
        find: 'const early = before?.sealed.early?.hashes.get(id);',
        replace: 'const early = undefined as Buffer | undefined;',
      },
    ],
    tests: ['test/integration/found-by-any-run.test.ts'],
  },
  {
    name: 'backfill-filter-rules-out-stored-id',
    breaks:
      'S12 / S5: a backfill asks the database only about ids its filter cannot rule out; a filter that rules out an id the run stored two batches earlier lets its copy be inserted twice (the run fails) or its other version go unrecorded',
    patches: [
      {
        file: 'src/sync/entry-writer.ts',
        find: 'ids.filter((id) => filter.mightHold(id))',
        replace: "ids.filter((id) => filter.mightHold(id + '?'))",
      },
    ],
    tests: ['test/integration/found-by-any-run.test.ts'],
  },
  {
    name: 'json-escaped-key-misread',
    breaks:
      "S6: JSON from the tenant or read back from jsonb goes through V8's JSON.parse as it is, whose escaped keys can come back as `\\` after an earlier object had such a key (nodejs/node#63785): entries stored, hashed and compared under keys they never had",
    patches: [
      {
        file: 'src/core/json-text.ts',
        find: 'return hasEscapedKey(text) ? parseEscapedKeys(text) : JSON.parse(text);',
        replace: 'return JSON.parse(text);',
      },
    ],
    tests: [
      'test/unit/json-text.test.ts',
      'test/property/canonical.test.ts',
      'test/property/json-text-differential.test.ts',
    ],
  },
  {
    name: 'conflicting-ids-agree',
    breaks: 'docs/design/integrity.md: reconcile exits 0 while the source serves one id with two contents',
    patches: [
      {
        file: 'src/commands/format-reconcile.ts',
        find: '+ i.entriesBackdated + i.entriesConflicting === 0',
        replace: '+ i.entriesBackdated === 0',
      },
    ],
    tests: ['test/integration/found-by-any-run.test.ts'],
  },
  {
    name: 'secret-scrubbed-raw-only',
    breaks:
      'docs/design/style.md "Structured, safe logs": only the exact secret is scrubbed, so its form-encoded echo (%2B, %2F, %3D) leaks',
    patches: [
      {
        file: 'src/core/redact.ts',
        find: 'return [...out].filter((f) => f.length >= MIN_SECRET_LENGTH);',
        replace: 'return [value];',
      },
    ],
    tests: ['test/unit/redact.test.ts', 'test/integration/security-secrets.test.ts'],
  },
  {
    name: 'secret-cut-before-scrub',
    breaks:
      'docs/design/style.md "Structured, safe logs": text is cut before it is scrubbed, so a secret straddling the cut leaks its head',
    patches: [
      {
        file: 'src/core/redact.ts',
        find: `  const clean = redact(text);
  return clean.length > limit`,
        replace: `  const clean = redact(text.length > limit ? text.slice(0, limit) : text);
  return text.length > limit`,
      },
    ],
    tests: ['test/unit/redact.test.ts', 'test/integration/security-secrets.test.ts'],
  },
  {
    name: 'sink-url-parts-not-registered',
    breaks:
      'docs/design/style.md "Structured, safe logs": only the whole sink URL is registered, so an echoed path or sig= leaks',
    patches: [
      {
        file: 'src/core/redact.ts',
        find: 'for (const part of urlSecretParts(value.trim()))',
        replace: 'for (const part of [] as string[])',
      },
    ],
    tests: ['test/unit/redact.test.ts', 'test/integration/security-sinks.test.ts'],
  },
  {
    name: 'deep-entry-not-rejected',
    breaks: 'S6 tolerance: an entry nested thousands of levels deep overflows the stack and fails every run',
    patches: [
      {
        file: 'src/sync/entry-writer.ts',
        find: 'if (e.nestsDeeperThan(MAX_ENTRY_DEPTH)) {',
        replace: 'if (e.nestsDeeperThan(Number.POSITIVE_INFINITY)) {',
      },
    ],
    tests: ['test/integration/security-input.test.ts'],
  },
  {
    name: 'sink-answer-cut-keeps-secret-head',
    breaks:
      'docs/design/alert-destinations.md "The common rule: accepted is not delivered": a sink answer cut at its byte limit keeps the head of an echoed secret (Splunk 11111111-)',
    patches: [
      {
        file: 'src/alerts/sinks/http-post.ts',
        find: 'const clean = size >= BODY_BYTES ? redactCut(text) : redact(text);',
        replace: 'const clean = size >= BODY_BYTES ? redact(text.slice(0, BODY_BYTES)) : redact(text);',
      },
    ],
    tests: ['test/integration/security-sinks.test.ts'],
  },
  {
    name: 'body-timeout-gap-only',
    breaks:
      'S13: the body timeout bounds only the gap between chunks, so a trickling upstream keeps the run open',
    patches: [
      {
        file: 'src/source/http.ts',
        find: '      http.bodyTimeoutMs,\n    );\n    try {',
        replace: '      2 ** 31 - 1,\n    );\n    try {',
      },
    ],
    tests: ['test/integration/security-input.test.ts'],
  },
  {
    name: 'body-size-unbounded',
    breaks:
      'S13: a 2xx body larger than GOVTRAIL_HTTP_MAX_BODY is buffered whole instead of failing with BAD_RESPONSE',
    patches: [
      {
        file: 'src/source/http.ts',
        find: 'http.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES,',
        replace: 'Number.MAX_SAFE_INTEGER,',
      },
    ],
    tests: ['test/integration/security-input.test.ts'],
  },
  {
    name: 'terminal-table-raw',
    breaks:
      'docs/design/style.md "Structured, safe logs": a table cell prints an ESC sequence or a bidi override from the source raw',
    patches: [
      {
        file: 'src/commands/table.ts',
        find: "const clean = (s: string) => terminalLine(s.replace(/[\\r\\n\\t]+/g, ' '));",
        replace: "const clean = (s: string) => s.replace(/[\\r\\n\\t]+/g, ' ');",
      },
    ],
    tests: ['test/integration/security-terminal.test.ts'],
  },
  {
    name: 'syslog-sd-raw-line-feed',
    breaks:
      'docs/design/alert-destinations.md "Syslog (RFC 5424) for SIEMs": a line feed from the source goes raw into syslog structured data',
    patches: [
      {
        file: 'src/alerts/sinks/syslog/sink.ts',
        find: '.replace(SYSLOG_UNSAFE, unicodeEscape);\n}\n\n/**\n * The MSG part',
        replace: ';\n}\n\n/**\n * The MSG part',
      },
    ],
    tests: ['test/integration/security-terminal.test.ts'],
  },
  {
    name: 'yaml-error-quotes-file',
    breaks:
      'docs/design/style.md "Structured, safe logs": a YAML parse error prints the neighbouring lines of the file, a sink password included',
    patches: [
      {
        file: 'src/config/config-file.ts',
        // biome-ignore lint/suspicious/noTemplateCurlyInString: the patch is source text holding a template
        find: '${describeYamlError(err, text)}',
        // biome-ignore lint/suspicious/noTemplateCurlyInString: the patch is source text holding a template
        replace: '${(err as Error).message}',
      },
      {
        file: 'src/config/config-file.ts',
        find: 'parseYaml(text, { prettyErrors: false })',
        replace: 'parseYaml(text)',
      },
    ],
    tests: ['test/integration/security-secrets.test.ts'],
  },
  {
    name: 'analyze-every-run',
    breaks:
      'docs/design/scaling.md "Onboarding costs the same however many are stored": every run that stored something ANALYZEs the store, so onboarding a fleet costs one ANALYZE of everything stored per tenant',
    patches: [
      {
        file: 'src/store/statistics.ts',
        find: '  if (change.estimatedRows <= 0) return true;\n',
        replace: '  return true;\n',
      },
    ],
    tests: ['test/integration/sync-statistics.test.ts'],
  },
  {
    name: 'analyze-own-changes-uncounted',
    breaks:
      'docs/design/scaling.md "Onboarding costs the same however many are stored": the run\'s own uncommitted changes are left out of the ANALYZE decision, so a backfill into an empty store gets no statistics',
    patches: [
      {
        file: 'src/store/statistics.ts',
        find: '             + pg_stat_get_xact_tuples_inserted(c.oid)\n',
        replace: '',
      },
    ],
    tests: ['test/integration/sync-statistics.test.ts'],
  },
  {
    name: 'analyze-tiny-backfill-skipped',
    breaks:
      'docs/design/scaling.md "Onboarding costs the same however many are stored": a backfill of fewer than 50 entries into never-analyzed tables leaves them without statistics',
    patches: [
      {
        file: 'src/store/statistics.ts',
        find: '  if (change.estimatedRows <= 0) return true;\n',
        replace: '',
      },
    ],
    tests: ['test/integration/sync-statistics.test.ts'],
  },
  {
    name: 'sync-cli-sequential',
    breaks:
      'docs/design/scaling.md "The job engine" (concurrency): `govtrail sync` runs its tenants one after another, not GOVTRAIL_WORKER_CONCURRENCY at once',
    patches: [
      {
        file: 'src/commands/sync.ts',
        find: 'concurrency: config.workerConcurrency,',
        replace: 'concurrency: 1,',
      },
    ],
    tests: ['test/integration/sync-cli-fleet.test.ts'],
  },
  {
    name: 'sync-sinks-left-open',
    breaks:
      'docs/design/product.md "Runtime": `sync` does not close the sinks, so a TCP syslog connection keeps the process alive after its result',
    patches: [{ file: 'src/commands/sync.ts', find: '    await alerting?.close();\n', replace: '' }],
    tests: ['test/integration/security-exit.test.ts'],
  },
  {
    name: 'demo-sandbox-left-open',
    breaks:
      'docs/design/product.md "Runtime": `demo` does not close its in-process sandbox when the database cannot be opened, so it never exits',
    patches: [
      {
        file: 'src/commands/demo.ts',
        find: 'const opened: Array<{ close(): Promise<void> }> = [sandbox];',
        replace: 'const opened: Array<{ close(): Promise<void> }> = [];',
      },
    ],
    tests: ['test/integration/security-exit.test.ts'],
  },
  {
    name: 'port-in-use-stack-trace',
    breaks:
      'docs/design/style.md "Errors with stable codes": a worker port in use ends with a stack trace and exit 1, not one line and exit 2',
    patches: [
      { file: 'src/worker/server.ts', find: "if (code === 'EADDRINUSE')", replace: 'if (code === 0)' },
    ],
    tests: ['test/integration/security-usage.test.ts'],
  },
  {
    name: 'data-dir-file-unchecked',
    breaks:
      'docs/design/style.md "Errors with stable codes": GOVTRAIL_DATA_DIR naming a file ends with a stack trace, not one line and exit 2',
    patches: [
      {
        file: 'src/app/context.ts',
        find: 'else checkDataDir(config.dataDir);',
        replace: '',
      },
    ],
    tests: ['test/integration/security-usage.test.ts'],
  },
  {
    name: 'rules-invalid-exit-1',
    breaks:
      'docs/design/style.md "Errors with stable codes": a bad rule file ends with exit 1, not the exit 2 of a configuration error',
    patches: [
      {
        file: 'src/core/errors.ts',
        find: "new Set(['CONFIG', 'USAGE', 'RULES_INVALID', 'BASELINE_INVALID'])",
        replace: "new Set(['CONFIG', 'USAGE', 'BASELINE_INVALID'])",
      },
    ],
    tests: ['test/integration/security-usage.test.ts'],
  },
  {
    name: 'limit-not-parsed',
    breaks:
      'docs/design/style.md "Errors with stable codes": `alerts list --limit abc` reaches the query (a SQL error) instead of exit 2',
    patches: [
      {
        file: 'src/commands/alerts.ts',
        find: '.default(50).argParser(positiveIntegerArg)',
        replace: '.default(50).argParser(Number)',
      },
    ],
    tests: ['test/integration/security-usage.test.ts'],
  },
  {
    name: 'alerts-list-unknown-tenant',
    breaks:
      'docs/design/product.md "Commands": `alerts list --tenant` of a tenant never stored says "no alerts" and exits 0',
    patches: [
      {
        file: 'src/commands/alerts.ts',
        find: 'if (opts.tenant !== undefined) await resolveTenant(database.db, opts.tenant);',
        replace: '',
      },
    ],
    tests: ['test/integration/security-usage.test.ts'],
  },
  {
    name: 'export-out-directory',
    breaks:
      'docs/design/style.md "Errors with stable codes": `export evidence --out` naming a directory ends with a stack trace, not exit 2',
    patches: [
      {
        file: 'src/commands/options.ts',
        find: 'if (existsSync(file) && statSync(file).isDirectory())',
        replace: 'if (false)',
      },
    ],
    tests: ['test/integration/security-usage.test.ts'],
  },
  {
    name: 'evidence-written-in-place',
    breaks:
      'docs/design/product.md "Commands": `export evidence` writes under its final name, so an interrupted export leaves a half file',
    patches: [
      {
        file: 'src/outputs/evidence/evidence.ts',
        // biome-ignore lint/suspicious/noTemplateCurlyInString: source text to patch, not a template
        find: 'const partial = `${options.out}.partial`;',
        replace: 'const partial = options.out;',
      },
      {
        file: 'src/outputs/evidence/evidence.ts',
        find: '      rmSync(partial, { force: true });\n',
        replace: '',
      },
      {
        file: 'src/outputs/evidence/evidence.ts',
        find: '      file.destroy();\n',
        replace: '      file.end();\n',
      },
    ],
    tests: ['test/integration/export-evidence.test.ts'],
  },
  {
    name: 'owner-removal-intent-not-recorded',
    breaks:
      'docs/design/product.md "The pipeline" (remediation): `owners delete` records nothing before the DELETE is sent, so a kill with it in flight leaves no row',
    patches: [
      {
        file: 'src/commands/owners.ts',
        find: "await recordOwnerRemoval(database.db, { ...base, outcome: 'sending', httpStatus: null, error: null });",
        replace: '',
      },
    ],
    tests: ['test/integration/owners-delete.test.ts'],
  },
  {
    name: 'unknown-config-key-silent',
    breaks:
      'docs/design/product.md "Configuration": an unknown top-level key of the YAML file (`shedule:`) is ignored without a warning',
    patches: [
      {
        file: 'src/config/warnings.ts',
        find: "if (key === 'tenants' || key === 'sinks' || key === 'groups' || known.has(fileKeyVariable(key)))",
        replace: 'if (true)',
      },
    ],
    tests: ['test/unit/config-warnings.test.ts'],
  },
  {
    name: 'file-value-blamed-on-variable',
    breaks:
      'docs/design/product.md "Configuration": a bad `schedule:` in the YAML file is reported as GOVTRAIL_SCHEDULE',
    patches: [
      {
        file: 'src/config/settings.ts',
        find: '    throw attributeToFile(err, processEnv, options);',
        replace: '    throw err;',
      },
    ],
    tests: ['test/unit/config-warnings.test.ts'],
  },
  {
    name: 'cron-step-unchecked',
    breaks: 'docs/design/product.md "Configuration": `*/70 * * * *` is accepted (and runs hourly)',
    patches: [
      {
        file: 'src/core/cron.ts',
        find: 'Number(step) > span',
        replace: 'Number(step) > 1000',
      },
    ],
    tests: ['test/unit/config-warnings.test.ts'],
  },
  {
    name: 'absent-client-types-unset',
    breaks:
      'docs/design/alerts.md "Directions and ranks": an absent allowedClientTypes (all client types allowed) is shown as "unset" by settings and the report',
    patches: [
      {
        file: 'src/core/format.ts',
        find: "return settings['allows_all_client_types'] === true ? [] : value;",
        replace: 'return value;',
      },
    ],
    tests: ['test/unit/client-types-shown.test.ts'],
  },
  {
    name: 'backfill-findings-hidden',
    breaks:
      'docs/design/alerts.md "The default pack" (the digest): a backfilled period looks alert-free: the report and the pack README do not list what the rules find in backfilled entries',
    patches: [
      {
        file: 'src/sync/backfill-findings.ts',
        find: '    if (backfillRuns.has(e.runId)) {',
        replace: '    if (backfillRuns.has(-1)) {',
      },
    ],
    tests: ['test/integration/report-render.test.ts', 'test/integration/evidence-pack.test.ts'],
  },
  {
    name: 'report-alerts-counts-only',
    breaks:
      'docs/design/product.md "Commands" (report): the report shows alerts as counts only, not the list the README promises',
    patches: [
      {
        file: 'src/outputs/report/html.ts',
        // biome-ignore lint/suspicious/noTemplateCurlyInString: source text to patch, not a template
        find: '${alertSection(data)}',
        replace: '',
      },
    ],
    tests: ['test/integration/report-render.test.ts'],
  },
  {
    name: 'report-to-newest-entry',
    breaks:
      'docs/design/product.md "Commands" (report): `report` without --to ends a day after the newest entry, not now as documented',
    patches: [
      {
        file: 'src/outputs/report/data.ts',
        find: 'const to = options.to ?? options.now;',
        replace: 'const to = options.to ?? new Date(options.now.getTime() - 86_400_000);',
      },
    ],
    tests: ['test/integration/report-render.test.ts'],
  },
  {
    name: 'slot-job-id-per-replica',
    breaks:
      'docs/design/scaling.md: a job id that is not derived from (kind, tenant, slot) alone lets every replica insert its own job, so a tenant runs once per replica in a slot',
    patches: [
      {
        file: 'src/worker/slots.ts',
        // biome-ignore lint/suspicious/noTemplateCurlyInString: source text to patch, not a template
        find: 'update(`govtrail:job:${kind}:${slot.toISOString()}:${tenant}`)',
        // biome-ignore lint/suspicious/noTemplateCurlyInString: source text to patch, not a template
        replace: 'update(`govtrail:job:${kind}:${slot.toISOString()}:${tenant}:${Math.random()}`)',
      },
    ],
    tests: ['test/integration/worker-replicas.test.ts', 'test/integration/worker-engine.test.ts'],
  },
  {
    name: 'retried-attempt-recorded',
    breaks:
      'docs/design/scaling.md: a failed attempt retried inside its slot keeps its ledger row, so one failure is recorded once per attempt',
    patches: [
      {
        file: 'src/sync/close-failed-run.ts',
        find: 'if (runId !== 0 && options.engineAttempt?.retriesLeft === true) {',
        replace: 'if (runId !== 0 && options.engineAttempt?.retriesLeft === undefined) {',
      },
    ],
    tests: ['test/integration/worker-engine.test.ts'],
  },
  {
    name: 'missed-reconcile-forgotten',
    breaks:
      'docs/design/scaling.md: a reconcile slot missed while no worker ran is not run when one comes back',
    patches: [{ file: 'src/worker/engine.ts', find: '  await catchUpReconcile(state);\n', replace: '' }],
    tests: ['test/integration/worker-engine.test.ts'],
  },
  {
    name: 'committed-slot-run-again',
    breaks:
      'docs/design/scaling.md "Principles" (a tenant runs once per slot): the retry of a job whose replica committed the run and died before closing the job syncs the tenant a second time in the slot',
    patches: [
      {
        file: 'src/sync/execute-run.ts',
        find: 'doneSlot: attempt?.retry === true && attempt.slot !== undefined,',
        replace: 'doneSlot: attempt?.retry === undefined && attempt.slot !== undefined,',
      },
    ],
    tests: ['test/integration/worker-engine.test.ts'],
  },
  {
    name: 'orphaned-run-left-running',
    breaks:
      'S3 with replicas: the run a killed replica had in flight stays `running` instead of being closed as failed',
    patches: [
      {
        file: 'sql/0041_served_digest.sql',
        find: "where r.tenant_id = p_tenant and r.status = 'running';",
        replace: 'where false;',
      },
    ],
    tests: ['test/e2e/worker-fleet.test.ts'],
  },
  {
    name: 'sighup-ignored',
    breaks: 'docs/design/scaling.md: SIGHUP does not replace the tenant list of a running worker',
    patches: [
      {
        file: 'src/app/worker-process.ts',
        find: '    await reloadTenants(serviceReady, hupDatabase, logger);',
        replace: '    void reloadTenants;',
      },
    ],
    tests: ['test/e2e/worker-fleet.test.ts'],
  },
  {
    name: 'engine-not-granted-to-writer',
    breaks:
      'docs/design/integrity.md, the writer role: govtrail migrate installs the job engine without granting it to govtrail_writer, so a writer-role worker cannot start',
    patches: [
      {
        file: 'src/worker/engine-setup.ts',
        find: '    if (grantTo !== undefined) {',
        replace: "    if (grantTo !== undefined && grantTo === '') {",
      },
    ],
    tests: ['test/integration/tamper-roles.test.ts'],
  },
  {
    name: 'I-ledger-immutable',
    breaks:
      'docs/design/integrity.md, run ledger: a finished sync_run row can be updated (an AUTH_REJECTED run turned into a success)',
    patches: [
      {
        file: 'sql/0015_run_ledger_immutable.sql',
        find: "  if old.status <> 'running' then\n    raise exception 'govtrail.sync_run is immutable once finished",
        replace: "  if false then\n    raise exception 'govtrail.sync_run is immutable once finished",
      },
    ],
    tests: ['test/integration/tamper-roles.test.ts'],
  },
  {
    name: 'I-ledger-delete-own-attempt-only',
    breaks:
      'docs/design/integrity.md, run ledger: a running sync_run row can be deleted by a session that did not open it',
    patches: [
      {
        file: 'sql/0015_run_ledger_immutable.sql',
        find: '  if old.opened_by_pid is distinct from pg_backend_pid() then',
        replace: '  if false then',
      },
    ],
    tests: ['test/integration/tamper-roles.test.ts'],
  },
  {
    name: 'I-registry-status-by-decision-only',
    breaks:
      "docs/design/integrity.md, registry: the writer can set a tenant's status directly, overturning an operator decision",
    patches: [
      {
        file: 'sql/0016_tenant_decisions.sql',
        find: '  if pg_trigger_depth() > 1 then',
        replace: '  if true then',
      },
    ],
    tests: ['test/integration/tamper-roles.test.ts'],
  },
  {
    name: 'I-decisions-append-only',
    breaks: 'docs/design/integrity.md, registry: an operator decision can be rewritten or deleted',
    patches: [
      {
        file: 'sql/0016_tenant_decisions.sql',
        find: 'on govtrail.tenant_decision\n  for each row execute function govtrail.reject_modification();',
        replace:
          'on govtrail.tenant_decision\n  for each row when (false) execute function govtrail.reject_modification();',
      },
    ],
    tests: ['test/integration/tamper-roles.test.ts'],
  },
  {
    name: 'I-writer-role-every-membership',
    breaks:
      'docs/design/integrity.md, writer role: GOVTRAIL_REQUIRE_WRITER_ROLE looks only at the role in use, so a writer that is also a member of a superuser role passes',
    patches: [
      {
        file: 'src/store/roles.ts',
        find: "      where pg_has_role(session_user, r.oid, 'MEMBER')",
        replace: '      where r.rolname = current_user',
      },
    ],
    tests: ['test/integration/tamper-roles.test.ts'],
  },
  {
    name: 'I-writer-role-every-command',
    breaks:
      'docs/design/integrity.md "The layers" (roles), docs/deploy.md: govtrail sync and reconcile (a CronJob) ignore GOVTRAIL_REQUIRE_WRITER_ROLE and run as the owner',
    patches: [
      {
        file: 'src/app/context.ts',
        find: '          if (config.requireWriterRole) {',
        replace: '          if (false) {',
      },
    ],
    tests: ['test/integration/tamper-roles.test.ts'],
  },
  {
    name: 'I-missing-grant-named',
    breaks:
      'docs/design/integrity.md "The layers" (roles), docs/deploy.md: a login without the writer grants (or NOINHERIT) fails with a stack trace instead of a DATABASE line naming the grant',
    patches: [
      {
        file: 'src/store/migrate.ts',
        find: '  await requireGrants(session);\n',
        replace: '',
      },
    ],
    tests: ['test/integration/tamper-roles.test.ts'],
  },
  {
    name: 'I-demo-hint-without-password',
    breaks:
      'docs/design/style.md (every secret is redacted), the demo: the psql hint prints the database password',
    patches: [
      {
        file: 'src/commands/demo.ts',
        find: "    u.password = '';",
        replace: '',
      },
    ],
    tests: ['test/unit/demo-hint.test.ts'],
  },
  {
    name: 'I-json-duplicate-key-last-wins',
    breaks:
      'S6: a key given twice, once escaped, keeps its first value (JSON says the last): `"requireToolApproval":false,"\\u0072equireToolApproval":true,"requireToolApproval":false` stored as true',
    patches: [
      {
        file: 'src/core/json-text.ts',
        find: '      if (top.array) (top.container as unknown[]).push(value);\n      else\n',
        replace:
          '      if (top.array) (top.container as unknown[]).push(value);\n      else if (!Object.hasOwn(top.container, top.key))\n',
      },
    ],
    tests: ['test/property/json-text-differential.test.ts'],
  },
  {
    name: 'I-anchors-serialised-in-database',
    breaks:
      'docs/design/integrity.md, anchors: two processes anchoring a tenant at once read the same chain end and fork the chain of anchors',
    patches: [
      {
        file: 'src/store/write/anchor-log.ts',
        find: '    await sql`select pg_advisory_xact_lock(hashtextextended(${lock}, 0))`.execute(trx);\n',
        replace: '',
      },
    ],
    tests: ['test/integration/tamper-anchors.test.ts'],
  },
  {
    name: 'I-anchors-ordered-by-number',
    breaks:
      'docs/design/integrity.md, anchors: anchors are ordered by the time in their names, so a replica whose clock is behind breaks verify on an untouched store',
    patches: [
      {
        file: 'src/outputs/anchor/anchor.ts',
        find: "    const name = `seq${String(next).padStart(10, '0')}-${stamp}-e",
        replace: "    const name = `${stamp}-seq${String(next).padStart(10, '0')}-e",
      },
      {
        file: 'src/outputs/anchor/check.ts',
        find: '    return seq === undefined ? [0, i] : [1, seq];',
        replace: '    return [0, i + 0 * (seq ?? 0)];',
      },
    ],
    tests: ['test/integration/tamper-anchors.test.ts'],
  },
  {
    name: 'I-first-anchor-names-none',
    breaks:
      'docs/design/integrity.md, anchors: the oldest anchors deleted go unnoticed (the first anchor present is not checked to be number 1 naming no predecessor)',
    patches: [
      {
        file: 'src/outputs/anchor/check.ts',
        find: '  if (before === undefined) {\n',
        replace: '  if (before === undefined) {\n    if (s !== undefined) return undefined;\n',
      },
    ],
    tests: ['test/integration/tamper-anchors.test.ts'],
  },
  {
    name: 'I-verify-says-what-anchors-miss',
    breaks:
      'docs/design/integrity.md "What `govtrail verify` checks", docs/tamper-evidence.md: verify --anchors says "every anchor reproduced" for a tenant without anchors or with entries after its newest anchor, without saying what is not proven',
    patches: [
      {
        file: 'src/commands/verify.ts',
        find: '  const whole = anchors !== undefined && proofs.every(',
        replace: '  const whole = anchors !== undefined || proofs.every(',
      },
    ],
    tests: ['test/integration/tamper-anchors.test.ts'],
  },
  {
    name: 'I-anchor-symlink-followed',
    breaks:
      'docs/design/integrity.md "What `govtrail verify` checks", docs/tamper-evidence.md: a tenant anchor directory that is a symbolic link is skipped silently, so an edit inside its anchored range passes',
    patches: [
      {
        file: 'src/outputs/anchor/check.ts',
        find: '    else if (d.isSymbolicLink()) {',
        replace: '    else if (d.isSymbolicLink() && false) {',
      },
    ],
    tests: ['test/integration/tamper-anchors.test.ts'],
  },
  {
    name: 'I-number-text-injective',
    breaks:
      'docs/design/integrity.md "What govtrail verify checks": a stored number respelled as another text of the same double (raw 4 edited into 4.0000000000000001) passes verify, anchors included, since the chain hashes raw as parsed',
    patches: [
      {
        file: 'src/store/verify/verify.ts',
        find: '  const m = firstNonCanonicalNumber(row.raw);',
        replace: "  const m = firstNonCanonicalNumber('');",
      },
    ],
    tests: ['test/integration/tamper-number-text.test.ts'],
  },
  {
    name: 'I-number-text-extra-fields',
    breaks:
      'docs/design/integrity.md "What govtrail verify checks": a number of settings_snapshot.extra_fields respelled (4 as 4.0) is equal as jsonb, so the column passes as what raw says',
    patches: [
      {
        file: 'src/store/verify/columns.ts',
        find: 's.extra_fields::text is distinct from x.extra_fields::jsonb::text',
        replace: 's.extra_fields is distinct from x.extra_fields::jsonb',
      },
    ],
    tests: ['test/integration/tamper-number-text.test.ts'],
  },
  {
    name: 'I-number-text-field-change',
    breaks:
      'docs/design/integrity.md "What govtrail verify checks": a number of a field_change value respelled (4 as 4.00) compares equal once parsed and passes',
    patches: [
      {
        file: 'src/store/verify/field-changes.ts',
        find: 'const m = text === null ? undefined : firstNonCanonicalNumber(text);',
        replace: "const m = text === null ? undefined : firstNonCanonicalNumber('');",
      },
    ],
    tests: ['test/integration/tamper-number-text.test.ts'],
  },
  {
    name: 'I-checked-out-session-error-handled',
    breaks:
      'docs/design/sync.md: a session terminated while a run holds it (pg_terminate_backend, a server restart) emits an unhandled error event that kills the worker or the CLI',
    patches: [
      {
        file: 'src/store/database.ts',
        find: "    client.on('error', ignoreClientError);",
        replace: '',
      },
    ],
    tests: ['test/integration/database-terminated.test.ts'],
  },
  {
    name: 'I-lost-session-run-closed',
    breaks:
      'docs/design/sync.md: a run whose session was lost stays `running` in the ledger until the next run of the tenant, instead of being closed as failed (DATABASE) at once',
    patches: [
      {
        file: 'src/sync/close-failed-run.ts',
        find: '        return options.database.withSession(close);',
        replace: '        throw e;',
      },
    ],
    tests: ['test/integration/database-terminated.test.ts'],
  },
  {
    name: 'I-job-heartbeat-honoured',
    breaks:
      'docs/design/scaling.md: GOVTRAIL_JOB_HEARTBEAT is ignored when migrate created the queues first: queue and jobs keep 30 s',
    patches: [
      {
        file: 'src/worker/engine-setup.ts',
        find: '      ...(embedded ? {} : { heartbeatSeconds: tuning.heartbeatSeconds }),\n    } as UpdateQueueOptions);',
        replace: '    } as UpdateQueueOptions);',
      },
      {
        file: 'src/worker/planner.ts',
        find: '  return state.embedded ? {} : { heartbeatSeconds: state.tuning.heartbeatSeconds };',
        replace: '  return state.embedded ? {} : {};',
      },
    ],
    tests: ['test/integration/tamper-roles.test.ts'],
  },
  {
    name: 'I-health-reflects-engine',
    breaks:
      'docs/design/scaling.md, health: /healthz says ok while the job engine is not running or unusable',
    patches: [
      {
        file: 'src/app/worker.ts',
        find: " && engineHealth.state === 'running' ? 'ok'",
        replace: " ? 'ok'",
      },
    ],
    tests: ['test/integration/worker-health.test.ts'],
  },
  {
    name: 'I-health-reflects-freshness',
    breaks:
      'docs/design/scaling.md, health: /healthz says ok while a tenant has had no successful sync for longer than GOVTRAIL_HEALTH_STALE_AFTER',
    patches: [
      {
        file: 'src/app/worker.ts',
        find: "healthVerdict(fleet) === 'ok' && stale === 0 &&",
        replace: "healthVerdict(fleet) === 'ok' &&",
      },
    ],
    tests: ['test/integration/worker-health.test.ts'],
  },
  {
    name: 'I-metrics-cardinality-bounded',
    breaks:
      'docs/design/scaling.md, metrics: every tenant of the fleet gets series of its own (100 785 series, 6.3 MB at 10 000 tenants)',
    patches: [
      {
        file: 'src/worker/metrics.ts',
        find: '    return this.named.has(tenant) ? tenant : OTHER_TENANTS;',
        replace: '    return tenant;',
      },
    ],
    tests: ['test/unit/worker-metrics-cardinality.test.ts'],
  },
  {
    name: 'I-metrics-follow-reload',
    breaks:
      'docs/design/scaling.md, metrics: tenants added by a reload get no zero series and removed tenants keep theirs forever',
    patches: [
      {
        file: 'src/worker/metrics.ts',
        find: '      if (removed.length > 0) await removeTenantSeries(registry, new Set(removed));',
        replace: '',
      },
    ],
    tests: ['test/unit/worker-metrics-cardinality.test.ts'],
  },
  {
    name: 'I-sighup-coalesced',
    breaks:
      'docs/design/scaling.md, reload: every SIGHUP starts a reload of its own, so a burst runs them at once (deadlocks, a stale tenant list, memory doubled)',
    patches: [
      {
        file: 'src/app/worker-process.ts',
        find: '      if (running === undefined) running = loop();',
        replace: '      running = loop();',
      },
    ],
    tests: ['test/unit/worker-reload.test.ts'],
  },
  {
    name: 'I-slots-by-database-clock',
    breaks:
      'docs/design/scaling.md, clocks: the engine judges slots by the local clock, so a replica 35 s ahead on a 30 s schedule supersedes every job and never syncs',
    patches: [
      {
        file: 'src/store/read/health.ts',
        find: '  return Number(rows[0]?.ms ?? (before + after) / 2) - (before + after) / 2;',
        replace: '  return 0 * Number(rows[0]?.ms ?? (before + after) / 2);',
      },
    ],
    tests: ['test/integration/clock-skew.test.ts'],
  },
  {
    name: 'I-missed-slot-planned-on-return',
    breaks:
      'docs/design/scaling.md: a slot whose time came while the database was down is never planned (a day of reconcile lost)',
    patches: [
      {
        file: 'src/worker/planner.ts',
        find: '        if (overtaken) {',
        replace: '        if (overtaken || true) {',
      },
    ],
    tests: ['test/unit/worker-planner-retry.test.ts'],
  },
  {
    name: 'conformance-periods-not-closed',
    breaks:
      'C1: a change of status opens a period without closing the one before (periods overlap instead of tiling)',
    patches: [
      {
        file: 'src/core/conformance/judge.ts',
        find: 'if (current !== undefined) list[list.length - 1] = { ...current, toKey: at };',
        replace: 'if (current === undefined) list.length = list.length;',
      },
    ],
    tests: [CONFORMANCE_JUDGE, CONFORMANCE_STORE],
  },
  {
    name: 'conformance-unknown-counted-as-pass',
    breaks: 'C2: time before the first snapshot is counted as pass instead of unknown',
    patches: [
      {
        file: 'src/core/conformance/judge.ts',
        find: 'd.unknown = to - from - covered;',
        replace: 'd.pass += to - from - covered;',
      },
    ],
    tests: [CONFORMANCE_JUDGE, CONFORMANCE_CLI],
  },
  {
    name: 'conformance-exception-any-value',
    breaks: 'C3: an exception accepts any failing value, not only its own',
    patches: [
      {
        file: 'src/core/conformance/judge.ts',
        find: "if (w.valueKey === k) return { status: 'excepted', value };",
        replace: "return { status: 'excepted', value };",
      },
    ],
    tests: [CONFORMANCE_JUDGE, CONFORMANCE_STORE],
  },
  {
    name: 'conformance-exception-never-expires',
    breaks: 'C3: an exception holds after its expiry',
    patches: [
      {
        file: 'src/core/conformance/judge.ts',
        find: 'w.fromKey <= at && at < w.toKey',
        replace: 'w.fromKey <= at',
      },
    ],
    tests: [CONFORMANCE_JUDGE, CONFORMANCE_CLI],
  },
  {
    name: 'conformance-late-arrival-not-rejudged',
    breaks:
      'C4: a run re-judges only the instant of its earliest entry, leaving the periods after it as they were',
    patches: [
      {
        file: 'src/store/write/conformance.ts',
        // biome-ignore lint/suspicious/noTemplateCurlyInString: source text to patch, not a template
        find: 'where tenant_id = ${tenantId} and valid_from_key >= ${fromKey}`',
        // biome-ignore lint/suspicious/noTemplateCurlyInString: source text to patch, not a template
        replace: 'where tenant_id = ${tenantId} and valid_from_key = ${fromKey}`',
      },
    ],
    tests: [CONFORMANCE_SYNC, CONFORMANCE_STORE],
  },
  {
    name: 'conformance-microsecond-order',
    breaks:
      'C5: entries are judged in the database order (microseconds, then id), not by their nanosecond instants',
    patches: [
      {
        file: 'src/store/read/conformance-history.ts',
        find: '    page.sort(byKey);\n',
        replace: '',
      },
    ],
    tests: [CONFORMANCE_STORE],
  },
  {
    name: 'built-in-rule-condition-broken',
    breaks:
      'docs/design/alerts.md T1 (rules as code): a built-in rule whose condition is broken still passes `govtrail rules test`',
    patches: [
      {
        file: 'rules/default-rules.yaml',
        find: 'field_changed: { field: require_tool_approval, from: [true] }',
        replace: 'field_changed: { field: require_tool_approval, from: [false] }',
      },
    ],
    tests: ['test/unit/rules-test.test.ts'],
  },
  {
    name: 'alert-state-not-replay',
    breaks:
      'docs/design/alerts.md L1 (handling an alert): the view alert_state keeps an acknowledgement across a reopen, so it differs from the replay of the events',
    patches: [
      {
        file: 'src/core/alert-lifecycle.ts',
        find: `        resolved: false,
        acknowledged: false,
        snoozedUntil: null,`,
        replace: `        resolved: false,
        snoozedUntil: null,`,
      },
    ],
    tests: ['test/integration/alerts-lifecycle.test.ts'],
  },
  {
    name: 'reader-scope-policy-dropped',
    breaks:
      'R1 (integrity.md, readers who see only their tenants): the row-level security policy of a reader-readable table lets every row through',
    patches: [
      {
        file: 'sql/0030_tenant_scope.sql',
        find: "'using (govtrail.tenant_in_scope(tenant_id, (select govtrail.visible_tenants()))) with check (true)',",
        replace: "'using (true) with check (true)',",
      },
    ],
    tests: [READER_SCOPE],
  },
  {
    name: 'reader-scope-view-left-out',
    breaks: 'R1: one view (change_log) is left without the scope predicate',
    patches: [
      {
        file: 'sql/0030_tenant_scope.sql',
        find: "    where n.nspname = 'govtrail' and c.relkind = 'v'\n",
        replace: "    where n.nspname = 'govtrail' and c.relkind = 'v' and c.relname <> 'change_log'\n",
      },
    ],
    tests: [READER_SCOPE],
  },
  {
    name: 'reader-scope-definer-unchecked',
    breaks:
      'R1: setting_periods, which reads the tables as its owner, answers for a tenant outside the scope',
    patches: [
      {
        file: 'sql/0030_tenant_scope.sql',
        find: '  where govtrail.tenant_visible(tenant)\n',
        replace: '  where true\n',
      },
    ],
    tests: [READER_SCOPE],
  },
  {
    name: 'reader-scope-session-user-ignored',
    breaks:
      'R3: the scope is taken from current_user alone, so inside a security-definer function (current_user = owner) a scoped login sees everything',
    patches: [
      {
        file: 'sql/0030_tenant_scope.sql',
        find: '  s text[] := govtrail.scoped_tenants(session_user);',
        replace: '  s text[] := null;',
      },
    ],
    tests: [READER_SCOPE],
  },
  {
    name: 'reader-scope-no-barrier',
    breaks:
      "R3: the scoped views are not security barriers, so a function of the reader's own in WHERE sees other tenants' rows",
    patches: [
      {
        file: 'sql/0030_tenant_scope.sql',
        find: "'create or replace view govtrail.%I with (security_barrier) as select",
        replace: "'create or replace view govtrail.%I with (security_barrier = false) as select",
      },
    ],
    tests: [READER_SCOPE],
  },
  {
    name: 'reader-scope-not-reapplied',
    breaks: 'R1: migrate does not scope a view a later migration adds or replaces',
    patches: [
      {
        file: 'src/store/migrate.ts',
        find: '          await applyReaderScope(session);\n',
        replace: '',
      },
    ],
    tests: [READER_SCOPE],
  },
  {
    name: 'reload-undoes-group-change',
    breaks:
      'docs/design/data-model.md (groups and scope), tenant registry: a configuration reload puts a tenant back into a group an operator removed it from',
    patches: [
      {
        file: 'src/store/write/tenant-groups.ts',
        find: 'if (row === undefined || (row.set_by === CONFIGURATION_ACTOR && !row.member)) {',
        replace: 'if (row === undefined || !row.member) {',
      },
    ],
    tests: ['test/integration/tenant-groups.test.ts'],
  },
  {
    name: 'reader-scope-group-frozen',
    breaks: 'R4: a group grant sees only the members it had when granted, not a tenant added later',
    patches: [
      {
        file: 'sql/0030_tenant_scope.sql',
        find: 'join govtrail.tenant_group g on g.group_name = s.group_name and g.member\n    where s.login = who);',
        replace:
          'join govtrail.tenant_group g on g.group_name = s.group_name and g.member and g.set_at <= s.granted_at\n    where s.login = who);',
      },
    ],
    tests: [READER_SCOPE],
  },
  {
    name: 'launch-memory-flags-dropped',
    breaks:
      "S10: the binary's first line no longer bounds the young generation, the heap's growth and the malloc arenas, so a 100 000-entry backfill's peak RSS is back at 410-460 MiB",
    patches: [
      {
        file: 'src/main.ts',
        find: '#!/usr/bin/env -S MALLOC_ARENA_MAX=1 node --max-semi-space-size=4 --heap-growing-percent=50',
        replace: '#!/usr/bin/env node',
      },
    ],
    tests: ['test/unit/launch.test.ts'],
  },
  {
    name: 'image-starts-node-without-flags',
    breaks:
      "S10: the image runs `node dist/src/main.js`, so its process starts without the binary's memory settings",
    patches: [
      {
        file: 'Dockerfile',
        find: 'ENTRYPOINT ["/app/dist/src/main.js"]',
        replace: 'ENTRYPOINT ["node", "dist/src/main.js"]',
      },
    ],
    tests: ['test/unit/launch.test.ts'],
  },
  {
    name: 'vendor-bundles-not-resolved',
    breaks:
      'docs/design/architecture.md "Start-up cost": the binary no longer resolves the vendored package names to their bundles, so every command start links kysely, zod and yaml module by module again',
    patches: [
      {
        file: 'src/runtime/vendor.ts',
        find: "return url === undefined ? next(specifier, context) : { url, format: 'module', shortCircuit: true };",
        replace: 'return next(specifier, context);',
      },
    ],
    tests: ['test/integration/vendor-bundles.test.ts'],
  },
  {
    name: 'vendor-bundle-drops-names',
    breaks:
      'docs/design/architecture.md "Start-up cost": a vendored bundle no longer exports every name its package does, so code written against the package fails only in the built binary',
    patches: [
      {
        file: 'scripts/bundle-vendor.mjs',
        find: "(n) => n !== 'default' && n !== '__esModule' && /^[A-Za-z_$][\\w$]*$/.test(n),",
        replace:
          "(n) => n !== 'default' && n !== '__esModule' && /^[A-Za-z_$][\\w$]*$/.test(n) && !n.startsWith('is'),",
      },
    ],
    tests: ['test/integration/vendor-bundles.test.ts'],
  },
  {
    name: 'rule-pack-copy-unchecked',
    breaks:
      'docs/design/architecture.md "Start-up cost": the build\'s copy of the shipped rule pack is used whatever the YAML now says, so an edited or upgraded rules/default-rules.yaml is ignored by the binary',
    patches: [
      {
        file: 'src/config/rule-pack.ts',
        find: "if (copy.sha256 !== hash('sha256', text, 'hex')) return undefined;",
        replace: '',
      },
    ],
    tests: ['test/integration/vendor-bundles.test.ts'],
  },
  {
    name: 'quiet-page-ignores-content',
    breaks:
      'S12 / sync.md "A run with nothing new": a first page whose entries are all stored closes the run without comparing their content, so a rewrite at the source goes unrecorded',
    patches: [
      {
        file: 'src/sync/quiet-run.ts',
        find: 'if (stored === undefined || !sameAsStored(e, stored)) return false;',
        replace: 'if (stored === undefined) return false;',
      },
    ],
    tests: ['test/integration/quiet-run.test.ts'],
  },
  {
    name: 'quiet-page-takes-new-entries',
    breaks:
      'S1 / sync.md "A run with nothing new": a first page with new entries is taken as quiet and they are never stored',
    patches: [
      {
        file: 'src/sync/quiet-run.ts',
        find: 'if (stored === undefined || !sameAsStored(e, stored)) return false;',
        replace: 'if (stored !== undefined && !sameAsStored(e, stored)) return false;',
      },
    ],
    tests: [SYNC],
  },
  {
    name: 'quiet-despite-every-run-step',
    breaks:
      'C6: a run with nothing new closes without the conformance step, so an exception about to expire is never alerted',
    patches: [
      {
        file: 'src/sync/execute-run.ts',
        find: 'const mark = steps?.everyRun === true ?',
        replace: 'const mark = steps?.everyRun === undefined ?',
      },
    ],
    tests: [CONFORMANCE_SYNC],
  },
  {
    name: 'quiet-judgement-ignores-baseline-change',
    breaks:
      'C6: a run with nothing new under a changed baseline closes quietly instead of judging the history again',
    patches: [
      {
        file: 'src/sync/conformance.ts',
        find: 'if (judged.baseline?.id !== baseline.id || judged.baseline.sha256 !== baseline.sha256) return undefined;',
        replace: 'if (judged.baseline === undefined) return undefined;',
      },
    ],
    tests: [CONFORMANCE_SYNC],
  },
  {
    name: 'quiet-judgement-ignores-exceptions',
    breaks:
      'C6: a run with nothing new closes quietly although an exception of the tenant expires within 14 days',
    patches: [
      {
        file: 'src/sync/conformance.ts',
        find: 'if (at !== null && at > since && at <= horizon) return undefined;',
        replace: "if (at === 'never') return undefined;",
      },
    ],
    tests: [CONFORMANCE_SYNC],
  },
  {
    name: 'quiet-run-hides-open-alerts',
    breaks:
      'docs/design/alerts.md "Handling an alert": a sync that recovers with nothing new does not resolve the sync-failing alert',
    patches: [
      {
        file: 'src/store/write/run-frame.ts',
        find: 'return { openAlerts: r.open_alerts };',
        replace: 'return { openAlerts: false };',
      },
    ],
    tests: ['test/integration/alerts-rules-run.test.ts'],
  },
  {
    name: 'quiet-close-miscounts',
    breaks: 'S4: a run closed without a transaction records other counts than the same run through one',
    patches: [
      {
        file: 'src/store/write/run-frame.ts',
        // biome-ignore lint/suspicious/noTemplateCurlyInString: source text to patch, not a template
        find: 'entries_fetched = ${o.entriesFetched}, entries_inserted = 0,',
        replace: 'entries_fetched = 0, entries_inserted = 0,',
      },
    ],
    tests: ['test/integration/quiet-run.test.ts'],
  },
  {
    name: 'served-digest-matches-anything',
    breaks:
      'S12 / integrity.md "The served digest": a re-served entry is taken as unchanged because the stored row has a served digest, whatever bytes were served, so a rewrite goes unrecorded',
    patches: [
      {
        file: 'src/sync/served.ts',
        find: 'stored.servedDigest === e.digest',
        replace: 'stored.servedDigest !== undefined',
      },
    ],
    tests: [SERVED_DIGEST, 'test/integration/quiet-run.test.ts'],
  },
  {
    name: 'served-digest-not-stored',
    breaks:
      'docs/design/integrity.md "The served digest": entries are stored without their served digest, so every later run parses and hashes every re-served entry again',
    patches: [
      {
        file: 'src/store/write/entries.ts',
        find: "['served_sha256', (s) => (s.entry.servedDigest == null",
        replace: "['served_sha256', (s) => (s.entry.servedDigest !== 'never'",
      },
    ],
    tests: [SERVED_DIGEST],
  },
  {
    name: 'held-digest-compared-with-nothing',
    breaks:
      'S12 / integrity.md "The served digest": the lookup answers "same bytes" for any stored row that has a served digest, whatever digest it was given, so a rewrite served with new bytes goes unrecorded',
    patches: [
      {
        file: 'src/store/read/stored-entries.ts',
        find: "stored.served_sha256 = decode(i.digest, 'hex') as same",
        replace: '(stored.served_sha256 is not null and i.digest is not null) as same',
      },
    ],
    tests: [SERVED_DIGEST],
  },
  {
    name: 'held-digest-for-id-served-twice',
    breaks:
      'S12 / integrity.md "The served digest", `conflicting_ids`: an id served twice in a batch is given its first copy\'s digest, so when that copy has the stored bytes its other version is never compared and goes unrecorded',
    patches: [
      {
        file: 'src/sync/served.ts',
        find: '!useDigest || groups.firstHashes.has(id) ? undefined',
        replace: '!useDigest ? undefined',
      },
    ],
    tests: [SERVED_DIGEST],
  },
  {
    name: 'slowest-table-not-analyzed-alongside',
    breaks:
      'docs/design/scaling.md "Onboarding costs the same however many are stored": the table a server analyzes on a second connection (settings_snapshot) is never analyzed, so after a backfill the planner takes it for empty',
    patches: [
      {
        file: 'src/store/statistics.ts',
        find: 'await analyze(other, [SLOWEST]);',
        replace: 'await Promise.resolve(other);',
      },
    ],
    tests: ['test/integration/sync-statistics.test.ts'],
  },
  {
    name: 'deep-reconcile-trusts-digest',
    breaks:
      'docs/design/integrity.md "The served digest": reconcile --deep still takes the served digests, which the hash chain does not cover, as proof of content',
    patches: [
      {
        file: 'src/sync/execute-run.ts',
        find: 'useDigest: options.deep !== true,',
        replace: 'useDigest: true,',
      },
    ],
    tests: [SERVED_DIGEST],
  },
  {
    name: 'scanned-depth-trusted-past-limit',
    breaks:
      'S6 tolerance / docs/design/integrity.md "The served digest": an entry written deeper than the limit only in a value JSON drops (a key given twice) is rejected as too deep, though it is not',
    patches: [
      {
        file: 'src/core/served-entry.ts',
        find: 'if (this.element !== undefined && this.element.depth <= limit) return false;',
        replace: 'if (this.element !== undefined) return this.element.depth > limit;',
      },
    ],
    tests: ['test/unit/served-entry.test.ts'],
  },
];

/** Why a mutation does not apply to the source under `dir` (one line a patch), or [] when it does. */
export function patchProblems(dir: string, m: Mutation): string[] {
  const problems: string[] = [];
  const texts = new Map<string, string>();
  for (const p of m.patches) {
    const file = path.join(dir, p.file);
    const text = texts.get(file) ?? readFileSync(file, 'utf8');
    const count = text.split(p.find).length - 1;
    if (count === 0 || (count > 1 && p.all !== true)) {
      problems.push(
        `mutation ${m.name}: ${p.file} holds the text to replace ${count} times (expected ${p.all === true ? 'at least once' : 'once'}); update the mutation list`,
      );
      continue;
    }
    texts.set(file, p.all === true ? text.replaceAll(p.find, p.replace) : text.replace(p.find, p.replace));
  }
  return problems;
}

/** Applies a mutation to the copy of the source under `dir`. */
export function applyPatches(dir: string, m: Mutation): void {
  const problems = patchProblems(dir, m);
  if (problems.length > 0) throw new Error(problems.join('; '));
  for (const p of m.patches) {
    const file = path.join(dir, p.file);
    const text = readFileSync(file, 'utf8');
    writeFileSync(
      file,
      p.all === true ? text.replaceAll(p.find, p.replace) : text.replace(p.find, p.replace),
    );
  }
}
