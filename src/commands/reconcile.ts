import { Command } from 'commander';
import type { Alerting } from '../app/alerting.js';
import type { TenantSelection } from '../app/select-tenants.js';
import type { DiscrepancyRow } from '../store/read/discrepancies.js';
import type { RunSummary } from '../sync/run-types.js';
import { ExitCode } from './exit.js';
import { agrees, formatReconcile } from './format-reconcile.js';
import { tenantSelection } from './options.js';
import { progressReporter } from './progress.js';
import { formatTable } from './table.js';

const HELP = `
Discrepancy kinds (govtrail.source_discrepancy.kind):

  changed_at_source  The source serves an entry govtrail stored with different content (same
                     id, different content hash). The stored original is kept; the served
                     version is in source_raw. Alerts AIGOV-018. Ask the tenant's admins or the
                     vendor who rewrote the entry and why; the stored row is your evidence.
  missing_at_source  A stored entry is no longer served while older ones still are: a hole in
                     the source history. Alerts AIGOV-018. Treat as possible tampering at the
                     source; the stored row is what was removed.
  expired_at_source  A stored entry is older than the oldest entry the source still serves: its
                     retention ran out. No alert. govtrail now holds history the source no longer
                     has: keep the database backed up.
  backdated          The source serves an entry govtrail did not have, dated before
                     checkpoint - lookback: no incremental run could have seen it. It is stored
                     now, with its field changes and alerts as a late arrival, and alerts AIGOV-018.
                     Ask who inserted history into the past. A sync that stores such an
                     entry from a page it read anyway records it the same way.
  conflicting_ids    The source serves one id twice with different contents in one listing. The
                     first copy is stored (or compared, when stored before); the other is kept in
                     source_raw. Alerts AIGOV-018. Exit 1 while the source serves it so. The same
                     id served twice with the same content is a harmless duplicate.

A new entry newer than that bound is simply stored, as a sync would, and is no discrepancy.
Each finding is recorded once (per entry, kind and served content): running reconcile again
adds no row and no alert, but still exits 1 while the source and the store differ.

Exit codes: 0 the source and the store agree (expired entries allowed); 1 a discrepancy holds
now, or the run failed or was skipped (another process held the tenant's lock); 2 usage or
configuration error.

Queries: docs/data-dictionary.md ("source_discrepancy") gives one SQL query per kind.`;

export function reconcileCommand(): Command {
  return tenantSelection(
    new Command('reconcile')
      .summary('compare the whole source history with the store (exit 1 when they differ)')
      .description(
        'Page the whole history of every configured tenant (or the one named) and compare it with the store, entry by entry (by the bytes served, the served digest, or else by content hash): rewritten, missing, expired and backdated entries and ids served with two contents are recorded in govtrail.source_discrepancy and alerted (AIGOV-018); entries the store lacks are stored as a sync would. One transaction under the tenant lock; the run ledger (govtrail.sync_run, kind = reconcile) keeps its counts and the time range it covered. Then delivers pending alerts.',
      )
      .option(
        '--deep',
        'compare every entry by content hash, ignoring the served digests stored beside the entries (slower; for an auditor who does not trust the database owner: the digests are outside the hash chain)',
      )
      .addHelpText('after', HELP),
    'reconcile',
  ).action(reconcileTenants);
}

/** The action: reconciles the tenants, delivers pending alerts, prints the table and the findings. */
async function reconcileTenants(opts: TenantSelection & { deep?: boolean }): Promise<void> {
  const { createAlerting } = await import('../app/alerting.js');
  const { createContext } = await import('../app/context.js');
  const { registerSucceeded, runnableTenants, selectTenants } = await import('../app/select-tenants.js');
  const { reconcileTenant } = await import('../app/tenant-run.js');
  const { listDiscrepancies } = await import('../store/read/discrepancies.js');
  const ctx = createContext();
  const { config } = ctx;
  // A configuration without the tenant named is refused before the store is opened.
  selectTenants(config, opts.tenant);
  const database = await ctx.openDatabase();
  const summaries: RunSummary[] = [];
  const found: DiscrepancyRow[] = [];
  let delivery = '';
  let alerting: Alerting | undefined;
  try {
    alerting = createAlerting(config, ctx.logger, database);
    const active = await runnableTenants(database.db, config, opts, ctx.out);
    for (const tenant of active) {
      const progress = progressReporter(tenant.name, ctx.logger);
      const summary = await reconcileTenant({
        database,
        config,
        logger: ctx.logger,
        tenant,
        trigger: 'cli',
        alerting,
        onProgress: progress.update,
        ...(opts.deep === true ? { deep: true } : {}),
      });
      progress.done();
      summaries.push(summary);
      if (summary.status === 'succeeded')
        found.push(...(await listDiscrepancies(database.db, { runId: summary.runId, limit: 50 })));
    }
    await registerSucceeded(database.db, active, summaries);
    const d = await alerting.deliver();
    if (d.delivered + d.retried + d.failed > 0) {
      delivery = `alert deliveries: ${d.delivered} delivered, ${d.retried} to retry, ${d.failed} given up\n`;
    }
  } finally {
    await alerting?.close();
    await database.close();
  }
  const table = summaries.length === 0 ? 'no tenant reconciled\n' : `${formatReconcile(summaries)}\n`;
  ctx.out.write(`${table}${formatFindings(found)}${delivery}`);
  if (summaries.some((s) => !agrees(s))) throw new ExitCode(1);
}

function formatFindings(rows: readonly DiscrepancyRow[]): string {
  if (rows.length === 0) return '';
  return `\nrecorded by this run (govtrail.source_discrepancy):\n${formatTable(
    ['tenant', 'entry', 'kind', 'created at', 'stored sha256', 'source sha256'],
    rows.map((r) => [
      r.tenantId,
      r.entryId,
      r.kind,
      r.entryCreatedAt?.toISOString() ?? '',
      r.storedSha256?.slice(0, 12) ?? '',
      r.sourceSha256?.slice(0, 12) ?? '',
    ]),
  )}\n`;
}
