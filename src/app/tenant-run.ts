/**
 * Composes one run for one configured tenant — a sync or a reconcile: a tenant API client for the
 * run, the run's steps, and the changes-and-alerts step. The CLI, the worker and the demo all come
 * through here.
 */
import type { Dispatcher } from 'undici';
import type { Config, TenantConfig } from '../config/settings.js';
import { syncFailingAlert } from '../core/rules/rules.js';
import type { Logger } from '../runtime/logger.js';
import { TenantApiClient } from '../source/client.js';
import type { RetryInfo } from '../source/http.js';
import type { Database } from '../store/database.js';
import { insertAlerts } from '../store/write/outbox.js';
import { type RunKind, type RunTrigger, recentRunStatuses } from '../store/write/runs.js';
import { changesStep } from '../sync/change-step.js';
import { runReconcile } from '../sync/reconcile.js';
import { runSync, type SyncProgress, type SyncRunSummary } from '../sync/run.js';
import type { EngineAttempt } from '../sync/run-types.js';
import type { Alerting } from './alerting.js';

export interface SyncTenantOptions {
  readonly database: Database;
  readonly config: Config;
  readonly logger: Logger;
  readonly tenant: TenantConfig;
  readonly trigger: RunTrigger;
  /** Shared HTTP agent (keep-alive across runs); a private one when absent. */
  readonly dispatcher?: Dispatcher;
  readonly signal?: AbortSignal;
  /** Field changes and alerts; without it only the evidence tables are written. */
  readonly alerting?: Alerting;
  readonly onProgress?: (p: SyncProgress) => void;
  readonly onRetry?: (info: RetryInfo) => void;
  /** See ChangesStepOptions.walkInMemory (a test seam). */
  readonly walkInMemory?: boolean;
  /** See RunOptions.engineAttempt: set by the job engine for a scheduled job's attempt. */
  readonly engineAttempt?: EngineAttempt;
}

/** One sync of the tenant (docs/design/sync.md), then AIGOV-017 when it failed once too often. */
export function syncTenant(options: SyncTenantOptions): Promise<SyncRunSummary> {
  return runTenant('sync', options);
}

/** One reconcile of the tenant against its whole source history (docs/design/integrity.md). */
export function reconcileTenant(options: SyncTenantOptions): Promise<SyncRunSummary> {
  return runTenant('reconcile', options);
}

async function runTenant(kind: RunKind, options: SyncTenantOptions): Promise<SyncRunSummary> {
  const { tenant, config } = options;
  const client = new TenantApiClient({
    baseUrl: tenant.baseUrl,
    clientId: tenant.clientId,
    clientSecret: tenant.clientSecret,
    http: config.http,
    logger: options.logger.child({ tenant: tenant.name }),
    ...(options.dispatcher !== undefined ? { dispatcher: options.dispatcher } : {}),
    ...(options.signal !== undefined ? { signal: options.signal } : {}),
    ...(options.onRetry !== undefined ? { onRetry: options.onRetry } : {}),
  });
  const alerting = options.alerting;
  try {
    const run = kind === 'sync' ? runSync : runReconcile;
    const summary = await run({
      database: options.database,
      source: client,
      logger: options.logger,
      tenantId: tenant.name,
      trigger: options.trigger,
      pageSize: tenant.pageSize,
      lookbackMs: tenant.lookbackMs,
      maxPages: config.maxPages,
      ...(alerting !== undefined
        ? {
            changes: changesStep({
              pack: alerting.pack,
              sinks: alerting.routes,
              backfillPerEntryAlerts: config.backfillPerEntryAlerts,
              ...(options.walkInMemory !== undefined ? { walkInMemory: options.walkInMemory } : {}),
            }),
          }
        : {}),
      ...(options.onProgress !== undefined ? { onProgress: options.onProgress } : {}),
      ...(options.engineAttempt !== undefined ? { engineAttempt: options.engineAttempt } : {}),
    });
    // An attempt to be retried inside its slot left no ledger row: only the last one counts. (Asked
    // of a failed run only: the engine decides it when first asked.)
    if (
      kind === 'sync' &&
      summary.status === 'failed' &&
      alerting !== undefined &&
      options.engineAttempt?.retriesLeft !== true
    ) {
      await raiseSyncFailing(options, alerting, summary).catch((err: unknown) =>
        options.logger.error({ err, tenant: tenant.name }, 'could not record the sync-failing alert'),
      );
    }
    return summary;
  } finally {
    await client.close();
  }
}

/** AIGOV-017: after a failed run, alert when the tenant's streak of failures reaches the threshold. */
async function raiseSyncFailing(
  options: SyncTenantOptions,
  alerting: Alerting,
  summary: SyncRunSummary,
): Promise<void> {
  const statuses = await recentRunStatuses(options.database.db, summary.tenantId, 50);
  let streak = 0;
  for (const s of statuses) {
    if (s !== 'failed') break;
    streak++;
  }
  const draft = syncFailingAlert(alerting.pack, {
    tenantId: summary.tenantId,
    consecutiveFailures: streak,
    lastRunId: summary.runId,
    lastErrorCode: summary.error?.code ?? null,
    lastErrorMessage: summary.error?.message ?? null,
  });
  if (draft !== null) {
    await insertAlerts(options.database.db, summary.tenantId, summary.runId, [draft], alerting.routes);
  }
}
