/**
 * A sandbox tenant, a fresh database and the pieces to run govtrail's sync between them.
 */
import { Writable } from 'node:stream';
import pino from 'pino';
import { createAlerting } from '../../src/app/alerting.js';
import { syncTenant } from '../../src/app/tenant-run.js';
import { type Config, loadConfig, type TenantConfig } from '../../src/config/settings.js';
import type { Logger } from '../../src/runtime/logger.js';
import { type Sandbox, type SandboxOptions, startSandbox } from '../../src/sandbox/index.js';
import { TenantApiClient } from '../../src/source/client.js';
import type { Database } from '../../src/store/database.js';
import type { RunOptions, RunSummary } from '../../src/sync/run-types.js';
import { createTestDatabase, type TestDatabase } from './database.js';

/** A logger whose lines are kept, to assert on (and to scan for secrets). */
export function capturingLogger(): { logger: Logger; lines: string[] } {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk, _enc, cb) {
      lines.push(String(chunk));
      cb();
    },
  });
  return { logger: pino({ level: 'debug' }, stream) as unknown as Logger, lines };
}

/** Test configuration: fast retries, small caps, no waiting worth the name. */
export function testConfig(env: Record<string, string> = {}): Config {
  return loadConfig(
    {
      GOVTRAIL_HTTP_RETRY_BASE: '1ms',
      GOVTRAIL_HTTP_RETRY_MAX_DELAY: '5ms',
      GOVTRAIL_HTTP_RETRY_AFTER_CAP: '20ms',
      GOVTRAIL_HTTP_HEADERS_TIMEOUT: '2s',
      ...env,
    },
    { dotenv: false },
  );
}

export interface Harness {
  readonly sandbox: Sandbox;
  readonly testDb: TestDatabase;
  readonly database: Database;
  readonly config: Config;
  readonly logs: string[];
  readonly logger: Logger;
  tenant(overrides?: Partial<TenantConfig>): TenantConfig;
  /**
   * What a bare run of tenant `acme` is given (no alerting), through a client of its own on
   * `database` (the harness's by default); `close` closes the client.
   */
  runOptions(overrides?: Partial<RunOptions>): { options: RunOptions; close: () => Promise<void> };
  sync(options?: {
    tenant?: Partial<TenantConfig>;
    alerts?: boolean;
    onProgress?: (p: { pages: number }) => void;
    walkInMemory?: boolean;
  }): Promise<RunSummary>;
  close(): Promise<void>;
}

export async function createHarness(
  sandboxOptions: SandboxOptions = {},
  env: Record<string, string> = {},
): Promise<Harness> {
  const sandbox = await startSandbox(sandboxOptions);
  const testDb = await createTestDatabase();
  const config = testConfig(env);
  const { logger, lines } = capturingLogger();
  const tenant = (overrides: Partial<TenantConfig> = {}): TenantConfig => ({
    name: 'acme',
    baseUrl: sandbox.baseUrl,
    clientId: sandbox.credentials.secret.clientId,
    clientSecret: sandbox.credentials.secret.clientSecret,
    pageSize: 100,
    lookbackMs: 15 * 60_000,
    ...overrides,
  });
  return {
    sandbox,
    testDb,
    database: testDb.database,
    config,
    logs: lines,
    logger,
    tenant,
    runOptions(overrides = {}) {
      const t = tenant();
      const source = new TenantApiClient({
        baseUrl: t.baseUrl,
        clientId: t.clientId,
        clientSecret: t.clientSecret,
        http: config.http,
        logger,
      });
      return {
        options: {
          database: testDb.database,
          source,
          logger,
          tenantId: t.name,
          trigger: 'cli',
          pageSize: t.pageSize,
          lookbackMs: t.lookbackMs,
          maxPages: 1000,
          ...overrides,
        },
        close: () => source.close(),
      };
    },
    sync(options = {}) {
      return syncTenant({
        database: testDb.database,
        config,
        logger,
        tenant: tenant(options.tenant),
        trigger: 'cli',
        ...(options.alerts === false ? {} : { alerting: createAlerting(config, logger, testDb.database) }),
        ...(options.onProgress !== undefined ? { onProgress: options.onProgress } : {}),
        ...(options.walkInMemory !== undefined ? { walkInMemory: options.walkInMemory } : {}),
      });
    },
    async close() {
      await sandbox.close();
      await testDb.close();
    },
  };
}

/** Entries the sandbox serves that carry an id, newest first. */
export function truthIds(sandbox: Sandbox): string[] {
  return (sandbox.history.entries() as Array<{ metadata?: { id?: string } }>)
    .map((e) => e.metadata?.id)
    .filter((id): id is string => typeof id === 'string' && id !== '');
}
