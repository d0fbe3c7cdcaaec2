/** Which configured tenants a sync or reconcile from the command line works on. */
import type { Config, TenantConfig } from '../config/settings.js';
import { ConfigError } from '../core/errors.js';

/**
 * The configured tenants, or the one named; a usage error naming the setting when there is none.
 * @throws ConfigError
 */
export function selectTenants(config: Config, name: string | undefined): readonly TenantConfig[] {
  if (config.tenants.length === 0) {
    throw new ConfigError(
      'GOVTRAIL_CLIENT_ID',
      'no tenant is configured: set GOVTRAIL_CLIENT_ID and GOVTRAIL_CLIENT_SECRET, or list tenants in GOVTRAIL_CONFIG (try `govtrail demo` for the sandbox)',
    );
  }
  const tenants = name === undefined ? config.tenants : config.tenants.filter((t) => t.name === name);
  if (tenants.length === 0) {
    throw new ConfigError(
      '--tenant',
      `no configured tenant is named ${JSON.stringify(name)}; configured: ${config.tenants.map((t) => t.name).join(', ')}`,
    );
  }
  return tenants;
}
