/** Which stored tenant a read command works on. */
import { GovtrailError } from '../core/errors.js';
import type { Session } from '../store/database.js';
import { listTenants } from '../store/read/views.js';

/**
 * The tenant a read command works on: the one named, else the only tenant stored. Several stored
 * tenants and none named is a usage error rather than a guess.
 */
export async function resolveTenant(db: Session, named: string | undefined): Promise<string> {
  const tenants = await listTenants(db);
  if (named !== undefined) {
    if (!tenants.includes(named)) {
      throw new GovtrailError(
        'USAGE',
        `--tenant: no entries stored for tenant ${JSON.stringify(named)}${tenants.length > 0 ? ` (stored: ${tenants.join(', ')})` : ''}`,
      );
    }
    return named;
  }
  const only = tenants[0];
  if (tenants.length === 1 && only !== undefined) return only;
  if (tenants.length === 0) {
    throw new GovtrailError('USAGE', 'no history stored yet: run `govtrail sync` (or `govtrail demo`) first');
  }
  throw new GovtrailError(
    'USAGE',
    `several tenants are stored (${tenants.join(', ')}): choose one with --tenant`,
  );
}
