/**
 * The evidence pack's copy of the chain anchor: the tenant's newest anchor in GOVTRAIL_ANCHOR_DIR,
 * with the public half of GOVTRAIL_ANCHOR_SIGNING_KEY when it is configured.
 */
import type { Config } from '../../config/settings.js';
import { registerSecret } from '../../runtime/logger.js';
import type { PackAnchor } from '../pack/pack-options.js';
import { publicKeyOf } from '../pack/signing.js';
import { anchorSigningKey } from './after-run.js';
import { readNewestAnchor } from './anchor.js';

/** The anchor to put in a pack of `tenantId`, or undefined (no GOVTRAIL_ANCHOR_DIR, or no anchor yet). */
export async function packAnchor(config: Config, tenantId: string): Promise<PackAnchor | undefined> {
  if (config.anchorDir === undefined) return undefined;
  const newest = await readNewestAnchor(config.anchorDir, tenantId);
  if (newest === undefined) return undefined;
  let publicKeyPem: string | undefined;
  if (config.anchorSigningKey !== undefined) {
    registerSecret(config.anchorSigningKey);
    publicKeyPem = publicKeyOf(anchorSigningKey(config.anchorSigningKey)).export({
      type: 'spki',
      format: 'pem',
    }) as string;
  }
  return { statement: newest.statement, jws: newest.jws, publicKeyPem };
}
