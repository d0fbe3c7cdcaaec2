/**
 * Composes one run for one configured tenant: a tenant API client for the run, the sync steps,
 * and the changes-and-alerts step. The CLI, the worker and the demo all come through here.
 */
import type { Dispatcher } from 'undici';
import type { Config, TenantConfig } from '../config.js';
import type { Logger } from '../logger.js';
import type { Database } from '../store/database.js';
import type { RunTrigger } from '../store/runs.js';
import { TenantApiClient } from '../tenant-api/client.js';
import type { RetryInfo } from '../tenant-api/http.js';
import { type AfterInsertStep, runSync, type SyncProgress, type SyncRunSummary } from './run.js';

export interface SyncTenantOptions {
  readonly database: Database;
  readonly config: Config;
  readonly logger: Logger;
  readonly tenant: TenantConfig;
  readonly trigger: RunTrigger;
  /** Shared HTTP agent (keep-alive across runs); a private one when absent. */
  readonly dispatcher?: Dispatcher;
  readonly signal?: AbortSignal;
  readonly afterInsert?: AfterInsertStep;
  readonly onProgress?: (p: SyncProgress) => void;
  readonly onRetry?: (info: RetryInfo) => void;
}

export async function syncTenant(options: SyncTenantOptions): Promise<SyncRunSummary> {
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
  try {
    return await runSync({
      database: options.database,
      source: client,
      logger: options.logger,
      tenantId: tenant.name,
      trigger: options.trigger,
      pageSize: tenant.pageSize,
      lookbackMs: tenant.lookbackMs,
      maxPages: config.maxPages,
      ...(options.afterInsert !== undefined ? { afterInsert: options.afterInsert } : {}),
      ...(options.onProgress !== undefined ? { onProgress: options.onProgress } : {}),
    });
  } finally {
    await client.close();
  }
}
