/**
 * The deliberate bugs of `npm run mutate:invariants` (scripts/mutate-invariants.ts): each breaks one
 * invariant of docs/design/sync.md or docs/design/integrity.md and names the tests that must catch it. Kept
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
        file: 'src/store/write/entries.ts',
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
        file: 'src/store/write/runs.ts',
        find: 'return rows[0]?.locked === true;',
        replace: 'return rows[0] !== undefined;',
      },
    ],
    tests: [SYNC, RECONCILE],
  },
  {
    name: 'checkpoint-outside-transaction',
    breaks: 'S3: the checkpoint is written on another connection, outside the data transaction',
    patches: [
      {
        file: 'src/sync/steps.ts',
        find: 'const checkpointAfter = (await advanceCheckpoint(trx, tenantId, runId)) ?? checkpointBefore;',
        replace:
          'const checkpointAfter = (await advanceCheckpoint(trx, tenantId, runId, options.database.db)) ?? checkpointBefore;',
      },
      {
        file: 'src/sync/steps.ts',
        find: 'async function advanceCheckpoint(trx: Session, tenantId: string, runId: number): Promise<string | undefined> {',
        replace:
          'async function advanceCheckpoint(trx: Session, tenantId: string, runId: number, out: Session = trx): Promise<string | undefined> {',
      },
      {
        file: 'src/sync/steps.ts',
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
        file: 'src/sync/steps.ts',
        find: '  const after = await changeStep(trx, options, run, writer, tracker, logger);',
        replace: `  run.afterCommit = (db: Session) => changeStep(db, options, run, writer, tracker, logger);
  const after = { alerts: 0, fieldChanges: 0 };`,
      },
      {
        file: 'src/sync/steps.ts',
        find: 'interface RunState {',
        replace: `interface RunState {
  afterCommit?: (db: Session) => Promise<{ alerts: number; fieldChanges: number }>;`,
      },
      {
        file: 'src/sync/steps.ts',
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
    breaks: 'HTTP behaviour: a 401 does not fetch a new token and retry once',
    patches: [
      {
        file: 'src/source/client.ts',
        find: 'if (first.response.status !== 401) return first.response;',
        replace: 'if (first.response.status !== 401 || first.token !== undefined) return first.response;',
      },
    ],
    tests: [SYNC, 'test/integration/tenant-api-retries.test.ts'],
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
    tests: ['test/integration/changes-delete-recreate.test.ts'],
  },
  {
    name: 'reserved-content-not-compared',
    breaks: 'S12: a re-served stored entry is taken as matching without comparing its content hash',
    patches: [
      {
        file: 'src/sync/steps.ts',
        find: 'if (!servedHash.equals(held.contentHash)) {',
        replace: 'if (!servedHash.equals(held.contentHash) && held.contentHash.length === 0) {',
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
        file: 'src/sync/steps.ts',
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
      'issue 18, tenant registry: a retired tenant stays in exporter_health and the dashboard tenant list',
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
    breaks: 'issue 18, tenant registry: a disabled or retired tenant is still scheduled and synced',
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
    name: 'reload-reenables-tenant',
    breaks: 'issue 18, tenant registry: a configuration reload re-enables a tenant an operator disabled',
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
    breaks: 'issue 18, tenant registry: a client secret is written into govtrail.tenant',
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
    breaks: 'issue 18, tenant registry: govtrail tenants enable brings a retired tenant back without --force',
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
      'docs/deploy.md: start-up runs DDL although the schema is up to date, so the writer role cannot start',
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
        file: 'src/sync/steps.ts',
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
        file: 'src/sync/steps.ts',
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
        file: 'src/sync/steps.ts',
        find: 'const written = before?.fresh.get(id);',
        replace: 'const written = undefined as NormalisedEntry | undefined;',
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
        file: 'src/sync/steps.ts',
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
        find: 'return hasEscapedKey(text) ? parseWithStandIns(text) : JSON.parse(text);',
        replace: 'return JSON.parse(text);',
      },
    ],
    tests: ['test/unit/json-text.test.ts', 'test/property/canonical.test.ts'],
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
      'issue 20 item 1: only the exact secret is scrubbed, so its form-encoded echo (%2B, %2F, %3D) leaks',
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
      'issue 20 item 2: text is cut before it is scrubbed, so a secret straddling the cut leaks its head',
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
    breaks: 'issue 20 item 3: only the whole sink URL is registered, so an echoed path or sig= leaks',
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
    breaks:
      'S6 tolerance (issue 20 item 5): an entry nested thousands of levels deep overflows the stack and fails every run',
    patches: [
      {
        file: 'src/sync/steps.ts',
        find: 'if (nestsDeeperThan(raw, MAX_ENTRY_DEPTH)) {',
        replace: 'if (nestsDeeperThan(raw, Number.POSITIVE_INFINITY)) {',
      },
    ],
    tests: ['test/integration/security-input.test.ts'],
  },
  {
    name: 'sink-answer-cut-keeps-secret-head',
    breaks:
      'issue 20 item 2: a sink answer cut at its byte limit keeps the head of an echoed secret (Splunk 11111111-)',
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
    breaks: 'issue 20 item 8: a table cell prints an ESC sequence or a bidi override from the source raw',
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
    breaks: 'issue 20 item 8: a line feed from the source goes raw into syslog structured data',
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
      'issue 20 item 4: a YAML parse error prints the neighbouring lines of the file, a sink password included',
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
      'issue 18: every run that stored something ANALYZEs the store, so onboarding a fleet costs one ANALYZE of everything stored per tenant',
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
      "issue 18: the run's own uncommitted changes are left out of the ANALYZE decision, so a backfill into an empty store gets no statistics",
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
      'issue 18: a backfill of fewer than 50 entries into never-analyzed tables leaves them without statistics',
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
      'issue 18: `govtrail sync` runs its tenants one after another, not GOVTRAIL_WORKER_CONCURRENCY at once',
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
      'issue 20 item 9: `sync` does not close the sinks, so a TCP syslog connection keeps the process alive after its result',
    patches: [{ file: 'src/commands/sync.ts', find: '    await alerting?.close();\n', replace: '' }],
    tests: ['test/integration/security-exit.test.ts'],
  },
  {
    name: 'demo-sandbox-left-open',
    breaks:
      'issue 20 item 10: `demo` does not close its in-process sandbox when the database cannot be opened, so it never exits',
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
      'issue 20 item 13: a worker port in use ends with a stack trace and exit 1, not one line and exit 2',
    patches: [
      { file: 'src/worker/server.ts', find: "if (code === 'EADDRINUSE')", replace: 'if (code === 0)' },
    ],
    tests: ['test/integration/security-usage.test.ts'],
  },
  {
    name: 'data-dir-file-unchecked',
    breaks:
      'issue 20 item 13: GOVTRAIL_DATA_DIR naming a file ends with a stack trace, not one line and exit 2',
    patches: [
      {
        file: 'src/app/context.ts',
        find: 'if (config.databaseUrl === undefined) checkDataDir(config.dataDir);',
        replace: '',
      },
    ],
    tests: ['test/integration/security-usage.test.ts'],
  },
  {
    name: 'rules-invalid-exit-1',
    breaks: 'issue 20 item 13: a bad rule file ends with exit 1, not the exit 2 of a configuration error',
    patches: [
      {
        file: 'src/core/errors.ts',
        find: "new Set(['CONFIG', 'USAGE', 'RULES_INVALID'])",
        replace: "new Set(['CONFIG', 'USAGE'])",
      },
    ],
    tests: ['test/integration/security-usage.test.ts'],
  },
  {
    name: 'limit-not-parsed',
    breaks: 'issue 20 item 13: `alerts list --limit abc` reaches the query (a SQL error) instead of exit 2',
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
    breaks: 'issue 20 item 18: `alerts list --tenant` of a tenant never stored says "no alerts" and exits 0',
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
      'issue 20 item 12: `export evidence --out` naming a directory ends with a stack trace, not exit 2',
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
      'issue 20 item 12: `export evidence` writes under its final name, so an interrupted export leaves a half file',
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
      'issue 20 item 11: `owners delete` records nothing before the DELETE is sent, so a kill with it in flight leaves no row',
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
      'issue 20 item 14: an unknown top-level key of the YAML file (`shedule:`) is ignored without a warning',
    patches: [
      {
        file: 'src/config/warnings.ts',
        find: "if (key === 'tenants' || key === 'sinks' || known.has(fileKeyVariable(key))) continue;",
        replace: 'continue;',
      },
    ],
    tests: ['test/unit/config-warnings.test.ts'],
  },
  {
    name: 'file-value-blamed-on-variable',
    breaks: 'issue 20 item 14: a bad `schedule:` in the YAML file is reported as GOVTRAIL_SCHEDULE',
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
    breaks: 'issue 20 item 14: `*/70 * * * *` is accepted (and runs hourly)',
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
      'issue 20 item 15: an absent allowedClientTypes (all client types allowed) is shown as "unset" by settings and the report',
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
      'issue 20 item 16: a backfilled period looks alert-free: the report and the pack README do not list what the rules find in backfilled entries',
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
    breaks: 'issue 20 item 17: the report shows alerts as counts only, not the list the README promises',
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
      'issue 20 item 17: `report` without --to ends a day after the newest entry, not now as documented',
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
        file: 'src/sync/steps.ts',
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
      'product.md scaling out: the retry of a job whose replica committed the run and died before closing the job syncs the tenant a second time in the slot',
    patches: [
      {
        file: 'src/sync/steps.ts',
        find: 'if (attempt?.retry === true && attempt.slot !== undefined) {',
        replace: 'if (attempt?.retry === undefined && attempt.slot !== undefined) {',
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
        file: 'src/sync/steps.ts',
        find: 'const orphans = await failOrphanedRuns(session, tenantId);',
        replace: 'const orphans = 0;',
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
        find: 'if (!signalled) void reloadTenants(service, database.db, logger);',
        replace: 'if (!signalled) void service;',
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
        file: 'src/worker/engine.ts',
        find: '    if (grantTo !== undefined) {',
        replace: "    if (grantTo !== undefined && grantTo === '') {",
      },
    ],
    tests: ['test/integration/tamper-roles.test.ts'],
  },
  {
    name: 'launch-memory-flags-dropped',
    breaks:
      "S10: the binary's first line no longer bounds the young generation, the heap's growth and the malloc arenas, so a 100 000-entry backfill's peak RSS is back at 410-460 MiB",
    patches: [
      {
        file: 'src/main.ts',
        find: '#!/usr/bin/env -S MALLOC_ARENA_MAX=1 node --max-semi-space-size=2 --heap-growing-percent=30',
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
