/**
 * Composes one run for one configured tenant — a sync or a reconcile: a tenant API client for the
 * run, the run's steps, and the changes-and-alerts step. The CLI, the worker and the demo all come
 * through here.
 */
import type { Dispatcher } from 'undici';
import type { Config, TenantConfig } from '../config/settings.js';
import { syncFailingAlert } from '../core/rules/rules.js';
import { alertPolicy } from '../core/rules/suppression.js';
import type { Logger } from '../runtime/logger.js';
import type { TokenCache } from '../source/auth.js';
import { TenantApiClient } from '../source/client.js';
import type { RetryInfo } from '../source/http.js';
import type { Database } from '../store/database.js';
import { recentRunStatuses } from '../store/read/run-ledger.js';
import { resolveAlertsAutomatically } from '../store/write/alert-events.js';
import { insertAlerts } from '../store/write/outbox.js';
import type { RunKind, RunTrigger } from '../store/write/runs.js';
import { changesStep } from '../sync/change-step.js';
import { combineSteps, conformanceStep } from '../sync/conformance.js';
import { runReconcile } from '../sync/reconcile.js';
import { runSync } from '../sync/run.js';
import type { ChangeStep, EngineAttempt, RunProgress, RunSummary } from '../sync/run-types.js';
import type { Alerting } from './alerting.js';
import { baselineFor } from './conformance.js';

export interface TenantRunOptions {
  readonly database: Database;
  readonly config: Config;
  readonly logger: Logger;
  readonly tenant: TenantConfig;
  readonly trigger: RunTrigger;
  /** Shared HTTP agent (keep-alive across runs); a private one when absent. */
  readonly dispatcher?: Dispatcher;
  /** Access tokens kept across runs (the worker's); a run's own when absent. */
  readonly tokens?: TokenCache;
  readonly signal?: AbortSignal;
  /** Field changes and alerts; without it only the evidence tables are written. */
  readonly alerting?: Alerting;
  readonly onProgress?: (p: RunProgress) => void;
  readonly onRetry?: (info: RetryInfo) => void;
  /** See ChangesStepOptions.walkInMemory (a test seam). */
  readonly walkInMemory?: boolean;
  /** See RunOptions.engineAttempt: set by the job engine for a scheduled job's attempt. */
  readonly engineAttempt?: EngineAttempt;
  /** See RunOptions.deep (`reconcile --deep`). */
  readonly deep?: boolean;
}

/** One sync of the tenant (docs/design/sync.md), then AIGOV-017 when it failed once too often. */
export function syncTenant(options: TenantRunOptions): Promise<RunSummary> {
  return runTenant('sync', options);
}

/** One reconcile of the tenant against its whole source history (docs/design/integrity.md). */
export function reconcileTenant(options: TenantRunOptions): Promise<RunSummary> {
  return runTenant('reconcile', options);
}

async function runTenant(kind: RunKind, options: TenantRunOptions): Promise<RunSummary> {
  const { tenant, config } = options;
  const client = new TenantApiClient({
    baseUrl: tenant.baseUrl,
    clientId: tenant.clientId,
    clientSecret: tenant.clientSecret,
    http: config.http,
    logger: options.logger.child({ tenant: tenant.name }),
    ...(options.dispatcher !== undefined ? { dispatcher: options.dispatcher } : {}),
    ...(options.tokens !== undefined ? { tokens: options.tokens } : {}),
    ...(options.signal !== undefined ? { signal: options.signal } : {}),
    ...(options.onRetry !== undefined ? { onRetry: options.onRetry } : {}),
  });
  const alerting = options.alerting;
  try {
    const run = kind === 'sync' ? runSync : runReconcile;
    const changes = runSteps(options, alerting);
    const summary = await run({
      database: options.database,
      source: client,
      logger: options.logger,
      tenantId: tenant.name,
      trigger: options.trigger,
      pageSize: tenant.pageSize,
      lookbackMs: tenant.lookbackMs,
      maxPages: config.maxPages,
      ...(changes !== undefined ? { changes } : {}),
      ...(options.onProgress !== undefined ? { onProgress: options.onProgress } : {}),
      ...(options.engineAttempt !== undefined ? { engineAttempt: options.engineAttempt } : {}),
      ...(options.deep === true ? { deep: true } : {}),
      ...(alerting !== undefined ? { resolveOnSuccess: syncFailingRules(alerting) } : {}),
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
    // A run that closed without a transaction already asked whether any may be unresolved.
    if (
      kind === 'sync' &&
      summary.status === 'succeeded' &&
      alerting !== undefined &&
      summary.openAlerts !== false
    ) {
      await resolveSyncFailing(options, alerting, summary).catch((err: unknown) =>
        options.logger.error({ err, tenant: tenant.name }, 'could not resolve the sync-failing alerts'),
      );
    }
    return summary;
  } finally {
    await client.close();
  }
}

/**
 * The change steps of a run: field changes and rule alerts when alerting is on, then the
 * conformance judgement when a baseline judges the tenant (docs/design/conformance.md).
 */
function runSteps(options: TenantRunOptions, alerting: Alerting | undefined): ChangeStep | undefined {
  const { config } = options;
  const rules =
    alerting === undefined
      ? undefined
      : changesStep({
          pack: alerting.pack,
          sinks: alerting.routes,
          backfillPerEntryAlerts: config.backfillPerEntryAlerts,
          ...(options.walkInMemory !== undefined ? { walkInMemory: options.walkInMemory } : {}),
        });
  const baseline = baselineFor(config, options.tenant.name, alerting?.pack.ranks);
  if (baseline === undefined) return rules;
  return combineSteps(
    rules,
    conformanceStep({ baseline, sinks: alerting?.routes ?? [], alerts: alerting !== undefined }),
  );
}

/** AIGOV-017: after a failed run, alert when the tenant's streak of failures reaches the threshold. */
async function raiseSyncFailing(
  options: TenantRunOptions,
  alerting: Alerting,
  summary: RunSummary,
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
    await insertAlerts(
      options.database.db,
      summary.tenantId,
      summary.runId,
      [draft],
      alerting.routes,
      alertPolicy(alerting.pack),
    );
  }
}

/** The rules that raise sync-failing alerts (`consecutive_failed_runs`). */
function syncFailingRules(alerting: Alerting): string[] {
  return alerting.pack.rules
    .filter((r) => r.condition.consecutive_failed_runs !== undefined)
    .map((r) => r.id);
}

/**
 * The condition of a sync-failing alert ended: the tenant's sync succeeded. Its unresolved alerts
 * of every rule with `consecutive_failed_runs` are resolved automatically (docs/design/alerts.md,
 * "Handling an alert"), so that PagerDuty and the other sinks hear so.
 */
async function resolveSyncFailing(
  options: TenantRunOptions,
  alerting: Alerting,
  summary: RunSummary,
): Promise<void> {
  for (const ruleId of syncFailingRules(alerting)) {
    const ids = await resolveAlertsAutomatically(
      options.database.db,
      { tenantId: summary.tenantId, ruleId },
      `the sync succeeded again (run ${summary.runId})`,
    );
    if (ids.length > 0) {
      options.logger.info(
        { tenant: summary.tenantId, alertIds: ids },
        'sync-failing alerts resolved: the sync recovered',
      );
    }
  }
}
