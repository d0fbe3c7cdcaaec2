/**
 * The worker's anchoring: after every run that stored entries, an anchor of that tenant's chain is
 * written into GOVTRAIL_ANCHOR_DIR. One callback, `onRun`-shaped, so that whatever runs the tenants
 * (the cron loop, a job queue) hooks it in with one call; failures are logged, never thrown into
 * the run that already committed.
 */
import type { KeyObject } from 'node:crypto';
import type { Config } from '../../config/settings.js';
import { ConfigError } from '../../core/errors.js';
import type { Logger } from '../../runtime/logger.js';
import { registerSecret } from '../../runtime/logger.js';
import type { Database } from '../../store/database.js';
import type { RunSummary } from '../../sync/run-types.js';
import { parseSigningKey } from '../pack/signing.js';
import { writeAnchor } from './anchor.js';

export const ANCHOR_KEY_SETTING = 'GOVTRAIL_ANCHOR_SIGNING_KEY';

/** The anchor signing key from its setting's text (Ed25519, PEM PKCS#8 or JWK). */
export function anchorSigningKey(text: string): KeyObject {
  return parseSigningKey(text, ANCHOR_KEY_SETTING);
}

export interface RunAnchorer {
  /** Call with every run's summary: anchors the tenant when the run stored entries. */
  readonly onRun: (summary: RunSummary) => void;
  /** Resolves when the anchors being written are written (before the database closes). */
  idle(): Promise<void>;
}

/**
 * The anchorer of the configuration: a no-op without GOVTRAIL_ANCHOR_DIR; with it, the signing
 * key is required (a configuration error at start-up, not at the first run).
 */
export function createRunAnchorer(config: Config, database: Database, logger: Logger): RunAnchorer {
  const dir = config.anchorDir;
  if (dir === undefined) return { onRun: () => {}, idle: async () => {} };
  if (config.anchorSigningKey === undefined)
    throw new ConfigError(ANCHOR_KEY_SETTING, 'is required when GOVTRAIL_ANCHOR_DIR is set (or …_FILE)');
  registerSecret(config.anchorSigningKey);
  const key = anchorSigningKey(config.anchorSigningKey);
  const pending = new Set<Promise<void>>();
  // One tenant's anchors are written one after the other: each names the one before it.
  const queues = new Map<string, Promise<void>>();
  return {
    onRun(summary) {
      if (summary.status !== 'succeeded' || summary.counters.entriesInserted === 0) return;
      const tenantId = summary.tenantId;
      const job = (queues.get(tenantId) ?? Promise.resolve())
        .then(async () => {
          const a = await database.withSession((s) => writeAnchor(s, { dir, tenantId, key }));
          logger.info({ tenant: tenantId, file: a.file, entries: a.statement.entries }, 'anchor written');
        })
        .catch((err: unknown) => logger.error({ err, tenant: tenantId }, 'could not write the anchor'));
      queues.set(tenantId, job);
      pending.add(job);
      void job.finally(() => pending.delete(job));
    },
    async idle() {
      await Promise.all([...pending]);
    },
  };
}
